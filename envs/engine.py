"""What every game engine shares: the action contract, legality checked once, and its errors.

An engine subclass defines ``_legal_actions()`` (the legal actions, sorted),
``_apply(action)`` (no validation), ``action_to_text(a)``, ``text_to_action(s)`` and
``is_over``.
``legal_actions()`` is computed once per state and cached, since an env asks for it twice
a step (the mask, then ``apply``'s legality check).
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING


def as_action(value) -> int | None:
    """``value`` as an int action, or None if it is none: integers (numpy's and 0-d integer
    arrays included) are actions; bools, floats (even whole ones), strings, None and
    arrays of more than one element are not."""
    if type(value) is int:
        return value
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def is_int(value) -> bool:
    return as_action(value) is not None


MAX_SHOWN = 200  # characters of a rejected value a message shows: enough to recognise it, never megabytes


def clipped(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` cut to ``limit`` characters, for error messages about user input."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(value) -> str:
    """A rejected value as a message shows it: its repr, clipped."""
    return clipped(repr(value))


def check_choice(name: str, value, allowed, what: str = "") -> None:
    """The one "choose one of" check: ``ValueError`` naming the option and the choices."""
    if not any(value == a and type(value) is type(a) for a in allowed):
        raise ValueError(f"{what}{name}={shown(value)}: choose one of {', '.join(map(str, allowed))}")


def action_words(text) -> list[str]:
    """The words of an action text, lower case; ``ValueError`` for anything but a string."""
    if not isinstance(text, str):
        raise ValueError(f"an action text is a string such as 'play 7H', not {shown(text)}")
    return text.lower().split()


class IllegalActionError(ValueError):
    """An action that is not legal in the current state (a ``ValueError``)."""


class GameEngine:
    num_players: int
    _legal: list[int] | None = None  # legal actions of the current state, once computed

    if TYPE_CHECKING:  # each engine defines it, as an attribute or a property

        @property
        def current_player(self) -> int | None:
            """The seat to act; an engine may give ``None`` once the game is over."""

    def sides(self) -> list[list[int]]:
        """The seats scored together (partnerships); by default each seat alone."""
        return [[seat] for seat in range(self.num_players)]

    def _legal_actions(self) -> list[int]:  # pragma: no cover - interface
        raise NotImplementedError

    def _apply(self, action: int) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def action_to_text(self, action: int) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def text_to_action(self, text: str) -> int:  # pragma: no cover - interface
        """The action a move's text names; ``ValueError`` saying what is wrong with it."""
        raise NotImplementedError

    @property
    def is_over(self) -> bool:  # pragma: no cover - interface
        """Whether the whole game is over (``winners()`` and final ``scores()`` are known)."""
        raise NotImplementedError

    def legal_actions(self) -> list[int]:
        """The legal actions, sorted; empty only once the game is over. The list is the
        engine's cached one: read it, don't change it."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._legal_actions()
        return legal

    def apply(self, action: int) -> None:
        legal = self.legal_actions()
        if type(action) is not int:  # numpy integers become ints; 3.0, True, "3" and None are no actions
            number = as_action(action)
            if number is None:
                raise IllegalActionError(self.illegal_message(action, legal))
            action = number
        if action not in legal:
            raise IllegalActionError(self.illegal_message(action, legal))
        self._legal = None
        self._apply(action)

    def illegal_message(self, action, legal=None) -> str:
        legal = self.legal_actions() if legal is None else legal
        options = ", ".join(f"{self.action_to_text(a)} ({a})" for a in legal) or "none: the game is over"
        number = as_action(action)
        if number is None:
            return (
                f"illegal action {shown(action)} for player {self.current_player}: actions are integers, "
                f"not {type(action).__name__}; legal: {options}"
            )
        try:
            name = f"{self.action_to_text(number)!r} ({number})"
        except (ValueError, IndexError):
            name = str(number)
        return f"illegal action {name} for player {self.current_player}; legal: {options}"
