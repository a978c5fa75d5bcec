"""Pairs Draft: engine (``game``), PettingZoo env (``env``), heuristic bot (``bot``)."""

from .env import env, raw_env
from .game import PairsDraftGame, score_cards

__all__ = ["PairsDraftGame", "env", "raw_env", "score_cards"]
