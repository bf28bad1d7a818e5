"""Work run in the lab but not saved: what ``kit check`` reads is the file, not the lab's tab.

A student edits an exercise in JupyterLab, runs it (its check cell says ✓) and then runs
``kit check`` in a terminal, which reads the notebook *file*: without a save it checks the old
code. The kit's kernel (``kernel.main``) therefore records, for each cell JupyterLab runs in a
notebook of the workspace, the cell's id, a hash of the code run and when
(``RAN_FILE`` beside the notebook: the kit's own file, as ``.kit-checked.json`` is), and
``kit check`` says when the lab ran a cell whose code differs from the saved file's after its
last save (``unsaved_note``).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import nbformat

from helpers.course.notebook.cells import exercise_id
from helpers.errors import KitError
from helpers.files import atomic_write
from helpers.settings import work_dir

#: Beside the workspace's notebooks: per notebook, per cell id, the hash of the code the lab
#: last ran in that cell and when.
RAN_FILE = ".kit-ran.json"
#: What jupyter_server tells a kernel it started for a notebook: that notebook's path.
SESSION_ENV = "JPY_SESSION_NAME"


def lab_notebook() -> Path | None:
    """The notebook this kernel was started for by jupyter_server (``SESSION_ENV``), or None
    outside such a kernel."""
    session = os.environ.get(SESSION_ENV)
    return Path(session) if session else None


def source_hash(source: str) -> str:
    """The sha256 of a cell's code, as the lab ran it or the file holds it."""
    return hashlib.sha256(source.encode()).hexdigest()


def read_ran(folder: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """``RAN_FILE`` of ``folder``: notebook name -> cell id -> {"sha256", "at"}; empty when
    missing or garbled (it is only a hint)."""
    try:
        found = json.loads((Path(folder) / RAN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def record_run(notebook: Path, cell_id: str, source: str, at: float | None = None) -> None:
    """Record that the lab ran ``source`` in cell ``cell_id`` of ``notebook`` (at ``at``, now
    by default), in the ``RAN_FILE`` beside it."""
    ran = read_ran(notebook.parent)
    cells = ran.get(notebook.name)
    cells = cells if isinstance(cells, dict) else {}
    cells[cell_id] = {"sha256": source_hash(source), "at": time.time() if at is None else at}
    ran[notebook.name] = cells
    text = json.dumps(ran, indent=1, sort_keys=True)
    atomic_write(notebook.parent / RAN_FILE, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def record_lab_runs(shell: Any, kernel: Any) -> None:
    """Have ``shell`` record each cell JupyterLab runs in a notebook of the workspace
    (``record_run``); a kernel started for no notebook, or for one outside the workspace,
    records nothing.

    Parameters
    ----------
    shell : IPython InteractiveShell
        The kernel's shell, whose ``post_run_cell`` event is used.
    kernel : ipykernel Kernel
        Gives the request being run (``get_parent``), with the cell's id.
    """
    notebook = lab_notebook()
    if notebook is None:
        return
    try:
        in_workspace = notebook.suffix == ".ipynb" and notebook.parent.resolve() == work_dir().resolve()
    except KitError:  # KIT_WORK_DIR names a folder of the kit: no workspace to record in
        in_workspace = False
    if not in_workspace:
        return

    def after(result: Any) -> None:
        metadata = (kernel.get_parent("shell") or {}).get("metadata")
        cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
        if isinstance(cell_id, str) and result.info is not None:
            try:
                record_run(notebook, cell_id, result.info.raw_cell)
            except OSError:  # a hint only: a full disk must not break the student's cell
                pass

    shell.events.register("post_run_cell", after)


def unsaved_cells(copy: Path) -> list[tuple[str | None, str]]:
    """The cells of ``copy`` the lab ran after the file's last save with code the file does
    not hold, as (exercise id or None, cell id); a cell run but not in the file counts too."""
    ran = read_ran(copy.parent).get(copy.name)
    if not isinstance(ran, dict):
        return []
    saved_at = copy.stat().st_mtime
    saved = {cell.get("id"): cell for cell in nbformat.read(copy, as_version=4).cells}
    found = []
    for cell_id, run in ran.items():
        if not isinstance(run, dict) or not isinstance(run.get("at"), int | float) or run["at"] <= saved_at:
            continue
        cell = saved.get(cell_id)
        if cell is None or source_hash(cell.source) != run.get("sha256"):
            found.append((exercise_id(cell) if cell is not None else None, cell_id))
    return found


def unsaved_note(copy: Path) -> str:
    """What to tell the student when the lab ran code in ``copy`` that the file does not hold
    ('' when there is none)."""
    found = unsaved_cells(copy)
    if not found:
        return ""
    exercises = sorted({exercise for exercise, _ in found if exercise})
    which = f"exercise {', '.join(exercises)}" if exercises else f"{len(found)} cell(s)"
    return (f"the lab ran code in {which} that this file does not hold (run after its last "
            "save): save the notebook in the lab (Ctrl-S) and check again, or this check reads the "
            "old code")
