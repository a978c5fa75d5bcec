"""Train an agent (MaskablePPO, or any algorithm of training.algorithms) from a config file.

    python -m training.train --config configs/craits_quick.yaml [--set key.path=value ...]
    python -m training.train --resume runs/craits_quick          # continue an interrupted run

A run folder (``output.dir/output.name``) holds:

- ``config.yaml``      the resolved config (every value, defaults included)
- ``checkpoint/``      the latest checkpoint (see ``training.agents.checkpoint``), rewritten atomically
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

import contextlib
import functools
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from training.agents import make_agent
from training.agents.checkpoint import clean_leftovers, read_meta
from training.algorithms import algorithm
from training.common.commands import command_parser
from training.common.files import FolderInUse, hold_folder
from training.common.games import EnvHandle
from training.frontends.play import play
from training.learning.config import Config, ConfigError, check_resumable, dump_config, load_config
from training.learning.preflight import check_config
from training.matches.evaluate import bot_layout
from training.running.executor import limit_threads

# stable-baselines3 (and so torch), and the modules that import it at their top (learner_env,
# callback), are imported in the functions that train: checking a config (--help, preflight,
# the benchmark's planning) does not wait for torch.

CONFIG_FILE = "config.yaml"


def learner_table(config: Config, env, run_dir: Path, rank: int):
    """The ``rank``-th game of a run's batched learner env, with its own opponent pool."""
    from training.learning.learner_env import LearnerTable, OpponentPool

    opp, seed = config.opponents, config.training.seed * 1000 + rank
    pool = OpponentPool(
        opp.pool,
        env,
        snapshot_dir=run_dir / "snapshots",
        latest_weight=opp.self_play.latest_weight,
        window=opp.self_play.window,
        deterministic=opp.deterministic,
        seed=seed,
    )
    return LearnerTable(env, pool, opp.learner_seat, opp.partner, seed=seed)


def make_vec_env(config: Config, env, run_dir: Path, first_timestep: int = 0):
    """The run's learner env: ``vec.n_envs`` games in lockstep, in this process or split over
    ``vec.workers`` processes (the same games either way)."""
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor

    from training.learning.learner_env import BatchedLearnerEnv, ShardedLearnerEnv, SymlogReward

    make_table = functools.partial(learner_table, config, env, run_dir)
    workers = min(config.vec.workers, config.vec.n_envs)
    venv: VecEnv
    if workers > 1:
        venv = ShardedLearnerEnv(env, make_table, config.vec.n_envs, workers)
    else:
        venv = BatchedLearnerEnv(env, [make_table(rank) for rank in range(config.vec.n_envs)])
    # A resumed run seeds its envs anew from where it stopped, so it plays on with new deals
    # rather than replaying the ones it has trained on.
    venv.seed(config.training.seed + first_timestep)
    venv = VecMonitor(venv)  # inside the transform: episode returns are logged in the env's own reward
    return SymlogReward(venv) if config.training.reward_transform == "symlog" else venv


def new_model(config: Config, venv):
    """A new model of the config's algorithm, for scripts that build one outside a run
    (benchmarks/); a run resolves its algorithm once, in ``run_training``."""
    return algorithm(config.algorithm.name).new(config, venv)


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
    try:
        with hold_folder(
            run_dir, "training run", "wait for it to end, or train into another folder (--set output.name=...)"
        ):
            clean_leftovers(run_dir)
            yield run_dir
    except FolderInUse as exc:
        raise ConfigError(str(exc)) from None
    except BaseException:
        if fresh and not (run_dir / "checkpoint" / "model.zip").is_file():
            shutil.rmtree(run_dir, ignore_errors=True)
        raise


def describe_plan(config: Config, env, run_dir: Path, start: int, then: str = "") -> str:
    """What a run is about to do and where its results go, for the terminal."""
    from training.learning.callback import uses_self_play

    seats = env.seats
    opp, cp, total = config.opponents, config.checkpoints, config.training.total_timesteps
    weights = sum(e.weight for e in opp.pool)
    pool = ", ".join(f"{e.agent} {e.weight / weights:.0%}" for e in opp.pool)
    if uses_self_play(config):
        pool += f" (self_play: snapshots of the learner, one every {opp.self_play.snapshot_every} steps)"
    doing = (
        f"resuming {run_dir} at {start} of {total} timesteps"
        if start
        else f"training {config.algorithm.name} for {total} timesteps"
    )
    lines = [
        f"{doing}: {config.env.id}, {seats} players, learner seat {opp.learner_seat}",
        f"  opponents: {pool}",
        f"  results in {run_dir}: checkpoint/ every {cp.every} steps; evaluations.jsonl every {cp.eval_every} "
        f"({cp.eval_games} duplicate sets vs heuristic and random); logs/ (tensorboard --logdir {run_dir.parent})",
        f"  Ctrl-C writes a checkpoint; continue with: python -m training.train --resume {run_dir}",
    ]
    if then:
        lines.append(f"  then: {then}")
    return "\n".join(lines)


def train(config: Config, run_dir: Path | None = None, resume: bool = False, on_evaluation=None) -> Path:
    """Train a new run in ``run_dir`` (default ``config.run_dir``; ``-2``, ``-3`` … appended
    when taken), or with ``resume`` continue the run in ``run_dir``; return its folder.
    ``on_evaluation``: see ``run_training``."""
    with claim_run(run_dir or config.run_dir, fresh=not resume) as run_dir:
        run_training(config, EnvHandle(config.env.id, config.env.args), run_dir, resume, on_evaluation=on_evaluation)
    return run_dir


def run_training(config: Config, env, run_dir: Path, resume: bool = False, then: str = "", on_evaluation=None) -> None:
    """Train in ``env`` (an ``EnvHandle``) and ``run_dir``, which this process holds
    (``claim_run``); with ``resume``, continue from its checkpoint. ``then``: what follows,
    for the plan printed first; ``on_evaluation``: called after each periodic evaluation
    (``RunCallback``).

    Interrupted, it checkpoints and exits with status 130. The checkpoint holds everything
    trained on; the rollout under way (at most ``n_steps x n_envs`` steps) is not trained on
    yet, so it counts for nothing and a resumed run gathers it again."""
    import torch
    from stable_baselines3.common.logger import configure

    from training.learning.callback import RunCallback, save_snapshot, uses_self_play

    torch.set_num_threads(config.algorithm.torch_threads)
    limit_threads(config.algorithm.torch_threads)  # numpy's too: policy opponents
    previous = read_meta(run_dir / "checkpoint") if resume else {}
    start = previous.get("timesteps", 0)
    remaining = config.training.total_timesteps - start
    limit = config.training.max_seconds
    if remaining <= 0 or (limit is not None and previous.get("training_seconds", 0.0) >= limit):
        print(
            f"{run_dir} already holds {start} of {config.training.total_timesteps} timesteps "
            f"({previous.get('training_seconds', 0.0)} s): nothing to train "
            f"(raise training.total_timesteps or training.max_seconds with --set)"
        )
        return
    print(describe_plan(config, env, run_dir, start, then), flush=True)
    venv = make_vec_env(config, env, run_dir, first_timestep=start)
    learner = algorithm(config.algorithm.name)  # once: the checkpoints' networks are its to write
    if resume:
        model = learner.load(run_dir / "checkpoint" / "model.zip", venv, config)
        model.num_timesteps = start  # the steps trained on (meta.json), not all those the archive counted
    else:
        model = learner.new(config, venv)
    # Written once all is built, so a resume that fails to start leaves the run as it was;
    # through a temporary file, so a kill mid-write never costs the run its config.
    tmp = run_dir / f".{CONFIG_FILE}.tmp"
    tmp.write_text(dump_config(config))
    os.replace(tmp, run_dir / CONFIG_FILE)
    snapshots = run_dir / "snapshots"
    if uses_self_play(config) and not (snapshots.is_dir() and any(snapshots.iterdir())):
        save_snapshot(config, env, model, run_dir, 0.0, learner)  # the pool needs one before the first reset
    model.set_logger(configure(str(run_dir / "logs" / f"from_{start:09d}"), ["csv", "tensorboard"]))
    started = time.time() - previous.get("training_seconds", 0.0)  # training time adds up across interruptions
    callback = RunCallback(config, env, learner, run_dir, started, previous.get("evaluation"), on_evaluation)
    previous_handler = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        model.learn(remaining, callback=callback, reset_num_timesteps=False)
    except KeyboardInterrupt:
        callback.close()
        # An interrupted step can leave the subprocess workers' replies half read, and
        # SubprocVecEnv.close() would wait for them forever: skip that wait.
        venv.unwrapped.waiting = False
        trained = start if callback.trained is None else callback.trained
        # learn() sets it, unless the interrupt came first. SB3 types it as its own BaseAlgorithm;
        # every algorithm's model is SB3-like (training.algorithms.Model), not always one.
        callback.model = model  # type: ignore[assignment]
        callback.save(trained)
        print(
            f"\ninterrupted at step {model.num_timesteps}; checkpoint written at step {trained}, the last "
            f"trained on (the rollout under way is gathered again). Continue with:\n"
            f"  python -m training.train --resume {run_dir}",
            file=sys.stderr,
        )
        raise SystemExit(130) from None
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
        venv.close()
    callback.run_evaluation()


def resume_config(run_dir: Path, overrides: list[str]) -> Config:
    """The run's saved config with the changes a resumed run may make (read with the folder
    held: ``claim_run`` has finished any swap a kill interrupted)."""
    if not (run_dir / CONFIG_FILE).is_file() or not (run_dir / "checkpoint" / "model.zip").is_file():
        raise ConfigError(f"{run_dir} is not a run that can be resumed (needs {CONFIG_FILE} and checkpoint/model.zip)")
    saved = load_config(run_dir / CONFIG_FILE)
    wanted = load_config(run_dir / CONFIG_FILE, overrides)
    check_resumable(saved, wanted, trained=read_meta(run_dir / "checkpoint")["timesteps"])
    return wanted


def check_comparisons(env, paths: list[str], games: int) -> None:
    """Fail before training, not after it, on a checkpoint that can't be compared here."""
    if games < 1:
        raise ConfigError(f"--compare-games must be >= 1, got {games}")
    for path in paths:
        try:
            make_agent(path, env)
        except ValueError as exc:
            raise ConfigError(f"--compare {path}: {exc}") from None


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def print_summary(run_dir: Path) -> None:
    meta = read_meta(run_dir / "checkpoint")
    print(
        f"\ntrained {meta['env_id']} for {meta['timesteps']} timesteps in {meta['training_seconds']} s: "
        f"{run_dir / 'checkpoint'}"
    )
    for opponent, r in (meta["evaluation"] or {}).items():
        if isinstance(r, dict):
            ci = "95% CI {:.3f}-{:.3f}, ".format(*r["win_share_ci95"]) if r["win_share_ci95"] else ""
            print(
                f"  vs {opponent:<9} win share {r['win_share']:.3f} ({ci}even {r['even_share']:.3f}),"
                f" mean score {r['mean_score']:.2f} over {r['games']} games"
            )


def compare(config: Config, env, new: Path, others: list[str], games: int) -> None:
    """The new bot beside other checkpoints, each in one seat against the heuristic, then
    random, in every other seat (duplicate format, ``games`` sets, the same deals for all)."""
    from training.learning.callback import evaluate_run_bot

    better = "lower" if env.spec.lower_score_wins else "higher"
    own_partner = config.opponents.partner == "learner"
    seats = [str(s) for s, spec in enumerate(bot_layout(env, "bot", "opponent", own_partner)) if spec == "bot"]
    print(
        f"\n{games} duplicate sets per row: each bot in seat {' and '.join(seats)}, the opponents in every "
        f"other seat; points per game, {better} is better"
    )
    print(f"{'bot':<40} {'opponents':<10} {'win share':>9} {'95% CI':>13} {'even':>5} {'points/game':>11}")
    for bot in [str(new)] + others:
        results = evaluate_run_bot(config, env, bot, games, seed=20_000, processes=min(os.cpu_count() or 1, 4))
        for opponent, r in results.items():
            ci = "{:.3f}-{:.3f}".format(*r["win_share_ci95"]) if r["win_share_ci95"] else "n/a"
            print(
                f"{bot:<40} {opponent:<10} {r['win_share']:>9.3f} {ci:>13} {r['even_share']:>5.2f} "
                f"{r['mean_score']:>11.2f}"
            )


def show(config: Config, env, new: Path) -> None:
    """One short game (the game's ``short_game``: Craits, one deal) of the new bot against
    the heuristic, move by move."""
    short = EnvHandle(env.id, {**env.args, **env.spec.short_game})
    layout = bot_layout(short, new, "heuristic", own_partner=config.opponents.partner == "learner")
    mine = [str(seat) for seat, spec in enumerate(layout) if spec == str(new)]
    print(f"\n--- {new} (seat {' and '.join(mine)}) against the heuristic in the other seats ---")
    play(short, layout, seed=config.training.seed)


def main(argv=None):
    parser = command_parser("train", __doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--config", help="YAML config file (see configs/)")
    group.add_argument("--resume", metavar="RUN", help="run folder of an interrupted run")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override a config value, e.g. --set training.total_timesteps=50000",
    )
    parser.add_argument(
        "--compare",
        nargs="*",
        metavar="CHECKPOINT",
        help="after training, evaluate the new bot and these checkpoints against heuristic and random",
    )
    parser.add_argument(
        "--compare-games",
        type=int,
        default=100,
        metavar="N",
        help="duplicate sets per --compare evaluation (default 100)",
    )
    parser.add_argument("--show", action="store_true", help="after training, print a game of the new bot")
    args = parser.parse_args(argv)
    then = []  # what follows training, for the plan it prints first
    if args.show:
        then.append("a game of the new bot (--show)")
    if args.compare is not None:
        bots = ["the new bot", *args.compare]
        bots = " and ".join([", ".join(bots[:-1]), bots[-1]] if len(bots) > 1 else bots)
        then.append(f"{bots} against the heuristic and random (--compare)")

    def run(config: Config, env, run_dir: Path) -> None:
        run_training(config, env, run_dir, resume=bool(args.resume), then="; ".join(then))
        print_summary(run_dir)
        try:
            if args.show:
                show(config, env, run_dir / "checkpoint")
            if args.compare is not None:
                compare(config, env, run_dir / "checkpoint", args.compare, args.compare_games)
        except ValueError as exc:  # a bot's illegal move, a checkpoint damaged meanwhile: the run itself is kept
            raise SystemExit(f"error: {exc}") from None

    # The run folder stays held through --show and --compare: they read its checkpoint.
    try:
        if args.resume:
            with claim_run(Path(args.resume), fresh=False) as run_dir:
                config = resume_config(run_dir, args.set)
                env = check_config(config)  # on this machine, which may not be the one it started on
                check_comparisons(env, args.compare or [], args.compare_games)
                run(config, env, run_dir)
        else:
            config = load_config(args.config, args.set)
            env = check_config(config)
            check_comparisons(env, args.compare or [], args.compare_games)  # before a folder is made
            with claim_run(config.run_dir, fresh=True) as run_dir:
                run(config, env, run_dir)
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}") from None


if __name__ == "__main__":
    main()
