"""The ``deckgym`` command: every tool as a subcommand, with the options of its module
(``deckgym train --config craits_quick`` is ``python -m training.train --config ...``).

Only the subcommand asked for is imported, so ``deckgym --help`` and ``deckgym --version``
answer at once, and a subcommand whose extra is missing says so itself.
"""

from __future__ import annotations

import importlib
import sys

from training.common.commands import INVOKED_AS
from training.common.version import deckgym_version

# name -> (module with its main(argv), what it does in one line)
COMMANDS = {
    "train": ("training.learning.train", "train a bot from a config file (and watch it, compare it)"),
    "evaluate": ("training.matches.evaluate", "duplicate-format matches between agents, with 95% intervals"),
    "play": ("training.frontends.play", "one game in the terminal, bots and perhaps you"),
    "league": ("training.matches.league", "a resumable round robin with ratings"),
    "benchmark": ("training.learning.benchmark", "algorithms x seeds x settings, tables and curves"),
    "export": ("training.agents.export", "a checkpoint to ONNX, for frontends without torch"),
    "serve": ("training.frontends.serve_bot", "a bot over the JSON-lines bot protocol (stdin/stdout)"),
    "web": ("training.frontends.web", "play the bots in the browser"),
    "replay": ("training.matches.replay", "check and show a game record"),
    "ship": ("training.agents.ship", "evaluate a bot and publish it as a shipped bot"),
    "ensemble": ("training.agents.ensemble", "several checkpoints as one bot"),
    "expert": ("training.learning.expert", "expert iteration: a network taught by the search it guides"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: deckgym COMMAND [options]   (deckgym COMMAND --help for its options)", "", "commands:"]
    lines += [f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items()]
    lines += ["", "  --version  the installed deckgym version", "  --help     this list"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return
    if args[0] == "--version":
        print(f"deckgym {deckgym_version()}")
        return
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        sys.exit(f"deckgym: unknown command {name!r}\n\n{usage()}")
    module = importlib.import_module(COMMANDS[name][0])
    token = INVOKED_AS.set(f"deckgym {name}")  # its usage and errors say "deckgym <name>"
    try:
        module.main(rest)
    finally:
        INVOKED_AS.reset(token)


if __name__ == "__main__":
    main()
