"""What every command shares: its argument parser, named as the user invoked it
(``python -m training.train`` or ``deckgym train``)."""

from __future__ import annotations

import argparse
from contextvars import ContextVar

INVOKED_AS: ContextVar[str | None] = ContextVar("deckgym_command", default=None)  # set by the deckgym command


def command_parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """The parser of ``python -m training.<module>``, described by the first paragraph of
    its module docstring ``doc``."""
    prog = INVOKED_AS.get() or f"python -m training.{module}"
    return argparse.ArgumentParser(prog=prog, description=(doc or "").split("\n\n")[0])
