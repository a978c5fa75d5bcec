"""Files every long job writes: a folder held by one process at a time, and files and folders
replaced atomically, so a second run never mixes in and a kill never leaves half a file."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from pathlib import Path

LOCK_FILE = ".lock"
_UMASK = os.umask(0)
os.umask(_UMASK)


class FolderInUse(ValueError):
    """Another process holds the folder."""


@contextlib.contextmanager
def hold_folder(folder, what: str, hint: str = "wait for it to end"):
    """Hold ``folder`` for this process while the block runs: an ``flock`` on its ``.lock``
    (which names the holder's process id), so a killed process frees it at once. A second
    holder gets ``FolderInUse`` naming the folder, ``what`` holds it and ``hint``."""
    with open(Path(folder) / LOCK_FILE, "a+") as lock:  # "a+": opening must not wipe the holder's pid
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip()
            raise FolderInUse(
                f"{folder} is in use by another {what}{f' (process {holder})' if holder else ''}: {hint}"
            ) from None
        lock.truncate(0)
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        yield


def check_replaceable(out, names: set[str], what: str, inputs: dict) -> None:
    """``ValueError`` unless writing ``what`` to the folder ``out`` (which replaces it whole)
    can destroy no more than an earlier one: ``out`` must be missing, a symlink to anything but
    a folder (the link alone is replaced), or a folder holding only ``names``; and it must not
    be, nor hold, the current folder or one of the ``inputs`` read to make it ({path: what to
    call it}). Resolved paths are compared, so no other spelling (``./``, a trailing slash, a
    symlink) gets through."""
    out = Path(out)
    if os.path.lexists(out) and not os.path.islink(out) and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a folder: it is not replaced; choose another folder")
    target = out.resolve()
    for path, name in [(Path.cwd(), "the current folder"), *inputs.items()]:
        path = Path(path).resolve()
        if path.is_relative_to(target):
            raise ValueError(
                f"--out {out} {f'is {name} itself' if path == target else f'holds {name}'}: "
                "replacing it would delete it; choose another folder"
            )
    if out.is_dir():
        others = sorted(set(os.listdir(out)) - names)
        if others:
            raise ValueError(
                f"--out {out} holds {', '.join(others[:5])}: not {what}, so it is not replaced; choose another folder"
            )


def file_stamp(path):
    """What changes when a file is replaced or rewritten (inode, size, modification time), or
    None when it is missing: a cache key for what is read from it."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def write_file(path, data: bytes | str) -> Path:
    """Replace ``path`` by a file holding ``data``: written beside it, flushed, then renamed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_UMASK)  # mkstemp makes 0600: these files are for reading
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


# ---------------------------------------------------------------- folders replaced whole
def _old(target: Path) -> Path:
    return target.with_name(f".{target.name}.old")


def _is_real_dir(path: Path) -> bool:
    """A directory itself, not a symlink to one (lstat: links are never followed)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove(path: Path) -> None:
    """Remove ``path`` itself: a real folder with its contents; anything else (a file, a
    symlink, even one to a folder) is unlinked, so nothing is deleted through a link."""
    if _is_real_dir(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def recover_swap(target) -> None:
    """Finish a replacement cut between its two renames (the previous version waits under
    ``.<name>.old``), so the folder is found under its real name again. Only a real folder is
    restored: a stale file or symlink there is no earlier version."""
    target = Path(target)
    if not os.path.lexists(target) and _is_real_dir(_old(target)):
        os.replace(_old(target), target)


def write_atomically(target, fill) -> Path:
    """Create the folder ``target`` by filling (``fill(folder)``) a temporary sibling
    ``.<name>.<random>`` and renaming it into place, so a crash never leaves a half-written
    folder under the real name. A previous version steps aside as ``.<name>.old`` for the
    instant between the two renames (``recover_swap`` puts it back after a kill there). A
    symlink at ``target`` is replaced by the new folder; the folder it pointed to is left alone."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_swap(target)
    old = _old(target)
    _remove(old)  # whatever is left there now is stale: recover_swap took what it needed
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    os.chmod(tmp, 0o777 & ~_UMASK)  # mkdtemp makes it private; what is written here is an ordinary folder
    try:
        fill(tmp)
        if os.path.lexists(target):
            # rename() moves a symlink itself, never its folder; a folder can't be renamed
            # over a link, so the link steps aside like a real previous version does.
            os.replace(target, old)
            os.replace(tmp, target)
            _remove(old)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def recover_leftovers(folder, prefix: str) -> None:
    """Finish the swaps a kill interrupted in ``folder``, then remove what a kill left there of
    ``write_atomically``: the hidden siblings whose names start with ``prefix`` (``.<name>.``
    for one target). Run by the process that holds ``folder``: another one's temporary
    folder would go too."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    leftovers = [entry for entry in folder.iterdir() if entry.name.startswith(prefix)]
    for entry in leftovers:  # recover first: a ``.<name>.old`` may be the only copy
        if entry.name.endswith(".old"):
            recover_swap(folder / entry.name[1 : -len(".old")])
    for entry in leftovers:
        _remove(entry)
