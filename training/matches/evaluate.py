"""Matches between agents in duplicate format: mean points and win share with 95% intervals.

    python -m training.evaluate --env craits_v0 --agents heuristic,random,random,random --games 500
    python -m training.evaluate --env pairs_draft_v0 --agents checkpoints/pairs_draft,heuristic,heuristic,heuristic --json out.json
    python -m training.evaluate --agents checkpoints/craits,heuristic --games 2000 --ray   # chunks as tasks on a local Ray
    python -m training.evaluate --agents ismcts:simulations=10000,craits --games 400 --log logs/ismcts  # resumable

``--agents`` lists one agent per seat (random, heuristic or a checkpoint folder); a shorter
list is repeated around the table. Seats held by the same spec are one agent in the report.

Duplicate format: each of the ``--games`` deal seeds is a *duplicate set*, played once per
seat with the agent list rotated by one seat each time (the agent in seat s moves to seat
s + 1). The env is reset with the same seed (``--seed`` + set index) in every rotation, so
the cards are identical and every agent plays every seat's cards: the luck of the deal
cancels out of the comparison. Agents' own randomness is seeded from (seed, set, rotation,
seat), so results do not depend on ``--processes``, nor on Ray: ``--ray`` plays the chunks of
sets as Ray tasks on a local Ray, ``--ray-address ADDRESS`` (or ``RAY_ADDRESS``) on a running
cluster (``training.running.executor``, docs/scaling.md); ``--record`` files come back to this machine.

A game's win share for an agent is (winning seats it holds) / (number of winners); its
*even share* (seats held / seats) is what it would get if it played no better than the
others. The 95% intervals are normal approximations over the per-set means (mean ± 1.96 ·
standard deviation / √sets): a set's rotations share their deals and are correlated, so the
set, not the game, is the independent sample. A game cut by the env's safety net
(truncated) counts as a draw among all seats and is counted in ``truncated_games``.

``--log DIR`` keeps every finished game in DIR: the same command run again (after a kill,
in another session) plays only the games still missing, and gives the result an
uninterrupted run would (``training.matches.evaluation_log``).

An agent's illegal move ends the evaluation with an error naming the agent, its seat, the
move and the legal ones; so does a checkpoint whose policy gives NaN logits.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from training.agents import checked_act, make_agent, seat_layout, split_agents
from training.common.commands import command_parser
from training.common.files import hold_folder, write_file
from training.common.games import EnvHandle, add_table_arguments, parse_env_args
from training.matches.evaluation_log import append_set, log_header, read_sets
from training.matches.records import Recorder, check_record_folder, header_of, result_of, write_record
from training.running.executor import LocalExecutor, add_executor_arguments, executor_from_args, read_folder

Z95 = 1.96
CHUNKS_PER_PROCESS = 4  # smaller chunks balance the load when games differ in length


def rotated(layout: list[str], rotation: int) -> list[str]:
    """The layout with every agent moved ``rotation`` seats on."""
    k = len(layout)
    return [layout[(seat - rotation) % k] for seat in range(k)]


def play_game(env, agents, seed: int, on_move=None) -> tuple[list, list[int] | None]:
    """One whole game from ``reset(seed)``: the final scores and the winning seats (None for a
    truncated game). Env episodes shorter than a game (Craits ``episode="deal"``) are chained
    with ``reset()`` until the engine knows its winners. An illegal move raises
    ``IllegalMoveError`` (under the env's penalty rule the episode would end without a winner
    and the game be replayed for ever). ``on_move(env, seat, action)`` is called before each
    move is made (``training.frontends.play`` prints it)."""
    env.reset(seed=seed)
    for agent in agents:
        agent.reset()
    while True:
        truncated = False
        for agent_id in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                truncated |= truncation
                env.step(None)
                continue
            seat = env.agent_name_mapping[agent_id]
            action = checked_act(agents[seat], seat, obs, env.game)
            if on_move is not None:
                on_move(env, seat, action)
            env.step(action)
        if env.game.is_over:
            return env.game.scores(), env.game.winners()
        if truncated:
            return env.game.scores(), None
        env.reset()


def play_games(env, layout: list[str], seed: int, deterministic: bool, games, record_dir=None) -> list[tuple]:
    """The games ``(set, rotation)`` of ``games`` in ``env`` (an ``EnvHandle``): ``(set,
    rotation, scores, winners)`` each; with ``record_dir``, each game's record too."""
    records = []
    for index, rotation in games:
        seats = rotated(layout, rotation)
        agents = [
            make_agent(spec, env, seed=[seed, index, rotation, seat], deterministic=deterministic)
            for seat, spec in enumerate(seats)
        ]
        recorder = Recorder() if record_dir else None
        scores, winners = play_game(env.raw, agents, seed + index, on_move=recorder)
        if recorder is not None:
            write_record(
                Path(record_dir) / f"{env.id}-seed{seed + index}-rotation{rotation}.jsonl",
                header_of(env, seed + index, seats),
                recorder.moves,
                result_of(env.raw.game, truncated=winners is None and not env.raw.game.is_over),
            )
        records.append((index, rotation, scores, winners))
    return records


def _play_chunk(task):
    return play_games(*task)


def _play_chunk_remote(task):
    """``_play_chunk`` on a Ray worker: its game records come back as file contents (the driver
    writes them: the worker's disk is not the driver's)."""
    *args, record_dir = task
    if record_dir is None:
        return play_games(*args), {}
    with tempfile.TemporaryDirectory(prefix="deckgym-records-") as tmp:
        return play_games(*args, tmp), read_folder(Path(tmp))


def _play(env, layout, seed, deterministic, games, record_dir, executor, on_set) -> list[tuple]:
    """The records of the games ``(set, rotation)`` of ``games``, in their order. With
    ``on_set``, each game is a task of its own and handed to ``on_set`` as soon as it is
    played (a log keeps it)."""
    games = list(games)
    if not games:
        return []
    if on_set is None:  # a task plays whole sets: a few tasks per process
        seats = len(layout)
        sets = list(dict.fromkeys(index for index, _ in games))
        chunks = [
            [(sets[i], r) for i in part for r in range(seats)]
            for part in _chunks(len(sets), min(len(sets), executor.workers * CHUNKS_PER_PROCESS))
        ]
    else:
        chunks = [[game] for game in games]
    tasks = [(env, layout, seed, deterministic, chunk, record_dir) for chunk in chunks]
    parts: list[Any] = [None] * len(tasks)  # each chunk's records, in chunk order as they come
    if executor.ray:
        results = executor.imap(_play_chunk_remote, tasks, agents=layout)
    else:
        results = ((index, (part, {})) for index, part in executor.imap(_play_chunk, tasks, chunksize=1))
    for index, (part, files) in results:
        parts[index] = part
        for name, data in files.items():
            write_file(Path(record_dir) / name, data)
        if on_set is not None:
            on_set(part)
    return [record for part in parts for record in part]  # in set order, whoever played them


def mean_ci(set_means: np.ndarray, low=-math.inf, high=math.inf, quantile: float = Z95) -> tuple[float, list | None]:
    """The mean over the sets and its 95% interval, mean ± quantile · s/√n clipped to [low,
    high] (the normal one by default; ``benchmarks/strength.py`` passes Student's t too)."""
    mean = float(set_means.mean())
    if len(set_means) < 2:
        return mean, None
    half = quantile * float(set_means.std(ddof=1)) / math.sqrt(len(set_means))
    return mean, [max(low, mean - half), min(high, mean + half)]


def per_game(records, layout: list[str], sets: int) -> tuple[dict, dict]:
    """Each agent's mean score and win share in every game: ``{spec: array[set, rotation]}``
    twice, from the game records (any order; set numbers below ``sets``)."""
    k = len(layout)
    specs = list(dict.fromkeys(layout))
    score = {spec: np.zeros((sets, k)) for spec in specs}
    share = {spec: np.zeros((sets, k)) for spec in specs}
    for index, rotation, scores, winners in records:
        winners = range(k) if winners is None else winners
        seats_of: dict[str, list[int]] = {spec: [] for spec in specs}
        for seat, spec in enumerate(rotated(layout, rotation)):
            seats_of[spec].append(seat)
        for spec, seats in seats_of.items():
            score[spec][index, rotation] = np.mean([scores[s] for s in seats])
            share[spec][index, rotation] = sum(s in winners for s in seats) / len(winners)
    return score, share


def summarize(records, layout: list[str], sets: int, deals: int | None) -> dict:
    """Per-agent statistics from the game records (any order)."""
    specs = list(dict.fromkeys(layout))
    score, share = per_game(records, layout, sets)
    agents = {}
    for spec in specs:
        mean_score, score_ci = mean_ci(score[spec].mean(axis=1))
        win_share, share_ci = mean_ci(share[spec].mean(axis=1), 0.0, 1.0)
        agents[spec] = {
            "seats": layout.count(spec),
            "mean_score": mean_score,
            "mean_score_ci95": score_ci,
            "mean_score_per_deal": mean_score / deals if deals else None,
            "win_share": win_share,
            "win_share_ci95": share_ci,
            "even_share": layout.count(spec) / len(layout),
        }
    return agents


def _chunks(sets: int, count: int) -> list[range]:
    bounds = np.linspace(0, sets, count + 1).round().astype(int)
    return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def evaluate(
    env,
    agents: list[str],
    games: int,
    seed: int = 0,
    processes: int = 1,
    deterministic: bool = True,
    record_dir=None,
    executor=None,
    log_dir=None,
) -> dict:
    """Play ``games`` duplicate sets (``games`` × seats games) in ``env`` (an ``EnvHandle``)
    and return a JSON-ready summary.

    ``processes=1`` plays in this process; more use a spawn pool (safe beside torch threads);
    an ``executor`` (``training.running.executor``, e.g. Ray) plays instead when given. With
    ``log_dir``, every finished game is kept there and a run again plays only the missing ones
    (``training.matches.evaluation_log``)."""
    if games < 1 or processes < 1 or seed < 0:
        raise ValueError(
            f"games={games}, processes={processes}, seed={seed}: need games >= 1, processes >= 1, seed >= 0"
        )
    layout = seat_layout(list(agents), env.seats)
    for spec in dict.fromkeys(layout):  # fail here, with make_agent's message, not in a worker
        make_agent(spec, env, seed=0, deterministic=deterministic)
    if record_dir:
        check_record_folder(record_dir)
    executor = executor or LocalExecutor(processes)
    if log_dir is None:
        every = [(index, rotation) for index in range(games) for rotation in range(env.seats)]
        records = _play(env, layout, seed, deterministic, every, record_dir, executor, on_set=None)
    else:
        folder = Path(log_dir)
        folder.mkdir(parents=True, exist_ok=True)
        with hold_folder(folder, "evaluation", "it is being played; wait for it to end"):
            done = read_sets(folder, log_header(env, layout, seed, deterministic), env.seats)
            missing = [(i, r) for i in range(games) for r in range(env.seats) if r not in done.get(i, {})]
            played = _play(
                env,
                layout,
                seed,
                deterministic,
                missing,
                record_dir,
                executor,
                on_set=lambda part: append_set(folder, part),
            )
            records = sorted([r for i in range(games) for r in done.get(i, {}).values()] + played)
    deals = env.deals
    return {
        "env_id": env.id,
        "env_args": dict(env.args),
        "layout": layout,
        "games": len(records),
        "duplicate_sets": games,
        "seed": seed,
        "deterministic": deterministic,
        "lower_score_wins": env.spec.lower_score_wins,
        "deals_per_game": deals,
        "truncated_games": sum(winners is None for *_, winners in records),
        "agents": summarize(records, layout, games, deals),
    }


def bot_layout(env, bot, opponent: str, own_partner: bool = False) -> list[str]:
    """One agent per seat of ``env``: ``bot`` in seat 0 (and seat 2, its partner, when it
    plays its own partner in partnership play), ``opponent`` in all the others."""
    mine = env.side(0) if own_partner else {0}
    return [str(bot) if seat in mine else opponent for seat in range(env.seats)]


def evaluate_bot(env, bot, games: int, seed: int, processes: int = 1, own_partner: bool = False) -> dict:
    """``bot`` against the heuristic, then random play (``bot_layout``), in duplicate format:
    ``{opponent: {win_share, win_share_ci95, even_share, mean_score, games}}``."""
    out = {}
    for opponent in ("heuristic", "random"):
        result = evaluate(env, bot_layout(env, bot, opponent, own_partner), games, seed=seed, processes=processes)
        mine = result["agents"][str(bot)]
        out[opponent] = {k: mine[k] for k in ("win_share", "win_share_ci95", "even_share", "mean_score")}
        out[opponent]["games"] = result["games"]
    return out


def _interval(ci, digits: int) -> str:
    return "n/a" if ci is None else f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def format_table(result: dict) -> str:
    """The result for people: what was played, who sat where, what the score is, a row per agent."""
    layout, sets, seed, deals = result["layout"], result["duplicate_sets"], result["seed"], result["deals_per_game"]
    args = ", ".join(f"{k}={v}" for k, v in result["env_args"].items()) or "default arguments"
    sampling = "" if result["deterministic"] else "; checkpoints sample their moves"
    unit = f"points per deal (a game is {deals} deals)" if deals else "points per game"
    lines = [
        f"{result['env_id']}, {args}",
        f"{result['games']} games: {sets} duplicate sets (seeds {seed}-{seed + sets - 1}) x {len(layout)} "
        f"rotations{sampling}; truncated games (counted as draws): {result['truncated_games']}",
        "seats: "
        + ", ".join(f"{seat} {spec}" for seat, spec in enumerate(layout))
        + " (in a set's first game; each next one moves every agent one seat on)",
        f"score: final {unit}, mean over the agent's seats; {'lower' if result['lower_score_wins'] else 'higher'}"
        " is better",
        "win share: the agent's part of the wins (a shared win is split); even share: what it would get by "
        "playing no better than the others",
        "",
    ]
    per = deals or 1
    header = ["agent", "seats", "points/deal" if deals else "points/game", "95% CI"]
    header += ["points/game"] if deals else []
    rows = [header + ["win share", "95% CI", "even share"]]
    for spec, a in result["agents"].items():
        ci = None if a["mean_score_ci95"] is None else [bound / per for bound in a["mean_score_ci95"]]
        row = [spec, str(a["seats"]), f"{a['mean_score'] / per:.2f}", _interval(ci, 2)]
        row += [f"{a['mean_score']:.2f}"] if deals else []
        rows.append(row + [f"{a['win_share']:.3f}", _interval(a["win_share_ci95"], 3), f"{a['even_share']:.3f}"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines += [
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        for row in rows
    ]
    return "\n".join(lines)


def check_writable(path: str) -> None:
    """``ValueError`` naming ``path`` and the reason if it can't be written: checked before the
    games, not after them. An existing file is opened for appending, so it is kept as it is
    until the result replaces it; a new one is removed again."""
    existed = os.path.lexists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        raise ValueError(f"--json {path}: can't write it ({exc.strerror})") from None
    if not existed:
        os.remove(path)


def main(argv=None):
    parser = command_parser("evaluate", __doc__)
    add_table_arguments(parser)
    parser.add_argument("--games", type=int, default=100, help="duplicate sets (deal seeds); games = sets x seats")
    parser.add_argument("--seed", type=int, default=0, help="first deal seed (>= 0)")
    parser.add_argument(
        "--processes", type=int, default=min(os.cpu_count() or 1, 4), help="worker processes (1: play in this process)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the result as JSON")
    parser.add_argument(
        "--record",
        metavar="DIR",
        help="write every game's record (JSON lines) into DIR (python -m training.replay shows one)",
    )
    parser.add_argument(
        "--log",
        metavar="DIR",
        help="keep every finished game in DIR; the same command again plays only the missing ones",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--deterministic",
        dest="deterministic",
        action="store_true",
        default=True,
        help="checkpoint agents take their most likely action (default)",
    )
    mode.add_argument(
        "--stochastic", dest="deterministic", action="store_false", help="checkpoint agents sample from their policy"
    )
    add_executor_arguments(parser)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        if args.json:
            check_writable(args.json)
        env = EnvHandle(args.env, parse_env_args(args.arg))
        executor = executor_from_args(args, args.processes)
        result = evaluate(
            env,
            split_agents(args.agents),
            args.games,
            args.seed,
            args.processes,
            args.deterministic,
            args.record,
            executor,
            args.log,
        )
    except ValueError as error:  # a bad agent, checkpoint, env argument, count or path, an illegal move
        parser.exit(1, f"error: {error}\n")  # a message, not a traceback
    print(format_table(result))
    print(f"\n{time.perf_counter() - start:.1f} s with {executor.describe()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    return result


if __name__ == "__main__":
    main()
