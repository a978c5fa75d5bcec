"""The env handle every training layer passes, and the command-line options that name a
game and its table. The games themselves declare themselves in ``envs/<game>/spec.py``
(``envs.spec.GameSpec``); everything here reads those specs.
"""

from __future__ import annotations

import inspect

import yaml

from envs import GAMES, GameSpec, default_game, game_spec
from envs.engine import MAX_SHOWN, clipped, shown
from training.common.schema import parse_yaml, yaml_problem

__all__ = [
    "GAMES",
    "EnvHandle",
    "GameSpec",
    "add_table_arguments",
    "default_game",
    "env_arguments",
    "game_spec",
    "make_raw_env",
    "parse_env_args",
]


class EnvHandle:
    """One env id with its arguments, resolved once: the built raw env (``raw``, for the
    questions an env answers and for play in this process), its ``GameSpec`` and the facts
    agents, pools and checkpoints check against. ``new_raw()`` builds another env of the
    same kind for each game played side by side. Pickled as (id, args): a worker process
    builds its own env."""

    def __init__(self, env_id: str, env_args: dict | None = None):
        self.spec = game_spec(env_id)
        self.id, self.args = self.spec.id, dict(env_args or {})
        self.raw = make_raw_env(env_id, **self.args)
        space = self.raw.observation_space(self.raw.possible_agents[0])
        self.seats = len(self.raw.possible_agents)
        self.obs_size = space["observation"].shape[0]
        self.num_actions = space["action_mask"].shape[0]
        self.rule_args = self.raw.rule_args()
        self.deals = self.spec.deals(self.raw)

    def new_raw(self):
        return make_raw_env(self.id, **self.args)

    def side(self, seat: int) -> set[int]:
        """The seats of ``seat``'s side: it and, in partnership play, its partner across the table."""
        return {seat, (seat + 2) % self.seats} if self.rule_args.get("partnership", False) else {seat}

    def __reduce__(self):
        return EnvHandle, (self.id, self.args)

    def __repr__(self) -> str:
        return f"EnvHandle({self.id!r}, {self.args!r})"


def make_raw_env(env_id: str, **env_args):
    """The unwrapped AEC env (training drives it directly: the order checks cost time).
    A bad argument is a ``ValueError`` naming it."""
    raw_env = game_spec(env_id).module("env").raw_env
    try:
        return raw_env(**env_args)
    except ValueError as exc:  # it may quote the value, which can be megabytes long
        raise ValueError(clipped(str(exc), 2 * MAX_SHOWN)) from None
    except TypeError:
        known = env_arguments(env_id)
        unknown = [k for k in env_args if k not in known] or list(env_args)
        raise ValueError(
            f"unknown argument {clipped(', '.join(map(str, unknown)))} for {env_id}; its arguments are "
            f"{', '.join(known)}"
        ) from None


def env_arguments(env_id: str) -> list[str]:
    """The named constructor arguments of an env (for error messages)."""
    raw_env = game_spec(env_id).module("env").raw_env
    return [p.name for p in inspect.signature(raw_env).parameters.values() if p.kind is not p.VAR_KEYWORD]


def parse_env_args(pairs) -> dict:
    """``["num_players=3", "deals=[5]"]`` -> ``{"num_players": 3, "deals": [5]}`` (YAML values,
    read as strictly as config files: no aliases, no repeated keys)."""
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"expected key=value, got {shown(pair)}")
        key = key.strip()
        try:
            out[key] = parse_yaml(value, f"--arg {clipped(key)}", at=key)
        except yaml.YAMLError as exc:
            raise ValueError(f"{clipped(pair)}: not a valid YAML value ({yaml_problem(exc)})") from None
    return out


def add_table_arguments(parser) -> None:
    """The options every CLI that seats agents takes: ``--env``, ``--agents``, ``--arg``."""
    parser.add_argument("--env", default=default_game().id, help=" or ".join(GAMES))
    parser.add_argument(
        "--agents",
        default="heuristic,random",
        help="comma-separated, one per seat in seat order; a shorter list repeats around the table "
        "(a,b at 4 seats: a b a b)",
    )
    parser.add_argument("--arg", action="append", metavar="KEY=VALUE", help="env argument, e.g. --arg num_players=3")
