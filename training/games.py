"""The deckgym games as training sees them: env constructor and heuristic bot by env id.

Adding a game to training means one entry here.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

import yaml

from .config import MAX_SHOWN, clipped, parse_yaml, shown, yaml_problem


@dataclass(frozen=True)
class GameSpec:
    env_module: str  # the PettingZoo versioned module, e.g. "envs.craits_v0"
    heuristic: Callable  # raw env -> heuristic agent for that env's rules
    lower_score_wins: bool  # Craits counts penalty points, Pairs Draft counts gains


def _craits_heuristic(raw):
    from envs.craits.bot import CraitsHeuristic
    return CraitsHeuristic(raw.rules)


def _pairs_heuristic(raw):
    from envs.pairs_draft.bot import PairsDraftHeuristic
    return PairsDraftHeuristic()


GAMES = {
    "craits_v0": GameSpec("envs.craits_v0", _craits_heuristic, lower_score_wins=True),
    "pairs_draft_v0": GameSpec("envs.pairs_draft_v0", _pairs_heuristic, lower_score_wins=False),
}


def game_spec(env_id: str) -> GameSpec:
    if env_id not in GAMES:
        raise ValueError(f"unknown env id {shown(env_id)}: choose one of {', '.join(GAMES)}")
    return GAMES[env_id]


def make_raw_env(env_id: str, **env_args):
    """The unwrapped AEC env (training drives it directly: the order checks cost time).
    A bad argument is a ``ValueError`` naming it."""
    raw_env = importlib.import_module(game_spec(env_id).env_module).raw_env
    try:
        return raw_env(**env_args)
    except ValueError as exc:  # it may quote the value, which can be megabytes long
        raise ValueError(clipped(str(exc), 2 * MAX_SHOWN)) from None
    except TypeError:
        known = env_arguments(env_id)
        unknown = [k for k in env_args if k not in known] or list(env_args)
        raise ValueError(f"unknown argument {clipped(', '.join(map(str, unknown)))} for {env_id}; its arguments are "
                         f"{', '.join(known)}") from None


def env_arguments(env_id: str) -> list[str]:
    """The named constructor arguments of an env (for error messages)."""
    import inspect
    raw_env = importlib.import_module(game_spec(env_id).env_module).raw_env
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
