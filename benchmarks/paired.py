"""Two agents compared set by set: the paired difference of their win shares on the deal
seeds both evaluation logs (``training.evaluate --log``) have finished, and of their lead in
points.

Two duplicate matches on the same deal seeds share most of their luck: a set whose deals
favour the heuristic favours it against both agents. The difference of the two agents'
win shares set by set cancels that, so it has a far narrower interval than the two
matches' intervals side by side (docs/strength.md's tuning rows).

    python benchmarks/paired.py benchmarks/results/tuning/craits_v0-ismcts_prior_craits_leaf_value \\
        benchmarks/results/tuning/craits_v0-craits

Each log's agent is the first of its layout (``--agents A,heuristic,heuristic,heuristic``, or
a partnership's ``A,heuristic`` that seats it twice);
a set counts when both logs hold all its games. Prints each agent's win share on those sets
and the difference (first − second), with 95% intervals over the sets.

It prints the same for each agent's lead: its points ahead of its opponents' mean in a game
(behind, in a game where points hurt, as in Craits: positive is better either way),
averaged over the set. The goals are win shares, but a lead keeps what a game's points say
beyond who won, so it separates two agents in fewer sets: on Craits' tuning logs its paired
difference stood 1.5 to 1.9 times as many standard errors from zero as the win shares'.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs.spec import game_spec  # noqa: E402
from training.matches.evaluate import Z95, per_game  # noqa: E402
from training.matches.evaluation_log import read_log  # noqa: E402


def set_results(folder: Path) -> tuple[str, dict, dict[int, tuple[float, float]]]:
    """The log's agent (its layout's first), its header, and its (win share, lead in points)
    in each finished set."""
    header, done = read_log(folder)
    layout = header["layout"]
    finished = sorted(index for index, games in done.items() if len(games) == len(layout))
    records = [  # numbered 0, 1, ... in the order of the finished sets
        (n, *done[index][rotation][1:]) for n, index in enumerate(finished) for rotation in range(len(layout))
    ]
    score, share = per_game(records, layout, len(finished))
    agent = layout[0]
    others = np.mean([score[spec] for spec in layout if spec != agent], axis=0)  # each seat once
    sense = -1.0 if game_spec(header["env"]).lower_score_wins else 1.0
    lead = sense * (score[agent] - others)
    return agent, header, dict(zip(finished, zip(share[agent].mean(axis=1).tolist(), lead.mean(axis=1).tolist())))


def interval(values: np.ndarray, digits: int = 3) -> str:
    mean = float(values.mean())
    half = Z95 * float(values.std(ddof=1)) / math.sqrt(len(values))
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def opponents(layout: list[str]) -> list[str | None]:
    """The layout with the agent's seats blanked: two logs pair when these agree (a
    partnership's agent holds two seats)."""
    return [None if spec == layout[0] else spec for spec in layout]


def compare(first: Path, second: Path) -> dict:
    agent_a, head_a, a = set_results(first)
    agent_b, head_b, b = set_results(second)
    same = ("env", "env_args", "rule_args", "seed")
    differ = [key for key in same if head_a.get(key) != head_b.get(key)]
    if differ or opponents(head_a["layout"]) != opponents(head_b["layout"]):
        what = ", ".join(differ) or "the opponents"
        raise SystemExit(
            f"paired: the two logs differ in {what}; a paired difference needs the same match but one agent"
        )
    common = sorted(set(a) & set(b))
    if len(common) < 2:
        raise SystemExit(f"paired: the logs share {len(common)} finished set(s); a paired interval needs two or more")
    share_a, lead_a = np.array([a[i] for i in common]).T
    share_b, lead_b = np.array([b[i] for i in common]).T
    return {
        "sets": len(common),
        "first": (agent_a, share_a),
        "second": (agent_b, share_b),
        "difference": share_a - share_b,
        "leads": (lead_a, lead_b),
        "lead_difference": lead_a - lead_b,
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", type=Path, help="an evaluation log folder (training.evaluate --log)")
    parser.add_argument("second", type=Path, help="another, of the same match with another agent")
    args = parser.parse_args(argv)
    result = compare(args.first, args.second)
    print(f"{result['sets']} sets finished in both logs")
    for key in ("first", "second"):
        agent, shares = result[key]
        print(f"  {agent}: win share {interval(shares)}")
    names = f"{result['first'][0]} − {result['second'][0]}"
    print(f"  difference, {names}: {interval(result['difference'])}")
    for (agent, _), leads in zip((result["first"], result["second"]), result["leads"]):
        print(f"  {agent}: lead in points over its opponents {interval(leads, 1)}")
    print(f"  difference in lead, {names}: {interval(result['lead_difference'], 1)}")
    return result


if __name__ == "__main__":
    main()
