"""The student's workspace: working copies of the released notebooks that no release overwrites.

Students never edit ``notebooks/``: it is the pristine release that the self-check compares
with and that ``kit release --check`` guards. ``kit lab`` (and ``kit work``) copy each
released notebook into the workspace (``work/``, git-ignored; ``KIT_WORK_DIR`` moves it)
the first time, and never again. When a newer release arrives, the student is told, and
``kit work --update NN`` takes it, moving their copy to ``work/backups/`` first.

A working copy starts blank: no outputs and no execution counts, so no "predict first"
question shows its result before the student runs the cell. The release keeps its reference
outputs, which ``kit check`` and ``check("N.M")`` compare with.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import nbformat

from helpers.course.config import NOTEBOOKS_DIR, backup_path, notebooks_in
from helpers.course.notebook.release import edited_notice, edited_since_release
from helpers.course.student.copies import copies_of
from helpers.errors import KitError
from helpers.settings import work_dir

#: What each working copy was copied from: notebook name -> sha256 of that release.
SEEDED_FILE = ".kit-seeded.json"
BACKUPS = "backups"

COPIED = "copied from notebooks/"
YOURS = "yours"
NEWER = "yours; a newer release is in notebooks/ (`kit work --update {number}` takes it, keeping yours)"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def blank_copy(released: Path, copy: Path) -> None:
    """Write ``released`` to ``copy`` without outputs or execution counts; never overwrite.

    Parameters
    ----------
    released : Path
        A released notebook.
    copy : Path
        Where the working copy goes; it must not exist yet.

    Raises
    ------
    FileExistsError
        If ``copy`` exists (another ``kit work`` or Binder's start made it first).
    """
    notebook = nbformat.read(released, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    text = nbformat.writes(notebook)
    with open(copy, "x", encoding="utf-8") as handle:  # "x": a copy made meanwhile is theirs
        handle.write(text)


def _seeded(work: Path) -> dict[str, str]:
    try:
        record = json.loads((work / SEEDED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing or garbled: only ever costs a newer-release notice
        return {}
    return record if isinstance(record, dict) else {}


def _record(work: Path, record: dict[str, str]) -> None:
    """Write the seed record whole or not at all (Binder's start and kit lab may both seed)."""
    partial = work / f"{SEEDED_FILE}.{os.getpid()}"
    partial.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(partial, work / SEEDED_FILE)


def _released(notebooks: Path, numbers: list[str] | None = None) -> list[Path]:
    found = notebooks_in(notebooks, numbers)
    if not found:
        raise KitError(f"No released notebooks (NN_topic.ipynb) in {notebooks}"
                       + (f" numbered {', '.join(numbers)}." if numbers else "."))
    return found


def seed(work: Path | None = None, notebooks: Path = NOTEBOOKS_DIR) -> dict[str, str]:
    """Copy every released notebook the workspace does not have yet; never touch one it has.

    Parameters
    ----------
    work : Path, optional
        The workspace (default: ``settings.work_dir()``).
    notebooks : Path
        The released notebooks.

    Returns
    -------
    dict of str to str
        Each notebook's state: copied now, yours, or yours with a newer release available.
    """
    work = Path(work) if work is not None else work_dir()
    work.mkdir(parents=True, exist_ok=True)
    record = _seeded(work)
    states = {}
    for released in _released(notebooks):
        copy, digest = work / released.name, _digest(released)
        elsewhere = [] if copy.exists() else copies_of(released, work)
        if elsewhere:  # renamed: a blank copy beside it could be handed in by mistake
            states[released.name] = f"{YOURS}, as {elsewhere[0].name}"
        elif not copy.exists() and _made(released, copy):
            record[released.name] = digest
            states[released.name] = COPIED
        elif edited_since_release(released):  # not a newer release: someone edited notebooks/
            states[released.name] = f"yours; {edited_notice(released)}"
        elif record.get(released.name, digest) == digest:
            record.setdefault(released.name, digest)
            states[released.name] = YOURS
        else:
            states[released.name] = NEWER.format(number=released.name[:2])
    _record(work, record)
    return states


def _made(released: Path, copy: Path) -> bool:
    """Make the blank copy; False if someone else made it first."""
    try:
        blank_copy(released, copy)
    except FileExistsError:
        return False
    return True


def update(numbers: list[str], work: Path | None = None,
           notebooks: Path = NOTEBOOKS_DIR) -> dict[str, Path | None]:
    """Replace working copies with blank copies of the current release, moving each old copy to
    ``backups/``.

    Parameters
    ----------
    numbers : list of str
        The notebooks to update (e.g. ``["01"]``); at least one.
    work : Path, optional
        The workspace (default: ``settings.work_dir()``).
    notebooks : Path
        The released notebooks.

    Returns
    -------
    dict of str to Path or None
        For each notebook, where the student's previous copy now is (None: there was none).
    """
    if not numbers:
        raise KitError("Name the notebooks to update, e.g. `kit work --update 01`.")
    work = Path(work) if work is not None else work_dir()
    released = _released(notebooks, numbers)
    work.mkdir(parents=True, exist_ok=True)
    record = _seeded(work)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved: dict[str, Path | None] = {}
    for source in released:
        copy, backup = work / source.name, None
        if copy.exists():
            backup = backup_path(work / BACKUPS, copy, stamp)
            copy.rename(backup)
        blank_copy(source, copy)
        record[source.name] = _digest(source)
        moved[source.name] = backup
    _record(work, record)
    return moved
