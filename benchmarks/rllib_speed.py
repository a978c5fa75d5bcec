"""Learner steps per second of RLlib's PPO (``rllib_ppo``) with 1 and 2 env runners, and
sampling in the trainer's own process (0 env runners, as the benchmark's trials do) with
``--in-process`` numbers of games, beside the batched SB3 path (MaskablePPO on
``BatchedLearnerEnv``), in one run.

All rows train on the same game (configs/craits_rllib_quick.yaml's Craits, one deal per
episode) against the same opponents (the heuristic in every other seat), with the same
network (128x128 tanh), a similar batch (about ``--learner-batch`` learner moves per update:
SB3 ``n_steps x n_envs``; RLlib ``train_batch_size`` = that x the 4 seats, as RLlib counts the
opponents' moves too) and the same update (minibatches of 256, 4 epochs, 1 torch thread).
A learner step is one move of the learner: sampling and updating both count. Each row is
timed over ``--iterations`` updates after one warm-up update (building Ray and the env runners
is not timed).

Run from the repository root::

    python benchmarks/rllib_speed.py --iterations 4 --in-process 8,64
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from training.common.games import EnvHandle  # noqa: E402
from training.learning.config import load_config  # noqa: E402

N_ENVS = 16  # games sampled side by side: SB3's n_envs, RLlib's envs over all its env runners


def base_overrides(tmp: str) -> list[str]:
    return ["opponents.pool=[{agent: heuristic, weight: 1.0}]", f"output.dir={tmp}", "output.name=speed"]


def sb3_row(learner_batch: int, iterations: int, tmp: str) -> float:
    from training.algorithms import maskable_ppo
    from training.learning.train import make_vec_env

    config = load_config(
        ROOT / "configs" / "craits_quick.yaml",
        base_overrides(tmp)
        + [
            f"vec.n_envs={N_ENVS}",
            f"algorithm.n_steps={learner_batch // N_ENVS}",
            "algorithm.batch_size=256",
            "algorithm.n_epochs=4",
        ],
    )
    env = EnvHandle(config.env.id, config.env.args)
    venv = make_vec_env(config, env, Path(tmp))
    model = maskable_ppo.new(config, venv)
    rollout = model.n_steps * model.n_envs
    model.learn(rollout)  # warm-up
    start, steps = time.perf_counter(), model.num_timesteps
    model.learn(iterations * rollout, reset_num_timesteps=False)
    return (model.num_timesteps - steps) / (time.perf_counter() - start)


def rllib_row(runners: int, games: int, learner_batch: int, iterations: int, tmp: str) -> float:
    """``games`` over ``runners`` env runners (0: all in the trainer's process)."""
    from training.algorithms import rllib_ppo
    from training.learning.train import make_vec_env

    config = load_config(
        ROOT / "configs" / "craits_rllib_quick.yaml",
        base_overrides(tmp)
        + [
            f"algorithm.num_env_runners={runners}",
            f"algorithm.num_envs_per_env_runner={games // max(runners, 1)}",
            f"algorithm.train_batch_size={4 * learner_batch}",
            "algorithm.minibatch_size=256",
            "algorithm.num_epochs=4",
        ],
    )
    env = EnvHandle(config.env.id, config.env.args)
    model = rllib_ppo.new(config, make_vec_env(config, env, Path(tmp)))
    model.algo.train()  # warm-up
    start, steps = time.perf_counter(), 0
    for _ in range(iterations):
        steps += model.learner_steps(model.algo.train())
    seconds = time.perf_counter() - start
    model.algo.stop()
    return steps / seconds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=4, help="timed updates per row")
    parser.add_argument("--learner-batch", type=int, default=1024, help="learner moves per update")
    parser.add_argument(
        "--in-process",
        default="8,64",
        help="numbers of games for rows sampling in the trainer's process (0 env runners)",
    )
    args = parser.parse_args(argv)
    import tempfile

    import ray
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [("SB3 MaskablePPO, batched env (in process)", 0, sb3_row(args.learner_batch, args.iterations, tmp))]
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
        try:
            for runners in (1, 2):
                rows.append(
                    (
                        f"RLlib PPO, {runners} env runner{'s' * (runners > 1)}, {N_ENVS} games",
                        runners,
                        rllib_row(runners, N_ENVS, args.learner_batch, args.iterations, tmp),
                    )
                )
            for games in (int(n) for n in args.in_process.split(",") if n):
                rows.append(
                    (
                        f"RLlib PPO, in the trainer's process, {games} games",
                        0,
                        rllib_row(0, games, args.learner_batch, args.iterations, tmp),
                    )
                )
        finally:
            ray.shutdown()
    print(f"$ python benchmarks/rllib_speed.py {shlex.join(argv if argv is not None else sys.argv[1:])}")
    print(
        f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} at the end; {N_ENVS} games "
        "unless a row says otherwise, "
        f"about {args.learner_batch} learner moves per update, {args.iterations} timed updates per row\n"
    )
    print("| path | learner steps/s | vs SB3 |\n|---|---:|---:|")
    sb3 = rows[0][2]
    for name, _, speed in rows:
        print(f"| {name} | {speed:,.0f} | {speed / sb3:.2f}x |")


if __name__ == "__main__":
    main()
