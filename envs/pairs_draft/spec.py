"""Pairs Draft, as the tools see it (``envs/spec.py``)."""

from ..spec import GameSpec, register_game
from .bot import PairsDraftHeuristic


def _heuristic(raw):
    return PairsDraftHeuristic()


SPEC = register_game(
    GameSpec(
        id="pairs_draft_v0",
        name="Pairs Draft",
        package="envs.pairs_draft",
        aliases=("pairs_draft",),
        players=(4, 4, 4),
        lower_score_wins=False,
        heuristic=_heuristic,
        action_names=tuple(f"number {a + 1} (pick, discard or play)" for a in range(10)),
    )
)
