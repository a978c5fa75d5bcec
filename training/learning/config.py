"""Experiment configs: YAML files loaded into typed, validated objects.

The schema below (pydantic) declares every key with its type, its default and its bounds;
the shipped configs (``configs/*.yaml``) write every default out. An unknown or repeated key,
a wrong type or a bad value raises ``ConfigError`` naming the key path
(``algorithm.learning_rate``), one line per problem. YAML aliases are refused, and a message
shows at most ``MAX_SHOWN`` characters of a rejected value.

What a config meets only when it trains (the env its arguments build, the checkpoints in its
opponent pool, the cores, memory and output.dir of this machine) is checked by
``training.learning.preflight.check_config``, before a run starts.
"""

from __future__ import annotations

import copy
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, TypeVar, Union, cast

import yaml
from pydantic import BeforeValidator, Field, ValidationError, field_validator, model_validator

from envs import default_game
from envs.engine import clipped, shown
from training.algorithms import AlgorithmConfig, config_classes
from training.common.schema import ConfigError, Number, Section, parse_yaml, read_yaml, yaml_problem
from training.shipped import config_path

MAX_PROBLEMS = 10  # problems one message lists


# ---------------------------------------------------------------- the schema
# Defaults are ``Field(default=...)``, named: mypy (without pydantic's plugin) sees a default
# only by its name, and a section built by ``default_factory`` must be buildable without arguments.
class EnvConfig(Section):
    id: str = Field(default_factory=lambda: default_game().id)  # the first registered game
    args: dict[str, Any] = {}  # every constructor argument of the env


# The algorithms, told apart by ``algorithm.name``: each declares its own hyperparameters in
# its module (training.algorithms). A config without a name gets the first.
# Each is a ``Section`` (pydantic) that has what ``AlgorithmConfig`` says: typing says only the latter.
ALGORITHMS = {cast("type[Section]", cls).model_fields["name"].default: cls for cls in config_classes()}


def _named(value):
    return {"name": next(iter(ALGORITHMS)), **value} if isinstance(value, dict) else value


if TYPE_CHECKING:  # the union below is built when the algorithms are known: mypy sees what they all have
    Algorithm = AlgorithmConfig
else:
    Algorithm = Annotated[Union[tuple(ALGORITHMS.values())], Field(discriminator="name"), BeforeValidator(_named)]  # noqa: UP007


class PoolEntry(Section):
    agent: str = (
        "heuristic"  # random | heuristic | self_play | a checkpoint folder (checked by training.learning.preflight)
    )
    weight: Number = Field(default=1.0, ge=0)

    def __init__(self, agent: str = "heuristic", weight: float = 1.0, **data):  # also PoolEntry("random", 1.0)
        # mypy (without pydantic's plugin) gives Section's __init__ no fields; pydantic's takes this model's
        super().__init__(agent=agent, weight=weight, **data)  # type: ignore[call-arg]


class SelfPlayConfig(Section):
    snapshot_every: int = Field(default=50_000, gt=0)  # learner steps between snapshots
    latest_weight: Number = Field(default=0.5, ge=0, le=1)  # chance of the latest snapshot when self_play is drawn
    window: int = Field(default=10, gt=0)  # older snapshots drawn from (uniformly), newest first


class OpponentsConfig(Section):
    # "random" (a new seat each episode) or a seat number (one of the env's: training.learning.preflight)
    learner_seat: Literal["random"] | Annotated[int, Field(ge=0)] = "random"
    # partnership only: "learner" plays both seats of its side, "pool" draws the partner
    partner: Literal["learner", "pool"] = "learner"
    deterministic: bool = False  # checkpoint opponents: argmax instead of sampling
    pool: list[PoolEntry] = Field(default_factory=lambda: [PoolEntry()])
    self_play: SelfPlayConfig = Field(default_factory=SelfPlayConfig)

    @field_validator("pool")
    @classmethod
    def _something_to_draw(cls, pool):
        if sum(entry.weight for entry in pool) <= 0:
            raise ValueError("needs at least one entry with weight > 0")
        return pool


class TrainingConfig(Section):
    total_timesteps: int = Field(default=200_000, gt=0)
    # a wall-clock cap on training time (summed over resumes; evaluations included): null = none
    max_seconds: Number | None = Field(default=None, gt=0)
    seed: int = Field(default=0, ge=0, le=2**32 - 1)
    # What the learner is trained on: the env's reward as it is ("none"), or symlog(r) =
    # sign(r)·ln(1 + |r|), for rules whose deal points have no bound (Craits' pressure,
    # empty_stock="pressure"), where a few huge rewards would swamp the value function.
    # Logs and evaluations keep the env's own reward.
    reward_transform: Literal["none", "symlog"] = "none"


class VecConfig(Section):
    n_envs: int = Field(default=32, gt=0)  # games in lockstep: large batches amortise the policy's forward pass
    workers: int = Field(default=1, gt=0)  # processes that play the games (1: the trainer's own); results alike


class CheckpointConfig(Section):
    every: int = Field(default=50_000, gt=0)  # learner steps between checkpoints (each written atomically)
    eval_every: int = Field(default=50_000, gt=0)  # learner steps between evaluations against heuristic and random
    eval_games: int = Field(default=20, gt=0)  # duplicate sets per evaluation


class OutputConfig(Section):
    dir: str = "runs"  # a folder this user can write in, or can make: training.learning.preflight
    name: str = "run"

    @field_validator("name")
    @classmethod
    def _plain_folder_name(cls, name):
        if not name or name in (".", "..") or "/" in name or "\\" in name:
            raise ValueError("must be a plain folder name")
        return name


class Config(Section):
    env: EnvConfig = Field(default_factory=EnvConfig)
    algorithm: Algorithm = Field(default_factory=lambda: next(iter(ALGORITHMS.values()))())
    opponents: OpponentsConfig = Field(default_factory=OpponentsConfig)
    training: TrainingConfig = Field(default_factory=TrainingConfig)
    vec: VecConfig = Field(default_factory=VecConfig)
    checkpoints: CheckpointConfig = Field(default_factory=CheckpointConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)

    @model_validator(mode="after")
    def _minibatch_within_a_rollout(self):
        a = self.algorithm
        if hasattr(a, "n_steps") and a.batch_size > a.n_steps * self.vec.n_envs:  # on-policy: one rollout
            raise ValueError(
                f"config key 'algorithm.batch_size' is {a.batch_size}: it must be at most "
                f"algorithm.n_steps x vec.n_envs = {a.n_steps * self.vec.n_envs} (one rollout)"
            )
        return self

    def to_dict(self) -> dict:
        return self.model_dump()

    @property
    def run_dir(self) -> Path:
        return Path(self.output.dir) / self.output.name


# How long and how a run goes, never what it learns from: a resumed run may change these.
RESUMABLE = (
    "training.total_timesteps",
    "training.max_seconds",
    "checkpoints.",
    "vec.",
    "algorithm.device",
    "algorithm.learning_rate_steps",  # its future only: resume_config refuses a change to its past
    "algorithm.torch_threads",
    "algorithm.num_env_runners",
    "algorithm.num_envs_per_env_runner",
)


# ---------------------------------------------------------------- reading YAML
# ---------------------------------------------------------------- pydantic's errors, named by key path
# What a key path ends in: a section class, or something that holds no keys of its own (a plain
# value: None; the algorithms' union; a benchmark's list or dict of sections).
Ending: TypeAlias = type[Section] | dict | tuple | None


def _where(loc) -> tuple[str, Ending]:
    """A pydantic error's location as a key path (``opponents.pool[0].weight``), and the section
    it ends in (None past a plain value). The labels pydantic puts in a location for a union's
    members (an algorithm's name, ``literal['random']``) are not keys: they are left out."""
    path = ""
    section: Any = Config  # a section class, ALGORITHMS (the union's tags: their classes), or None
    for key in loc:
        if isinstance(key, int):
            path += f"[{key}]"
        elif section is ALGORITHMS:  # the algorithm union's tag
            section = ALGORITHMS.get(key)
        elif section is not None:
            path = f"{path}.{key}" if path else key
            field = section.model_fields.get(key)
            section = None if field is None else ALGORITHMS if field.discriminator else _section(field.annotation)
    return path, section


def _section(annotation):
    while typing.get_origin(annotation) is list:  # a list of sections: its items
        annotation = typing.get_args(annotation)[0]
    return annotation if isinstance(annotation, type) and issubclass(annotation, Section) else None


def schema_problems(
    exc: ValidationError, where: Callable[[Any], tuple[str, Ending]] | None = None, what: str = "config"
) -> list[str]:
    """One line per problem of a pydantic ``exc``, in the project's words: ``where(loc)`` turns
    an error's location into (key path, the section it ends in); ``what`` names the file kind."""
    where = where or _where
    unknown: list[str] = []
    says: dict[str, str] = {}  # key path -> what must hold
    got: dict[str, Any] = {}  # key path -> its value
    for error in exc.errors():
        kind, ctx, value = error["type"], error.get("ctx", {}), error["input"]
        path = where(error["loc"])[0]
        if kind == "extra_forbidden":
            parent = where(error["loc"][:-1])[1]
            allowed = ", ".join(parent.model_fields) if isinstance(parent, type) else "none"
            unknown.append(f"unknown {what} key {shown(path)}: allowed keys here are {allowed}")
            continue
        if kind == "missing":
            text, value = "is required", None
        elif kind == "union_tag_invalid":  # an algorithm's name
            path, value, text = f"{path}.name", ctx["tag"], f"must be one of {ctx['expected_tags']}"
        elif kind in ("model_type", "model_attributes_type", "dict_type"):
            text = "must be a mapping of keys"
        elif kind == "value_error":  # a validator above, in this project's words
            text = str(ctx["error"])
        else:
            text = error["msg"].replace("Input should be", "must be", 1)
        # A value no member of a union takes fails once per member: one line says what each takes.
        says[path] = f"{says[path]} or {text.removeprefix('must be ')}" if path in says else text
        got.setdefault(path, value)
    lines = unknown + [
        (f"{what} key {shown(path)} {text}" + ("" if text == "is required" else f", got {shown(got[path])}"))
        if path
        else text
        for path, text in says.items()
    ]
    if len(lines) > MAX_PROBLEMS:
        lines[MAX_PROBLEMS:] = [f"and {len(lines) - MAX_PROBLEMS} more problems"]
    return lines


# ---------------------------------------------------------------- loading
def set_override(data: dict, dotted: str, raw: str, error=ConfigError) -> None:
    """``--set key.path=value``: the YAML ``value`` put at ``key.path`` of ``data``; a bad one
    raises ``error`` naming it."""
    keys = dotted.split(".")
    node = data
    for key in keys[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise error(f"--set {clipped(dotted)}: {shown(key)} is not a section")
    try:
        node[keys[-1]] = parse_yaml(raw, f"--set {clipped(dotted)}", at=dotted)
    except yaml.YAMLError as exc:
        raise error(f"--set {clipped(dotted)}={clipped(raw)}: not a valid YAML value ({yaml_problem(exc)})") from None


S = TypeVar("S", bound=Section)  # the top section load_yaml builds


def load_yaml(
    model: type[S],
    path=None,
    overrides: list[str] | None = None,
    data: dict | None = None,
    *,
    error=ConfigError,
    where=None,
    what: str = "config",
    shape: str = "a mapping of sections (env, algorithm, ...)",
) -> S:
    """A validated ``model`` (a config's top section) from a YAML file (``read_yaml``; no file:
    the defaults) or from ``data`` (left unchanged), with ``key.path=value`` overrides. Every
    problem raises ``error``, the schema's one line each, naming its key path as ``where``
    finds it (``schema_problems``); ``what`` names the kind of file, ``shape`` what it holds."""
    if data is None and path is not None:
        data = read_yaml(config_path(path), error)  # a file, or a shipped config's name
    data = {} if data is None else copy.deepcopy(data)  # overrides never change the caller's
    if not isinstance(data, dict):
        raise error(f"{path or what} must be {shape}, got {shown(data)}")
    for item in overrides or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise error(f"--set expects key.path=value, got {shown(item)}")
        set_override(data, key.strip(), raw, error)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error("\n".join(schema_problems(exc, where, what))) from None


def load_config(path=None, overrides: list[str] | None = None, data: dict | None = None) -> Config:
    """A validated ``Config`` from a YAML file (or a dict), with ``key.path=value`` overrides.
    A config to train with is then checked by ``training.learning.preflight.check_config``."""
    return load_yaml(Config, path, overrides, data)


def check_resumable(saved: Config, wanted: Config, trained: int = 0) -> None:
    """A resumed run continues the same experiment: only how long and how it runs may change,
    and a learning-rate schedule's steps after the ``trained`` timesteps."""
    old, new = _flatten(saved.to_dict()), _flatten(wanted.to_dict())
    changed = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k) and not k.startswith(RESUMABLE)]
    if changed:
        raise ConfigError(
            "a resumed run can't change "
            + "; ".join(f"{k} ({shown(old.get(k))} -> {shown(new.get(k))})" for k in changed)
            + f": only {', '.join(RESUMABLE)} may change; start a new run for the rest"
        )
    before, after = (getattr(c.algorithm, "learning_rate_steps", {}) for c in (saved, wanted))
    past = sorted(t for t in set(before) | set(after) if t < trained and before.get(t) != after.get(t))
    if past:
        raise ConfigError(
            f"a resumed run can't change algorithm.learning_rate_steps at timestep {past[0]}: the run has "
            f"trained {trained} timesteps already; only steps from there on may change"
        )


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
