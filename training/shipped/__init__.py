"""What comes with deckgym, found by name wherever it is installed: the shipped bots
(``checkpoints/``), the configs (``configs/``) and the examples (``examples/``). In a clone
these folders are the repository's own (this package links to them); a wheel carries them.

A name is looked up only when it is not a path that exists: ``craits`` is the shipped bot
unless the current folder holds a ``craits`` folder, which then wins (as it always has: a
spec that names a folder means that folder). Give the installed one's path
(``bot_folder("craits")``) to use it from there.
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
BOTS, CONFIGS, EXAMPLES = HERE / "checkpoints", HERE / "configs", HERE / "examples"
_NAME = re.compile(r"[A-Za-z0-9_-]+")  # a bare name, never a path
# A shipped network's strongest search, where it is not the default guided search
# (``ismcts:prior=NAME``): the options added to it. benchmarks/strength.py measures it
# (docs/strength.md).
STRONGEST_SEARCH = {
    "create": "simulations=1000,reward_transform=symlog",  # about a fifth of a second a move (docs/search.md)
    # leaves valued by the network's Q-values: the partnership's strongest, at about half that cost
    "create_dqn": "leaf=value,simulations=1000,reward_transform=symlog,prior_temperature=1",
    "craits_ensemble": "leaf=value,simulations=1000",  # about a third of a second
}


def bot_names() -> list[str]:
    """The shipped bots: every folder of ``checkpoints/`` holding a meta.json."""
    if not BOTS.is_dir():
        return []
    return sorted(p.name for p in BOTS.iterdir() if (p / "meta.json").is_file())


def bot_folder(name: str) -> Path | None:
    """The shipped bot called ``name``, or None."""
    if not _NAME.fullmatch(name):
        return None
    folder = BOTS / name
    return folder if (folder / "meta.json").is_file() else None


def config_names() -> list[str]:
    """The shipped configs, by name (``craits_quick`` for ``configs/craits_quick.yaml``)."""
    return sorted(p.stem for p in CONFIGS.glob("*.yaml")) if CONFIGS.is_dir() else []


def config_path(spec) -> Path:
    """The config file ``spec`` names: a path that exists, else a shipped config's name
    (``craits_quick``, with or without ``.yaml``), else the path as given (reading it then
    fails with the usual message)."""
    path = Path(spec)
    if path.exists():
        return path
    name = str(spec).removesuffix(".yaml")
    if _NAME.fullmatch(name) and (CONFIGS / f"{name}.yaml").is_file():
        return CONFIGS / f"{name}.yaml"
    return path
