"""Experiment configs: YAML files loaded into typed, validated objects.

Every default the code uses is a field default here and is written out in full in the
shipped configs (``configs/*.yaml``). An unknown key, a wrong type or a bad value raises
``ConfigError`` naming the key path (``algorithm.learning_rate``) and what is allowed.
"""
from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml


class ConfigError(ValueError):
    """A config that can't be used; the message names the key path."""


@dataclass
class EnvConfig:
    id: str = "craits_v0"
    args: dict = field(default_factory=dict)  # every constructor argument of the env


@dataclass
class AlgorithmConfig:
    name: str = "MaskablePPO"
    net_arch: list = field(default_factory=lambda: [128, 128])
    activation: str = "tanh"
    learning_rate: float = 3e-4
    n_steps: int = 512  # per env, per rollout
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    device: str = "cpu"
    torch_threads: int = 1  # small MLPs run fastest on one thread; more threads fight the env for cores


@dataclass
class PoolEntry:
    agent: str = "heuristic"  # random | heuristic | self_play | a checkpoint folder
    weight: float = 1.0


@dataclass
class SelfPlayConfig:
    snapshot_every: int = 50_000  # learner steps between snapshots
    latest_weight: float = 0.5  # chance of the latest snapshot when self_play is drawn
    window: int = 10  # older snapshots drawn from (uniformly), newest first


@dataclass
class OpponentsConfig:
    learner_seat: typing.Any = "random"  # "random" (a new seat each episode) or a seat number
    partner: str = "learner"  # partnership only: "learner" plays both seats of its side, "pool" draws the partner
    deterministic: bool = False  # checkpoint opponents: argmax instead of sampling
    pool: list = field(default_factory=lambda: [PoolEntry("heuristic", 1.0)])
    self_play: SelfPlayConfig = field(default_factory=SelfPlayConfig)


@dataclass
class TrainingConfig:
    total_timesteps: int = 200_000
    seed: int = 0


@dataclass
class VecConfig:
    n_envs: int = 4
    subprocesses: bool = False


@dataclass
class CheckpointConfig:
    every: int = 50_000  # learner steps between checkpoints (each written atomically)
    eval_every: int = 50_000  # learner steps between evaluations against heuristic and random
    eval_games: int = 20  # duplicate sets per evaluation


@dataclass
class OutputConfig:
    dir: str = "runs"
    name: str = "run"


@dataclass
class Config:
    env: EnvConfig = field(default_factory=EnvConfig)
    algorithm: AlgorithmConfig = field(default_factory=AlgorithmConfig)
    opponents: OpponentsConfig = field(default_factory=OpponentsConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    vec: VecConfig = field(default_factory=VecConfig)
    checkpoints: CheckpointConfig = field(default_factory=CheckpointConfig)
    output: OutputConfig = field(default_factory=OutputConfig)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @property
    def run_dir(self) -> Path:
        return Path(self.output.dir) / self.output.name


CHOICES = {
    "algorithm.name": ("MaskablePPO",),
    "algorithm.activation": ("tanh", "relu"),
    "algorithm.device": ("cpu", "cuda", "auto"),
    "opponents.partner": ("learner", "pool"),
}
POSITIVE = {"algorithm.learning_rate", "algorithm.n_steps", "algorithm.n_epochs", "algorithm.clip_range",
            "algorithm.max_grad_norm", "algorithm.torch_threads", "training.total_timesteps", "vec.n_envs",
            "checkpoints.every", "checkpoints.eval_every", "checkpoints.eval_games",
            "opponents.self_play.snapshot_every", "opponents.self_play.window"}
NON_NEGATIVE = {"algorithm.ent_coef", "algorithm.vf_coef", "training.seed"}
UNIT_INTERVAL = {"algorithm.gamma", "algorithm.gae_lambda", "opponents.self_play.latest_weight"}
BUILT_IN_AGENTS = ("random", "heuristic", "self_play")
# Keys a resumed run may change: how long and how it runs, not what it learns.
RESUMABLE = ("training.total_timesteps", "checkpoints.", "vec.", "algorithm.device", "algorithm.torch_threads")


def _type_name(tp) -> str:
    return getattr(tp, "__name__", str(tp))


def _build(cls, data, path: str):
    if not isinstance(data, dict):
        raise ConfigError(f"{path or 'config'} must be a mapping of keys, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in data.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in names:
            raise ConfigError(f"unknown config key {where!r}: allowed keys here are {', '.join(names)}")
        kwargs[key] = _value(hints[key], value, where)
    return cls(**kwargs)


def _value(tp, value, where: str):
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, where)
    if tp is typing.Any:
        return value
    if tp is float and isinstance(value, str):  # YAML reads 3e-4 (no dot) as a string
        try:
            value = float(value)
        except ValueError:
            pass
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp is float and isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"config key {where!r} must be a finite number, got {value!r}")
    if tp in (int, float, str, bool, list, dict) and (not isinstance(value, tp) or (tp is int and isinstance(value, bool))):
        raise ConfigError(f"config key {where!r} must be {_type_name(tp)}, got {value!r}")
    return value


def _check(config: Config) -> None:
    flat = {}

    def walk(obj, prefix):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            key = f"{prefix}{f.name}"
            if dataclasses.is_dataclass(value):
                walk(value, key + ".")
            else:
                flat[key] = value

    walk(config, "")
    for key, allowed in CHOICES.items():
        if flat[key] not in allowed:
            raise ConfigError(f"config key {key!r} is {flat[key]!r}: allowed values are {', '.join(allowed)}")
    for key in POSITIVE:
        if not flat[key] > 0:
            raise ConfigError(f"config key {key!r} must be > 0, got {flat[key]!r}")
    for key in NON_NEGATIVE:
        if not flat[key] >= 0:
            raise ConfigError(f"config key {key!r} must be >= 0, got {flat[key]!r}")
    if flat["training.seed"] >= 2**32:
        raise ConfigError(f"config key 'training.seed' must be below 2**32, got {flat['training.seed']}")
    a = config.algorithm
    if not 2 <= a.batch_size <= a.n_steps * config.vec.n_envs:
        raise ConfigError(f"config key 'algorithm.batch_size' is {a.batch_size}: it must be at least 2 and at most "
                          f"algorithm.n_steps x vec.n_envs = {a.n_steps * config.vec.n_envs} (one rollout)")
    name = config.output.name
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        raise ConfigError(f"config key 'output.name' is {name!r}: it must be a plain folder name")
    for key in UNIT_INTERVAL:
        if not 0 <= flat[key] <= 1:
            raise ConfigError(f"config key {key!r} must be between 0 and 1, got {flat[key]!r}")
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in config.algorithm.net_arch):
        raise ConfigError(f"config key 'algorithm.net_arch' must be a list of layer sizes > 0, got "
                          f"{config.algorithm.net_arch!r}")
    seat = config.opponents.learner_seat
    if seat != "random" and (not isinstance(seat, int) or isinstance(seat, bool) or seat < 0):
        raise ConfigError(f"config key 'opponents.learner_seat' must be 'random' or a seat number, got {seat!r}")
    entries = []
    for i, entry in enumerate(config.opponents.pool):
        entry = entry if isinstance(entry, PoolEntry) else _build(PoolEntry, entry, f"opponents.pool[{i}]")
        if not (isinstance(entry.weight, float) and math.isfinite(entry.weight) and entry.weight >= 0):
            raise ConfigError(f"config key 'opponents.pool[{i}].weight' must be a finite number >= 0, "
                              f"got {entry.weight!r}")
        if entry.agent not in BUILT_IN_AGENTS and not (Path(entry.agent) / "meta.json").is_file():
            raise ConfigError(f"config key 'opponents.pool[{i}].agent' is {entry.agent!r}: use random, heuristic, "
                              f"self_play or a checkpoint folder (one with a meta.json)")
        entries.append(entry)
    if not entries or sum(e.weight for e in entries) <= 0:
        raise ConfigError("config key 'opponents.pool' needs at least one entry with weight > 0")
    config.opponents.pool = entries
    _check_env(config)


def _check_env(config: Config) -> None:
    """Build the env once so a bad env argument, or a pool checkpoint made for another game,
    fails now (before a run folder exists), named with its key path."""
    from .agents import make_agent
    from .games import make_raw_env
    try:
        env = make_raw_env(config.env.id, **config.env.args)
    except ValueError as exc:
        where = "env.id" if "env id" in str(exc) else "env.args"
        raise ConfigError(f"config key {where!r}: {exc}") from None
    for i, entry in enumerate(config.opponents.pool):
        if entry.agent not in BUILT_IN_AGENTS:
            try:
                make_agent(entry.agent, env, config.env.id, config.env.args)
            except ValueError as exc:
                raise ConfigError(f"config key 'opponents.pool[{i}].agent': {exc}") from None
    seat = config.opponents.learner_seat
    if seat != "random" and seat >= len(env.possible_agents):
        raise ConfigError(f"config key 'opponents.learner_seat' is {seat}, but {config.env.id} has "
                          f"{len(env.possible_agents)} seats")


def _set(data: dict, dotted: str, raw: str) -> None:
    keys = dotted.split(".")
    node = data
    for key in keys[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise ConfigError(f"--set {dotted}: {key!r} is not a section")
    try:
        node[keys[-1]] = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {dotted}={raw}: not a valid YAML value ({exc.problem})") from None


def load_config(path=None, overrides: list[str] | None = None, data: dict | None = None) -> Config:
    """A validated ``Config`` from a YAML file (or a dict), with ``key.path=value`` overrides."""
    if data is None:
        try:
            text = Path(path).read_text() if path is not None else "{}"
            data = yaml.safe_load(text)
        except OSError as exc:
            raise ConfigError(f"can't read config {path}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from None
        data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError(f"{path or 'config'} must be a mapping of sections (env, algorithm, ...), got {data!r}")
    for item in overrides or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ConfigError(f"--set expects key.path=value, got {item!r}")
        _set(data, key.strip(), raw)
    config = _build(Config, data, "")
    _check(config)
    return config


def check_resumable(saved: Config, wanted: Config) -> None:
    """A resumed run continues the same experiment: only how long and how it runs may change."""
    old, new = _flatten(saved.to_dict()), _flatten(wanted.to_dict())
    changed = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k) and not k.startswith(RESUMABLE)]
    if changed:
        raise ConfigError("a resumed run can't change " + "; ".join(
            f"{k} ({old.get(k)!r} -> {new.get(k)!r})" for k in changed)
            + f": only {', '.join(RESUMABLE)} may change; start a new run for the rest")


def _flatten(tree: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict) and not (prefix == "env." and key == "args"):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def dump_config(config: Config) -> str:
    return yaml.safe_dump(config.to_dict(), sort_keys=False)
