"""Work run in the lab but not saved: what ``kit check`` reads is the file, not the lab's tab.

A student edits an exercise in JupyterLab, runs it (its check cell says ✓) and then runs
``kit check`` in a terminal, which reads the notebook *file*: without a save it checks the old
code. The kit's kernel (``kernel.main``) therefore records, for each cell JupyterLab runs in a
notebook of the workspace, the cell's id, a hash of the code run and when (``RAN_FILE``
beside the notebook: the kit's own file, as ``.kit-checked.json`` is), and ``kit check`` says
when the lab ran a cell whose code differs from the saved file's after its last save
(``unsaved_note``). It is a hint: a record it cannot read or write is no hint, never an error.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import nbformat

from helpers import settings
from helpers.course.notebook.cells import exercise_id
from helpers.errors import InputError, KitError
from helpers.files import atomic_write
from helpers.settings import work_dir

#: Beside the workspace's notebooks: per notebook, per cell id, the hash of the code the lab
#: last ran in that cell and when.
RAN_FILE = ".kit-ran.json"
#: Held while a kernel reads and rewrites ``RAN_FILE``: two notebooks' kernels keep both records.
LOCK_FILE = ".kit-ran.lock"


def lab_notebook() -> Path | None:
    """The notebook this kernel was started for by jupyter_server.

    Returns
    -------
    Path or None
        ``LAB_SESSION_ENV``'s absolute path; None outside such a kernel, or for a path given
        relative to a server root this process does not know.
    """
    session = settings.lab_session()
    return Path(session) if session and Path(session).is_absolute() else None


def source_hash(source: str) -> str:
    """The sha256 (hex) of a cell's code, as the lab ran it or the file holds it.

    Raises
    ------
    InputError
        If ``source`` is not a string.
    """
    if not isinstance(source, str):
        raise InputError(f"source must be a cell's code as a string, not {type(source).__name__}.")
    return hashlib.sha256(source.encode()).hexdigest()


def read_ran(folder: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """``RAN_FILE`` of ``folder``.

    Returns
    -------
    dict
        Notebook name -> cell id -> ``{"sha256": ..., "at": seconds since the epoch}``; empty
        when the file is missing or garbled (a hint only: the next record starts it afresh).
    """
    try:
        found = json.loads((Path(folder) / RAN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def record_run(notebook: Path, cell_id: str, source: str, at: float | None = None) -> None:
    """Record that the lab ran ``source`` in cell ``cell_id`` of ``notebook``.

    Parameters
    ----------
    notebook : Path
        The notebook's file; the record goes in the ``RAN_FILE`` beside it.
    cell_id : str
        The cell's id, as JupyterLab sends it.
    source : str
        The code the cell ran.
    at : float, optional
        When, in seconds since the epoch (default: now).

    Raises
    ------
    InputError
        If ``cell_id`` is not a non-empty string or ``source`` not a string.
    """
    if not (isinstance(cell_id, str) and cell_id):
        raise InputError(f"cell_id must be a cell's id, a non-empty string, not {cell_id!r}.")
    entry = {"sha256": source_hash(source), "at": time.time() if at is None else float(at)}
    folder = Path(notebook).parent
    with open(folder / LOCK_FILE, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # read, change and write as one step: kernels run side by side
        ran = read_ran(folder)
        cells = ran.get(notebook.name)
        ran[notebook.name] = {**(cells if isinstance(cells, dict) else {}), cell_id: entry}
        text = json.dumps(ran, indent=1, sort_keys=True)
        atomic_write(folder / RAN_FILE, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def record_lab_runs(shell: Any, kernel: Any) -> None:
    """Have ``shell`` record each cell JupyterLab runs in a notebook of the workspace.

    A kernel started for no notebook, or for one outside the workspace, records nothing; a
    record that cannot be written is skipped (a full disk must not break the student's cell).

    Parameters
    ----------
    shell : IPython InteractiveShell
        The kernel's shell, whose ``post_run_cell`` event is used.
    kernel : ipykernel Kernel
        Gives the request being run (``get_parent``), with the cell's id.
    """
    notebook = lab_notebook()
    try:
        in_workspace = (notebook is not None and notebook.suffix == ".ipynb"
                        and notebook.parent.resolve() == work_dir().resolve())
    except KitError:  # KIT_WORK_DIR names a folder of the kit: no workspace to record in
        in_workspace = False
    if not in_workspace:
        return
    assert notebook is not None  # in_workspace holds only for a notebook

    def after(result: Any = None) -> None:
        info = getattr(result, "info", None)  # None: ipykernel's call after an interrupted await
        metadata = (kernel.get_parent("shell") or {}).get("metadata")
        cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
        if info is not None and isinstance(cell_id, str) and cell_id and isinstance(info.raw_cell, str):
            try:
                record_run(notebook, cell_id, info.raw_cell)
            except OSError:
                pass

    shell.events.register("post_run_cell", after)


def unsaved_cells(copy: Path) -> list[tuple[str | None, str]]:
    """The cells of ``copy`` the lab ran after the file's last save with code it does not hold.

    Returns
    -------
    list of (str or None, str)
        (exercise id or None, cell id) of each; a cell run but not in the file counts too.
        Empty when nothing was recorded, or the file cannot be read or has no cell ids (an
        older notebook format, whose cells the records cannot name).
    """
    ran = read_ran(Path(copy).parent).get(Path(copy).name)
    if not isinstance(ran, dict):
        return []
    try:
        saved_at = Path(copy).stat().st_mtime
        cells = nbformat.read(copy, as_version=4).cells
    except Exception:  # an unreadable copy: kit check says so itself, in its own words
        return []
    saved = {cell.get("id"): cell for cell in cells}
    if None in saved:
        return []
    found = []
    for cell_id, run in ran.items():
        if not isinstance(run, dict) or not isinstance(run.get("at"), int | float) or run["at"] <= saved_at:
            continue
        cell = saved.get(cell_id)
        if cell is None or source_hash(cell.source) != run.get("sha256"):
            found.append((exercise_id(cell) if cell is not None else None, cell_id))
    return found


def unsaved_note(copy: Path) -> str:
    """What to tell the student when the lab ran code in ``copy`` that the file does not hold.

    Returns
    -------
    str
        One sentence naming the exercises (or how many cells), or '' when there is none.
    """
    found = unsaved_cells(copy)
    if not found:
        return ""
    exercises = sorted({exercise for exercise, _ in found if exercise})
    which = f"exercise {', '.join(exercises)}" if exercises else f"{len(found)} cell(s)"
    return (f"the lab ran code in {which} that this file does not hold (run after its last "
            "save): save the notebook in the lab (Ctrl-S) and check again, or this check reads the "
            "old code")
