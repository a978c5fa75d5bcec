"""Checks of a config against what it meets when it trains: the env its arguments build, the
agents and checkpoints of its opponent pool, and this machine (cores, memory, a writable
output.dir). ``training.learning.config`` checks a config on its own; ``check_config`` runs before a
run starts, so what would fail later fails now, before a run folder exists, naming the key path.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from envs.engine import shown
from training.agents import make_agent
from training.algorithms import algorithm
from training.common.games import EnvHandle, game_spec
from training.learning.config import Config, ConfigError

# Memory beside the network and the rollout buffer, rounded up from measurements: a Python
# process with torch imported (the trainer, each env subprocess) holds about 235 MiB; an env
# and its opponent pool in the trainer's process about 50 KiB.
PROCESS_BYTES = 256 << 20
ENV_BYTES = 1 << 20


def check_config(config: Config) -> EnvHandle:
    """Raise ``ConfigError`` if training with ``config`` on this machine would fail; return
    the env it trains in (built once, here)."""
    env = _check_env(config)
    module = algorithm(config.algorithm.name)
    try:  # an algorithm built on an optional extra (rllib_ppo: Ray) needs it installed
        module.check_installed()
    except ValueError as exc:
        raise ConfigError(f"config key 'algorithm.name': {exc}") from None
    _check_pool(config, env)
    _check_machine(config, env)
    return env


def _check_env(config: Config) -> EnvHandle:
    """Build the env once, so a bad env id or argument fails now."""
    if "render_mode" in config.env.args:  # "human" would print every move of every env
        raise ConfigError(
            "config key 'env.args.render_mode': training never renders; remove it (python -m training.play shows games)"
        )
    try:
        game_spec(config.env.id)
    except ValueError as exc:
        raise ConfigError(f"config key 'env.id': {exc}") from None
    try:
        return EnvHandle(config.env.id, config.env.args)
    except ValueError as exc:
        raise ConfigError(f"config key 'env.args': {exc}") from None


def _check_pool(config: Config, env: EnvHandle) -> None:
    """Every opponent loads for this game (a checkpoint made for another fails), and the
    learner's seat is one of the env's."""
    for i, entry in enumerate(config.opponents.pool):
        if entry.agent != "self_play":
            try:
                make_agent(entry.agent, env)
            except (ValueError, OSError) as exc:  # OSError: a name the file system can't hold
                raise ConfigError(f"config key 'opponents.pool[{i}].agent': {exc}") from None
    seat = config.opponents.learner_seat
    if seat != "random" and seat >= env.seats:
        raise ConfigError(
            f"config key 'opponents.learner_seat' is {shown(seat)}, but {config.env.id} has {env.seats} seats"
        )


# ---------------------------------------------------------------- this machine
def _check_machine(config: Config, env: EnvHandle) -> None:
    """What the machine that trains must offer: the cores, the memory, a writable output.dir."""
    cores = os.cpu_count() or 1
    if config.algorithm.torch_threads > cores:  # far more threads than cores crashes torch
        raise ConfigError(
            f"config key 'algorithm.torch_threads' is {shown(config.algorithm.torch_threads)}: "
            f"this machine has {cores} cores"
        )
    need = memory_needed(config, int(env.obs_size), int(env.num_actions))
    total, limit = sum(need.values()), physical_memory()
    if total > limit:
        parts = ", ".join(f"{part} {_gib(n)}" for part, n in need.items())
        raise ConfigError(
            f"config keys 'algorithm.*' and 'vec.n_envs' need {_gib(total)} of memory by estimate "
            f"({parts}), more than the {_gib(limit)} this machine has: make the network or the "
            f"experience the algorithm keeps (n_steps x n_envs, a buffer) smaller"
        )
    _check_output_dir(config.output.dir)


def memory_needed(config: Config, obs_size: int, n_actions: int) -> dict:
    """Bytes training will hold, by part: an estimate on the high side."""
    a, n_envs = config.algorithm, config.vec.n_envs
    sizes = [obs_size, *a.net_arch, n_actions]
    policy = sum((i + 1) * o for i, o in zip(sizes, sizes[1:]))  # the network a checkpoint keeps
    self_play = config.opponents.self_play
    snapshots = 0  # each env's pool keeps the self-play snapshots it can draw (numpy float32 policies)
    if any(e.agent == "self_play" and e.weight > 0 for e in config.opponents.pool):
        snapshots = min(self_play.window + 1, config.training.total_timesteps // self_play.snapshot_every + 1)
    workers = min(config.vec.workers, n_envs)
    per_env = ENV_BYTES + snapshots * 4 * policy
    return {
        **algorithm(a.name).memory_bytes(config, obs_size, n_actions),
        "envs": n_envs * per_env,
        "trainer process": PROCESS_BYTES,
        "worker processes": (workers > 1) * workers * PROCESS_BYTES,
    }


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
