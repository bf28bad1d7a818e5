"""Files the kit writes for people to open, without ever overwriting one they changed.

User files are sacred: no command overwrites a file it did not write, or one that changed
since it wrote it. ``write_owned`` keeps, in each folder it writes to, a ledger
(``.kit-written.json``: file name -> sha256 of what the kit wrote). A file that is in the
ledger with the same digest is the kit's own and is replaced; any other existing file is kept,
and the new text goes beside it under a stamped name (``grades.20261123-145000.csv``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import datetime
from pathlib import Path

from helpers.storage import atomic_write

LEDGER = ".kit-written.json"
STAMP_FORMAT = "%Y%m%d-%H%M%S"

# Threads of one process (e.g. grading jobs) may write to the same folder; the ledger's
# read-modify-write must not lose an entry.
_LOCK = threading.Lock()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_digest(path: Path) -> str | None:
    try:
        return _digest(path.read_bytes())
    except FileNotFoundError:
        return None


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
    """An unchanged stamped copy of ``path`` that the kit wrote with this very text, if any.

    Running the same command again then leaves one copy beside the user's file, not one more
    per run.
    """
    for name, sha in sorted(ledger.items(), reverse=True):
        other = path.with_name(name)
        if (sha == digest and name.startswith(f"{path.stem}.") and name.endswith(path.suffix)
                and name != path.name and _file_digest(other) == digest):
            return other
    return None


def write_owned(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically, unless that would overwrite the user's file.

    Parameters
    ----------
    path : Path
        Where the text should go (its folder is created if missing).
    text : str
        The whole content, written as UTF-8.

    Returns
    -------
    Path
        ``path`` when it was free, the kit's own unchanged file, or already held this very
        text; otherwise the stamped file beside it that holds the text (see ``stamped_path``).
        The caller tells the user where it went (``where_written``).
    """
    path = Path(path)
    data = text.encode("utf-8")
    digest = _digest(data)
    with _LOCK:
        ledger = _ledger(path.parent)
        found = _file_digest(path)
        target = path
        if found is not None and found != digest and ledger.get(path.name) != found:
            target = _same_beside(path, ledger, digest) or stamped_path(path)
        # a file that already holds this very text is left alone, and not claimed: it may be
        # the user's copy, which a later, different text must not overwrite
        if _file_digest(target) != digest:
            atomic_write(target, lambda tmp: tmp.write_bytes(data))
            ledger[target.name] = digest
            _save_ledger(target.parent, ledger)
    return target


def where_written(what: str, intended: Path, written: Path) -> str:
    """One line telling the user where ``what`` went, naming the kept file when it went beside.

    Examples
    --------
    >>> where_written("grades", Path("subs/grades.csv"), Path("subs/grades.csv"))
    'grades written to subs/grades.csv'
    """
    if Path(written) == Path(intended):
        return f"{what} written to {written}"
    return (f"{intended} was changed since the kit wrote it (or the kit did not write it), so it "
            f"is kept as it is; {what} written to {written} instead")
