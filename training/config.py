"""Experiment configs: YAML files loaded into typed, validated objects.

Every default the code uses is a field default here and is written out in full in the
shipped configs (``configs/*.yaml``). An unknown or repeated key, a wrong type or a bad value
raises ``ConfigError`` naming the key path (``algorithm.learning_rate``) and what is allowed,
and so does a config this machine can't train with (more threads than cores, more memory than
it has, an output.dir it can't write in): before anything is written. YAML aliases are refused,
and a message shows at most ``MAX_SHOWN`` characters of a rejected value.
"""
from __future__ import annotations

import dataclasses
import math
import os
import stat
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml


class ConfigError(ValueError):
    """A config that can't be used; the message names the key path."""


MAX_SHOWN = 200  # characters of a rejected value a message shows: enough to recognise it, never megabytes


def clipped(text: str, limit: int = MAX_SHOWN) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def shown(value) -> str:
    """A rejected value as a message shows it: its repr, clipped."""
    return clipped(repr(value))


def ranged(default, *, gt=None, ge=None, le=None):
    """A numeric field that must be > gt, >= ge and <= le (those given): the bounds sit
    next to the field they govern, and ``_check`` enforces them."""
    return field(default=default, metadata={"gt": gt, "ge": ge, "le": le})


COEF_MAX = 10.0  # loss coefficients: common values are 0.001-1; far above that the loss overflows


@dataclass
class EnvConfig:
    id: str = "craits_v0"
    args: dict = field(default_factory=dict)  # every constructor argument of the env


@dataclass
class AlgorithmConfig:
    name: str = "MaskablePPO"
    net_arch: list = field(default_factory=lambda: [128, 128])
    activation: str = "tanh"
    learning_rate: float = ranged(3e-4, gt=0, le=1)
    n_steps: int = ranged(512, gt=0)  # per env, per rollout
    batch_size: int = 256
    n_epochs: int = ranged(4, gt=0)
    gamma: float = ranged(0.99, ge=0, le=1)
    gae_lambda: float = ranged(0.95, ge=0, le=1)
    clip_range: float = ranged(0.2, gt=0, le=1)
    ent_coef: float = ranged(0.01, ge=0, le=COEF_MAX)
    vf_coef: float = ranged(0.5, ge=0, le=COEF_MAX)
    max_grad_norm: float = ranged(0.5, gt=0)  # any size is safe: a big one just never clips
    device: str = "cpu"
    # Small MLPs run fastest on one thread; more threads fight the env for cores. At most
    # os.cpu_count(), checked with the other limits of the machine that trains (_check_machine).
    torch_threads: int = ranged(1, gt=0)


@dataclass
class PoolEntry:
    agent: str = "heuristic"  # random | heuristic | self_play | a checkpoint folder
    weight: float = 1.0


@dataclass
class SelfPlayConfig:
    snapshot_every: int = ranged(50_000, gt=0)  # learner steps between snapshots
    latest_weight: float = ranged(0.5, ge=0, le=1)  # chance of the latest snapshot when self_play is drawn
    window: int = ranged(10, gt=0)  # older snapshots drawn from (uniformly), newest first


@dataclass
class OpponentsConfig:
    learner_seat: typing.Any = "random"  # "random" (a new seat each episode) or a seat number
    partner: str = "learner"  # partnership only: "learner" plays both seats of its side, "pool" draws the partner
    deterministic: bool = False  # checkpoint opponents: argmax instead of sampling
    pool: list = field(default_factory=lambda: [PoolEntry("heuristic", 1.0)])
    self_play: SelfPlayConfig = field(default_factory=SelfPlayConfig)


@dataclass
class TrainingConfig:
    total_timesteps: int = ranged(200_000, gt=0)
    seed: int = ranged(0, ge=0, le=2**32 - 1)


@dataclass
class VecConfig:
    n_envs: int = ranged(4, gt=0)
    subprocesses: bool = False


@dataclass
class CheckpointConfig:
    every: int = ranged(50_000, gt=0)  # learner steps between checkpoints (each written atomically)
    eval_every: int = ranged(50_000, gt=0)  # learner steps between evaluations against heuristic and random
    eval_games: int = ranged(20, gt=0)  # duplicate sets per evaluation


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
BUILT_IN_AGENTS = ("random", "heuristic", "self_play")
# Keys a resumed run may change: how long and how it runs, not what it learns.
RESUMABLE = ("training.total_timesteps", "checkpoints.", "vec.", "algorithm.device", "algorithm.torch_threads")
# Memory beside the network and the rollout buffer, rounded up from measurements: a Python
# process with torch imported (the trainer, each env subprocess) holds about 235 MiB; an env
# and its opponent pool in the trainer's process about 50 KiB.
PROCESS_BYTES = 256 << 20
ENV_BYTES = 1 << 20


# ---------------------------------------------------------------- reading YAML
class _StrictLoader(yaml.SafeLoader):
    """SafeLoader without aliases (``*name``): a few lines of nested aliases expand to
    gigabytes (the "billion laughs"), and a config is short enough to write every value out."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ConfigError(f"{self.name}, line {event.start_mark.line + 1}: YAML aliases "
                              f"(*{clipped(event.anchor)}) are not allowed in configs: write the value out")
        return super().compose_node(parent, index)


def parse_yaml(text: str, source: str, at: str = ""):
    """YAML ``text`` as data, refusing aliases and repeated keys (YAML would silently keep the
    last one) with a ``ConfigError`` naming ``source`` (a file, ``--set key``) and the key
    path (``at``: the path of the whole text). Invalid YAML raises ``yaml.YAMLError``."""
    loader = _StrictLoader(text)
    loader.name = source  # YAML's own messages name it too
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _refuse_repeated_keys(loader, node, at)
        return loader.construct_document(node)
    except RecursionError:  # PyYAML recurses once per level of nesting
        raise ConfigError(f"{source}: nested too deeply") from None
    except ValueError as exc:  # an integer of over 4300 digits, which Python refuses to read
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{source}: {clipped(str(exc))}") from None
    finally:
        loader.dispose()


def _refuse_repeated_keys(loader, node, path: str) -> None:
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _refuse_repeated_keys(loader, item, f"{path}[{i}]")
    elif isinstance(node, yaml.MappingNode):
        seen = set()
        for key_node, value in node.value:
            # Only scalar keys are hashable (SafeLoader refuses the others); they are compared
            # as loaded, so 1 and 0x1 are the same key. A "<<" merge is YAML's own override.
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = loader.construct_object(key_node)
            where = f"{path}.{key}" if path else str(key)
            if key in seen:
                raise ConfigError(f"{loader.name}, line {key_node.start_mark.line + 1}: duplicate key {shown(where)} "
                                  f"(YAML would silently keep only the last one)")
            seen.add(key)
            _refuse_repeated_keys(loader, value, where)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """What is wrong, in a message's words (a ReaderError, for one, has no ``problem``)."""
    return clipped(str(getattr(exc, "problem", None) or exc))


def _read_config(path) -> str:
    """A config file's text. The file is opened without blocking and must be a regular file:
    reading a FIFO would wait forever for a writer, a device may never end."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise ConfigError(f"can't read config {path}: it is "
                                  f"{'a directory' if stat.S_ISDIR(mode) else 'not a regular file'}")
            return f.read().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"can't read config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"can't read config {path}: it is not UTF-8 text (byte {exc.start})") from None


# ---------------------------------------------------------------- building and checking
def _type_name(tp) -> str:
    return getattr(tp, "__name__", str(tp))


def _build(cls, data, path: str):
    if not isinstance(data, dict):
        raise ConfigError(f"{path or 'config'} must be a mapping of keys, got {shown(data)}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in data.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in names:
            raise ConfigError(f"unknown config key {shown(where)}: allowed keys here are {', '.join(names)}")
        kwargs[key] = _value(hints[key], value, where)
    return cls(**kwargs)


def _value(tp, value, where: str):
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, where)
    if tp is typing.Any:
        return value
    if tp is float and isinstance(value, (int, str)) and not isinstance(value, bool):
        try:
            value = float(value)  # YAML reads 3e-4 (no dot) as a string, and 1 as an int
        except ValueError:
            pass  # not a number: the type check below says so
        except OverflowError:
            value = math.inf  # an integer too big for a float
    if tp is float and isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"config key {where!r} must be a finite number, got {shown(value)}")
    if tp in (int, float, str, bool, list, dict) and (not isinstance(value, tp) or (tp is int and isinstance(value, bool))):
        raise ConfigError(f"config key {where!r} must be {_type_name(tp)}, got {shown(value)}")
    return value


def _range_text(gt=None, ge=None, le=None) -> str:
    low = f"{gt} (excluded)" if gt is not None else ge
    if le is None:
        return f"> {gt}" if gt is not None else f">= {ge}"
    return f"between {low} and {le}" if low is not None else f"<= {le}"


def _check(config: Config) -> None:
    flat = {}

    def walk(obj, prefix):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            key = f"{prefix}{f.name}"
            if dataclasses.is_dataclass(value):
                walk(value, key + ".")
                continue
            flat[key] = value
            gt, ge, le = (f.metadata.get(bound) for bound in ("gt", "ge", "le"))  # see ranged()
            if (gt is not None and not value > gt) or (ge is not None and not value >= ge) \
                    or (le is not None and not value <= le):
                raise ConfigError(f"config key {key!r} must be {_range_text(gt, ge, le)}, got {shown(value)}")

    walk(config, "")
    for key, allowed in CHOICES.items():
        if flat[key] not in allowed:
            raise ConfigError(f"config key {key!r} is {shown(flat[key])}: allowed values are {', '.join(allowed)}")
    a = config.algorithm
    if not 2 <= a.batch_size <= a.n_steps * config.vec.n_envs:
        raise ConfigError(f"config key 'algorithm.batch_size' is {shown(a.batch_size)}: it must be at least 2 and at "
                          f"most algorithm.n_steps x vec.n_envs = {a.n_steps * config.vec.n_envs} (one rollout)")
    name = config.output.name
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        raise ConfigError(f"config key 'output.name' is {shown(name)}: it must be a plain folder name")
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in config.algorithm.net_arch):
        raise ConfigError(f"config key 'algorithm.net_arch' must be a list of layer sizes > 0, got "
                          f"{shown(config.algorithm.net_arch)}")
    seat = config.opponents.learner_seat
    if seat != "random" and (not isinstance(seat, int) or isinstance(seat, bool) or seat < 0):
        raise ConfigError(f"config key 'opponents.learner_seat' must be 'random' or a seat number, got {shown(seat)}")
    entries = []
    for i, entry in enumerate(config.opponents.pool):
        entry = entry if isinstance(entry, PoolEntry) else _build(PoolEntry, entry, f"opponents.pool[{i}]")
        if not (isinstance(entry.weight, float) and math.isfinite(entry.weight) and entry.weight >= 0):
            raise ConfigError(f"config key 'opponents.pool[{i}].weight' must be a finite number >= 0, "
                              f"got {shown(entry.weight)}")
        if entry.agent not in BUILT_IN_AGENTS and not _is_checkpoint(entry.agent):
            raise ConfigError(f"config key 'opponents.pool[{i}].agent' is {shown(entry.agent)}: use random, "
                              f"heuristic, self_play or a checkpoint folder (one with a meta.json)")
        entries.append(entry)
    if not entries or sum(e.weight for e in entries) <= 0:
        raise ConfigError("config key 'opponents.pool' needs at least one entry with weight > 0")
    config.opponents.pool = entries


def _is_checkpoint(spec: str) -> bool:
    try:
        return (Path(spec) / "meta.json").is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def _check_env(config: Config):
    """Build the env once so a bad env argument, or a pool checkpoint made for another game,
    fails now (before a run folder exists), named with its key path. Returns the env."""
    from .agents import make_agent
    from .games import make_raw_env
    if not all(isinstance(key, str) for key in config.env.args):
        raise ConfigError(f"config key 'env.args' must map argument names to values, got {shown(config.env.args)}")
    if "render_mode" in config.env.args:  # "human" would print every move of every env
        raise ConfigError("config key 'env.args.render_mode': training never renders; remove it "
                          "(python -m training.play shows games)")
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
        raise ConfigError(f"config key 'opponents.learner_seat' is {shown(seat)}, but {config.env.id} has "
                          f"{len(env.possible_agents)} seats")
    return env


# ---------------------------------------------------------------- this machine
def _check_machine(config: Config, env) -> None:
    """What the machine that trains must offer: the cores, the memory, a writable output.dir."""
    cores = os.cpu_count() or 1
    if config.algorithm.torch_threads > cores:  # far more threads than cores crashes torch
        raise ConfigError(f"config key 'algorithm.torch_threads' is {shown(config.algorithm.torch_threads)}: "
                          f"this machine has {cores} cores")
    agent = env.possible_agents[0]
    need = memory_needed(config, int(env.observation_space(agent)["observation"].shape[0]),
                         int(env.action_space(agent).n))
    total, limit = sum(need.values()), physical_memory()
    if total > limit:
        parts = ", ".join(f"{part} {_gib(n)}" for part, n in need.items())
        raise ConfigError(f"config keys 'algorithm.net_arch', 'algorithm.n_steps', 'algorithm.batch_size' and "
                          f"'vec.n_envs' need {_gib(total)} of memory by estimate ({parts}), more than the "
                          f"{_gib(limit)} this machine has: make the network or n_steps x n_envs smaller")
    _check_output_dir(config.output.dir)


def memory_needed(config: Config, obs_size: int, n_actions: int) -> dict:
    """Bytes training will hold, by part: an estimate on the high side."""
    a, n_envs = config.algorithm, config.vec.n_envs
    sizes = [obs_size, *a.net_arch]
    trunk = sum((i + 1) * o for i, o in zip(sizes, sizes[1:]))  # one MLP; SB3 builds one for policy, one for value
    policy = trunk + (sizes[-1] + 1) * n_actions
    params = policy + trunk + sizes[-1] + 1
    # float32 weights, gradients and Adam's two moments; a minibatch's activations, forward and backward
    network = 4 * (4 * params + 3 * a.batch_size * (obs_size + 2 * sum(a.net_arch) + n_actions))
    # per step and env: observation, action mask (float32 in SB3) and 8 floats (action, reward, value,
    # ...), twice: SB3 copies each array as it flattens the buffer for training
    rollout = 2 * 4 * a.n_steps * n_envs * (obs_size + n_actions + 8)
    self_play = config.opponents.self_play
    snapshots = 0  # each env's pool keeps the self-play snapshots it can draw (numpy float32 policies)
    if any(e.agent == "self_play" and e.weight > 0 for e in config.opponents.pool):
        snapshots = min(self_play.window + 1, config.training.total_timesteps // self_play.snapshot_every + 1)
    per_env = (PROCESS_BYTES if config.vec.subprocesses and n_envs > 1 else ENV_BYTES) + snapshots * 4 * policy
    return {"network and optimizer": network, "rollout buffer": rollout, "envs": n_envs * per_env,
            "trainer process": PROCESS_BYTES}


def physical_memory() -> int:
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _gib(n: int) -> str:
    try:
        return f"{n / 2**30:,.1f} GiB"
    except OverflowError:  # the size of absurd values, beyond any float
        return "over 10^300 GiB"


def _check_output_dir(directory: str) -> None:
    """The run folder will be made in output.dir, creating the missing folders on its way:
    the nearest folder that exists must be a folder this user can write in."""
    where = f"config key 'output.dir' is {shown(directory)}"
    path = Path(directory)
    while True:
        try:
            mode = os.stat(path).st_mode
            break
        except FileNotFoundError:
            if path == path.parent:
                raise ConfigError(f"{where}: no folder on its path exists") from None
            path = path.parent
        except (OSError, ValueError) as exc:  # a file on the way (ENOTDIR), a name too long, a NUL byte
            raise ConfigError(f"{where}: {getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISDIR(mode):
        raise ConfigError(f"{where}: {shown(str(path))} is not a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"{where}: {shown(str(path))} is not writable")


# ---------------------------------------------------------------- loading
def _set(data: dict, dotted: str, raw: str) -> None:
    keys = dotted.split(".")
    node = data
    for key in keys[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise ConfigError(f"--set {clipped(dotted)}: {shown(key)} is not a section")
    try:
        node[keys[-1]] = parse_yaml(raw, f"--set {clipped(dotted)}", at=dotted)
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {clipped(dotted)}={clipped(raw)}: not a valid YAML value "
                          f"({yaml_problem(exc)})") from None


def load_config(path=None, overrides: list[str] | None = None, data: dict | None = None,
                machine: bool = True) -> Config:
    """A validated ``Config`` from a YAML file (or a dict), with ``key.path=value`` overrides.

    ``machine=False`` leaves out the checks against this machine (cores, memory, output.dir):
    for a config only read, not trained with, such as a resumed run's saved one."""
    if data is None:
        text = _read_config(path) if path is not None else "{}"
        try:
            data = parse_yaml(text, str(path))
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {clipped(str(exc), 3 * MAX_SHOWN)}") from None
        data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError(f"{path or 'config'} must be a mapping of sections (env, algorithm, ...), got {shown(data)}")
    for item in overrides or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ConfigError(f"--set expects key.path=value, got {shown(item)}")
        _set(data, key.strip(), raw)
    config = _build(Config, data, "")
    _check(config)
    env = _check_env(config)
    if machine:
        _check_machine(config, env)
    return config


def check_resumable(saved: Config, wanted: Config) -> None:
    """A resumed run continues the same experiment: only how long and how it runs may change."""
    old, new = _flatten(saved.to_dict()), _flatten(wanted.to_dict())
    changed = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k) and not k.startswith(RESUMABLE)]
    if changed:
        raise ConfigError("a resumed run can't change " + "; ".join(
            f"{k} ({shown(old.get(k))} -> {shown(new.get(k))})" for k in changed)
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
