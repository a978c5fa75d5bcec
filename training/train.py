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
- ``.lock``            held (``flock``) by the run training in the folder, so a second one stops

Ctrl-C (or SIGTERM) writes a checkpoint before stopping, so ``--resume`` loses nothing trained on.
Snapshots, checkpoints and evaluations come at the first rollout boundary at or after each
multiple of their ``every``: the same steps whether or not the run was interrupted on the way.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from .checkpoint import clean_leftovers, save_checkpoint, update_meta
from .config import Config, ConfigError, check_resumable, dump_config, load_config

CONFIG_FILE = "config.yaml"
LOCK_FILE = ".lock"


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


def checkpoint_meta(config: Config, model, evaluation, seconds: float, trained: int | None = None) -> dict:
    """``trained``: the steps the weights have learnt from, when not all those the model counted."""
    a = config.algorithm
    from .games import make_raw_env
    rules = make_raw_env(config.env.id, **config.env.args).rule_args()
    return {"env_id": config.env.id, "env_args": dict(config.env.args), "rules": rules,
            "observation_size": int(model.observation_space.shape[0]), "action_size": int(model.action_space.n),
            "algorithm": dict(vars(a)), "timesteps": int(model.num_timesteps if trained is None else trained),
            "seed": config.training.seed, "evaluation": evaluation,
            "run": config.output.name, "training_seconds": round(seconds, 1)}


def bot_layout(config: Config, bot, opponent: str) -> list[str]:
    """One agent per seat: ``bot`` in seat 0 (and seat 2, its partner, when it was trained to
    play its own partner), ``opponent`` in all the others."""
    from .games import make_raw_env
    raw = make_raw_env(config.env.id, **config.env.args)
    own_partner = raw.rule_args().get("partnership", False) and config.opponents.partner == "learner"
    return [str(bot) if seat in ((0, 2) if own_partner else (0,)) else opponent
            for seat in range(len(raw.possible_agents))]


def evaluate_checkpoint(config: Config, path, games: int, seed: int, processes: int = 1) -> dict:
    """The checkpoint against the heuristic, then random (``bot_layout``); duplicate format."""
    from .evaluate import evaluate
    out = {}
    for opponent in ("heuristic", "random"):
        layout = bot_layout(config, path, opponent)
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


def next_multiple(step: int, every: int) -> int:
    """The first multiple of ``every`` after ``step``: cadences are fixed to multiples, not
    counted from the last event, so an interrupted run keeps the straight run's steps."""
    return (step // every + 1) * every


def format_evaluation(evaluation: dict) -> str:
    parts = []
    for opponent, r in evaluation.items():
        if isinstance(r, dict):
            ci = "{:.3f}-{:.3f}".format(*r["win_share_ci95"]) if r["win_share_ci95"] else "n/a"
            parts.append(f"vs {opponent} {r['win_share']:.3f} (95% CI {ci})")
    return f"evaluation at step {evaluation['timesteps']}: win share " + ", ".join(parts)


class RunCallback:
    """Snapshots, checkpoints and evaluations on their cadences (built lazily: SB3 import).

    They are made between rollouts, at the first boundary at or after each multiple of their
    ``every``: only there have the weights learnt from every step counted (within a rollout
    they are those of its start). A checkpoint written on Ctrl-C records ``trained``, the last
    boundary, so a resumed run starts on one too and its rollouts and events fall on the
    same steps as those of a run that never stopped."""

    @staticmethod
    def build(config: Config, run_dir: Path, started: float, evaluation=None):
        from stable_baselines3.common.callbacks import BaseCallback

        cp = config.checkpoints
        snapshot_every = config.opponents.self_play.snapshot_every if uses_self_play(config) else None
        total = config.training.total_timesteps

        class _Callback(BaseCallback):
            def _on_training_start(self) -> None:
                # Scheduled here, not in _init_callback: SB3 sets num_timesteps (the resumed
                # run's step) only now.
                from tqdm import tqdm
                now = self.trained = self.num_timesteps
                self.next_snapshot = next_multiple(now, snapshot_every) if snapshot_every else None
                self.next_checkpoint = next_multiple(now, cp.every)
                # From the last evaluation, not from now: one that a kill or Ctrl-C cut short
                # (its checkpoint written, the evaluation not) is made up at once, at its step.
                self.next_eval = next_multiple((evaluation or {}).get("timesteps", 0), cp.eval_every)
                self.evaluation = evaluation  # the last one, kept in every checkpoint until the next
                self.bar = tqdm(total=total, initial=min(now, total), unit="step", desc=config.output.name,
                                dynamic_ncols=True, mininterval=1.0)

            def _on_step(self) -> bool:
                self.bar.update(min(self.num_timesteps, total) - self.bar.n)
                return True

            def _on_rollout_start(self) -> None:
                self.between_rollouts()

            def _on_training_end(self) -> None:
                self.between_rollouts()
                self.bar.update(total - self.bar.n)  # learn() stops after a whole rollout, past the total
                self.close()

            def close(self) -> None:
                if getattr(self, "bar", None) is not None:
                    self.bar.close()
                    self.bar = None

            def between_rollouts(self) -> None:
                now = self.trained = self.model.num_timesteps
                if self.next_snapshot is not None and now >= self.next_snapshot:
                    save_snapshot(config, self.model, run_dir, time.time() - started)
                    self.next_snapshot = next_multiple(now, snapshot_every)
                checkpoint_due, eval_due = now >= self.next_checkpoint, now >= self.next_eval
                if checkpoint_due:
                    self.next_checkpoint = next_multiple(now, cp.every)
                if eval_due:
                    self.next_eval = next_multiple(now, cp.eval_every)
                    self.run_evaluation()  # writes a checkpoint too
                elif checkpoint_due:
                    self.save()

            def save(self):
                return save_checkpoint(run_dir / "checkpoint", self.model,
                                       checkpoint_meta(config, self.model, self.evaluation, time.time() - started))

            def run_evaluation(self):
                now = self.model.num_timesteps
                if self.evaluation and self.evaluation["timesteps"] == now:
                    return  # already evaluated at this very step (the run ended on an evaluation)
                path = self.save()
                self.evaluation = evaluate_checkpoint(config, path, cp.eval_games, seed=10_000 + config.training.seed)
                self.evaluation["timesteps"] = int(now)
                with open(run_dir / "evaluations.jsonl", "a") as f:
                    f.write(json.dumps(self.evaluation) + "\n")
                update_meta(path, {"evaluation": self.evaluation})  # after the log: a kill between repeats it
                from tqdm import tqdm
                tqdm.write(format_evaluation(self.evaluation))  # above the bar, which stays at the bottom
                for opponent, r in self.evaluation.items():
                    if isinstance(r, dict):
                        self.logger.record(f"eval/win_share_vs_{opponent}", r["win_share"])
                        self.logger.record(f"eval/mean_score_vs_{opponent}", r["mean_score"])
                self.logger.dump(now)

        return _Callback()


def fresh_run_dir(base: Path) -> Path:
    """Create the folder ``base``, or ``base-2``, ``base-3`` … if that one exists, and return
    it. ``mkdir`` without ``exist_ok`` checks and creates in one step: of two runs starting at
    once under one name, each gets a folder of its own."""
    base.parent.mkdir(parents=True, exist_ok=True)
    k = 1
    while True:
        path = base if k == 1 else base.with_name(f"{base.name}-{k}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            k += 1


def lock_run_dir(run_dir: Path):
    """Hold ``run_dir`` for this process until the returned file is closed. An ``flock``: the
    system releases it when the process ends, even killed, so no stale lock blocks a resume."""
    lock = open(run_dir / LOCK_FILE, "a+")  # "a+": opening must not wipe the holder's pid
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip()
        lock.close()
        raise ConfigError(f"{run_dir} is in use by another training run{f' (process {holder})' if holder else ''}: "
                          f"wait for it to end, or train into another folder (--set output.name=...)") from None
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    return lock


@contextlib.contextmanager
def claim_run(run_dir: Path, fresh: bool):
    """Hold a run folder for this process alone while the block runs, and yield it: with
    ``fresh`` a new folder (``run_dir``, or ``run_dir-2`` … when taken), otherwise the folder
    of the run to resume, tidied of what a kill left in it.

    A fresh run that fails before its first checkpoint removes its folder: --resume could
    not continue it. The folder of a resumed run is never removed."""
    if fresh:
        run_dir = fresh_run_dir(run_dir)
    elif not (run_dir / CONFIG_FILE).is_file():  # checked before a lock file is made in it
        raise ConfigError(f"{run_dir} is not a run that can be resumed (it has no {CONFIG_FILE})")
    lock = lock_run_dir(run_dir)
    try:
        clean_leftovers(run_dir)
        yield run_dir
    except BaseException:
        if fresh and not (run_dir / "checkpoint" / "model.zip").is_file():
            shutil.rmtree(run_dir, ignore_errors=True)
        raise
    finally:
        lock.close()


def describe_plan(config: Config, run_dir: Path, start: int, then: str = "") -> str:
    """What a run is about to do and where its results go, for the terminal."""
    from .games import make_raw_env
    seats = len(make_raw_env(config.env.id, **config.env.args).possible_agents)
    opp, cp, total = config.opponents, config.checkpoints, config.training.total_timesteps
    weights = sum(e.weight for e in opp.pool)
    pool = ", ".join(f"{e.agent} {e.weight / weights:.0%}" for e in opp.pool)
    if uses_self_play(config):
        pool += f" (self_play: snapshots of the learner, one every {opp.self_play.snapshot_every} steps)"
    doing = (f"resuming {run_dir} at {start} of {total} timesteps" if start else
             f"training {config.algorithm.name} for {total} timesteps")
    lines = [f"{doing}: {config.env.id}, {seats} players, learner seat {opp.learner_seat}",
             f"  opponents: {pool}",
             f"  results in {run_dir}: checkpoint/ every {cp.every} steps; evaluations.jsonl every {cp.eval_every} "
             f"({cp.eval_games} duplicate sets vs heuristic and random); logs/ (tensorboard --logdir {run_dir.parent})",
             f"  Ctrl-C writes a checkpoint; continue with: python -m training.train --resume {run_dir}"]
    if then:
        lines.append(f"  then: {then}")
    return "\n".join(lines)


def train(config: Config, run_dir: Path | None = None, resume: bool = False) -> Path:
    """Train a new run in ``run_dir`` (default ``config.run_dir``; ``-2``, ``-3`` … appended
    when taken), or with ``resume`` continue the run in ``run_dir``; return its folder."""
    with claim_run(run_dir or config.run_dir, fresh=not resume) as run_dir:
        run_training(config, run_dir, resume)
    return run_dir


def run_training(config: Config, run_dir: Path, resume: bool = False, then: str = "") -> None:
    """Train in ``run_dir``, which this process holds (``claim_run``); with ``resume``,
    continue from its checkpoint. ``then``: what follows, for the plan printed first.

    Interrupted, it checkpoints and exits with status 130. The checkpoint holds everything
    trained on; the rollout under way (at most ``n_steps x n_envs`` steps) is not trained on
    yet, so it counts for nothing and a resumed run gathers it again."""
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
        return
    print(describe_plan(config, run_dir, start, then), flush=True)
    venv = make_vec_env(config, run_dir, first_timestep=start)
    if resume:
        model = MaskablePPO.load(run_dir / "checkpoint" / "model.zip", env=venv, device=config.algorithm.device)
        model.num_timesteps = start  # the steps trained on (meta.json), not all those the archive counted
    else:
        model = new_model(config, venv)
    # Written once all is built, so a resume that fails to start leaves the run as it was;
    # through a temporary file, so a kill mid-write never costs the run its config.
    tmp = run_dir / f".{CONFIG_FILE}.tmp"
    tmp.write_text(dump_config(config))
    os.replace(tmp, run_dir / CONFIG_FILE)
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
        trained = getattr(callback, "trained", start)
        save_checkpoint(run_dir / "checkpoint", model, checkpoint_meta(
            config, model, getattr(callback, "evaluation", previous.get("evaluation")), time.time() - started,
            trained))
        print(f"\ninterrupted at step {model.num_timesteps}; checkpoint written at step {trained}, the last "
              f"trained on (the rollout under way is gathered again). Continue with:\n"
              f"  python -m training.train --resume {run_dir}", file=sys.stderr)
        raise SystemExit(130)
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
        venv.close()
    callback.run_evaluation()


def resume_config(run_dir: Path, overrides: list[str]) -> Config:
    """The run's saved config with the changes a resumed run may make (read with the folder
    held: ``claim_run`` has finished any swap a kill interrupted)."""
    if not (run_dir / CONFIG_FILE).is_file() or not (run_dir / "checkpoint" / "model.zip").is_file():
        raise ConfigError(f"{run_dir} is not a run that can be resumed (needs {CONFIG_FILE} and checkpoint/model.zip)")
    saved = load_config(run_dir / CONFIG_FILE, machine=False)  # made on another machine, maybe: overrides fix that
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
    from .games import game_spec
    better = "lower" if game_spec(config.env.id).lower_score_wins else "higher"
    seats = [str(s) for s, spec in enumerate(bot_layout(config, "bot", "opponent")) if spec == "bot"]
    print(f"\n{games} duplicate sets per row: each bot in seat {' and '.join(seats)}, the opponents in every "
          f"other seat; points per game, {better} is better")
    print(f"{'bot':<40} {'opponents':<10} {'win share':>9} {'95% CI':>13} {'even':>5} {'points/game':>11}")
    for bot in [str(new)] + others:
        results = evaluate_checkpoint(config, bot, games, seed=20_000, processes=min(os.cpu_count() or 1, 4))
        for opponent, r in results.items():
            ci = "{:.3f}-{:.3f}".format(*r["win_share_ci95"]) if r["win_share_ci95"] else "n/a"
            print(f"{bot:<40} {opponent:<10} {r['win_share']:>9.3f} {ci:>13} {r['even_share']:>5.2f} "
                  f"{r['mean_score']:>11.2f}")


def show(config: Config, new: Path) -> None:
    """One game (Craits: one deal) of the new bot against the heuristic, move by move."""
    from .play import play
    args = dict(config.env.args)
    if config.env.id == "craits_v0":
        args["deals"] = [8]
    layout = bot_layout(config, new, "heuristic")
    mine = [str(seat) for seat, spec in enumerate(layout) if spec == str(new)]
    print(f"\n--- {new} (seat {' and '.join(mine)}) against the heuristic in the other seats ---")
    play(config.env.id, args, layout, seed=config.training.seed)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m training.train", description=__doc__.split("\n\n")[0])
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
    then = []  # what follows training, for the plan it prints first
    if args.show:
        then.append("a game of the new bot (--show)")
    if args.compare is not None:
        bots = ["the new bot", *args.compare]
        bots = " and ".join([", ".join(bots[:-1]), bots[-1]] if len(bots) > 1 else bots)
        then.append(f"{bots} against the heuristic and random (--compare)")

    def run(config: Config, run_dir: Path) -> None:
        run_training(config, run_dir, resume=bool(args.resume), then="; ".join(then))
        print_summary(run_dir)
        try:
            if args.show:
                show(config, run_dir / "checkpoint")
            if args.compare is not None:
                compare(config, run_dir / "checkpoint", args.compare, args.compare_games)
        except ValueError as exc:  # a bot's illegal move, a checkpoint damaged meanwhile: the run itself is kept
            raise SystemExit(f"error: {exc}")

    # The run folder stays held through --show and --compare: they read its checkpoint.
    try:
        if args.resume:
            with claim_run(Path(args.resume), fresh=False) as run_dir:
                config = resume_config(run_dir, args.set)
                check_comparisons(config, args.compare or [], args.compare_games)
                run(config, run_dir)
        else:
            config = load_config(args.config, args.set)
            check_comparisons(config, args.compare or [], args.compare_games)  # before a folder is made
            with claim_run(config.run_dir, fresh=True) as run_dir:
                run(config, run_dir)
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}")


if __name__ == "__main__":
    main()
