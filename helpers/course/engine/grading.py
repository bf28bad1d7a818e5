"""The grading engine: merge, run, decide, once for every caller.

``grade`` is the one way a notebook gets its verdicts: ``kit check`` (``check``, against the
release), ``kit grade`` (``classgrade``, against the release with hidden checks, in a
sandbox, through ``grade_notebook``) and the tests' harness of student mistakes all call it.

1. ``merge.graded_notebook`` puts the student's exercise cells, and the cells they added,
   into the reference notebook (its checks and reference outputs are the reference's).
2. ``nbval_run.run_notebook`` runs it under nbval in its own process (in a sandbox when
   grading a class); the kit's plugin reports how each cell ended, as data.
3. ``verdict.decide`` gives each exercise one ``Verdict``: passed, not done, blocked by
   another exercise, or failed with why; every reader renders from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from helpers.course.engine import flags
from helpers.course.engine.limits import UNSANDBOXED, Job
from helpers.course.engine.nbval_run import NOTEBOOK_FILE, NotebookRun, run_notebook
from helpers.course.engine.verdict import Verdict, decide
from helpers.course.notebook.cells import Exercise, check_points_of, exercise_id, exercises, points_of
from helpers.course.notebook.merge import graded_notebook, locate
from helpers.errors import KitError


class RunNotStarted(KitError):
    """The grader could not run a notebook (its sandbox or process did not start): the
    grader's failure, whatever the notebook holds (any other error while grading one is
    raised on that notebook)."""


def grade(graded: NotebookNode, work: Path, timeout: float, *, items: Sequence[Exercise] | None = None,
          points: Mapping[str, float] | None = None, check_points: Mapping[str, float] | None = None,
          found_flags: Mapping[str, Sequence[str]] | None = None, added: Iterable[str] = (),
          job: Job = UNSANDBOXED, progress: str = "") -> tuple[NotebookRun, list[Verdict]]:
    """Run a graded notebook under nbval and decide each exercise.

    Parameters
    ----------
    graded : NotebookNode
        The notebook to run (``merge.graded_notebook`` of a reference and a submission).
    work : Path
        A scratch folder for the run.
    timeout : float
        Seconds one cell may run.
    items : sequence of Exercise, optional
        The exercises to decide (default every exercise of ``graded``).
    points, check_points, found_flags : mapping, optional
        Each exercise's points (default 1), the points of the checks that declare their own
        (``check_points_of``) and flags (see ``verdict.decide``).
    added : iterable of str
        Ids of the cells the student added.
    job : Job
        Its sandbox (none by default), slot and time in all (see ``nbval_run.run_notebook``).
    progress : str
        Without a sandbox, show a bar of the cells as they run, with this label (the
        student's notebook's name).

    Returns
    -------
    (NotebookRun, list of Verdict)
        How the run went, and one verdict per exercise.

    Raises
    ------
    RunNotStarted
        If the notebook could not be run at all (its sandbox or process did not start).
    """
    path = Path(work) / NOTEBOOK_FILE
    nbformat.write(graded, path)
    try:
        run = run_notebook(path, timeout, job, progress)
    except Exception as err:  # the grader's machinery (its sandbox, the machine), not the notebook
        raise RunNotStarted(f"the grader could not run the notebook ({type(err).__name__}: {err})") from err
    return run, decide(graded, run.results, run.problem_line, items=items, points=points,
                       check_points=check_points, flags=found_flags, added=added)


def grade_notebook(solution: NotebookNode, reference: NotebookNode, submission: NotebookNode,
                   work: Path, timeout: float, job: Job = UNSANDBOXED) -> tuple[NotebookRun, list[Verdict]]:
    """Grade one student's notebook in ``work`` (a scratch folder): ``kit grade``'s call.

    ``reference`` is the graded version of ``solution`` (``release_notebook(..., hidden=True)``).
    With ``job.limits`` the notebook runs in a sandbox (see ``sandbox``), for at most
    ``job.budget`` seconds in all (default: every cell its ``timeout``). The verdicts carry the solution's
    points and the flags an instructor should look at (``flags``).
    """
    graded = graded_notebook(reference, submission)
    known = {cell.id for cell in reference.cells}
    theirs = {cell.id for cell in graded.cells if exercise_id(cell) or cell.id not in known}
    try:
        found = flags.exercise_flags(graded, reference, solution, theirs)
    except (RecursionError, MemoryError, ValueError):  # code too deep to walk: flag, keep verdicts
        found = {ex.id: ["code too deeply nested to look through"] for ex in exercises(reference)}
    added = theirs - {cell.id for cell in graded.cells if exercise_id(cell)}
    run, verdicts = grade(graded, work, timeout, points=points_of(solution),
                          check_points=check_points_of(solution), found_flags=found, added=added, job=job)
    return run, located(verdicts, reference, submission)


def located(verdicts: Sequence[Verdict], reference: NotebookNode, submission: NotebookNode) -> list[Verdict]:
    """The verdicts with a note where an exercise was not found in its own cell (``merge.locate``)."""
    where = locate(reference, submission)
    return [replace(v, note=where[v.exercise].note) if v.exercise in where else v for v in verdicts]


