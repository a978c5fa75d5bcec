"""Train a MaskablePPO agent from a config file.

    python -m training.train --config configs/craits_quick.yaml [--set key.path=value ...]
    python -m training.train --resume runs/craits_quick          # continue an interrupted run

A run folder (``output.dir/output.name``) holds:

- ``config.yaml``      the resolved config (every value, defaults included)
- ``checkpoint/``      the latest checkpoint (see ``training.checkpoint``), rewritten atomically
- ``snapshots/``       self-play snapshots ``step_<timesteps>/`` (ordinary checkpoints)
- ``logs/from_<step>/`` the metrics CSV (``progress.csv``) and TensorBoard events of each
  stretch of training (a resumed run starts a new stretch; nothing is overwritten)
- ``evaluations.jsonl`` every periodic evaluation against the heuristic and random

Ctrl-C (or SIGTERM) writes a checkpoint before stopping, so ``--resume`` loses nothing trained on.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

from .checkpoint import recover_swap, save_checkpoint, update_meta
from .config import Config, ConfigError, check_resumable, dump_config, load_config

CONFIG_FILE = "config.yaml"


def make_vec_env(config: Config, run_dir: Path, first_timestep: int = 0):
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    from .learner_env import LearnerEnv, OpponentPool

    opp = config.opponents
    env_args = dict(config.env.args)

    subprocesses = config.vec.subprocesses and config.vec.n_envs > 1

    def factory(rank: int):
        def make():
            if subprocesses:  # Ctrl-C is the main process's to handle: it checkpoints, then closes the workers
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            def pool(raw):
                return OpponentPool(opp.pool, config.env.id, env_args, raw, snapshot_dir=run_dir / "snapshots",
                                    latest_weight=opp.self_play.latest_weight, window=opp.self_play.window,
                                    deterministic=opp.deterministic, seed=config.training.seed * 1000 + rank)
            return LearnerEnv(config.env.id, env_args, pool, opp.learner_seat, opp.partner,
                              seed=config.training.seed * 1000 + rank)
        return make

    factories = [factory(i) for i in range(config.vec.n_envs)]
    venv = SubprocVecEnv(factories) if subprocesses else DummyVecEnv(factories)
    # A resumed run seeds its envs anew from where it stopped, so it plays on with new deals
    # rather than replaying the ones it has trained on.
    venv.seed(config.training.seed + first_timestep)
    return VecMonitor(venv)


def new_model(config: Config, venv):
    import torch.nn as nn
    from sb3_contrib import MaskablePPO
    a = config.algorithm
    return MaskablePPO(
        "MlpPolicy", venv, learning_rate=a.learning_rate, n_steps=a.n_steps, batch_size=a.batch_size,
        n_epochs=a.n_epochs, gamma=a.gamma, gae_lambda=a.gae_lambda, clip_range=a.clip_range, ent_coef=a.ent_coef,
        vf_coef=a.vf_coef, max_grad_norm=a.max_grad_norm, device=a.device, seed=config.training.seed, verbose=0,
        policy_kwargs={"net_arch": list(a.net_arch), "activation_fn": {"tanh": nn.Tanh, "relu": nn.ReLU}[a.activation]})


def checkpoint_meta(config: Config, model, evaluation, seconds: float) -> dict:
    a = config.algorithm
    from .games import make_raw_env
    rules = make_raw_env(config.env.id, **config.env.args).rule_args()
    return {"env_id": config.env.id, "env_args": dict(config.env.args), "rules": rules,
            "observation_size": int(model.observation_space.shape[0]), "action_size": int(model.action_space.n),
            "algorithm": dict(vars(a)),
            "timesteps": int(model.num_timesteps), "seed": config.training.seed, "evaluation": evaluation,
            "run": config.output.name, "training_seconds": round(seconds, 1)}


def evaluate_checkpoint(config: Config, path, games: int, seed: int, processes: int = 1) -> dict:
    """The checkpoint in one seat (both seats of its side when it was trained to play its
    own partner), the heuristic, then random, in all others; duplicate format."""
    from .evaluate import evaluate
    from .games import make_raw_env
    raw = make_raw_env(config.env.id, **config.env.args)
    seats = len(raw.possible_agents)
    own_partner = raw.rule_args().get("partnership", False) and config.opponents.partner == "learner"
    out = {}
    for opponent in ("heuristic", "random"):
        layout = [str(path), opponent] if own_partner else [str(path)] + [opponent] * (seats - 1)
        result = evaluate(config.env.id, dict(config.env.args), layout, games, seed=seed, processes=processes)
        mine = result["agents"][str(path)]
        out[opponent] = {k: mine[k] for k in ("win_share", "win_share_ci95", "even_share", "mean_score")}
        out[opponent]["games"] = result["games"]
    return out


def uses_self_play(config: Config) -> bool:
    return any(e.agent == "self_play" for e in config.opponents.pool)


def save_snapshot(config: Config, model, run_dir: Path, seconds: float) -> None:
    """A policy-only checkpoint under ``snapshots/`` for the self-play pool."""
    save_checkpoint(run_dir / "snapshots" / f"step_{model.num_timesteps:09d}", model,
                    checkpoint_meta(config, model, None, seconds), with_model=False)


class RunCallback:
    """Snapshots, checkpoints and evaluations on their cadences (built lazily: SB3 import)."""

    @staticmethod
    def build(config: Config, run_dir: Path, started: float, evaluation=None):
        from stable_baselines3.common.callbacks import BaseCallback

        cp = config.checkpoints

        class _Callback(BaseCallback):
            def _init_callback(self) -> None:
                now = self.num_timesteps
                self.next_snapshot = now + config.opponents.self_play.snapshot_every if uses_self_play(config) else None
                self.next_checkpoint = (now // cp.every + 1) * cp.every
                self.next_eval = (now // cp.eval_every + 1) * cp.eval_every
                self.evaluation = evaluation  # the last one, kept in every checkpoint until the next

            def _on_training_start(self) -> None:
                from tqdm import tqdm
                self.bar = tqdm(total=config.training.total_timesteps, initial=self.num_timesteps, unit="step",
                                desc=config.output.name, dynamic_ncols=True, mininterval=1.0)

            def _on_training_end(self) -> None:
                self.close()

            def close(self) -> None:
                if getattr(self, "bar", None) is not None:
                    self.bar.close()
                    self.bar = None

            def _on_step(self) -> bool:
                now = self.num_timesteps
                self.bar.update(now - self.bar.n)
                if self.next_snapshot is not None and now >= self.next_snapshot:
                    save_snapshot(config, self.model, run_dir, time.time() - started)
                    self.next_snapshot = now + config.opponents.self_play.snapshot_every
                if now >= self.next_eval:
                    self.next_eval = now + cp.eval_every
                    self.run_evaluation()
                elif now >= self.next_checkpoint:
                    self.save()
                return True

            def meta(self) -> dict:
                return checkpoint_meta(config, self.model, self.evaluation, time.time() - started)

            def save(self):
                self.next_checkpoint = self.num_timesteps + cp.every
                return save_checkpoint(run_dir / "checkpoint", self.model, self.meta())

            def run_evaluation(self):
                if self.evaluation and self.evaluation["timesteps"] == self.num_timesteps:
                    return  # already evaluated at this very step (the run ended on an evaluation)
                path = self.save()
                self.evaluation = evaluate_checkpoint(config, path, cp.eval_games, seed=10_000 + config.training.seed)
                self.evaluation["timesteps"] = int(self.num_timesteps)
                update_meta(path, {"evaluation": self.evaluation})
                with open(run_dir / "evaluations.jsonl", "a") as f:
                    f.write(json.dumps(self.evaluation) + "\n")
                for opponent, r in self.evaluation.items():
                    if isinstance(r, dict):
                        self.logger.record(f"eval/win_share_vs_{opponent}", r["win_share"])
                        self.logger.record(f"eval/mean_score_vs_{opponent}", r["mean_score"])
                self.logger.dump(self.num_timesteps)

        return _Callback()


def fresh_run_dir(config: Config) -> Path:
    """``output.dir/output.name``, or ``name-2``, ``name-3`` … if that run already exists."""
    base = config.run_dir
    path, k = base, 1
    while path.exists():
        k += 1
        path = base.with_name(f"{base.name}-{k}")
    return path


def train(config: Config, run_dir: Path, resume: bool = False) -> Path:
    """Train into ``run_dir``; with ``resume``, continue from its checkpoint.

    Interrupted, it checkpoints and exits with status 130. The experience gathered in the
    rollout under way is dropped (at most ``n_steps x n_envs`` steps); everything trained on
    is in the checkpoint."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure

    import torch
    torch.set_num_threads(config.algorithm.torch_threads)
    previous = json.loads((run_dir / "checkpoint" / "meta.json").read_text()) if resume else {}
    start = previous.get("timesteps", 0)
    remaining = config.training.total_timesteps - start
    if remaining <= 0:
        print(f"{run_dir} already holds {start} of {config.training.total_timesteps} timesteps: nothing to train "
              f"(raise it with --set training.total_timesteps=...)")
        return run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CONFIG_FILE).write_text(dump_config(config))
    venv = make_vec_env(config, run_dir, first_timestep=start)
    if resume:
        model = MaskablePPO.load(run_dir / "checkpoint" / "model.zip", env=venv, device=config.algorithm.device)
    else:
        model = new_model(config, venv)
    snapshots = run_dir / "snapshots"
    if uses_self_play(config) and not (snapshots.is_dir() and any(snapshots.iterdir())):
        save_snapshot(config, model, run_dir, 0.0)  # the pool needs one before the first reset
    model.set_logger(configure(str(run_dir / "logs" / f"from_{start:09d}"), ["csv", "tensorboard"]))
    started = time.time() - previous.get("training_seconds", 0.0)  # training time adds up across interruptions
    callback = RunCallback.build(config, run_dir, started, previous.get("evaluation"))
    previous_handler = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        model.learn(remaining, callback=callback, reset_num_timesteps=False)
    except KeyboardInterrupt:
        callback.close()
        # An interrupted step can leave the subprocess workers' replies half read, and
        # SubprocVecEnv.close() would wait for them forever: skip that wait.
        getattr(venv, "venv", venv).waiting = False
        save_checkpoint(run_dir / "checkpoint", model, checkpoint_meta(
            config, model, getattr(callback, "evaluation", previous.get("evaluation")), time.time() - started))
        print(f"\ninterrupted at {model.num_timesteps} timesteps; checkpoint written. Continue with:\n"
              f"  python -m training.train --resume {run_dir}", file=sys.stderr)
        raise SystemExit(130)
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
        venv.close()
    callback.run_evaluation()
    return run_dir


def resume_config(run_dir: Path, overrides: list[str]) -> Config:
    """The run's saved config with the changes a resumed run may make."""
    recover_swap(run_dir / "checkpoint")
    if not (run_dir / CONFIG_FILE).is_file() or not (run_dir / "checkpoint" / "model.zip").is_file():
        raise ConfigError(f"{run_dir} is not a run that can be resumed (needs {CONFIG_FILE} and checkpoint/model.zip)")
    saved = load_config(run_dir / CONFIG_FILE)
    wanted = load_config(run_dir / CONFIG_FILE, overrides)
    check_resumable(saved, wanted)
    return wanted


def check_comparisons(config: Config, paths: list[str], games: int) -> None:
    """Fail before training, not after it, on a checkpoint that can't be compared here."""
    from .agents import make_agent
    from .games import make_raw_env
    if games < 1:
        raise ConfigError(f"--compare-games must be >= 1, got {games}")
    raw = make_raw_env(config.env.id, **config.env.args)
    for path in paths:
        try:
            make_agent(path, raw, config.env.id, config.env.args)
        except ValueError as exc:
            raise ConfigError(f"--compare {path}: {exc}") from None


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def print_summary(run_dir: Path) -> None:
    meta = json.loads((run_dir / "checkpoint" / "meta.json").read_text())
    print(f"\ntrained {meta['env_id']} for {meta['timesteps']} timesteps in {meta['training_seconds']} s: "
          f"{run_dir / 'checkpoint'}")
    for opponent, r in (meta["evaluation"] or {}).items():
        if isinstance(r, dict):
            ci = "95% CI {:.3f}-{:.3f}, ".format(*r["win_share_ci95"]) if r["win_share_ci95"] else ""
            print(f"  vs {opponent:<9} win share {r['win_share']:.3f} ({ci}even {r['even_share']:.3f}),"
                  f" mean score {r['mean_score']:.2f} over {r['games']} games")


def compare(config: Config, new: Path, others: list[str], games: int) -> None:
    """The new bot beside other checkpoints, each in one seat against the heuristic, then
    random, in every other seat (duplicate format, ``games`` sets, the same deals for all)."""
    print(f"\n{'bot':<40} {'opponents':<10} {'win share':>9} {'95% CI':>13} {'even':>5} {'mean score':>10}")
    for bot in [str(new)] + others:
        results = evaluate_checkpoint(config, bot, games, seed=20_000, processes=min(os.cpu_count() or 1, 4))
        for opponent, r in results.items():
            ci = "{:.3f}-{:.3f}".format(*r["win_share_ci95"]) if r["win_share_ci95"] else "n/a"
            print(f"{bot:<40} {opponent:<10} {r['win_share']:>9.3f} {ci:>13} {r['even_share']:>5.2f} "
                  f"{r['mean_score']:>10.2f}")


def show(config: Config, new: Path) -> None:
    """One game (Craits: one deal) of the new bot against the heuristic, move by move."""
    from .play import play
    args = dict(config.env.args)
    if config.env.id == "craits_v0":
        args["deals"] = [8]
    print(f"\n--- {new} (seat 0) against the heuristic ---")
    play(config.env.id, args, [str(new), "heuristic"], seed=config.training.seed)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--config", help="YAML config file (see configs/)")
    group.add_argument("--resume", metavar="RUN", help="run folder of an interrupted run")
    parser.add_argument("--set", action="append", default=[], metavar="KEY.PATH=VALUE",
                        help="override a config value, e.g. --set training.total_timesteps=50000")
    parser.add_argument("--compare", nargs="*", metavar="CHECKPOINT",
                        help="after training, evaluate the new bot and these checkpoints against heuristic and random")
    parser.add_argument("--compare-games", type=int, default=100, metavar="N",
                        help="duplicate sets per --compare evaluation (default 100)")
    parser.add_argument("--show", action="store_true", help="after training, print a game of the new bot")
    args = parser.parse_args(argv)
    try:
        if args.resume:
            run_dir = Path(args.resume)
            config = resume_config(run_dir, args.set)
        else:
            config = load_config(args.config, args.set)
            run_dir = fresh_run_dir(config)
        check_comparisons(config, args.compare or [], args.compare_games)
        train(config, run_dir, resume=bool(args.resume))
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}")
    print_summary(run_dir)
    if args.show:
        show(config, run_dir / "checkpoint")
    if args.compare is not None:
        compare(config, run_dir / "checkpoint", args.compare, args.compare_games)


if __name__ == "__main__":
    main()
