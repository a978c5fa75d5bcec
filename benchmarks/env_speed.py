"""Random-play speed of the deckgym games, side by side with peer card-game libraries.

Every row plays random legal moves for a fixed wall time (``--seconds``, after a short
warm-up) and reports *agent steps per second*: one agent step = one decision by a player.
The rows take turns (``--rounds``, each row playing ``seconds / rounds`` per turn) and each
row's best turn is reported, so a busy stretch of a shared machine slows no row alone.
Every row picks its move the same way, ``random.Random(seed).choice(list_of_legal_actions)``,
so the rows differ only in how fast each library hands out legal actions and applies them.

Rows, per deckgym game (``--games``, default ``craits,pairs_draft``):

- ``<game> engine``: the bare engine. Loop: ``g.apply(rng.choice(g.legal_actions()))``, and a
  new ``Game(seed=k)`` when the game is over.
- ``<game> raw_env()`` / ``<game> env()``: the PettingZoo AEC env, unwrapped / wrapped.
  Loop: the standard ``for agent in env.agent_iter(): env.last() ... env.step(action)``,
  the legal actions taken from ``obs["action_mask"]``, and ``env.reset()`` when the episode
  ends. Only ``env.step`` calls with a non-None action count as agent steps; the
  ``step(None)`` calls that retire finished agents are timed but not counted.

Peers (skipped with a message when the import fails):

- ``RLCard uno``: ``rlcard.make("uno")`` (2 players), ``env.step`` on ``state["legal_actions"]``.
- ``OpenSpiel crazy_eights``: the C++ game via ``pyspiel`` (default parameters: 5 players).
  Chance nodes (deals, draws) are sampled from ``state.chance_outcomes()``; their time is
  counted but only player (non-chance) moves count as agent steps.

Run from the repository root::

    python benchmarks/env_speed.py                     # all games, 3 s per row
    python benchmarks/env_speed.py --seconds 10 --games craits --json speed.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import random
import sys
import time
from collections import deque
from itertools import islice

import numpy as np

RLCARD, OPENSPIEL = "RLCard uno", "OpenSpiel crazy_eights"
BATCH = 200  # agent steps between clock reads


# ------------------------------------------------------------------ step loops
# Each loop is an endless generator that yields once per agent step.


def engine_loop(rng, factory):
    for k in range(sys.maxsize):
        g = factory(k)
        legal = g.legal_actions()
        while legal:  # the engine contract: no legal action only once the game is over
            g.apply(rng.choice(legal))
            legal = g.legal_actions()
            yield


def aec_loop(rng, make_env):
    env = make_env()
    env.reset(seed=0)
    while True:
        for _agent in env.agent_iter():
            obs, _rew, term, trunc, _info = env.last()
            action = None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
            env.step(action)
            if action is not None:
                yield
        env.reset()


def rlcard_loop(rng):
    import rlcard

    env = rlcard.make("uno", config={"seed": 0})
    while True:
        state, _player = env.reset()
        while not env.is_over():
            state, _player = env.step(rng.choice(list(state["legal_actions"])))
            yield


def openspiel_loop(rng):
    import pyspiel

    game = pyspiel.load_game("crazy_eights")
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                yield


# ------------------------------------------------------------------ deckgym games
# name -> (engine module, engine class, AEC module)
GAMES = {
    "craits": ("envs.craits", "CraitsGame", "envs.craits_v0"),
    "pairs_draft": ("envs.pairs_draft", "PairsDraftGame", "envs.pairs_draft_v0"),
}


def game_rows(name):
    """(row name, loop factory) for one deckgym game: its engine, raw_env() and env()."""
    engine_mod, cls_name, aec_mod = GAMES[name]
    cls = getattr(importlib.import_module(engine_mod), cls_name)
    aec = importlib.import_module(aec_mod)
    return [
        (f"{name} engine", lambda rng: engine_loop(rng, lambda k: cls(seed=k))),
        (f"{name} raw_env()", lambda rng: aec_loop(rng, aec.raw_env)),
        (f"{name} env()", lambda rng: aec_loop(rng, aec.env)),
    ]


def peer_rows():
    rows, skipped = [], []
    for name, module, loop in ((RLCARD, "rlcard", rlcard_loop), (OPENSPIEL, "pyspiel", openspiel_loop)):
        try:
            importlib.import_module(module)
            rows.append((name, loop))
        except ImportError as exc:
            skipped.append(f"{name}: {exc}")
    return rows, skipped


# ------------------------------------------------------------------ measurement


def measure(steps, seconds):
    """Agent steps per second of the step generator ``steps`` over ``seconds`` of wall time."""
    count, start = 0, time.perf_counter()
    while True:
        deque(islice(steps, BATCH), maxlen=0)
        count += BATCH
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count / elapsed


def measure_rows(rows, seconds, warmup, rounds, seed=0, say=print):
    """name -> best agent steps/s over ``rounds`` turns of ``seconds / rounds`` per row. The
    rows take turns so that a change in the machine's load falls on all of them alike, and
    the best turn is the one least slowed by other work (as ``timeit`` takes the least time)."""
    generators = {}
    for name, loop in rows:
        generators[name] = loop(random.Random(seed))
        measure(generators[name], warmup)
    best = {}
    for turn in range(rounds):
        say(f"round {turn + 1}/{rounds} ...", flush=True)
        for name, _ in rows:
            best[name] = max(best.get(name, 0.0), measure(generators[name], seconds / rounds))
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="measured wall time per row (default 3)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="turns the rows take, each of seconds / rounds; a row's best turn counts (default 5)",
    )
    parser.add_argument("--warmup", type=float, default=0.3, help="warm-up wall time per row (default 0.3)")
    parser.add_argument("--games", default="craits,pairs_draft", help="deckgym games, comma-separated")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random move choice")
    parser.add_argument("--json", metavar="PATH", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    rows = []
    for name in filter(None, args.games.split(",")):
        if name not in GAMES:
            parser.error(f"unknown game {name!r}; choose from {', '.join(GAMES)}")
        rows += game_rows(name)
    more_rows, skipped = peer_rows()
    rows += more_rows
    for line in skipped:
        print(f"skipped {line}")

    rates = measure_rows(rows, args.seconds, args.warmup, args.rounds, args.seed)

    def ratio(name, peer):
        return rates[name] / rates[peer] if peer in rates else None

    results = [
        {
            "name": name,
            "steps_per_s": rate,
            "vs_rlcard_uno": ratio(name, RLCARD),
            "vs_openspiel_crazy_eights": ratio(name, OPENSPIEL),
        }
        for name, rate in rates.items()
    ]
    width = max([len(r["name"]) for r in results] + [4])
    print(f"\n{'name':<{width}}  {'agent steps/s':>13}  {'vs RLCard uno':>13}  {'vs OpenSpiel c8':>15}")
    for r in results:
        cells = [f"{x:.2f}x" if x is not None else "-" for x in (r["vs_rlcard_uno"], r["vs_openspiel_crazy_eights"])]
        print(f"{r['name']:<{width}}  {r['steps_per_s']:>13,.0f}  {cells[0]:>13}  {cells[1]:>15}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "seconds": args.seconds,
                    "rounds": args.rounds,
                    "warmup": args.warmup,
                    "seed": args.seed,
                    "python": platform.python_version(),
                    "results": results,
                    "skipped": skipped,
                },
                f,
                indent=2,
            )
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
