"""The deckgym version, written into what the tools make (checkpoints' meta.json, exported
bots' bot.json, game records), so each says what made it."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def deckgym_version() -> str:
    """The installed distribution's version ("unknown" when run from a clone never installed)."""
    try:
        return version("deckgym")
    except PackageNotFoundError:
        return "unknown"
