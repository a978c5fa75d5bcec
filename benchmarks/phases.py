"""Pairs Draft's two halves apart: where a bot's edge over the heuristic comes from.

One seat drafts (the eleven picks and the discard) with one agent and plays the ten rounds
with another, against three heuristic bots, in duplicate format: ``--draft heuristic --play
pairs_draft`` is the network's play behind the heuristic's draft. The match is
``training.evaluate``'s, with the same resumable log (``--log``), so the result pairs set by
set with a log of any other agent on the same seeds (``benchmarks/paired.py``).

    python benchmarks/phases.py --draft heuristic --play pairs_draft --sets 400 --seed 800000 \\
        --log benchmarks/results/tuning/pairs_draft_v0-phases-heuristic-pairs_draft

Either agent may be any spec, a search included (``--play ismcts:prior=pairs_draft``).
The combined agent is named ``DRAFT + PLAY`` in the log and the report. It plays in one
process: the match's agent factory is swapped for one that knows the combined agent.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import training.matches.evaluate as match  # noqa: E402
from training.agents import checked_act, make_agent  # noqa: E402
from training.common.games import EnvHandle  # noqa: E402

SEP = " + "
DRAFTING = ("draft", "discard")  # the engine's phases the draft agent answers


class Halves:
    """Two agents, one for the draft and the discard, one for the rounds."""

    def __init__(self, name: str, draft, play):
        self.name, self.draft, self.play = name, draft, play

    def reset(self) -> None:
        self.draft.reset()
        self.play.reset()

    def agent_for(self, game):
        return self.draft if game.phase in DRAFTING else self.play


def _make(spec: str, env, seed=None, deterministic: bool = True):
    if SEP in spec:
        draft, play = spec.split(SEP)
        return Halves(spec, make_agent(draft, env, seed, deterministic), make_agent(play, env, seed, deterministic))
    return make_agent(spec, env, seed, deterministic)


def _checked(agent, seat: int, observation: dict, game, role: str = "") -> int:
    if isinstance(agent, Halves):
        agent = agent.agent_for(game)
    return checked_act(agent, seat, observation, game, role)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draft", required=True, help="the agent that picks and discards")
    parser.add_argument("--play", required=True, help="the agent that plays the rounds")
    parser.add_argument("--sets", type=int, default=100, help="duplicate sets (4 games each)")
    parser.add_argument("--seed", type=int, default=800000, help="the first deal seed")
    parser.add_argument("--log", type=Path, help="a resumable game log (training.evaluate --log)")
    args = parser.parse_args(argv)
    for spec in (args.draft, args.play):
        if SEP.strip() in spec:
            parser.error(f"{spec!r}: an agent spec here can't hold {SEP.strip()!r}")
    env = EnvHandle("pairs_draft_v0")
    agent = f"{args.draft}{SEP}{args.play}"
    match.make_agent, match.checked_act = _make, _checked  # one process: workers would not see the swap
    try:
        result = match.evaluate(env, [agent] + ["heuristic"] * 3, args.sets, seed=args.seed, log_dir=args.log)
    finally:
        match.make_agent, match.checked_act = make_agent, checked_act
    mine = result["agents"][agent]
    low, high = mine["win_share_ci95"]
    print(
        f"{agent}: win share {mine['win_share']:.3f} [{low:.3f}, {high:.3f}] (even {mine['even_share']:.2f}), "
        f"{mine['mean_score']:.2f} points a game, {args.sets} sets from seed {args.seed}"
    )
    return result


if __name__ == "__main__":
    main()
