"""Craits, as the tools see it (``envs/spec.py``)."""

from ..spec import GameSpec, register_game
from .bot import CraitsHeuristic
from .env import suit_symmetries


def _heuristic(raw):
    return CraitsHeuristic(raw.rules)


SPEC = register_game(
    GameSpec(
        id="craits_v0",
        name="Craits",
        package="envs.craits",
        aliases=("craits",),
        players=(2, 5, 4),
        lower_score_wins=True,  # penalty points
        heuristic=_heuristic,
        deals=lambda raw: len(raw.rules.deals),
        deal_over=lambda game: game.deal_over,
        short_game={"deals": [8]},
        symmetries=suit_symmetries,
    )
)
