"""An agent's folder: what it holds (a checkpoint: meta.json, policy.npz; an exported bot:
model.onnx, bot.json), and copies of it where its match runs: a checkpoint or an exported bot is read here, only
its files and size-capped (``pack_agents``), and written into a temporary folder where the
work runs (``agent_copies``), where ``make_agent`` finds it under the spec as the user gave it
(``agent_folder``). So workers need no disk shared with this process (``training.running``)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from training.agents.checkpoint import MAX_META_BYTES, MAX_MODEL_BYTES, MODEL_FILE, SIDECAR_FILE, read_bytes
from training.shipped import bot_folder

AGENT_COPIES = "DECKGYM_AGENT_COPIES"  # JSON {spec: folder}: an env variable, so env subprocesses see it too
AGENT_FILES = {  # the files an agent folder needs, by kind, with their size caps
    "checkpoint": {"meta.json": MAX_META_BYTES, "policy.npz": MAX_MODEL_BYTES},
    "exported": {MODEL_FILE: MAX_MODEL_BYTES, SIDECAR_FILE: MAX_META_BYTES},
}


def agent_folder(spec: str) -> str:
    """The folder holding ``spec``'s files: where a Ray worker put the copy it received, else the
    spec itself (``onnx:`` taken off) when it exists, else the shipped bot of that name
    (``training.shipped``: ``craits``, ``pairs_draft``, ...), else the spec as given."""
    copies = os.environ.get(AGENT_COPIES)
    if copies:
        folder = json.loads(copies).get(spec)
        if folder:
            return folder
    path = spec.removeprefix("onnx:")
    if not os.path.lexists(path):
        shipped = bot_folder(path)
        if shipped is not None:
            return str(shipped)
    return path


def is_exported(path) -> bool:
    """Whether ``path`` is a folder holding an export (its model.onnx), for ``make_agent``."""
    try:
        return Path(path).is_dir() and os.path.lexists(Path(path) / MODEL_FILE)
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def pack_agents(specs) -> dict[str, dict[str, bytes]]:
    """``{spec: {file name: bytes}}`` for the specs that are local folders (checkpoints, exported
    bots): read here, so workers need no shared disk. Other specs (``random``, ``ismcts:...``)
    need no files."""
    packed = {}
    for spec in dict.fromkeys(specs):
        folder = Path(agent_folder(spec))
        if not (spec.startswith("onnx:") or folder.is_dir()):
            continue
        kind = "exported" if spec.startswith("onnx:") or is_exported(folder) else "checkpoint"
        packed[spec] = {name: read_bytes(folder / name, limit) for name, limit in AGENT_FILES[kind].items()}
    return packed


@contextlib.contextmanager
def agent_copies(packed: dict[str, dict[str, bytes]]):
    """While the block runs, ``packed`` agents are folders in a temporary directory that
    ``agent_folder`` (and so ``make_agent``, here and in subprocesses) finds by spec."""
    if not packed:
        yield
        return
    previous = os.environ.get(AGENT_COPIES)
    with tempfile.TemporaryDirectory(prefix="deckgym-agents-") as tmp:
        mapping = json.loads(previous) if previous else {}
        for i, (spec, files) in enumerate(packed.items()):
            folder = Path(tmp) / str(i)  # not the spec: it may be absolute, hold "..", or be long
            folder.mkdir()
            for name, data in files.items():
                (folder / name).write_bytes(data)
            mapping[spec] = str(folder)
        os.environ[AGENT_COPIES] = json.dumps(mapping)
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop(AGENT_COPIES, None)
            else:
                os.environ[AGENT_COPIES] = previous
