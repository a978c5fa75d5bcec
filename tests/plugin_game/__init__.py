"""Little Tricks: a third game, written for the tests only, that plugs into deckgym the way a
game from another package would: it declares itself once (``spec.py``) and every tool reads
that declaration. Nothing in ``envs/`` or ``training/`` names it.

Rules: twelve cards numbered 1 to 12; two or three players are dealt three cards each, held
hidden (the rest are set aside unseen). Three tricks: the leader plays any card, then each
other player in turn (to the left) plays any card; the highest card wins the trick and its
winner leads the next. Most tricks wins (ties share the win).
"""

from .env import env, raw_env
from .game import LittleTricksGame
from .spec import SPEC

__all__ = ["SPEC", "LittleTricksGame", "env", "raw_env"]
