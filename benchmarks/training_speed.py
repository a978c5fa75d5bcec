"""Learner steps/s of MaskablePPO on three paths, with the same PPO settings, in one run.

- ``batched``: deckgym's training path, ``BatchedLearnerEnv`` (N games in lockstep, policy
  opponents in one forward pass per network), built by ``training.learning.train.make_vec_env``.
- ``dummy``: SB3's ``DummyVecEnv`` over N single ``LearnerEnv`` games, the same opponents.
- ``tutorial``: the PettingZoo connect_four action-mask tutorial pattern (one AEC env wrapped
  as a gymnasium env whose one policy plays every seat, SB3's ``ActionMasker``), on
  connect_four itself. Needs pygame (``pip install -e ".[bench]"``); skipped without it.

Every path trains with the same PPO settings (``--rollout`` steps per rollout, split over N
envs; batch 256, 4 epochs, MLP 128x128 tanh, one torch thread). Rows are learner steps/s
(the steps the learner acts on) and the ratios to the tutorial pattern with the same N and
with its best N, for both games, with heuristic and with policy opponents (the shipped bot),
for every N of ``--n``; each row also gives the time of its PPO updates per learner step and
their share. The updates of a game cost the same on every path (same settings, same rollout
size; a game's larger observations make them dearer than connect_four's), so the last lines
print the ceiling they set: the learner steps/s a path would reach if everything else were
free, as a multiple of the tutorial at its best. Figures of one run compare with each
other; absolute steps/s depend on the machine and its load.
``benchmarks/training_profile.py`` shows where the time goes.

Run from the repository root::

    python benchmarks/training_speed.py                    # both games, N = 8, 32, 128
    python benchmarks/training_speed.py --games craits --n 32 --steps 20000 --workers 2
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PPO = {"batch_size": 256, "n_epochs": 4, "net_arch": [128, 128], "activation": "tanh", "torch_threads": 1}
# The bots docs/speed.md was measured with as opponents (MaskablePPO, MLP 256x256): the shipped
# bots of that time, kept under these names.
SHIPPED = {"craits_v0": "checkpoints/craits_ppo", "pairs_draft_v0": "checkpoints/pairs_draft_ppo"}


def deckgym_config(env_id: str, opponents: str, n: int, rollout: int, workers: int, out: str):
    from training.learning.config import load_config

    agent = "heuristic" if opponents == "heuristic" else SHIPPED[env_id]
    sets = [
        f"env.id={env_id}",
        f"vec.n_envs={n}",
        f"vec.workers={workers}",
        f"algorithm.n_steps={rollout // n}",
        f"opponents.pool=[{{agent: {agent}, weight: 1}}]",
        f"output.dir={out}",
    ]
    sets += [f"algorithm.{key}={value}" for key, value in PPO.items()]
    sets += [f"algorithm.batch_size={min(PPO['batch_size'], rollout)}"]
    return load_config(data={"env": {"id": env_id, "args": {}}}, overrides=sets)


def model_for(venv, config):
    from training.learning.train import new_model

    return new_model(config, venv)


def timed_learn(model, steps: int) -> tuple[float, float]:
    """Learner steps/s of ``model.learn(steps)`` after one warm-up rollout, and the seconds per
    learner step spent in the PPO updates (``model.train``) among them."""
    model.learn(model.n_steps * model.n_envs)
    updating, train = [0.0], model.train

    def timed_train():
        began = time.perf_counter()
        train()
        updating[0] += time.perf_counter() - began

    model.train = timed_train  # learn() calls self.train() after every rollout
    start, before = time.perf_counter(), model.num_timesteps
    model.learn(steps, reset_num_timesteps=False)
    done = model.num_timesteps - before
    return done / (time.perf_counter() - start), updating[0] / done


def batched(env_id, opponents, n, rollout, steps, workers) -> float:
    from training.common.games import EnvHandle
    from training.learning.train import make_vec_env

    with tempfile.TemporaryDirectory() as out:
        config = deckgym_config(env_id, opponents, n, rollout, workers, out)
        venv = make_vec_env(config, EnvHandle(env_id, {}), Path(out))
        try:
            return timed_learn(model_for(venv, config), steps)
        finally:
            venv.close()


def dummy(env_id, opponents, n, rollout, steps, workers) -> float:
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from training.common.games import EnvHandle
    from training.learning.learner_env import LearnerEnv
    from training.learning.train import learner_table

    with tempfile.TemporaryDirectory() as out:
        config = deckgym_config(env_id, opponents, n, rollout, 1, out)
        env = EnvHandle(env_id, {})

        def single(rank):
            table = learner_table(config, env, Path(out), rank)
            return LearnerEnv(
                env,
                table.pool,
                config.opponents.learner_seat,
                config.opponents.partner,
                seed=config.training.seed * 1000 + rank,
            )

        venv = VecMonitor(DummyVecEnv([lambda rank=rank: single(rank) for rank in range(n)]))
        venv.seed(config.training.seed)
        return timed_learn(model_for(venv, config), steps)


def tutorial(rollout: int, steps: int, n: int = 1) -> float:
    """The PettingZoo SB3 tutorial's pattern on connect_four: the AEC env stepped through a
    gymnasium-style wrapper, masks from ``ActionMasker``; ``n`` of them in SB3's
    ``DummyVecEnv`` (the tutorial itself trains one)."""
    import gymnasium
    import torch.nn as nn
    from pettingzoo.classic import connect_four_v3
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker

    class AecAsGym(gymnasium.Env):
        def __init__(self):
            self.aec = connect_four_v3.env()
            self.aec.reset(seed=0)
            agent = self.aec.possible_agents[0]
            self.observation_space = gymnasium.spaces.Box(
                0,
                1,
                self.aec.observation_space(agent)["observation"].shape,
                self.aec.observation_space(agent)["observation"].dtype,
            )
            self.action_space = self.aec.action_space(agent)

        def reset(self, seed=None, options=None):
            self.aec.reset(seed, options)
            return self.aec.observe(self.aec.agent_selection)["observation"], {}

        def step(self, action):
            acting = self.aec.agent_selection
            self.aec.step(action)
            return (
                self.aec.observe(self.aec.agent_selection)["observation"],
                self.aec._cumulative_rewards[acting],
                self.aec.terminations[acting],
                self.aec.truncations[acting],
                self.aec.infos[acting],
            )

        def action_mask(self):
            return self.aec.observe(self.aec.agent_selection)["action_mask"]

    from stable_baselines3.common.vec_env import DummyVecEnv

    env = DummyVecEnv([lambda: ActionMasker(AecAsGym(), lambda env: env.action_mask()) for _ in range(n)])
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=rollout // n,
        batch_size=min(PPO["batch_size"], rollout),
        n_epochs=PPO["n_epochs"],
        seed=0,
        verbose=0,
        policy_kwargs={"net_arch": PPO["net_arch"], "activation_fn": nn.Tanh},
    )
    return timed_learn(model, steps)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="craits_v0,pairs_draft_v0")
    parser.add_argument("--opponents", default="heuristic,policy", help="heuristic and/or policy (the shipped bot)")
    parser.add_argument("--n", default="8,32,128", help="numbers of envs")
    parser.add_argument("--rollout", type=int, default=2048, help="steps per rollout, over all envs")
    parser.add_argument("--steps", type=int, default=8192, help="timed learner steps per row, after a warm-up rollout")
    parser.add_argument("--workers", type=int, default=1, help="vec.workers of the batched path")
    parser.add_argument("--paths", default="batched,dummy", help="batched and/or dummy")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(PPO["torch_threads"])
    from training.running.executor import limit_threads

    limit_threads(PPO["torch_threads"])  # numpy's BLAS too, as training.learning.train does
    base = {}  # N -> the tutorial pattern's learner steps/s with N envs
    for n in map(int, args.n.split(",")):
        try:
            base[n], update = tutorial(args.rollout, args.steps, n)
            print(
                f"tutorial pattern (connect_four, N={n}, n_steps {args.rollout // n}): {base[n]:,.0f} learner steps/s"
                f"  (PPO updates {update * 1e6:.0f} us/step, {update * base[n]:.0%})"
            )
        except ImportError as exc:
            print(f"skipped the tutorial pattern: {exc} (pip install -e '.[bench]')")
            break
    best = max(base.values(), default=None)  # the goal compares with the tutorial at its best N
    rows, least_update = [], {}
    paths = {"batched": batched, "dummy": dummy}
    for env_id in args.games.split(","):
        for opponents in args.opponents.split(","):
            for n in map(int, args.n.split(",")):
                for path in args.paths.split(","):
                    rate, update = paths[path](env_id, opponents, n, args.rollout, args.steps, args.workers)
                    rows.append((env_id, opponents, n, path, rate, update))
                    least_update[env_id] = min(update, least_update.get(env_id, update))
                    ratio = (
                        f"  {rate / base[n]:.2f}x the tutorial at N={n}, {rate / best:.2f}x at its best" if base else ""
                    )
                    print(
                        f"{env_id:<15} {opponents:<10} N={n:<4} {path:<8} {rate:>8,.0f} learner steps/s  "
                        f"(PPO updates {update * 1e6:.0f} us/step, {update * rate:.0%}){ratio}",
                        flush=True,
                    )
    if best:
        # The PPO updates cost the same on every path of a game (same settings, same rollout
        # size), so they alone bound what any faster rollout collection can reach.
        print(
            "\nceiling: with everything but the PPO updates free, a game's path would reach at most "
            "1 / (its least update time per step) learner steps/s, as a multiple of the tutorial at its best:"
        )
        for env_id, update in least_update.items():
            print(f"  {env_id:<15} {1 / update:>8,.0f} learner steps/s = {1 / update / best:.2f}x")
    return rows


if __name__ == "__main__":
    main()
