"""What a training run does between rollouts: self-play snapshots, checkpoints and
evaluations on their cadences (an SB3 callback), and the checkpoint metadata they write.

Imported only once training starts: it imports stable-baselines3 (and so torch).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from stable_baselines3.common.callbacks import BaseCallback
from tqdm import tqdm

from training.agents.checkpoint import save_checkpoint, update_meta
from training.common.version import deckgym_version
from training.learning.config import Config
from training.matches.evaluate import evaluate_bot


def uses_self_play(config: Config) -> bool:
    return any(e.agent == "self_play" for e in config.opponents.pool)


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


def checkpoint_meta(config: Config, env, model, evaluation, seconds: float, trained: int | None = None) -> dict:
    """meta.json of a checkpoint of ``model`` trained in ``env`` (an ``EnvHandle``).
    ``trained``: the steps the weights have learnt from, when not all those the model counted."""
    return {
        "env_id": env.id,
        "env_args": dict(env.args),
        "rules": env.rule_args,
        "observation_size": int(model.observation_space.shape[0]),
        "action_size": int(model.action_space.n),
        "algorithm": dict(vars(config.algorithm)),
        "timesteps": int(model.num_timesteps if trained is None else trained),
        "seed": config.training.seed,
        "evaluation": evaluation,
        "run": config.output.name,
        "training_seconds": round(seconds, 3),
        "deckgym_version": deckgym_version(),
    }  # ms: a tiny run still shows its speed


def save_snapshot(config: Config, env, model, run_dir: Path, seconds: float, learner) -> None:
    """A policy-only checkpoint under ``snapshots/`` for the self-play pool. ``learner``: the
    algorithm's module, which a run resolves once (``training.learning.train.run_training``)."""
    save_checkpoint(
        run_dir / "snapshots" / f"step_{model.num_timesteps:09d}",
        model,
        checkpoint_meta(config, env, model, None, seconds),
        learner,
        with_model=False,
    )


def evaluate_run_bot(config: Config, env, path, games: int, seed: int, processes: int = 1) -> dict:
    """A run's checkpoint against the heuristic and random play, seated as it was trained
    (both seats of its side when it plays its own partner)."""
    return evaluate_bot(env, path, games, seed, processes, own_partner=config.opponents.partner == "learner")


class RunCallback(BaseCallback):
    """Snapshots, checkpoints and evaluations on their cadences, and the progress bar.

    They are made between rollouts, at the first boundary at or after each multiple of their
    ``every``: only there have the weights learnt from every step counted (within a rollout
    they are those of its start). A checkpoint written on Ctrl-C records ``trained``, the last
    boundary, so a resumed run starts on one too and its rollouts and events fall on the
    same steps as those of a run that never stopped.

    ``learner`` is the algorithm's module (``training.algorithms``), which writes the
    checkpoints' networks. ``on_evaluation(run_dir, evaluation, training_seconds,
    evaluation_seconds)``, if given, is called after each periodic evaluation with the training
    time at its start and its own length (the benchmark logs them)."""

    def __init__(
        self, config: Config, env, learner, run_dir: Path, started: float, evaluation=None, on_evaluation=None
    ):
        super().__init__()
        self.config, self.env, self.learner, self.run_dir, self.started = config, env, learner, run_dir, started
        self.evaluation = evaluation  # the last one, kept in every checkpoint until the next
        self.on_evaluation = on_evaluation
        self.snapshot_every = config.opponents.self_play.snapshot_every if uses_self_play(config) else None
        self.trained: int | None = None  # the steps the weights have learnt from: set as training starts
        self.bar: tqdm | None = None  # the progress bar, from the start of training to close()

    def _on_training_start(self) -> None:
        # Scheduled here, not in _init_callback: SB3 sets num_timesteps (the resumed run's
        # step) only now.
        cp, total = self.config.checkpoints, self.config.training.total_timesteps
        now = self.trained = self.num_timesteps
        self.next_snapshot = next_multiple(now, self.snapshot_every) if self.snapshot_every else None
        self.next_checkpoint = next_multiple(now, cp.every)
        # From the last evaluation, not from now: one that a kill or Ctrl-C cut short (its
        # checkpoint written, the evaluation not) is made up at once, at its step.
        self.next_eval = next_multiple((self.evaluation or {}).get("timesteps", 0), cp.eval_every)
        self.bar = tqdm(
            total=total,
            initial=min(now, total),
            unit="step",
            desc=self.config.output.name,
            dynamic_ncols=True,
            mininterval=1.0,
        )

    def _on_step(self) -> bool:
        assert self.bar is not None  # made in _on_training_start, which SB3 calls before any step
        self.bar.update(min(self.num_timesteps, self.bar.total) - self.bar.n)
        limit = self.config.training.max_seconds
        return limit is None or time.time() - self.started < limit  # False stops learn()

    def _on_rollout_start(self) -> None:
        self.between_rollouts()

    def _on_training_end(self) -> None:
        self.between_rollouts()
        assert self.bar is not None  # made in _on_training_start
        self.bar.update(self.bar.total - self.bar.n)  # learn() stops after a whole rollout, past the total
        self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def between_rollouts(self) -> None:
        cp = self.config.checkpoints
        now = self.trained = self.model.num_timesteps
        if self.next_snapshot is not None and now >= self.next_snapshot:
            assert self.snapshot_every is not None  # a snapshot is due only with self-play
            save_snapshot(self.config, self.env, self.model, self.run_dir, time.time() - self.started, self.learner)
            self.next_snapshot = next_multiple(now, self.snapshot_every)
        checkpoint_due, eval_due = now >= self.next_checkpoint, now >= self.next_eval
        if checkpoint_due:
            self.next_checkpoint = next_multiple(now, cp.every)
        if eval_due:
            self.next_eval = next_multiple(now, cp.eval_every)
            self.run_evaluation()  # writes a checkpoint too
        elif checkpoint_due:
            self.save()

    def save(self, trained: int | None = None):
        return save_checkpoint(
            self.run_dir / "checkpoint",
            self.model,
            checkpoint_meta(self.config, self.env, self.model, self.evaluation, time.time() - self.started, trained),
            self.learner,
        )

    def run_evaluation(self):
        now = self.model.num_timesteps
        if self.evaluation and self.evaluation["timesteps"] == now:
            return  # already evaluated at this very step (the run ended on an evaluation)
        start = time.time()
        path = self.save()
        self.evaluation = evaluate_run_bot(
            self.config, self.env, path, self.config.checkpoints.eval_games, seed=10_000 + self.config.training.seed
        )
        self.evaluation["timesteps"] = int(now)
        with open(self.run_dir / "evaluations.jsonl", "a") as f:
            f.write(json.dumps(self.evaluation) + "\n")
        update_meta(path, {"evaluation": self.evaluation})  # after the log: a kill between repeats it
        tqdm.write(format_evaluation(self.evaluation))  # above the bar, which stays at the bottom
        for opponent, r in self.evaluation.items():
            if isinstance(r, dict):
                self.logger.record(f"eval/win_share_vs_{opponent}", r["win_share"])
                self.logger.record(f"eval/mean_score_vs_{opponent}", r["mean_score"])
        self.logger.dump(now)
        if self.on_evaluation is not None:
            self.on_evaluation(self.run_dir, self.evaluation, start - self.started, time.time() - start)
