"""RLlib's PPO on Craits through deckgym's own RLlib path, from Python.

The config ``configs/craits_rllib_quick.yaml`` (``algorithm.name: rllib_ppo``, see
docs/rllib.md) is loaded, given a budget with ``key.path=value`` overrides (the same as the
command line's ``--set``), checked, and trained: RLlib plays every seat of the
multi-agent game (``training.learning.rllib_env.AECMultiAgentEnv``), trains one masked PPO
module (``learner``) and seats the pool's opponents (heuristic, random, self-play) in the
others. The run folder holds the usual checkpoint (``meta.json`` + ``policy.npz``, played by
numpy), which is then evaluated against the heuristic bot and random play, as
``python -m training.evaluate`` would.

    pip install -e '.[train,scale]'                     # ray[rllib]
    python examples/rllib_ppo.py                        # 20k learner moves
    python examples/rllib_ppo.py --total-steps 200 --tiny   # the smoke test CI runs
    python examples/rllib_ppo.py --set algorithm.num_env_runners=2 --set algorithm.lr=0.0001

The command-line equivalent is ``python -m training.train --config configs/craits_rllib_quick.yaml
--set training.total_timesteps=20000``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from training.learning.config import load_config
from training.learning.preflight import check_config
from training.learning.train import train
from training.matches.evaluate import evaluate_bot
from training.shipped import config_path

# A network and batch small enough for a CI smoke test: one short iteration, no Ray actors.
TINY = [
    "algorithm.net_arch=[32]",
    "algorithm.train_batch_size=512",
    "algorithm.minibatch_size=128",
    "algorithm.num_epochs=1",
    "algorithm.num_env_runners=0",
    "algorithm.num_envs_per_env_runner=2",
    "opponents.self_play.snapshot_every=100",
]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--total-steps", type=int, default=20_000, help="learner moves to train on")
    p.add_argument("--tiny", action="store_true", help="a tiny network and batch (the CI smoke test)")
    p.add_argument("--set", action="append", default=[], metavar="KEY.PATH=VALUE", help="any other config override")
    p.add_argument("--out", help="folder for the run (default: a temporary folder, removed at the end)")
    p.add_argument("--eval-games", type=int, default=20, help="duplicate sets (x 4 games) per evaluation")
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        overrides = [
            f"training.total_timesteps={args.total_steps}",
            f"checkpoints.every={args.total_steps}",  # a checkpoint at the end
            f"checkpoints.eval_every={10 * args.total_steps}",  # no evaluation during training: it follows below
            f"output.dir={out}",
            "output.name=craits_rllib_example",
            *(TINY if args.tiny else []),
            *args.set,
        ]
        config = load_config(config_path("craits_rllib_quick"), overrides)
        env = check_config(config)  # a bad key or value, or Ray missing: a message naming it
        run = train(config)
        checkpoint = run / "checkpoint"
        print(f"trained checkpoint: {checkpoint}{'' if args.out else ' (temporary)'}")

        result = evaluate_bot(env, checkpoint, games=args.eval_games, seed=10_000)
        print(f"evaluation of the RLlib PPO bot in seat 0 ({args.eval_games} duplicate sets):")
        for opponent, r in result.items():
            ci = "95% CI {:.3f}-{:.3f}, ".format(*r["win_share_ci95"]) if r["win_share_ci95"] else ""
            print(
                f"  vs 3 x {opponent:<9} win share {r['win_share']:.3f} ({ci}even {r['even_share']:.3f}), "
                f"mean score {r['mean_score']:.2f} over {r['games']} games"
            )


if __name__ == "__main__":
    main()
