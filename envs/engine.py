"""What every game engine shares: the action-text contract and its error messages.

An engine subclass defines ``legal_actions()``, ``_apply(action)`` (no validation),
``action_to_text(a)`` and ``text_to_action(s)``; ``apply`` checks legality once, here.
"""
from __future__ import annotations


class IllegalActionError(ValueError):
    """An action that is not legal in the current state (a ``ValueError``)."""


class GameEngine:
    def legal_actions(self) -> list[int]:  # pragma: no cover - interface
        raise NotImplementedError

    def _apply(self, action: int) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def action_to_text(self, action: int) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def apply(self, action: int) -> None:
        legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(self.illegal_message(action, legal))
        self._apply(action)

    def illegal_message(self, action, legal=None) -> str:
        legal = self.legal_actions() if legal is None else legal
        try:
            name = f"{self.action_to_text(int(action))!r} ({action})"
        except (ValueError, TypeError, IndexError):
            name = repr(action)
        shown = ", ".join(self.action_to_text(a) for a in legal) or "none: the game is over"
        return f"illegal action {name} for player {self.current_player}; legal: {shown}"
