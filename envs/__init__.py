"""deckgym environments. Importing this package registers the games (``envs/spec.py``),
with PettingZoo's registry too, so ``pettingzoo.make("aec", "deckgym/craits-v0")`` (or
``"deckgym/pairs_draft-v0"``) finds them."""

import importlib

from .spec import GAMES, GameSpec, default_game, game_spec, register_game

BUILT_IN = ("envs.craits.spec", "envs.pairs_draft.spec")  # each registers its game when imported
for _module in BUILT_IN:
    importlib.import_module(_module)

from . import craits_v0, pairs_draft_v0  # noqa: E402  (PettingZoo's versioned modules)

__all__ = ["GAMES", "GameSpec", "craits_v0", "default_game", "game_spec", "pairs_draft_v0", "register_game"]
