"""Run All on every untouched student notebook reaches its end, and leaves the kit as it was.

Each released notebook is copied into a workspace, as ``kit lab`` does, and run there in the
kernel ``kit lab`` starts, the way JupyterLab's Run All runs it: nbclient, like JupyterLab,
sends a cell tagged ``raises-exception`` with ``stop_on_error`` off and stops at an error in
any other cell. The executed notebook is saved over the working copy (JupyterLab's autosave).
An unfinished exercise must show as one line in its checks and in the cells that need it,
every other cell must run, and `git status` of the repository (tracked files, and files git
does not ignore) must not change.
"""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from helpers import exercises
from helpers.course import config
from helpers.course.classroom.classgrade import PREPARE_CELL_TIMEOUT
from helpers.course.config import GRADE_JOBS
from helpers.course.notebook import cells, runner
from helpers.course.student import workspace
from helpers.settings import REPO_ROOT

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

RELEASED = config.notebooks_in(config.NOTEBOOKS_DIR)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _repository_changes() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=REPO_ROOT,
                          capture_output=True, text=True, check=True).stdout


def _errors(nb: nbformat.NotebookNode) -> dict[str, list[str]]:
    """Cell id -> the lines of the error it shows (none for a cell that ran)."""
    return {cell.id: [_ANSI.sub("", line) for line in output.traceback]
            for cell in nb.cells if cell.cell_type == "code"
            for output in cell.outputs if output.output_type == "error"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, corpora: Path) -> dict[str, object]:
    """Every released notebook, seeded into a workspace and run there, a few at a time.

    Returns notebook name -> the executed notebook, or the exception that stopped it.
    """
    work = tmp_path_factory.mktemp("workspace") / "work"
    workspace.seed(work)
    before = _repository_changes()

    def run_all(released: Path) -> object:
        copy = work / released.name
        nb = nbformat.read(copy, as_version=4)
        try:
            # A first Run All builds the caches its cells read, as `kit grade --prepare` does: in a
            # CI run, 02's five SVM settings with nested C took over 15 min of one cell, cold.
            NotebookClient(nb, kernel_manager_class=runner.KitKernelManager, kernel_name="python3",
                           timeout=PREPARE_CELL_TIMEOUT,
                           resources={"metadata": {"path": str(work)}}).execute()
        except Exception as err:  # the test of that notebook reports it
            return err
        nbformat.write(nb, copy)  # as JupyterLab's autosave would
        return nb

    with ThreadPoolExecutor(max_workers=GRADE_JOBS) as pool:
        found = dict(zip([path.name for path in RELEASED], pool.map(run_all, RELEASED), strict=True))
    found["repository changes"] = (before, _repository_changes())
    return found


@pytest.mark.parametrize("released", RELEASED, ids=lambda path: path.stem)
def test_run_all_on_an_untouched_notebook_reaches_its_end(released, runs):
    nb = runs[released.name]
    assert isinstance(nb, nbformat.NotebookNode), f"Run All stopped: {nb}"
    shown = _errors(nb)
    assert all(len(lines) == 1 and exercises.NOT_DONE in lines[0] for lines in shown.values()), \
        {cell: lines[-3:] for cell, lines in shown.items() if len(lines) != 1}
    for ex in cells.exercises(nb):
        first_check = shown.get(ex.cell_ids[1], [""])[0]
        waits_for = exercises.STOPPED_ON.search(first_check)
        assert first_check == exercises.not_done(ex.id) or \
            (waits_for and waits_for["exercise"] == ex.id), (ex.id, first_check)


@pytest.mark.parametrize("released", RELEASED, ids=lambda path: path.stem)
def test_the_figure_of_the_student_s_own_results_waits_for_their_exercises(released, runs):
    """Untouched, the figure that plots the student's results against the kit's shows the one
    line of an unfinished exercise: it draws from the student's functions, not the kit's."""
    nb = runs[released.name]
    assert isinstance(nb, nbformat.NotebookNode), f"Run All stopped: {nb}"
    shown = _errors(nb)
    exercise_ids = {ex.id for ex in cells.exercises(nb)}
    for cell in filter(cells.is_own_results_figure, nb.cells):
        [line] = shown.get(cell.id, ["no error: it drew without the student's functions"])
        stopped_on = exercises.STOPPED_ON.search(line)
        assert line in {exercises.not_done(ex) for ex in exercise_ids} or \
            (stopped_on and stopped_on["exercise"] in exercise_ids), (cell.id, line)


def test_running_every_notebook_in_the_workspace_changes_nothing_in_the_repository(runs):
    before, after = runs["repository changes"]
    assert after == before
