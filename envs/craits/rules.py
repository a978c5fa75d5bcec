"""Craits rule options (RULES.md 1.1), declared once with their allowed values.

``Rules()`` is the ``craits`` preset. ``Rules.preset(name, **overrides)`` starts from a
preset and overrides options; any unknown option or value raises ``ValueError`` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..engine import check_choice

DEAL_SIZES = {
    "full": (8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8),
    "short": (8, 7, 6, 5, 4, 3, 2, 1),
}

# option -> allowed values (the first is the craits preset's).
CHOICES = {
    "crank_count": ("value", "cards"),
    "nine": ("same_colour", "own_suit"),
    "seven_target": ("next", "next_but_one"),
    "empty_stock": ("reshuffle", "pressure"),
    "three_scoring": ("craits", "create"),
    "missed_announce_penalty": ("draw_2_lose_turn", "draw_2"),
    "announce": ("auto", "action"),
}

PRESETS = {
    "craits": {k: v[0] for k, v in CHOICES.items() if k != "announce"},
    "create": {k: v[1] for k, v in CHOICES.items() if k != "announce"},
}


@dataclass(frozen=True)
class Rules:
    crank_count: str = "value"
    nine: str = "same_colour"
    seven_target: str = "next"
    empty_stock: str = "reshuffle"
    three_scoring: str = "craits"
    missed_announce_penalty: str = "draw_2_lose_turn"
    announce: str = "auto"
    partnership: bool = False
    deals: tuple = DEAL_SIZES["full"]

    def __post_init__(self):
        for name, allowed in CHOICES.items():
            check_choice(name, getattr(self, name), allowed, "Craits option ")
        if not isinstance(self.partnership, bool):
            raise ValueError(f"Craits option partnership={self.partnership!r} must be True or False")
        deals = self.deals
        if isinstance(deals, str):
            if deals not in DEAL_SIZES:
                raise ValueError(f"Craits option deals={deals!r}: use 'full', 'short' or a list of hand sizes")
            deals = DEAL_SIZES[deals]
        try:
            deals = tuple(deals)
        except TypeError:
            raise ValueError(
                f"Craits option deals={self.deals!r}: use 'full', 'short' or a list of hand sizes"
            ) from None
        if not deals or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in deals):
            raise ValueError(f"Craits option deals={self.deals!r}: every hand size must be an integer >= 1")
        object.__setattr__(self, "deals", deals)

    @classmethod
    def preset(cls, name: str = "craits", **overrides) -> Rules:
        check_choice("preset", name, tuple(PRESETS), "Craits ")
        known = {f.name for f in fields(cls)}
        for key in overrides:
            if key not in known:
                raise ValueError(f"unknown Craits option {key!r}: options are {', '.join(sorted(known))}")
        return cls(**{**PRESETS[name], **overrides})

    def check_players(self, num_players: int) -> None:
        """Errors that depend on the number of players, raised when a game is created."""
        if not isinstance(num_players, int) or not 2 <= num_players <= 5:
            raise ValueError(f"Craits num_players={num_players!r}: must be 2 to 5")
        if self.partnership and num_players != 4:
            raise ValueError(f"Craits option partnership=True needs exactly 4 players, got num_players={num_players}")
        for size in self.deals:
            if num_players * size + 1 > 52:
                raise ValueError(
                    f"Craits option deals: hand size {size} with {num_players} players needs "
                    f"{num_players * size + 1} cards (more than 52)"
                )
