"""Files on disk, safely: checksums, atomic writes, a bad file set aside, one line to the user.

The primitives under the data folder's two keepers, ``fetch`` (the downloaded data sets) and
``storage`` (every computed cache), and under every file the tooling writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from helpers.log import LOGGER

try:
    import fcntl
except ImportError:  # not POSIX (native Windows): filelock's exclusive lock instead
    fcntl = None  # type: ignore[assignment]  # the usual optional import: callers test for None

#: Bytes read at a time when hashing a file.
CHUNK = 1 << 20
#: How a set-aside file is named: ``<name>.corrupt-<timestamp>``.
ASIDE_FORMAT = "%Y%m%d-%H%M%S-%f"


def sha256sum(path: Path) -> str:
    """Return the hex sha256 digest of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


@contextlib.contextmanager
def file_lock(path: Path, shared: bool = False) -> Iterator[bool]:
    """Hold the lock file ``path`` (created if missing) while the block runs; yield whether
    it is held.

    Shared (``shared=True``, many readers) or exclusive (one writer) where the system has
    ``flock`` (POSIX); elsewhere always exclusive (``filelock``). Where the lock file cannot
    be created (a read-only folder, where nobody writes) the block runs without it.
    """
    if fcntl is None:
        import filelock

        lock = filelock.FileLock(str(path))
        try:
            lock.acquire()
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            lock.release()
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield False
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield True
    finally:
        # Unlocked before closed: a process forked inside the block shares the descriptor,
        # and would hold the lock until it exits.
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place.

    Nothing half-written is ever at ``path``: a failure (or a kill) leaves the old file, or none.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp_name))
        os.chmod(tmp_name, 0o644)  # mkstemp makes files private; these are ordinary data files
        os.replace(tmp_name, path)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


def set_aside(path: Path, why: str, then: str = "computed again") -> Path | None:
    """Rename a bad file to ``<name>.corrupt-<timestamp>`` (kept, never read); say so in one line.

    Returns the new path, or None when the folder is read-only (the file then stays, unused).
    """
    aside = path.with_name(f"{path.name}.corrupt-{datetime.now().strftime(ASIDE_FORMAT)}")
    try:
        path.rename(aside)
    except OSError:
        LOGGER.warning(f"{path} {why}; it is not used (its folder is read-only, so it stays there).")
        return None
    LOGGER.warning(f"{path.name} {why}; set aside as {aside.name}, and {then}.")
    return aside
