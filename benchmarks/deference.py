"""Where a Q-network's edge over the heuristic lies: the network deferring to the heuristic
rule on its close calls.

The agent plays the network's best move, unless the heuristic bot's move is worth within
``--margin`` of it by the network's own Q-values: then it plays the heuristic's. Margin 0
is the network itself; a large margin is the heuristic. If the network's edge lay in a few
clear decisions and its close calls were noise, deferring on them would cost nothing (or
gain, where the rule knows better); if it costs, the network is right where it differs.
One seat against three heuristic bots in duplicate format, with ``training.evaluate``'s
resumable log (``--log``), so the result pairs set by set with the network's own log on the
same seeds (``benchmarks/paired.py``):

    python benchmarks/deference.py --env craits_v0 --network craits_ensemble --margin 0.02 \\
        --sets 1600 --seed 800000 --log benchmarks/results/tuning/craits_v0-craits_ensemble-defers_0.02

It prints how often the network's move and the heuristic's differ, and how often it deferred.
The agent is named ``NETWORK defers MARGIN`` in the log. It plays in one process: the match's
agent factory is swapped for one that knows it.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import training.matches.evaluate as match  # noqa: E402
from training.agents import load_network, make_agent  # noqa: E402
from training.common.games import EnvHandle  # noqa: E402


class Deferring:
    """A Q-network that plays the heuristic's move when the network values it within
    ``margin`` of its own best."""

    def __init__(self, name: str, network, heuristic, margin: float, counts: dict):
        self.name, self.network, self.heuristic, self.margin, self.counts = name, network, heuristic, margin, counts

    def reset(self) -> None:
        self.network.reset()
        self.heuristic.reset()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        rule = int(self.heuristic.act(observation, action_mask))  # asked every move: it may keep a memory
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        q = self.network.logits(observation)
        best = int(legal[np.argmax(q[legal])])  # the network's move (masked argmax: the lowest of ties)
        self.counts["decisions"] += 1
        if rule != best:
            self.counts["differ"] += 1
            if q[rule] >= q[best] - self.margin:
                self.counts["deferred"] += 1
                return rule
        return best


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", required=True, help="craits_v0 or pairs_draft_v0 (their default rules)")
    parser.add_argument("--network", required=True, help="a Q-network: a shipped bot or checkpoint folder")
    parser.add_argument("--margin", type=float, required=True, help="defer within this much of the best Q-value")
    parser.add_argument("--sets", type=int, default=400, help="duplicate sets (a game per seat rotation each)")
    parser.add_argument("--seed", type=int, default=800000, help="the first deal seed")
    parser.add_argument("--log", type=Path, help="a resumable game log (training.evaluate --log)")
    args = parser.parse_args(argv)
    if not math.isfinite(args.margin) or args.margin < 0:
        parser.error(f"--margin {args.margin}: must be a number >= 0")
    env = EnvHandle(args.env)
    try:
        network = load_network(
            args.network,
            env,
            f"--network {args.network}: no such checkpoint folder or shipped bot",
            f"--network {args.network}",
        )
    except ValueError as exc:  # CheckpointError too: another game, other rules
        parser.error(str(exc))
    if network.meta.get("action_selection") != "masked_argmax":
        parser.error(f"--network {args.network}: its outputs are policy logits; a margin needs Q-values (Double DQN)")
    agent = f"{args.network} defers {args.margin:g}"
    counts = {"decisions": 0, "differ": 0, "deferred": 0}

    def make(spec: str, env, seed=None, deterministic: bool = True):
        if spec == agent:
            return Deferring(spec, network, make_agent("heuristic", env), args.margin, counts)
        return make_agent(spec, env, seed, deterministic)

    match.make_agent = make  # one process: workers would not see the swap
    try:
        result = match.evaluate(
            env, [agent] + ["heuristic"] * (env.seats - 1), args.sets, seed=args.seed, log_dir=args.log
        )
    finally:
        match.make_agent = make_agent
    mine = result["agents"][agent]
    low, high = mine["win_share_ci95"]
    print(
        f"{agent}: win share {mine['win_share']:.3f} [{low:.3f}, {high:.3f}] (even {mine['even_share']:.2f}), "
        f"{args.sets} sets from seed {args.seed}"
    )
    if counts["decisions"]:  # the games played by this run (none when the log held them all)
        n = counts["decisions"]
        print(
            f"of {n} decisions with a choice: the heuristic's move differed in {counts['differ'] / n:.1%}, "
            f"deferred to in {counts['deferred'] / n:.1%}"
        )
    return result


if __name__ == "__main__":
    main()
