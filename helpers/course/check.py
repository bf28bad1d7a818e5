"""``kit check`` and ``check("N.M")``: the student's self-check.

``kit check`` goes through the grading engine:

The student's working copy (``work/NN_topic.ipynb``) is merged into the pristine released
notebook (``notebooks/``) the way ``kit grade`` merges a submission: their exercise cells and
the cells they added; every check cell and every reference output from the release. It runs
under nbval in a fresh kernel, and each exercise gets one line. The release has no hidden
checks, so a pass here is necessary, not sufficient, for a pass in ``kit grade``.

``check("1.2")`` inside a notebook (``from helpers.course.check import check``) runs exercise
1.2's visible checks on the live kernel, with the names the student's cells defined, and
compares what they print with the release's reference outputs the way nbval does.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import NamedTuple

import nbformat
import pandas as pd
from nbformat import NotebookNode

from helpers.course import compare, config, environment, grading
from helpers.course.grading import heading_above
from helpers.course.release import exercises
from helpers.errors import KitError
from helpers.exercises import NOT_DONE, ipython_shell, unfinished
from helpers.settings import work_dir

# The reference's and this run's libraries, which grading appends to an output difference.
_ENVIRONMENTS = re.compile(rf" \[({re.escape(environment.REFERENCE_LABEL)}.*)\]$")


class Row(NamedTuple):
    """One exercise's self-check: whether it passes, why not, and the failing check's title."""

    exercise: str
    passed: bool
    error: str
    title: str

    @property
    def status(self) -> str:
        """``"pass"``, ``"not done"``, ``"blocked"`` or ``"fail"``."""
        if self.passed:
            return "pass"
        if self.error.startswith(f"NotImplementedError: exercise {self.exercise}"):
            return "not done"
        return "blocked" if self.error.startswith("blocked by") else "fail"


def check_notebook(submission: Path, reference: Path,
                   timeout: float = config.CELL_TIMEOUT, progress: bool = False) -> list[Row]:
    """Check one working copy against its released notebook: one ``Row`` per exercise.

    Parameters
    ----------
    submission : Path
        The student's notebook.
    reference : Path
        The released notebook it came from (with the reference outputs).
    timeout : float
        Seconds one cell may run.
    progress : bool
        Show a bar on stderr counting the cells as they run.
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
        results = grading.run_nbval(path, timeout, progress)
    items = exercises(released)
    numbers = grading.code_numbers(graded)
    rows = []
    for ex, (exercise, passed, error) in zip(items, grading.exercise_rows(items, graded, results),
                                             strict=True):
        failed = None if passed or not results else grading.first_failure(ex, numbers, results)
        title = heading_above(graded, ex.cell_ids[failed[0]]) if failed else ""
        rows.append(Row(exercise, passed, error, title))
    return rows


def check_workspace(copies: list[Path], timeout: float = config.CELL_TIMEOUT,
                    notebooks: Path = config.NOTEBOOKS_DIR, report: bool = False) -> dict[str, list[Row]]:
    """Check every working copy that has a released notebook with exercises, by file name.

    With ``report``, show each notebook's cells as they run and print a line as each is done
    (a whole workspace takes minutes).
    """
    found = {}
    for copy in copies:
        reference = notebooks / copy.name
        if not reference.is_file() or not exercises(nbformat.read(reference, as_version=4)):
            continue  # the student's own notebook, or one with nothing to check
        found[copy.name] = rows = check_notebook(copy, reference, timeout, progress=report)
        if report:
            print(f"{copy.name}: {sum(row.passed for row in rows)}/{len(rows)} pass", flush=True)
    return found


def describe(row: Row) -> str:
    """A few lines for one exercise: ✓; not done yet; or ✗, the check's title and why."""
    if row.status == "pass":
        return f"✓ {row.exercise}"
    if row.status == "not done":
        return f"✗ {row.exercise}  {NOT_DONE}"
    if row.status == "blocked":
        return f"✗ {row.exercise}  {row.error}"
    why = _ENVIRONMENTS.sub(r"\n    (\1)", row.error) \
        .replace("; expected (reference):", "\n    expected (reference):") \
        .replace("; got (your output):", "\n    got (your output):")
    title = f"  {row.title}" if row.title else ""
    return f"✗ {row.exercise}{title}\n    {why}"


STATUSES = ("pass", "not done", "blocked", "fail")


def progress(rows_by_notebook: dict[str, list[Row]]) -> pd.DataFrame:
    """The progress table: per notebook, how many exercises pass, are not done, blocked, fail."""
    counts = [{"notebook": name, "exercises": len(rows),
               **{status: sum(row.status == status for row in rows) for status in STATUSES}}
              for name, rows in rows_by_notebook.items()]
    return pd.DataFrame(counts, columns=["notebook", "exercises", *STATUSES]).set_index("notebook")


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


def check(exercise: str, namespace: dict | None = None,
          notebooks: Path = config.NOTEBOOKS_DIR) -> bool:
    """Run one exercise's visible checks here, on the live kernel, and print what passes.

    Parameters
    ----------
    exercise : str
        ``"N.M"``, as in the notebook's headings.
    namespace : dict, optional
        Where the checks run: default the notebook's own names (IPython's ``user_ns``).
    notebooks : Path
        The released notebooks, which hold the checks and their reference outputs.

    Returns
    -------
    bool
        True if every visible check printed its reference output.
    """
    if not isinstance(exercise, str):
        raise KitError(f"Write the exercise as a string, check(\"{exercise}\"): a number like 1.10 "
                       "would read as 1.1.")
    released = _released_with(exercise, notebooks)
    item = next((ex for ex in exercises(released) if ex.id == exercise), None)
    if item is None:
        raise KitError(f"Exercise {exercise} is not in {notebooks}; exercises are numbered as in "
                       "the notebooks' headings, like \"1.2\".")
    cells = {cell.id: cell for cell in released.cells}
    names = _user_names() if namespace is None else namespace
    for cell_id in item.cell_ids[1:]:
        problem = _live_problem(cells[cell_id], exercise, names)
        if problem:
            print(f"✗ {exercise}  {heading_above(released, cell_id)}\n" + textwrap.indent(problem, "    "))
            return False
    print(f"✓ {exercise}")
    return True


def _released_with(exercise: str, notebooks: Path) -> NotebookNode:
    found = config.notebooks_in(notebooks, [exercise.split(".")[0]]) if "." in exercise else []
    if not found:
        raise KitError(f"No released notebook has exercise {exercise!r}; write it as \"N.M\".")
    return nbformat.read(found[0], as_version=4)


def _user_names() -> dict:
    shell = ipython_shell()
    return shell.user_ns if shell is not None else vars(sys.modules["__main__"])


def _live_problem(cell: NotebookNode, exercise: str, namespace: dict) -> str | None:
    """Run one check cell in ``namespace``; say what went wrong, or None if it printed its reference."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(cell.source, f"<check {exercise}>", "exec"), namespace)  # noqa: S102
    except Exception as err:  # the student's code raised: say what, as grading would
        stub = unfinished(err)
        if stub:
            return NOT_DONE if stub == exercise else f"blocked by {stub} ({NOT_DONE})"
        return f"{type(err).__name__}: {err}"
    expected = "".join(output.text for output in cell.outputs  # stdout is what nbval compares
                       if output.output_type == "stream" and output.name == "stdout")
    difference = compare.compare_text(expected, printed.getvalue(), compare.tolerance_of(cell))
    if difference is None:
        return None
    return (f"output differs from the reference: line {difference.line}: {difference.reason}\n"
            f"expected (reference): {difference.expected}\ngot (your output):    {difference.got}")
