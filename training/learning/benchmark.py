"""The benchmark runner: algorithms x seeds x settings, trained alike, evaluated alike, tabled.

    python -m training.benchmark --config configs/benchmark_small.yaml [--out DIR] [--processes N]
    python -m training.benchmark --config configs/benchmark_small.yaml --set 'algorithms={MaskablePPO: {}}'
    python -m training.benchmark --config configs/benchmark_small.yaml --ray-address HEAD:6379  # on a Ray cluster
    python -m training.benchmark --config configs/benchmark_full.yaml --settings craits  # one setting's trials and table

A benchmark config (YAML, validated strictly: an unknown key, a wrong type or a bad value is
an error naming its key path, before anything runs) lists:

- ``out``: the benchmark folder (relative to the current directory); ``--out`` overrides it.
- ``settings``: name -> ``{env: <env id>, args: {<env arguments>}}``, e.g. ``craits`` (craits_v0,
  preset craits), ``create`` (craits_v0, preset create, partnership true), ``pairs_draft``.
- ``algorithms``: name -> the trial's ``algorithm`` section (``name`` defaults to the key; the
  other keys are that algorithm's hyperparameters; ``torch_threads`` defaults to 1).
- ``seeds``: the training seeds; every (setting, algorithm, seed) is one *trial*.
- ``budget``: ``total_timesteps`` (learner env steps, the same for every trial) and
  ``max_seconds`` (a wall-clock cap on each trial's training, evaluations during it included).
- ``base``: the training-config sections shared by all trials: ``opponents`` (the pool),
  ``vec``, ``checkpoints`` (``eval_every``/``eval_games`` set the learning curves' points).
- ``references``: the agents every final agent is evaluated against (``heuristic``, a search
  bot such as ``ismcts:simulations=50``, ``random``, a checkpoint folder); the first is the
  league's reference (OpenSkill mu pinned at 25). A spec ``make_agent`` can't build stops the
  benchmark before anything runs.
- ``eval_games``, ``eval_seed``: duplicate sets (and first deal seed) of each final evaluation.
- ``league_games``, ``league_seed``: duplicate sets per pairing (and first seed) of the leagues.
- ``processes``: trials trained side by side (``--processes`` overrides); also the league's.

A trial trains with the normal ``training.learning.train`` machinery in
``<out>/trials/<setting>/<algorithm>/seed<k>/`` (a run folder: config.yaml, checkpoint/,
evaluations.jsonl, logs/ ...), in a process of its own (spawned; its output in ``seed<k>.log``
beside the folder),
then its final checkpoint is evaluated in duplicate format against every reference, seated as
it trained (both seats of its side in partnership play), and ``result.json`` is written
(atomically) last. A rerun skips every trial whose result.json matches the config, resumes a
trial that was interrupted (from its checkpoint: nothing trained on is lost), and restarts
one that was killed before its first checkpoint. A changed budget or checkpoint cadence
resumes the trials; a change of anything they learn from is refused (use another ``out``).

**On Ray** (``--ray``: a local Ray of ``--processes`` CPUs; ``--ray-address ADDRESS`` or
``RAY_ADDRESS``: a running cluster; ``training.running.executor``, docs/scaling.md) each trial is a Ray
task: it trains in a temporary folder on its worker (sent the partial run folder when it
resumes), and the whole run folder and its log come back and replace the trial's folder here
as it finishes, so skipping, resuming and restarting work as above. A trial interrupted on Ray
is lost back to its last state here (a finished trial never is); the league's matches run on
Ray too.

Then, per setting, all final agents and the references play a league
(``training.matches.league`` in ``<out>/leagues/<setting>/``, agents named by their checkpoint path
relative to ``<out>``), and the outputs are written:

- ``results.md``: per setting a table, a row per algorithm: mean over seeds and 95%
  t-interval over seeds of win share and points against each reference, the league rating
  (OpenSkill mu, mean over the seeds' agents, with its t-interval), env steps, wall-clock and
  learner steps/s; the references' ratings below; the learning curves linked.
- ``curves/<setting>.png``: win share against the heuristic from every trial's periodic
  evaluations, against env steps and against wall-clock, mean over seeds with a band (the 95%
  t-interval over the seeds; with two seeds, their range).
- ``results.csv`` (a row per trial), ``results.json`` (everything: config, trials, summaries,
  league ratings), ``curves.csv`` (every curve point).

``--settings NAME[,NAME...]`` runs (or continues) only those settings' trials and leagues, and
writes the outputs for them alone: a long benchmark can publish a setting as soon as its trials
are done. ``benchmark.yaml`` stays the whole config; a later run without it tables everything.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import math
import multiprocessing
import multiprocessing.connection
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
import typing
from pathlib import Path
from typing import Annotated, Any, TypeAlias, cast

import numpy as np
import yaml
from pydantic import BeforeValidator, Field, field_validator

from envs.engine import clipped, shown
from training.agents import make_agent
from training.agents.checkpoint import read_meta
from training.common.commands import command_parser
from training.common.files import hold_folder, recover_leftovers, write_file
from training.common.games import EnvHandle, game_spec
from training.common.schema import Number, Section
from training.learning.config import (
    ALGORITHMS,
    CheckpointConfig,
    Config,
    ConfigError,
    OpponentsConfig,
    VecConfig,
    check_resumable,
    load_config,
    load_yaml,
)
from training.learning.preflight import check_config
from training.learning.train import train
from training.matches.evaluate import bot_layout, evaluate
from training.matches.league import run_league
from training.running.executor import (
    add_executor_arguments,
    executor_from_args,
    read_folder,
    replace_folder,
    write_folder,
)

if sys.version_info >= (3, 11):
    from contextlib import chdir
else:  # contextlib.chdir is new in Python 3.11

    @contextlib.contextmanager
    def chdir(path):
        old = os.getcwd()
        os.chdir(path)
        try:
            yield
        finally:
            os.chdir(old)


RESULT_FILE = "result.json"  # a trial's final record: its presence (matching the config) = finished
# What a finished trial needs to count as finished, to play in the league and to be tabled: the
# files to keep (commit) of a long benchmark, so that another machine carries on with the rest.
FINISHED_FILES = ("config.yaml", RESULT_FILE, "checkpoint/meta.json", "checkpoint/policy.npz")
TIMES_FILE = "evaluation_times.jsonl"  # wall-clock of each periodic evaluation, written by the trial process
CURVE_OPPONENT = "heuristic"  # the periodic evaluations' opponent the curves show
LEAGUE_AGENTS = "agents.json"  # beside a league folder: which checkpoints its matches were played with
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


class BenchmarkError(ConfigError):
    """A benchmark that can't run as configured; the message says why (and names the key path)."""


# ---------------------------------------------------------------- the config
def _mapping_or_empty(value):
    return {} if value is None else value


class SettingConfig(Section):
    env: str  # a registered env id (envs.spec)
    args: dict[str, Any] = {}  # env constructor arguments


class BudgetConfig(Section):
    total_timesteps: int = Field(gt=0)  # learner env steps per trial
    max_seconds: Number | None = Field(None, gt=0)  # wall-clock cap on each trial's training; null = none


class BaseConfig(Section):
    """The training-config sections every trial shares (training.learning.config's own schema)."""

    opponents: OpponentsConfig = Field(default_factory=OpponentsConfig)
    vec: VecConfig = Field(default_factory=VecConfig)
    checkpoints: CheckpointConfig = Field(default_factory=CheckpointConfig)


Seed = Annotated[int, Field(ge=0, le=2**32 - 1)]


class BenchmarkConfig(Section):
    out: str
    settings: dict[str, SettingConfig] = Field(min_length=1)
    algorithms: dict[str, Annotated[dict[str, Any], BeforeValidator(_mapping_or_empty)]] = Field(min_length=1)
    seeds: list[Seed] = Field(min_length=1)
    budget: BudgetConfig
    base: BaseConfig = Field(default_factory=BaseConfig)
    references: list[str] = Field(min_length=1)
    eval_games: int = Field(gt=0)
    eval_seed: int = Field(100_000, ge=0)
    league_games: int = Field(gt=0)
    league_seed: int = Field(0, ge=0)
    processes: int = Field(1, gt=0)

    @field_validator("settings", "algorithms")
    @classmethod
    def _folder_names(cls, value):
        for name in value:
            if not NAME.fullmatch(name):
                raise ValueError(
                    f"{shown(name)} is not a usable name (it names a folder): use letters, digits "
                    "and _ . + -, starting with a letter or digit"
                )
        return value

    @field_validator("seeds", "references")
    @classmethod
    def _distinct(cls, value):
        repeated = sorted({v for v in value if value.count(v) > 1}, key=str)
        if repeated:
            raise ValueError(f"lists {', '.join(map(shown, repeated))} more than once")
        if any(isinstance(v, str) and not v.strip() for v in value):
            raise ValueError("holds an empty agent spec")
        return value


# What a key path walks into: a Section class, ("dict"|"list", the node of its items), or None.
Node: TypeAlias = "type[Section] | tuple[str, Node] | None"


def _node(annotation) -> Node:
    """What a key path walks into: a Section class, ("dict"|"list", inner), or None (a plain value)."""
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin is dict:
        return ("dict", _node(typing.get_args(annotation)[1]))
    if origin is list:
        return ("list", _node(typing.get_args(annotation)[0]))
    return annotation if isinstance(annotation, type) and issubclass(annotation, Section) else None


def _where(loc) -> tuple[str, Any]:
    """A pydantic error location as a key path (``base.opponents.pool[0].weight``) and the node
    it ends in. Labels pydantic adds for a union's members follow a plain value: left out."""
    node: Node
    path, node = "", BenchmarkConfig
    for key in loc:
        if isinstance(node, tuple):
            kind, inner = node
            if kind == "list" and isinstance(key, int):
                path, node = f"{path}[{key}]", inner
                continue
            if kind == "dict" and isinstance(key, str):
                path, node = f"{path}.{key}", inner
                continue
            node = None
        if node is None:
            continue
        path = f"{path}.{key}" if path else str(key)
        field = node.model_fields.get(key)
        node = None if field is None else _node(field.annotation)
    return path, node


def load_benchmark(path=None, overrides: list[str] | None = None, data: dict | None = None) -> BenchmarkConfig:
    """A validated ``BenchmarkConfig`` from a YAML file (or a dict), with ``key.path=value``
    overrides. The trials' training configs are built and checked by ``plan_trials``."""
    return load_yaml(
        BenchmarkConfig,
        path,
        overrides,
        data,
        error=BenchmarkError,
        where=_where,
        what="benchmark config",
        shape="a mapping (out, settings, algorithms, ...)",
    )


def dump_benchmark(config: BenchmarkConfig) -> str:
    return yaml.safe_dump(config.model_dump(), sort_keys=False)


# ---------------------------------------------------------------- trials
class Trial(typing.NamedTuple):
    setting: str
    algorithm: str
    seed: int
    dir: Path
    config: Config

    @property
    def name(self) -> str:
        return f"{self.setting}/{self.algorithm}/seed{self.seed}"


def _repath(message: str, setting: str, algorithm: str) -> str:
    """A training-config message in the benchmark config's key paths."""
    for old, new in (
        ("'algorithm.", f"'algorithms.{algorithm}."),
        ("'algorithm'", f"'algorithms.{algorithm}'"),
        ("'env.args", f"'settings.{setting}.args"),
        ("'env.id'", f"'settings.{setting}.env'"),
        ("'opponents.", "'base.opponents."),
        ("'vec.", "'base.vec."),
        ("'checkpoints.", "'base.checkpoints."),
    ):
        message = message.replace(old, new)
    return f"trial {setting}/{algorithm}: {message}"


def trial_config(bench: BenchmarkConfig, setting: str, algorithm: str, seed: int, out: Path) -> Config:
    """The training config of one trial: base + setting + algorithm + budget + seed."""
    s = bench.settings[setting]
    section = {"name": algorithm, **bench.algorithms[algorithm]}
    cls = ALGORITHMS.get(section["name"])
    # a Section too (typing knows it as an AlgorithmConfig: see training.learning.config)
    if cls is not None and "torch_threads" in cast("type[Section]", cls).model_fields:
        section.setdefault("torch_threads", 1)  # trials run side by side: one thread each
    data = {
        "env": {"id": s.env, "args": dict(s.args)},
        "algorithm": section,
        **bench.base.model_dump(),
        "training": {
            "total_timesteps": bench.budget.total_timesteps,
            "max_seconds": bench.budget.max_seconds,
            "seed": seed,
        },
        "output": {"dir": str(out / "trials" / setting / algorithm), "name": f"seed{seed}"},
    }
    try:
        return load_config(data=data)
    except ConfigError as exc:
        raise BenchmarkError(_repath(str(exc), setting, algorithm)) from None


def _plain(value):
    return json.loads(json.dumps(value))


def _comparable(config: Config) -> dict:
    """A trial config as compared across reruns: the folder is the trial's place, not a setting."""
    data = _plain(config.to_dict())
    data.pop("output", None)
    return data


def evaluation_settings(bench: BenchmarkConfig) -> dict:
    return {"references": list(bench.references), "eval_games": bench.eval_games, "eval_seed": bench.eval_seed}


def own_partner(config: Config) -> bool:
    return config.opponents.partner == "learner"


def plan_trials(bench: BenchmarkConfig, out: Path) -> list[Trial]:
    """Every trial, its training config built and checked (``training.learning.preflight``), and every
    reference checked against every setting's game: what would fail later fails now."""
    for setting, s in bench.settings.items():
        try:
            env = EnvHandle(s.env, s.args)
        except ValueError as exc:
            raise BenchmarkError(f"benchmark config key 'settings.{setting}.args': {exc}") from None
        for i, ref in enumerate(bench.references):
            try:
                make_agent(ref, env, seed=0)
            except (ValueError, OSError) as exc:
                raise BenchmarkError(
                    f"benchmark config key 'references[{i}]': {shown(ref)} can't play setting "
                    f"{setting} ({s.env}): {exc}"
                ) from None
    trials = []
    for setting in bench.settings:
        for algorithm in bench.algorithms:
            for seed in bench.seeds:
                config = trial_config(bench, setting, algorithm, seed, out)
                try:
                    check_config(config)
                except ConfigError as exc:
                    raise BenchmarkError(_repath(str(exc), setting, algorithm)) from None
                trials.append(
                    Trial(setting, algorithm, seed, out / "trials" / setting / algorithm / f"seed{seed}", config)
                )
    return trials


def read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def trial_state(trial: Trial, bench: BenchmarkConfig) -> str:
    """``finished`` (its result matches the config: skipped; ``FINISHED_FILES`` are enough),
    ``resume`` (a checkpoint to go on from), ``stale`` (a folder without a checkpoint to resume:
    killed before its first, or only a finished trial's files kept) or ``new``. A trial trained
    with a config that differs in what it learns is refused."""
    if not trial.dir.exists():
        return "new"
    resumable = (trial.dir / "checkpoint" / "model.zip").is_file()
    if not (
        (trial.dir / "config.yaml").is_file() and (resumable or (trial.dir / "checkpoint" / "policy.npz").is_file())
    ):
        return "stale"
    try:
        saved = load_config(trial.dir / "config.yaml")
    except ConfigError as exc:
        raise BenchmarkError(
            f"trial {trial.name}: its {trial.dir / 'config.yaml'} can't be read ({exc}); remove "
            f"{trial.dir} to train it anew"
        ) from None
    saved = saved.model_copy(update={"output": trial.config.output})
    try:
        check_resumable(saved, trial.config)
    except ConfigError as exc:
        raise BenchmarkError(
            f"trial {trial.name} in {trial.dir} was trained with another config: {exc}. Give the "
            f"benchmark another out folder (--out), or remove {trial.dir}"
        ) from None
    result = read_json(trial.dir / RESULT_FILE)
    if (
        isinstance(result, dict)
        and result.get("config") == _comparable(trial.config)
        and result.get("evaluation_settings") == _plain(evaluation_settings(bench))
        and (trial.dir / "checkpoint" / "policy.npz").is_file()
    ):
        return "finished"
    return "resume" if resumable else "stale"  # kept files of a finished trial whose evaluation changed


# ---------------------------------------------------------------- one trial, in its own process
def record_evaluation_time(run_dir: Path, evaluation: dict, training_seconds: float, evaluation_seconds: float) -> None:
    """Log a periodic evaluation's wall-clock (training seconds at its start, and its own
    length) in the run's ``evaluation_times.jsonl`` (``RunCallback``'s ``on_evaluation``):
    evaluations.jsonl holds no time, and the checkpoint only its latest."""
    line = {
        "timesteps": evaluation.get("timesteps"),
        "training_seconds": round(training_seconds, 3),
        "evaluation_seconds": round(evaluation_seconds, 3),
    }
    with open(run_dir / TIMES_FILE, "a") as f:
        f.write(json.dumps(line) + "\n")


def read_jsonl(path: Path) -> list[dict]:
    lines = []
    if path.exists():
        for raw in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                line = json.loads(raw)
                if isinstance(line, dict):
                    lines.append(line)
    return lines


def trial_curve(run_dir: Path) -> list[dict]:
    """The periodic evaluations of a run: step, training seconds (from the evaluation itself if it
    holds them, else from evaluation_times.jsonl; None if neither), win share vs each opponent."""
    times = {line.get("timesteps"): line for line in read_jsonl(run_dir / TIMES_FILE)}
    points = {}
    for line in read_jsonl(run_dir / "evaluations.jsonl"):
        step = line.get("timesteps")
        if not isinstance(step, int):
            continue
        seconds = line.get("training_seconds", times.get(step, {}).get("training_seconds"))
        point = {
            "timesteps": step,
            "training_seconds": seconds,
            "evaluation_seconds": times.get(step, {}).get("evaluation_seconds"),
        }
        for opponent, r in line.items():
            if isinstance(r, dict) and "win_share" in r:
                point[f"win_share_vs_{opponent}"] = r["win_share"]
                point[f"win_share_vs_{opponent}_ci95"] = r.get("win_share_ci95")
                point[f"mean_score_vs_{opponent}"] = r.get("mean_score")
        points[step] = point  # an evaluation repeated after a kill: the last one
    return [points[step] for step in sorted(points)]


@contextlib.contextmanager
def _output_to(log: Path):
    """This process's stdout and stderr (file descriptors: subprocesses' too) appended to ``log``
    while the block runs, then put back (a Ray worker runs other tasks after this one)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(log, "a", buffering=1) as file:
        os.dup2(file.fileno(), 1)
        os.dup2(file.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def _run_logged(task: dict, log: Path) -> bool:
    """``run_trial`` with its output in ``log``: whether it finished (a failure's traceback is
    in the log)."""
    with _output_to(log):
        print(
            f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}: trial {task['name']} ({task['state']}), process {os.getpid()}",
            flush=True,
        )
        try:
            run_trial(task)
            return True
        except SystemExit:
            raise
        except BaseException:
            traceback.print_exc()
            return False


def _trial_main(task: dict) -> None:
    """A trial's process: train (new, resumed, or nothing left), evaluate the final checkpoint
    against every reference, write result.json. Output goes to seed<k>.log beside its folder."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    # typeshed's TextIO has no reconfigure(); a process's own streams are TextIOWrappers
    cast(io.TextIOWrapper, sys.stdout).reconfigure(line_buffering=True)
    cast(io.TextIOWrapper, sys.stderr).reconfigure(line_buffering=True)
    run_dir = Path(task["dir"])
    if not _run_logged(task, run_dir.parent / f"{run_dir.name}.log"):
        raise SystemExit(1)


def _remote_trial(task: dict) -> dict:
    """A trial as a Ray task: trained in a temporary folder on the worker (from the partial run
    folder sent along when resuming), whose files go back to the driver with the log."""
    with tempfile.TemporaryDirectory(prefix="deckgym-trial-") as tmp:
        run_dir = Path(tmp) / Path(task["dir"]).name
        if task["files"]:
            write_folder(run_dir, task["files"])
        log = Path(tmp) / f"{run_dir.name}.log"
        ok = _run_logged({**task, "dir": str(run_dir), "files": None}, log)
        return {
            "ok": ok,
            "files": read_folder(run_dir) if run_dir.is_dir() else {},
            "log": log.read_text(errors="replace"),
        }


def run_trial(task: dict) -> dict:
    config = Config.model_validate(task["config"])
    run_dir = Path(task["dir"])
    resume = (run_dir / "config.yaml").is_file() and (run_dir / "checkpoint" / "model.zip").is_file()
    made = train(config, run_dir, resume=resume, on_evaluation=record_evaluation_time)
    if made != run_dir:
        raise RuntimeError(f"trained in {made}, not {run_dir}: the trial folder was taken meanwhile")
    meta = read_meta(run_dir / "checkpoint")
    env = EnvHandle(config.env.id, config.env.args)
    bot = str(run_dir / "checkpoint")
    final, started = {}, time.time()
    for ref in task["references"]:
        result = evaluate(
            env, bot_layout(env, bot, ref, own_partner(config)), task["eval_games"], seed=task["eval_seed"], processes=1
        )
        mine = result["agents"][bot]
        final[ref] = {
            **{
                k: mine[k]
                for k in ("win_share", "win_share_ci95", "even_share", "mean_score", "mean_score_ci95", "seats")
            },
            "games": result["games"],
            "duplicate_sets": result["duplicate_sets"],
            "truncated_games": result["truncated_games"],
        }
        print(
            f"final evaluation vs {ref}: win share {mine['win_share']:.3f} (even {mine['even_share']:.3f}), "
            f"points/game {mine['mean_score']:.2f}, {result['games']} games"
        )
    curve = trial_curve(run_dir)
    seconds = float(meta.get("training_seconds", 0.0))
    steps = int(meta["timesteps"])
    evaluating = sum(p["evaluation_seconds"] or 0.0 for p in curve if p["timesteps"] < steps)
    result = {
        "setting": task["setting"],
        "algorithm": task["algorithm"],
        "seed": task["seed"],
        "algorithm_name": config.algorithm.name,
        "env_id": config.env.id,
        "env_args": _plain(config.env.args),
        "timesteps": steps,
        "training_seconds": seconds,
        "periodic_evaluation_seconds": round(evaluating, 3),
        "learner_steps_per_s": steps / max(seconds - evaluating, 1e-9) if seconds > 0 else None,
        "final_evaluation_seconds": round(time.time() - started, 3),
        "final": final,
        "curve": curve,
        "config": task["comparable"],
        "evaluation_settings": task["evaluation_settings"],
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    write_file(run_dir / RESULT_FILE, json.dumps(result, indent=2) + "\n")
    print(f"trial {task['name']} finished: {steps} steps in {seconds:.1f} s")
    return result


# ---------------------------------------------------------------- running trials side by side
def _task(trial: Trial, bench: BenchmarkConfig, state: str) -> dict:
    return {
        "name": trial.name,
        "setting": trial.setting,
        "algorithm": trial.algorithm,
        "seed": trial.seed,
        "dir": str(trial.dir),
        "state": state,
        "config": trial.config.to_dict(),
        "comparable": _comparable(trial.config),
        "evaluation_settings": _plain(evaluation_settings(bench)),
        "references": list(bench.references),
        "eval_games": bench.eval_games,
        "eval_seed": bench.eval_seed,
    }


def _log_of(trial: Trial) -> Path:
    """A trial's output (training's plan and progress, its evaluations), beside its run folder:
    the folder itself is made by training.learning.train, which refuses one that exists."""
    return trial.dir.parent / f"{trial.dir.name}.log"


def _last_lines(path: Path, n: int = 3) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return "\n    ".join(clipped(line, 300) for line in lines[-n:])


class _Terminated(Exception):
    pass


def run_trials(pending: list[tuple[Trial, str]], bench: BenchmarkConfig, processes: int, say) -> list[str]:
    """Train the pending trials, ``processes`` at a time, each in a spawned process of its own;
    return the names of those that failed. Ctrl-C (or SIGTERM) stops them all: each writes its
    checkpoint (training.learning.train), and a rerun resumes it."""
    ctx = multiprocessing.get_context("spawn")
    running: dict[int, tuple[multiprocessing.context.SpawnProcess, Trial, float]]  # by sentinel
    queue, running, failed, done = list(pending), {}, [], 0
    terminated = []

    def on_term(signum, frame):
        terminated.append(signum)
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        while queue or running:
            while queue and len(running) < processes:
                trial, state = queue.pop(0)
                process = ctx.Process(
                    target=_trial_main, args=(_task(trial, bench, state),), name=f"trial {trial.name}"
                )
                process.start()
                running[process.sentinel] = (process, trial, time.time())
                say(f"  started {trial.name} ({'resuming' if state == 'resume' else 'new'}; log {_log_of(trial)})")
            for sentinel in multiprocessing.connection.wait(list(running)):
                process, trial, began = running.pop(cast(int, sentinel))  # wait() returns what it was given
                process.join()
                done += 1
                result = read_json(trial.dir / RESULT_FILE) if process.exitcode == 0 else None
                if result is None:
                    failed.append(trial.name)
                    say(
                        f"  FAILED {trial.name} (exit code {process.exitcode}); {_log_of(trial)} ends:\n    "
                        + _last_lines(_log_of(trial))
                    )
                    continue
                shares = ", ".join(f"vs {ref} {r['win_share']:.3f}" for ref, r in result["final"].items())
                say(
                    f"  [{done}/{len(pending)}] {trial.name}: {result['timesteps']} steps, "
                    f"{result['training_seconds']:.0f} s training, win share {shares} "
                    f"({time.time() - began:.0f} s in all)"
                )
    except (KeyboardInterrupt, _Terminated):
        for process, _, _ in running.values():
            if terminated and process.is_alive():  # Ctrl-C reached them already; SIGTERM did not
                assert process.pid is not None  # a started process has one
                os.kill(process.pid, signal.SIGTERM)
        for process, _, _ in running.values():
            process.join(120)
            if process.is_alive():
                process.kill()
                process.join()
        raise KeyboardInterrupt from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    return failed


def run_trials_ray(pending: list[tuple[Trial, str]], bench: BenchmarkConfig, executor, say) -> list[str]:
    """Train the pending trials as Ray tasks (``training.running.executor``); return the names of those
    that failed. Each trial's folder comes back whole and replaces ``<out>/trials/...`` as it
    finishes (``replace_folder``): a rerun skips, resumes or restarts it as after a local run."""
    tasks, agents, failed, started = [], set(bench.references), [], time.time()
    for trial, state in pending:
        task = _task(trial, bench, state)
        task["files"] = read_folder(trial.dir) if state == "resume" else None
        tasks.append(task)
        agents.update(entry.agent for entry in trial.config.opponents.pool)
    say(f"  {len(pending)} trial(s) sent to {executor.describe()}")
    for done, (index, reply) in enumerate(executor.imap(_remote_trial, tasks, agents=agents), 1):
        trial = pending[index][0]
        if reply["files"]:
            replace_folder(trial.dir, reply["files"])
        with open(_log_of(trial), "a") as log:
            log.write(reply["log"])
        result = read_json(trial.dir / RESULT_FILE) if reply["ok"] else None
        if result is None:
            failed.append(trial.name)
            say(f"  FAILED {trial.name}; {_log_of(trial)} ends:\n    " + _last_lines(_log_of(trial)))
            continue
        shares = ", ".join(f"vs {ref} {r['win_share']:.3f}" for ref, r in result["final"].items())
        say(
            f"  [{done}/{len(pending)}] {trial.name}: {result['timesteps']} steps, "
            f"{result['training_seconds']:.0f} s training, win share {shares} ({time.time() - started:.0f} s so far)"
        )
    return failed


def _remove_stale(trial: Trial) -> None:
    with hold_folder(trial.dir, "training run"):  # refuses if a training run holds it
        shutil.rmtree(trial.dir)


# ---------------------------------------------------------------- leagues
def _fingerprint(path: Path) -> str:
    digest = hashlib.sha256()
    for name in ("policy.npz", "meta.json"):
        with contextlib.suppress(OSError):
            digest.update((path / name).read_bytes())
    return digest.hexdigest()[:16]


def league_agent(trial: Trial, out: Path) -> str:
    return (trial.dir / "checkpoint").relative_to(out).as_posix()


def _reference_spec(ref: str) -> str:
    """A reference as the league (run inside the benchmark folder) finds it: a folder given
    relative to the current directory becomes absolute."""
    return str(Path(ref).resolve()) if Path(ref).is_dir() else ref


def run_setting_league(
    bench: BenchmarkConfig, setting: str, trials: list[Trial], out: Path, processes: int, executor=None
) -> dict:
    """The league of a setting's final agents and the references, in ``<out>/leagues/<setting>``.
    It keeps its log across reruns, unless a trial's checkpoint changed since its matches were
    played (then it is played anew)."""
    s = bench.settings[setting]
    refs = [_reference_spec(ref) for ref in bench.references]
    agents = {league_agent(t, out): _fingerprint(t.dir / "checkpoint") for t in trials}
    record = {"agents": agents, "references": refs, "seed": bench.league_seed, "env": s.env, "args": _plain(s.args)}
    folder, stamp = out / "leagues" / setting, out / "leagues" / f"{setting}.{LEAGUE_AGENTS}"
    if folder.exists() and read_json(stamp) != record:
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    write_file(stamp, json.dumps(record, indent=2) + "\n")
    with chdir(out):
        result = run_league(
            Path("leagues") / setting,
            agents=list(agents) + refs,
            env_id=s.env,
            env_args=dict(s.args),
            games=bench.league_games,
            seed=bench.league_seed,
            reference=refs[0],
            processes=processes,
            verbose=False,
            executor=executor,
        )
    return {
        "rows": result["rows"],
        "games": result["games"],
        "played": result["played"],
        "reference": refs[0],
        "folder": str(folder),
    }


# ---------------------------------------------------------------- statistics and outputs
# Two-sided 95% Student t quantiles by degrees of freedom; beyond 30, the normal's 1.96.
T95 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    11: 2.201,
    12: 2.179,
    13: 2.160,
    14: 2.145,
    15: 2.131,
    16: 2.120,
    17: 2.110,
    18: 2.101,
    19: 2.093,
    20: 2.086,
    21: 2.080,
    22: 2.074,
    23: 2.069,
    24: 2.064,
    25: 2.060,
    26: 2.056,
    27: 2.052,
    28: 2.048,
    29: 2.045,
    30: 2.042,
}


def t_interval(values) -> dict:
    """Mean and 95% Student t interval (None with fewer than 2 values) over seeds."""
    values = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not values:
        return {"mean": None, "ci95": None, "n": 0}
    mean = float(np.mean(values))
    if len(values) < 2:
        return {"mean": mean, "ci95": None, "n": 1}
    half = T95.get(len(values) - 1, 1.96) * float(np.std(values, ddof=1)) / math.sqrt(len(values))
    return {"mean": mean, "ci95": [mean - half, mean + half], "n": len(values)}


def summarize_setting(
    bench: BenchmarkConfig, results: list[dict], league: dict | None, out: Path, trials: list[Trial]
) -> dict:
    """Per algorithm: each number's mean and t-interval over the seeds."""
    rating = {row["agent"]: row for row in (league or {}).get("rows", [])}
    agent_of = {(t.algorithm, t.seed): league_agent(t, out) for t in trials}
    summary = {}
    for algorithm in bench.algorithms:
        mine = [r for r in results if r["algorithm"] == algorithm]
        row: dict[str, Any] = {"seeds": [r["seed"] for r in mine]}
        for ref in bench.references:
            row[f"win_share_vs_{ref}"] = t_interval(r["final"][ref]["win_share"] for r in mine)
            row[f"points_vs_{ref}"] = t_interval(r["final"][ref]["mean_score"] for r in mine)
            row[f"even_share_vs_{ref}"] = mine[0]["final"][ref]["even_share"] if mine else None
        for key in ("mu", "ordinal", "elo"):
            row[f"rating_{key}"] = t_interval(rating.get(agent_of[(algorithm, r["seed"])], {}).get(key) for r in mine)
        for key in ("timesteps", "training_seconds", "learner_steps_per_s"):
            row[key] = t_interval(r[key] for r in mine)
        summary[algorithm] = row
    return summary


def _number(value: float, digits: int) -> str:
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.00"


def _cell(stat: dict, digits: int, interval: bool = True, low: float = -math.inf, high: float = math.inf) -> str:
    """``mean [low, high]``: the mean over seeds and its t-interval (clipped to the value's
    range: a win share stays in [0, 1])."""
    if stat is None or stat["mean"] is None:
        return "n/a"
    text = _number(stat["mean"], digits)
    if interval and stat["ci95"] is not None:
        a, b = max(low, stat["ci95"][0]), min(high, stat["ci95"][1])
        text += f" [{_number(a, digits)}, {_number(b, digits)}]"
    return text


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def setting_table(
    bench: BenchmarkConfig, setting: str, summary: dict, league: dict | None, lower_score_wins: bool
) -> str:
    s = bench.settings[setting]
    args = ", ".join(f"{k}={json.dumps(v)}" for k, v in s.args.items()) or "default arguments"
    header = ["algorithm", "seeds"]
    for ref in bench.references:
        header += [f"win share vs {ref}", f"points vs {ref}"]
    header += ["rating (mu)", "env steps", "wall-clock (s)", "learner steps/s"]
    lines = [
        f"## {setting}",
        "",
        f"{s.env} ({args})",
        "",
        "| " + " | ".join(_md(h) for h in header) + " |",
        "|---|---:|" + "---:|" * (len(header) - 2),
    ]
    for algorithm, row in summary.items():
        cells = [_md(algorithm), str(len(row["seeds"]))]
        for ref in bench.references:
            cells += [_cell(row[f"win_share_vs_{ref}"], 3, low=0.0, high=1.0), _cell(row[f"points_vs_{ref}"], 2)]
        cells += [
            _cell(row["rating_mu"], 2),
            _cell(row["timesteps"], 0, interval=False),
            _cell(row["training_seconds"], 0, interval=False),
            _cell(row["learner_steps_per_s"], 0, low=0.0),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    evens = {ref: next((row[f"even_share_vs_{ref}"] for row in summary.values()), None) for ref in bench.references}
    lines += [
        "",
        "Each cell: the mean over the seeds' final agents, and in brackets its 95% Student t interval over "
        "the seeds (none with one seed; a win share's clipped to [0, 1]); env steps and wall-clock: the mean "
        "only (results.json has their intervals). Win share and points: the final agent in "
        f"{bench.eval_games} duplicate sets against each reference, seated as it trained (its seat, or both "
        "seats of its side in partnership), the reference in every other seat; even share "
        + ", ".join(f"{v:.3f} vs {_md(ref)}" for ref, v in evens.items() if v is not None)
        + f". Points: final points per game of its seats, {'lower' if lower_score_wins else 'higher'} is "
        "better. Rating: OpenSkill mu of each seed's agent in the setting's league (mean over the seeds), "
        f"{_md(bench.references[0])} pinned at 25. Env steps: learner steps trained on. Wall-clock: training "
        "time, periodic evaluations included. Learner steps/s: env steps per second of training, periodic "
        "evaluations left out.",
    ]
    if league:
        refs = [row for row in league["rows"] if row["agent"] in league.get("references", [])]
        if refs:
            lines += [
                "",
                "References in the league: "
                + ", ".join(f"{_md(row['agent'])} mu {row['mu']:.2f} (sigma {row['sigma']:.2f})" for row in refs)
                + f". Full ratings: leagues/{setting}/ratings.md.",
            ]
    lines += ["", f"![learning curves: {setting}](curves/{setting}.png)", ""]
    return "\n".join(lines)


def _seed_curves(results: list[dict], key: str) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each seed's curve: (steps, training seconds or NaN, win share), by step."""
    curves = []
    for r in results:
        points = sorted((p for p in r["curve"] if p.get(key) is not None), key=lambda p: p["timesteps"])
        if points:
            curves.append(
                (
                    np.array([p["timesteps"] for p in points], float),
                    np.array(
                        [np.nan if p.get("training_seconds") is None else p["training_seconds"] for p in points], float
                    ),
                    np.array([p[key] for p in points], float),
                )
            )
    return curves


def curve_band(curves) -> dict:
    """On the union of the seeds' evaluation steps: the mean win share over the seeds that reached
    the step (each interpolated within its own range), the band (the 95% t-interval over 3 or
    more seeds; the two seeds' range with 2, where t's 12.7 spans everything; none with 1), and
    the seeds' mean training seconds at that step."""
    grid = np.unique(np.concatenate([steps for steps, _, _ in curves]))
    out: dict[str, Any] = {"timesteps": grid, "mean": [], "low": [], "high": [], "seconds": []}  # lists, then arrays
    for g in grid:
        covering = [c for c in curves if c[0][0] <= g <= c[0][-1]]
        values = [float(np.interp(g, steps, share)) for steps, _, share in covering]
        stat = t_interval(values)
        band = [min(values), max(values)] if len(values) == 2 else stat["ci95"] or [np.nan, np.nan]
        out["mean"].append(stat["mean"])
        out["low"].append(band[0])
        out["high"].append(band[1])
        times = [
            float(np.interp(g, steps[np.isfinite(sec)], sec[np.isfinite(sec)]))
            for steps, sec, _ in covering
            if np.isfinite(sec).any()
        ]
        out["seconds"].append(float(np.mean(times)) if times else np.nan)
    for key in ("mean", "low", "high", "seconds"):
        out[key] = np.array(out[key], float)
    out["low"], out["high"] = np.clip(out["low"], 0, 1), np.clip(out["high"], 0, 1)
    return out


def curves_png(setting: str, results: list[dict], algorithms: list[str]) -> bytes:
    """Win share vs the heuristic against env steps and against wall-clock, a line (mean over
    seeds) and a band (``curve_band``) per algorithm. On the wall-clock panel each point sits
    at the seeds' mean training time to reach its step."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    key = f"win_share_vs_{CURVE_OPPONENT}"
    fig = Figure(figsize=(11, 4.2))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharey=True)
    even = None
    for i, algorithm in enumerate(algorithms):
        mine = [r for r in results if r["algorithm"] == algorithm]
        for r in mine:
            final = r["final"].get(CURVE_OPPONENT)
            even = final["even_share"] if final else even
        curves = _seed_curves(mine, key)
        if not curves:
            continue
        band = curve_band(curves)
        for ax, x in zip(axes, (band["timesteps"], band["seconds"])):
            ok = np.isfinite(x)
            ax.plot(
                x[ok],
                band["mean"][ok],
                color=f"C{i}",
                marker="o" if ok.sum() <= 30 else None,
                markersize=3,
                label=f"{algorithm} ({len(curves)} seed{'s' if len(curves) != 1 else ''})",
            )
            if np.isfinite(band["low"][ok]).any():
                ax.fill_between(x[ok], band["low"][ok], band["high"][ok], color=f"C{i}", alpha=0.15, linewidth=0)
    for ax, label in zip(axes, ("env steps (learner steps)", "wall-clock (s of training)")):
        if even is not None:
            ax.axhline(even, color="grey", linestyle="--", linewidth=1, label="even share")
        ax.set_xlabel(label)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"win share vs {CURVE_OPPONENT}")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle(
        f"{setting}: periodic evaluations, mean over seeds; band: 95% t-interval over seeds "
        "(with 2 seeds: their range)",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def _csv_row(row: dict) -> dict:
    """Floats to 6 significant digits: the CSV is for reading; results.json keeps them whole."""
    return {k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()}


def results_csv(bench: BenchmarkConfig, results: list[dict], leagues: dict, out: Path, trials: list[Trial]) -> str:
    agent_of = {(t.setting, t.algorithm, t.seed): league_agent(t, out) for t in trials}
    columns = [
        "setting",
        "algorithm",
        "algorithm_name",
        "seed",
        "env_id",
        "timesteps",
        "training_seconds",
        "periodic_evaluation_seconds",
        "learner_steps_per_s",
        "final_evaluation_seconds",
    ]
    for ref in bench.references:
        columns += [
            f"win_share_vs_{ref}",
            f"win_share_vs_{ref}_ci95_low",
            f"win_share_vs_{ref}_ci95_high",
            f"even_share_vs_{ref}",
            f"points_vs_{ref}",
            f"points_vs_{ref}_ci95_low",
            f"points_vs_{ref}_ci95_high",
            f"games_vs_{ref}",
        ]
    columns += ["rating_mu", "rating_sigma", "rating_ordinal", "elo", "league_agent"]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, columns, lineterminator="\n")
    writer.writeheader()
    for r in results:
        row = {k: r.get(k) for k in columns[:10]}
        for ref in bench.references:
            f = r["final"][ref]
            ws, pts = f["win_share_ci95"] or [None, None], f["mean_score_ci95"] or [None, None]
            row.update(
                {
                    f"win_share_vs_{ref}": f["win_share"],
                    f"win_share_vs_{ref}_ci95_low": ws[0],
                    f"win_share_vs_{ref}_ci95_high": ws[1],
                    f"even_share_vs_{ref}": f["even_share"],
                    f"points_vs_{ref}": f["mean_score"],
                    f"points_vs_{ref}_ci95_low": pts[0],
                    f"points_vs_{ref}_ci95_high": pts[1],
                    f"games_vs_{ref}": f["games"],
                }
            )
        agent = agent_of[(r["setting"], r["algorithm"], r["seed"])]
        rating: dict[str, Any] = next(
            (x for x in (leagues.get(r["setting"]) or {}).get("rows", []) if x["agent"] == agent), {}
        )
        row.update(
            {
                "rating_mu": rating.get("mu"),
                "rating_sigma": rating.get("sigma"),
                "rating_ordinal": rating.get("ordinal"),
                "elo": rating.get("elo"),
                "league_agent": agent,
            }
        )
        writer.writerow(_csv_row(row))
    return buffer.getvalue()


def curves_csv(results: list[dict]) -> str:
    buffer = io.StringIO()
    columns = [
        "setting",
        "algorithm",
        "seed",
        "timesteps",
        "training_seconds",
        "win_share_vs_heuristic",
        "win_share_vs_heuristic_ci95_low",
        "win_share_vs_heuristic_ci95_high",
        "win_share_vs_random",
        "mean_score_vs_heuristic",
        "mean_score_vs_random",
    ]
    writer = csv.DictWriter(buffer, columns, lineterminator="\n")
    writer.writeheader()
    for r in results:
        for p in r["curve"]:
            ci = p.get("win_share_vs_heuristic_ci95") or [None, None]
            writer.writerow(
                _csv_row(
                    {
                        "setting": r["setting"],
                        "algorithm": r["algorithm"],
                        "seed": r["seed"],
                        **{k: p.get(k) for k in columns[3:] if not k.endswith(("_low", "_high"))},
                        "win_share_vs_heuristic_ci95_low": ci[0],
                        "win_share_vs_heuristic_ci95_high": ci[1],
                    }
                )
            )
    return buffer.getvalue()


def write_outputs(
    bench: BenchmarkConfig, out: Path, trials: list[Trial], results: list[dict], leagues: dict, timing: dict
) -> str:
    (out / "curves").mkdir(exist_ok=True)
    summaries, sections = {}, []
    for setting, s in bench.settings.items():
        mine = [r for r in results if r["setting"] == setting]
        setting_trials = [t for t in trials if t.setting == setting]
        summaries[setting] = summarize_setting(bench, mine, leagues.get(setting), out, setting_trials)
        league = leagues.get(setting)
        if league:
            league = {**league, "references": [_reference_spec(ref) for ref in bench.references]}
        sections.append(setting_table(bench, setting, summaries[setting], league, game_spec(s.env).lower_score_wins))
        write_file(out / "curves" / f"{setting}.png", curves_png(setting, mine, list(bench.algorithms)))
    budget = bench.budget
    head = [
        "# Benchmark results",
        "",
        f"{len(bench.settings)} settings x {len(bench.algorithms)} algorithms x {len(bench.seeds)} seeds "
        f"(seeds {', '.join(map(str, bench.seeds))}) = {len(trials)} trials, each trained for "
        f"{budget.total_timesteps} env steps"
        + (f" or {budget.max_seconds:g} s, whichever comes first" if budget.max_seconds else "")
        + f"; final agents evaluated against {', '.join(bench.references)} in {bench.eval_games} duplicate sets "
        f"(deal seeds from {bench.eval_seed}); leagues of {bench.league_games} duplicate sets per pairing. "
        f"Config: benchmark.yaml. Raw numbers: results.csv, results.json, curves.csv.",
        "",
    ]
    markdown = "\n".join(head) + "\n" + "\n".join(sections)
    write_file(out / "results.md", markdown)
    write_file(out / "results.csv", results_csv(bench, results, leagues, out, trials))
    write_file(out / "curves.csv", curves_csv(results))
    document = {
        "benchmark": _plain(bench.model_dump()),
        "timing": timing,
        "settings": {
            setting: {"summary": summaries[setting], "league": leagues.get(setting)} for setting in bench.settings
        },
        "trials": results,
    }
    write_file(out / "results.json", json.dumps(document, indent=1, default=_json_default) + "\n")
    return markdown


def _json_default(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    raise TypeError(f"not JSON: {type(value).__name__}")


# ---------------------------------------------------------------- the benchmark
def only_settings(bench: BenchmarkConfig, names) -> BenchmarkConfig:
    """``bench`` restricted to the settings ``names`` (all of them for None)."""
    if names is None:
        return bench
    names = list(dict.fromkeys(names))
    unknown = [name for name in names if name not in bench.settings]
    if unknown or not names:
        raise BenchmarkError(
            f"settings: {', '.join(map(repr, unknown)) or 'none given'}; the config has {', '.join(bench.settings)}"
        )
    return bench.model_copy(update={"settings": {name: bench.settings[name] for name in names}})


def run_benchmark(
    bench: BenchmarkConfig, out=None, processes: int | None = None, verbose: bool = True, executor=None, settings=None
) -> dict:
    """Run (or continue) the benchmark in ``out`` (default ``bench.out``) and write its outputs;
    return ``{"markdown", "trials", "ran", "skipped", "timing", ...}``. Trials and league
    matches run in ``processes`` local processes, or as Ray tasks with a Ray ``executor``
    (``training.running.executor``). ``settings`` (names) restricts the run and its outputs to those
    settings; ``benchmark.yaml`` is the whole config all the same."""
    say = (lambda *a, **k: print(*a, **k, flush=True)) if verbose else (lambda *a, **k: None)
    start = time.time()
    out = Path(out if out is not None else bench.out)
    processes = bench.processes if processes is None else processes
    if processes < 1:
        raise BenchmarkError(f"processes={processes}: need at least 1")
    whole = bench.model_copy(update={"out": str(out), "processes": processes})
    bench = only_settings(whole, settings)
    trials = plan_trials(bench, out)
    out.mkdir(parents=True, exist_ok=True)
    with hold_folder(out, "benchmark"):
        for trial in trials:  # a Ray trial's folder being swapped in when the driver was killed
            recover_leftovers(trial.dir.parent, f".{trial.dir.name}.")
        states = {t.name: trial_state(t, bench) for t in trials}
        write_file(out / "benchmark.yaml", dump_benchmark(whole))
        pending = [(t, states[t.name]) for t in trials if states[t.name] != "finished"]
        for trial, state in pending:
            if state == "stale":  # killed before its first checkpoint: nothing to resume, it starts anew
                _remove_stale(trial)
        counts = {k: list(states.values()).count(k) for k in ("finished", "resume", "stale", "new")}
        say(
            f"benchmark {out}: {len(bench.settings)} settings x {len(bench.algorithms)} algorithms x "
            f"{len(bench.seeds)} seeds = {len(trials)} trials ({counts['finished']} finished, {counts['resume']} to "
            f"resume, {counts['new'] + counts['stale']} to train), {processes} at a time; each "
            f"{bench.budget.total_timesteps} env steps"
            + (f" or {bench.budget.max_seconds:g} s" if bench.budget.max_seconds else "")
        )
        if not pending:
            failed = []
        elif executor is not None and executor.ray:
            failed = run_trials_ray(pending, bench, executor, say)
        else:
            failed = run_trials(pending, bench, processes, say)
        trained_at = time.time()
        if failed:
            raise BenchmarkError(
                f"{len(failed)} trial(s) failed: {', '.join(failed)} (see their seed<k>.log); "
                "the others are kept: rerun the same command to retry them"
            )
        results = [read_json(t.dir / RESULT_FILE) for t in trials]
        leagues = {}
        for setting in bench.settings:
            setting_trials = [t for t in trials if t.setting == setting]
            leagues[setting] = run_setting_league(bench, setting, setting_trials, out, processes, executor)
            say(
                f"  league {setting}: {leagues[setting]['played']} matches played, "
                f"{leagues[setting]['games']} games rated ({out / 'leagues' / setting / 'ratings.md'})"
            )
        timing = {
            "this_run_seconds": round(time.time() - start, 1),
            "trials_seconds": round(trained_at - start, 1),
            "leagues_seconds": round(time.time() - trained_at, 1),
        }
        markdown = write_outputs(bench, out, trials, results, leagues, timing)
    say(
        f"\n{markdown}\nresults in {out}: results.md, results.csv, results.json, curves/*.png "
        f"({time.time() - start:.0f} s)"
    )
    return {
        "markdown": markdown,
        "trials": results,
        "ran": [t.name for t, _ in pending],
        "skipped": [t.name for t in trials if states[t.name] == "finished"],
        "leagues": leagues,
        "timing": timing,
        "out": str(out),
    }


def main(argv=None):
    parser = command_parser("benchmark", __doc__)
    parser.add_argument("--config", required=True, help="benchmark config (configs/benchmark_*.yaml)")
    parser.add_argument("--out", help="the benchmark folder (default: the config's out)")
    parser.add_argument("--processes", type=int, help="trials trained side by side (default: the config's)")
    parser.add_argument(
        "--settings", metavar="NAME[,NAME...]", help="run and table only these settings (default: all the config's)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override a config value, e.g. --set seeds=[0] --set 'algorithms={MaskablePPO: {}}'",
    )
    add_executor_arguments(parser)
    args = parser.parse_args(argv)
    executor = None
    try:
        bench = load_benchmark(args.config, args.set)
        executor = executor_from_args(args, args.processes or bench.processes)
        settings = (
            None if args.settings is None else [name.strip() for name in args.settings.split(",") if name.strip()]
        )
        return run_benchmark(bench, out=args.out, processes=args.processes, executor=executor, settings=settings)
    except ValueError as exc:  # BenchmarkError, ConfigError, LeagueError, a bad agent
        raise SystemExit(f"error: {exc}") from None
    except KeyboardInterrupt:
        kept = (
            "every trial that came back from Ray is kept (those in flight restart from their folder here)"
            if executor is not None and executor.ray
            else "every trial wrote its checkpoint"
        )
        print(f"\ninterrupted: {kept}; rerun the same command to resume", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
