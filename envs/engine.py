"""What every game engine shares: the action contract, legality checked once, and its errors.

An engine subclass defines ``_legal_actions()`` (the legal actions, sorted),
``_apply(action)`` (no validation), ``action_to_text(a)`` and ``text_to_action(s)``.
``legal_actions()`` is computed once per state and cached, since an env asks for it twice
a step (the mask, then ``apply``'s legality check).
"""
from __future__ import annotations


def is_int(value) -> bool:
    """An integer (numpy's included); not a bool, nor a float that happens to be whole."""
    return not isinstance(value, bool) and hasattr(value, "__index__")


class IllegalActionError(ValueError):
    """An action that is not legal in the current state (a ``ValueError``)."""


class GameEngine:
    _legal: list[int] | None = None  # legal actions of the current state, once computed

    def _legal_actions(self) -> list[int]:  # pragma: no cover - interface
        raise NotImplementedError

    def _apply(self, action: int) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def action_to_text(self, action: int) -> str:  # pragma: no cover - interface
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
        if type(action) is not int:  # numpy integers become ints; 3.0, True and None are no actions
            if not is_int(action):
                raise IllegalActionError(self.illegal_message(action, legal))
            action = int(action)
        if action not in legal:
            raise IllegalActionError(self.illegal_message(action, legal))
        self._legal = None
        self._apply(action)

    def illegal_message(self, action, legal=None) -> str:
        legal = self.legal_actions() if legal is None else legal
        try:
            name = f"{self.action_to_text(int(action))!r} ({action})"
        except (ValueError, TypeError, IndexError):
            name = repr(action)
        shown = ", ".join(self.action_to_text(a) for a in legal) or "none: the game is over"
        return f"illegal action {name} for player {self.current_player}; legal: {shown}"
