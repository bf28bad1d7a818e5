"""Files the kit writes for people to open, without ever overwriting one they changed.

User files are sacred: no command overwrites a file it did not write, or one that changed
since it wrote it. ``write_owned`` keeps, in each folder it writes to, a ledger
(``.kit-written.json``: file name -> sha256 of what the kit wrote). A file that is in the
ledger with the same digest is the kit's own and is replaced; any other existing file is kept,
and the new content goes beside it under a stamped name (``grades.20261123-145000.csv``), or,
for a writer that asks to refuse, nothing is written and a ``KitError`` says why.

``kit release`` keeps the same rule with its own record, ``notebooks/RELEASED.sha256``, which
is committed with the notebooks (a ledger here would be missing from every fresh clone).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from helpers.errors import KitError
from helpers.files import atomic_write

LEDGER = ".kit-written.json"
STAMP_FORMAT = "%Y%m%d-%H%M%S"
_CHUNK = 1 << 20

#: What ``write_owned`` writes: text (as UTF-8), bytes, or a function that writes a given path
#: (for large files, never held in memory whole).
Content = str | bytes | Callable[[Path], None]

# Threads of one process (e.g. grading jobs) may write to the same folder; the ledger's
# read-modify-write must not lose an entry.
_LOCK = threading.Lock()


def _file_digest(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
    except FileNotFoundError:
        return None
    return digest.hexdigest()


def _ledger(folder: Path) -> dict[str, str]:
    try:
        entries = json.loads((folder / LEDGER).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing or garbled: every existing file counts as the user's
        return {}
    if not isinstance(entries, dict):
        return {}
    return {name: sha for name, sha in entries.items() if isinstance(sha, str)}


def _save_ledger(folder: Path, entries: dict[str, str]) -> None:
    kept = {name: sha for name, sha in sorted(entries.items()) if (folder / name).is_file()}
    text = json.dumps(kept, indent=1) + "\n"
    atomic_write(folder / LEDGER, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def changed_since_written(path: Path) -> bool:
    """True if ``path`` exists and is not what the kit last wrote there.

    A file the kit never wrote (not in its folder's ledger) counts as changed: it is the
    user's. A missing file is not changed.
    """
    path = Path(path)
    found = _file_digest(path)
    return found is not None and _ledger(path.parent).get(path.name) != found


def kept_message(path: Path) -> str:
    """The start of every message about a file the kit keeps because it is the user's."""
    return f"{path} was changed since the kit wrote it (or the kit did not write it), so it is kept as it is"


def refuse_changed(paths: Iterable[Path], hint: str) -> None:
    """Raise before writing anything if any of ``paths`` is the user's (``changed_since_written``).

    Raises
    ------
    KitError
        Naming the first such file, that nothing was written, and ``hint`` (how to proceed).
    """
    for path in paths:
        if changed_since_written(path):
            raise KitError(f"{kept_message(Path(path))}; nothing was written. {hint}")


def stamped_path(path: Path, when: datetime | None = None) -> Path:
    """A free name beside ``path``: ``name.<YYYYmmdd-HHMMSS>.ext``, then ``-2``, ``-3``...

    Never the name of an existing file.
    """
    path = Path(path)
    stamp = (when or datetime.now()).strftime(STAMP_FORMAT)
    candidate = path.with_name(f"{path.stem}.{stamp}{path.suffix}")
    counter = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}.{stamp}-{counter}{path.suffix}")
        counter += 1
    return candidate


def _same_beside(path: Path, ledger: dict[str, str], digest: str) -> Path | None:
    """An unchanged stamped copy of ``path`` that the kit wrote with this very content, if any.

    Running the same command again then leaves one copy beside the user's file, not one more
    per run.
    """
    for name, sha in sorted(ledger.items(), reverse=True):
        other = path.with_name(name)
        if (sha == digest and name.startswith(f"{path.stem}.") and name.endswith(path.suffix)
                and name != path.name and _file_digest(other) == digest):
            return other
    return None


def _staged(path: Path, content: Content) -> Path:
    """Write ``content`` to a new hidden file beside ``path`` (renamed into place later)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    staged = Path(name)
    try:
        if callable(content):
            content(staged)
        else:
            staged.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        os.chmod(staged, 0o644)  # mkstemp makes files private; these are ordinary files
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return staged


def write_owned(path: Path, content: Content, refuse: str | None = None) -> Path:
    """Write ``content`` to ``path`` atomically, unless that would overwrite the user's file.

    Parameters
    ----------
    path : Path
        Where the content should go (its folder is created if missing).
    content : str, bytes or callable
        The whole content: text (written as UTF-8), bytes, or a function that writes the file
        at the path it is given (for large files).
    refuse : str, optional
        When given, a file of the user's at ``path`` is not written beside but refused: a
        ``KitError`` names it, says nothing was written, and ends with this hint.

    Returns
    -------
    Path
        ``path`` when it was free, the kit's own unchanged file, or already held this very
        content; otherwise the stamped file beside it that holds the content (see
        ``stamped_path``). The caller tells the user where it went (``where_written``).

    Raises
    ------
    KitError
        With ``refuse``, if ``path`` is the user's (see ``refuse_changed``).
    """
    path = Path(path)
    staged = _staged(path, content)
    try:
        digest = _file_digest(staged)
        assert digest is not None  # _staged has just written it
        with _LOCK:
            ledger = _ledger(path.parent)
            found = _file_digest(path)
            target = path
            if found is not None and found != digest and ledger.get(path.name) != found:
                if refuse is not None:
                    raise KitError(f"{kept_message(path)}; nothing was written. {refuse}")
                target = _same_beside(path, ledger, digest) or stamped_path(path)
            # a file that already holds this very content is left alone, and not claimed: it
            # may be the user's copy, which a later, different content must not overwrite
            if _file_digest(target) != digest:
                os.replace(staged, target)
                ledger[target.name] = digest
                _save_ledger(target.parent, ledger)
    finally:
        staged.unlink(missing_ok=True)
    return target


def written_in(folder: Path) -> list[Path]:
    """The files the kit wrote in ``folder``, as its ledger records them (some may be gone)."""
    return [Path(folder) / name for name in sorted(_ledger(Path(folder)))]


def remove_owned(path: Path) -> bool:
    """Delete ``path`` if the kit wrote it and nobody changed it since; keep the user's file.

    Its ledger entry goes with it; with the folder's last entry, the ledger and the folder
    too, when nothing else is left in it.

    Returns
    -------
    bool
        Whether ``path`` is gone (deleted now, or missing already) and out of the ledger.
    """
    path = Path(path)
    with _LOCK:
        ledger = _ledger(path.parent)
        if path.name not in ledger or _file_digest(path) not in (None, ledger[path.name]):
            return False
        path.unlink(missing_ok=True)
        del ledger[path.name]
        if ledger:
            _save_ledger(path.parent, ledger)
            return True
        (path.parent / LEDGER).unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # not empty: something else is in it
        path.parent.rmdir()
    return True


def where_written(what: str, intended: Path, written: Path) -> str:
    """One line telling the user where ``what`` went, naming the kept file when it went beside.

    Examples
    --------
    >>> where_written("grades", Path("subs/grades.csv"), Path("subs/grades.csv"))
    'grades written to subs/grades.csv'
    """
    if Path(written) == Path(intended):
        return f"{what} written to {written}"
    return f"{kept_message(intended)}; {what} written to {written} instead"
