"""What a game's ``present`` module (``envs/<game>/present.py``) is made of: the table in
words for people. The env's ``render()``, terminal play (``training.agents.human``,
``training.frontends.play``, ``training.matches.replay``) and the web app (``training.frontends.web``) read it through
the game's spec and never name a game; the ``Presentation`` contract below says what the
module holds, and ``presentation(engine)`` finds it from an engine object.

A game may also ship ``web.js`` beside it: how the web page draws its table
(``training/frontends/web_static/app.js`` documents the hooks). Without one the page shows the
seat's view as ``view_lines`` writes it, with the legal moves as buttons.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

from .spec import GameSpec, spec_of


class SeatNarrator(Protocol):
    """The moves of a game as the seat ``viewer`` may know them (another seat's hidden
    choice told only as made). Entries are JSON-ready dicts with ``kind`` (``"move"``,
    ``"info"``, or the game's own, e.g. ``"deal"``, ``"round"``), ``text`` and, for a move,
    ``seat`` and ``action`` (the move's text, or ``None`` where the viewer may not see it)."""

    viewer: int

    def start(self, game: Any) -> list[dict]:
        """The entries of the game's opening, before any move."""
        ...

    def before(self, game: Any, seat: int, action: int) -> Any:
        """Before ``seat``'s ``action`` is applied: what ``after`` needs to tell it."""
        ...

    def after(self, game: Any, token: Any) -> list[dict]:
        """After the move: its entries (and those of a round or deal it ended)."""
        ...


class Presentation(Protocol):
    """The ``present`` module of a game, its table for people:

    - ``render(game)``: the whole table as text, every hand shown (the env's ``render()``,
      ``training.frontends.play`` and ``training.matches.replay`` watching bots);
    - ``seat_view(game, seat)``: the table as ``seat`` may see it, JSON-ready (the web app
      sends it as it is). Every game's view holds ``game`` (its spec's id or an alias),
      ``seat``, ``num_players``, ``over``, ``to_act``, ``scores``, ``winners`` (``None``
      until the game is over) and ``lower_wins``; the rest is the game's own;
    - ``view_lines(view, who)``: a ``seat_view`` as the terminal's lines; ``who(seat)``
      labels a seat ("seat 2 (you)", a bot's name after it);
    - ``legal_moves(game, seat)``: the legal moves of ``seat`` (none unless it is to act),
      each ``{"text": ...}`` with, where it plays a card, ``"card"`` (and the game's extras);
    - ``prompt(game, seat)``: what ``seat`` must decide now, in plain words ('' when it is
      not to act);
    - ``Narrator(viewer)``: the moves as ``viewer`` may know them (``SeatNarrator``);
    - ``rule_options()``: the web page's setup form: ``{"rules": [{"name", "choices",
      "default"}], "presets": {name: rules}, "deals": None or {"presets": {name: hand
      sizes}, "default": name}}``.
    """

    @property
    def Narrator(self) -> Callable[[int], SeatNarrator]: ...  # the module's narrator class

    def render(self, game: Any) -> str: ...
    def seat_view(self, game: Any, seat: int) -> dict: ...
    def view_lines(self, view: dict, who: Callable[[int], str]) -> list[str]: ...
    def legal_moves(self, game: Any, seat: int) -> list[dict]: ...
    def prompt(self, game: Any, seat: int) -> str: ...
    def rule_options(self) -> dict: ...


def presentation_of(spec: GameSpec) -> Presentation:
    """The game's ``present`` module; ``ValueError`` for a game that has none."""
    return cast(Presentation, spec.module("present", "be shown to people"))


def presentation(engine: Any) -> Presentation:
    """The ``present`` module of the engine's game."""
    return presentation_of(spec_of(engine))


# ------------------------------------------------------------ words every game shares
def seat_name(seat: int, viewer: int | None) -> str:
    """A seat as ``viewer`` reads it: "seat 2", or "seat 2 (you)" for its own."""
    return f"seat {seat} (you)" if seat == viewer else f"seat {seat}"


def seats_named(seats: Iterable[int]) -> str:
    """Seats as a list: "seat 1", "seats 1, 3"."""
    seats = list(seats)
    return ("seat " if len(seats) == 1 else "seats ") + ", ".join(map(str, seats))
