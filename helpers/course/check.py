"""``kit check``: the student's self-check, through the grading engine.

The student's working copy (``work/NN_topic.ipynb``) is merged into the pristine released
notebook (``notebooks/``) the way ``kit grade`` merges a submission: their exercise cells and
the cells they added; every check cell and every reference output from the release. It runs
under nbval in a fresh kernel, and each exercise gets one line. The release has no hidden
checks, so a pass here is necessary, not sufficient, for a pass in ``kit grade``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat

from helpers.course import config, grading
from helpers.course.release import exercises
from helpers.errors import KitError
from helpers.settings import work_dir

NOT_DONE = "not done yet"


def check_notebook(submission: Path, reference: Path,
                   timeout: float = config.CELL_TIMEOUT) -> list[tuple[str, bool, str]]:
    """Check one working copy against its released notebook: ``(exercise, passed, error)`` each.

    Parameters
    ----------
    submission : Path
        The student's notebook.
    reference : Path
        The released notebook it came from (with the reference outputs).
    timeout : float
        Seconds one cell may run.
    """
    for path in (submission, reference):
        if not Path(path).is_file():
            raise KitError(f"{path} is not a notebook file.")
    try:
        theirs = nbformat.read(submission, as_version=4)
    except Exception as err:  # any unreadable notebook is a message, not a crash
        raise KitError(f"{submission} is not a readable notebook ({type(err).__name__}).") from err
    released = nbformat.read(reference, as_version=4)
    graded = grading.graded_notebook(released, theirs)
    with tempfile.TemporaryDirectory(prefix="kit-check-") as folder:
        path = Path(folder) / Path(submission).name
        nbformat.write(graded, path)
        results = grading.run_nbval(path, timeout)
    return grading.exercise_rows(exercises(released), graded, results)


def describe(exercise: str, passed: bool, error: str) -> str:
    """One line for one exercise: ✓, ✗ with why, not done yet, or blocked by N.M."""
    if passed:
        return f"✓ {exercise}"
    if error.startswith(f"NotImplementedError: exercise {exercise}"):
        return f"✗ {exercise}  {NOT_DONE}"
    return f"✗ {exercise}  {error}"


def working_copy(which: str, work: Path | None = None) -> Path:
    """The notebook ``which`` names: a path to a notebook, or a number looked up in the workspace."""
    if which.endswith(".ipynb"):
        return Path(which).resolve()
    found = config.notebooks_in(work or work_dir(), [which])
    if not found:
        raise KitError(f"No notebook {which} in your workspace {work or work_dir()}; "
                       "`kit work` copies the released notebooks there.")
    return found[0]


def released_for(submission: Path, notebooks: Path = config.NOTEBOOKS_DIR) -> Path:
    """The released notebook a working copy came from (same ``NN_topic.ipynb`` name)."""
    reference = notebooks / submission.name
    if not reference.is_file():
        raise KitError(f"{submission.name} is not one of the released notebooks in {notebooks}.")
    return reference
