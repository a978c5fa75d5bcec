"""Craits: engine (``game``), rule options (``rules``), PettingZoo env (``env``), heuristic bot (``bot``)."""

from .env import env, raw_env
from .game import CraitsGame, hand_points
from .rules import Rules

__all__ = ["CraitsGame", "Rules", "env", "hand_points", "raw_env"]
