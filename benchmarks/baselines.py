"""The baseline table (docs/baselines.md), measured: every number on that page comes from
one run of this script, whose command line the page records.

For each setting (Craits 4 players `craits`, Craits partnership `create`, Pairs Draft):

- the seat advantage: win share and points per seat of four random players (duplicate
  sets are no help here: every seat plays the same agent, so each seed is one game);
- a fixed field: each agent in seat 0 (seats 0 and 2 in partnership) against the heuristic
  bot in every other seat, duplicate format (``training.matches.evaluate``), win share and points
  with 95% intervals over the duplicate sets;
- a league of all the agents (``training.matches.league``): OpenSkill ratings with random pinned
  at 25, and the Bradley-Terry Elo with its bootstrap interval (not with ``--league-sets 0``).

The agents: random, the heuristic, IS-MCTS at the ``--search`` budgets, the shipped bots of
the setting, and the search guided by each (``ismcts:prior=BOT``, its default budget).

Run from the repository root (``--sets`` duplicate sets per row, ``--search-sets`` for the
rows whose agent searches; ``--search`` the IS-MCTS budgets; more of each take longer)::

    python benchmarks/baselines.py --sets 20 --search 20,100 --out docs/baselines.md

With ``--log DIR`` every finished duplicate set of a fixed-field row, and the league, are
kept under DIR (``training.evaluate --log``, ``training.league``): the same command again
plays only what is missing, so a long measurement can be spread over several runs.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from strength import SETTINGS as STRENGTH_SETTINGS  # noqa: E402  (this script's folder is on sys.path)

from training.common.games import EnvHandle  # noqa: E402
from training.matches.evaluate import Z95, evaluate, play_game  # noqa: E402

# The settings and their shipped bots are strength.py's, so that a bot shipped there gets its
# rows here too: {heading: (env id, env args, shipped bots' folders)}.
SETTINGS = {
    f"{s.name} (partnership)" if s.partnership else s.name: (
        s.env_id,
        s.args,
        [f"checkpoints/{bot}" for bot in (s.network, *s.challengers, *s.guides)],
    )
    for s in STRENGTH_SETTINGS
}


def seat_advantage(env, games: int, seed: int) -> list[tuple[float, float, float]]:
    """(win share, its 95% half-width, mean points) per seat, random players in every seat."""
    from training.agents import RandomAgent

    shares = [[] for _ in range(env.seats)]
    points = [[] for _ in range(env.seats)]
    for game in range(games):
        agents = [RandomAgent([seed, game, s]) for s in range(env.seats)]
        scores, winners = play_game(env.raw, agents, seed + game)
        winners = winners or list(range(env.seats))
        for s in range(env.seats):
            shares[s].append((s in winners) / len(winners))
            points[s].append(scores[s])
    out = []
    for s in range(env.seats):
        mean = sum(shares[s]) / games
        sd = math.sqrt(sum((x - mean) ** 2 for x in shares[s]) / max(1, games - 1))
        out.append((mean, Z95 * sd / math.sqrt(games), sum(points[s]) / games))
    return out


def ci(interval, digits: int) -> str:
    return "n/a" if interval is None else f"[{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def searches(agent: str) -> bool:
    return agent.startswith("ismcts")


def slug(text: str) -> str:
    """A folder name for a setting or an agent spec."""
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")


def measure(
    sets: int,
    budgets: list[int],
    seed: int,
    processes: int,
    league_sets: int,
    search_sets: int | None = None,
    log: Path | None = None,
) -> str:
    from training.matches.league import run_league

    argv = " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [
        "# Baselines",
        "",
        "Measured, never typed in: this page is written by",
        "",
        f"    python benchmarks/baselines.py {argv}",
        "",
        f"({time.strftime('%Y-%m-%d')}). Win shares are parts of the wins (a shared win split); the even share is "
        "what an agent gets by playing no better than the others. Intervals are 95% normal intervals over "
        "duplicate sets (over games for the seat advantage). Craits points are penalty points (lower is "
        "better); Pairs Draft points are gains (higher is better). Under `create`'s pressure rule penalties double "
        "without bound, so its mean points are dominated by a few runaway games: read its win shares.",
        "",
    ]
    search_sets = sets if search_sets is None else search_sets
    if search_sets != sets:
        lines += [f"Rows whose agent searches have {search_sets} duplicate sets, the others {sets}.", ""]
    if league_sets == 0:
        lines += ["No league this time (`--league-sets 0`): the fixed field only.", ""]
    for name, (env_id, args, shipped) in SETTINGS.items():
        env = EnvHandle(env_id, args)
        agents = ["random", "heuristic"] + [f"ismcts:simulations={b}" for b in budgets] + shipped
        agents += [f"ismcts:prior={bot}" for bot in shipped]
        partnered = env.rule_args.get("partnership", False)
        lines += [
            f"## {name} (`{env_id}`, {', '.join(f'{k}={v}' for k, v in args.items()) or 'default arguments'})",
            "",
            "### Seat advantage (four random players)",
            "",
            "| seat | win share | 95% CI | points |",
            "|---:|---:|---|---:|",
        ]
        for s, (share, half, pts) in enumerate(seat_advantage(env, sets * env.seats, seed)):
            lines.append(
                f"| {s} | {share:.3f} | [{max(0.0, share - half):.3f}, {min(1.0, share + half):.3f}] | {pts:.1f} |"
            )
        mine = "seats 0 and 2" if partnered else "seat 0"
        lines += [
            "",
            f"### Against a fixed field: the agent in {mine}, the heuristic bot in the others",
            "",
            "| agent | sets | win share | 95% CI | even | points/game | 95% CI |",
            "|---|---:|---:|---|---:|---:|---|",
        ]
        for agent in agents:
            if agent == "heuristic":
                continue  # the field itself: its share is the even one
            layout = [agent if s in ((0, 2) if partnered else (0,)) else "heuristic" for s in range(env.seats)]
            rows = search_sets if searches(agent) else sets
            where = None if log is None else log / slug(name) / slug(agent)
            result = evaluate(env, layout, rows, seed=seed, processes=processes, log_dir=where)["agents"][agent]
            lines.append(
                f"| `{agent}` | {rows} | {result['win_share']:.3f} | {ci(result['win_share_ci95'], 3)} | "
                f"{result['even_share']:.2f} | {result['mean_score']:.1f} | {ci(result['mean_score_ci95'], 1)} |"
            )
        if league_sets == 0:  # --league-sets 0: the fixed field only
            lines.append("")
            continue
        with contextlib.ExitStack() as stack:
            out = stack.enter_context(tempfile.TemporaryDirectory()) if log is None else log / slug(name) / "league"
            ratings = run_league(
                out,
                agents=agents,
                env_id=env_id,
                env_args=args,
                games=league_sets,
                seed=seed,
                processes=processes,
                verbose=False,
            )
            table = (Path(out) / "ratings.md").read_text().split("\n| rank")[1].split("\n\n")[0]
        lines += [
            "",
            f"### League ({league_sets} duplicate sets per pair; OpenSkill mu with random pinned at 25, "
            "Elo with random at 0)",
            "",
            "| rank" + table,
            "",
        ]
        del ratings
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=int, default=20, help="duplicate sets per fixed-field row")
    parser.add_argument("--search-sets", type=int, default=None, help="the same for rows that search (default: --sets)")
    parser.add_argument("--log", type=Path, default=None, help="keep finished sets here; again: play only the missing")
    parser.add_argument("--league-sets", type=int, default=4, help="duplicate sets per league pair (0: no league)")
    parser.add_argument("--search", default="20,100", help="IS-MCTS simulations per move, comma-separated")
    parser.add_argument("--seed", type=int, default=900_000, help="first deal seed (apart from training's)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--out", default="docs/baselines.md")
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.search.split(",") if b]
    text = measure(args.sets, budgets, args.seed, args.processes, args.league_sets, args.search_sets, args.log)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
