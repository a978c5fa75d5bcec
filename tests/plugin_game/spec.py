"""Little Tricks declares itself: one spec, registered when this module is imported (under
whatever package name it was imported as: ``plugin_game`` when ``tests/`` is on the path)."""

from envs.spec import GameSpec, register_game


def _heuristic(raw):
    from .bot import LittleTricksHeuristic

    return LittleTricksHeuristic()


SPEC = register_game(
    GameSpec(
        id="little_tricks_v0",
        name="Little Tricks",
        package=__name__.rpartition(".")[0],
        aliases=("little_tricks",),
        players=(2, 3, 2),
        lower_score_wins=False,
        heuristic=_heuristic,
    )
)
