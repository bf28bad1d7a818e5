"""Grade a class's notebooks against the reference outputs with nbval.

``SUBMISSIONS_DIR`` holds one folder per student, each with that student's notebooks
(``NN_topic.ipynb``, as released). For every student and notebook:

1. The graded notebook is the released notebook with its hidden checks (reference outputs
   and check cells from ``solutions/``) with the student's exercise cells (matched by
   exercise id) and any cells the student added put in. A student cannot pass by editing
   outputs or checks.
2. nbval runs it (``--nbval-lax``, fresh kernel, per-cell timeout) in its own process; the
   notebooks run in parallel (``jobs``).
3. Each exercise passes when its cell and its own checks (visible and hidden) pass; a check
   that fails because an earlier exercise is still a stub reports "blocked by N.M". A
   missing or unreadable notebook, an endless loop or a dead kernel is recorded for that
   student; the rest of the class is still graded.

Results go to ``SUBMISSIONS_DIR/grades.csv`` (student, notebook, exercise, passed, error,
flags: what in the student's code an instructor should review, see ``flags``).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pandas as pd
from nbformat import NotebookNode

from helpers.course import config, environment, flags
from helpers.course.config import SOLUTIONS_DIR
from helpers.course.release import Exercise, exercise_id, exercises, release_notebook
from helpers.errors import KitError

GRADES_COLUMNS = ["student", "notebook", "exercise", "passed", "error", "flags"]


def graded_notebook(reference: NotebookNode, submission: NotebookNode) -> NotebookNode:
    """Merge a student's work into the released reference notebook.

    Exercise cells take the student's source (matched by exercise id, else by cell id);
    cells the student added (ids unknown to the reference) are kept, without outputs, after
    the reference cell they followed. Every other cell, and every stored output, comes from
    the reference.

    Parameters
    ----------
    reference : NotebookNode
        The released (student) version of the solution notebook, with reference outputs.
    submission : NotebookNode
        The student's notebook.

    Returns
    -------
    NotebookNode
        A new notebook; the inputs are not modified.
    """
    graded = nbformat.from_dict(reference)
    ref_ids = {cell.id for cell in reference.cells}
    by_exercise = {exercise_id(c): c for c in submission.cells if exercise_id(c) is not None}
    by_id = {c.get("id"): c for c in submission.cells}
    added_after: dict[str | None, list[NotebookNode]] = {}
    previous = None
    for cell in submission.cells:
        if cell.get("id") in ref_ids:
            previous = cell.id
        else:
            extra = nbformat.from_dict(cell)
            if extra.cell_type == "code":
                extra.outputs, extra.execution_count = [], None
            added_after.setdefault(previous, []).append(extra)

    cells = list(added_after.get(None, []))
    for cell in graded.cells:
        ex = exercise_id(cell)
        if ex is not None:
            same_cell = by_id.get(cell.id)  # a copied exercise cell keeps the id only on the original
            theirs = same_cell if same_cell is not None and exercise_id(same_cell) == ex else \
                by_exercise.get(ex) or same_cell
            if theirs is not None:
                cell.source = theirs.source
        cells.append(cell)
        cells.extend(added_after.get(cell.id, []))
    graded.cells = cells
    return graded


def _code_numbers(nb: NotebookNode) -> dict[str, int]:
    """Map cell id -> nbval's ``Cell N`` number (position among code cells)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    return {c.id: n for n, c in enumerate(code)}


def run_nbval(path: Path, timeout: float) -> dict[int, str | None]:
    """Run nbval on one notebook in a fresh process; return ``{cell number: error or None}``.

    Cells missing from the result did not run (the whole run was stopped).
    """
    report = path.with_suffix(".xml")
    ini = path.parent / "pytest.ini"
    ini.write_text("[pytest]\n")
    n_code = sum(c.cell_type == "code" for c in nbformat.read(path, as_version=4).cells)
    command = [
        sys.executable, "-m", "pytest", str(path), "-c", str(ini), "--rootdir", str(path.parent),
        "-p", "no:cacheprovider", *config.NBVAL_ARGS, f"--nbval-cell-timeout={timeout}",
        f"--junitxml={report}", "-q",
    ]
    env = config.reference_environ()
    try:
        subprocess.run(command, cwd=path.parent, env=env, capture_output=True,
                       timeout=timeout * (n_code + 2) + 60)
    except subprocess.TimeoutExpired:
        return {}
    if not report.is_file():
        return {}
    results: dict[int, str | None] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = case.get("name", "")
        if not name.startswith("Cell "):
            continue
        problem = next((child for child in case if child.tag in ("failure", "error", "skipped")),
                       None)
        if problem is None:
            results[int(name[5:])] = None
        else:
            results[int(name[5:])] = _short_reason(problem)
    return results


ENVIRONMENT_LINES = (environment.REFERENCE_LABEL, environment.RUN_LABEL)
_ANSI = re.compile(r"(?:\x1b|#x1B)\[[0-9;]*m")
_CELL_PREFIX = re.compile(r"^Cell \d+: ")
_EXCEPTION = re.compile(r"^[A-Za-z_.]*(?:Error|Exception|Interrupt|Exit)\b(?::.*)?$")


def _short_reason(problem: ET.Element) -> str:
    """One line saying why a cell failed: the exception, a timeout, or an output mismatch."""
    if problem.tag == "skipped":
        return "not run: an earlier cell timed out"
    text = _ANSI.sub("", (problem.get("message") or "") + "\n" + (problem.text or ""))
    lines = [_CELL_PREFIX.sub("", line.strip()) for line in text.splitlines() if line.strip()]
    timeouts = [line for line in lines if "Timeout" in line]
    if timeouts:
        return timeouts[0][:200]
    if any("Kernel dead" in line for line in lines):
        return "the kernel died"
    raised = [line for line in lines if _EXCEPTION.match(line)]
    if raised:
        return raised[-1][:200]
    if any("outputs differ" in line for line in lines):
        return _output_difference(lines)
    return (lines[0] if lines else problem.tag)[:200]


def _output_difference(lines: list[str]) -> str:
    """The kit's comparison (nbval prints it after "Traceback:"), with the environments if named."""
    after = lines[lines.index("Traceback:") + 1:] if "Traceback:" in lines else []
    reason = "output differs from the reference" + (f": {after[0]}"[:200] if after else "")
    environments = [line for line in after if line.startswith(ENVIRONMENT_LINES)]
    return f"{reason} [{'; '.join(environments)}]" if environments else reason


def grade_notebook(solution: NotebookNode, reference: NotebookNode, submission_path: Path | None,
                   work: Path, timeout: float) -> list[tuple[str, bool, str, str]]:
    """Grade one student's notebook; return ``(exercise, passed, error, flags)`` per exercise.

    ``reference`` is the graded version of ``solution`` (``release_notebook(..., hidden=True)``);
    ``flags`` says what in the student's code an instructor should review (see ``flags``).
    """
    items = exercises(reference)
    if submission_path is None:
        return [(ex.id, False, "notebook missing", "") for ex in items]
    try:
        submission = nbformat.read(submission_path, as_version=4)
    except Exception as err:  # any unreadable notebook is a grade, not a crash
        reason = f"not a readable notebook ({type(err).__name__})"
        return [(ex.id, False, reason, "") for ex in items]
    graded = graded_notebook(reference, submission)
    path = work / submission_path.name
    nbformat.write(graded, path)
    known = {cell.id for cell in reference.cells}
    theirs = {cell.id for cell in graded.cells if exercise_id(cell) or cell.id not in known}
    found = flags.exercise_flags(graded, reference, solution, theirs)
    return [(ex, passed, error, "; ".join(found.get(ex, [])))
            for ex, passed, error in exercise_rows(items, graded, run_nbval(path, timeout))]


def exercise_rows(items: list[Exercise], graded: NotebookNode,
                  results: dict[int, str | None]) -> list[tuple[str, bool, str]]:
    """Decide each exercise from its cells' results: ``(exercise, passed, error)``.

    An exercise passes when its cell and all its own checks ran without error; the error
    is the first one, or "blocked by N.M" when an earlier exercise is still a stub.
    """
    if not results:
        return [(ex.id, False, "grading stopped: the notebook ran out of time") for ex in items]
    numbers = _code_numbers(graded)
    rows = []
    for ex in items:
        errors = [results.get(numbers[cell_id], "not run") for cell_id in ex.cell_ids]
        failed = [e for e in errors if e is not None]
        rows.append((ex.id, not failed, _blocked(ex.id, failed[0]) if failed else ""))
    return rows


def variants_notebook(solution: NotebookNode, exercise: str,
                      variants: list[str]) -> tuple[NotebookNode, list[Exercise]]:
    """One notebook that grades several answers to one exercise in one kernel.

    The graded notebook of a student who solved everything (hidden checks included) is cut
    after the exercise's last check; the exercise's block (its cell up to its last check) is
    then repeated once per answer, with that answer as the exercise cell. Answers share the
    kernel, so they must not change what later answers use (put the solution last as well
    to show that they did not).

    Parameters
    ----------
    solution : NotebookNode
        The instructor's notebook.
    exercise : str
        The exercise id, e.g. ``"1.2"``.
    variants : list of str
        The exercise cell's source for each answer.

    Returns
    -------
    (NotebookNode, list of Exercise)
        The notebook, and for each answer the cells that decide it.
    """
    reference = release_notebook(solution, hidden=True)
    complete = graded_notebook(reference, solution)
    found = {ex.id: ex for ex in exercises(complete)}
    if exercise not in found:
        raise KitError(f"No exercise {exercise} in this notebook (it has {', '.join(found) or 'none'}).")
    target = found[exercise]
    ids = [cell.id for cell in complete.cells]
    start, end = ids.index(target.cell_ids[0]), ids.index(target.cell_ids[-1])
    cells, items = complete.cells[:start], []
    for number, source in enumerate(variants):
        for cell in complete.cells[start:end + 1]:
            repeated = nbformat.from_dict(cell)
            repeated.id = f"{cell.id}-v{number}"
            if cell.id == target.cell_ids[0]:
                repeated.source = source
            cells.append(repeated)
        items.append(Exercise(exercise, tuple(f"{cell_id}-v{number}" for cell_id in target.cell_ids)))
    complete.cells = cells
    return complete, items


def grade_variants(solution: NotebookNode, exercise: str, variants: list[str], work: Path,
                   timeout: float = config.CELL_TIMEOUT) -> list[tuple[bool, str]]:
    """Grade several answers to one exercise, as ``kit grade`` would; ``(passed, error)`` each.

    See ``variants_notebook``; the notebook runs under nbval in one fresh process.
    """
    graded, items = variants_notebook(solution, exercise, variants)
    path = Path(work) / f"variants-{exercise}.ipynb"
    nbformat.write(graded, path)
    return [(passed, error) for _, passed, error in exercise_rows(items, graded, run_nbval(path, timeout))]


_STUB = re.compile(r"NotImplementedError: exercise (?P<exercise>[\w.]+)")


def _blocked(exercise: str, error: str) -> str:
    """Say "blocked by N.M" when an exercise failed only because another one is still a stub."""
    stub = _STUB.search(error)
    if stub and stub["exercise"] != exercise:
        return f"blocked by {stub['exercise']} (not done yet)"
    return error


def grade(submissions_dir: Path, solutions_dir: Path = SOLUTIONS_DIR,
          notebook: str | None = None, jobs: int = config.GRADE_JOBS,
          timeout: float = config.CELL_TIMEOUT) -> pd.DataFrame:
    """Grade every student's notebooks; write ``grades.csv`` and return it as a DataFrame.

    Parameters
    ----------
    submissions_dir : Path
        One sub-folder per student, holding their ``NN_topic.ipynb`` files.
    solutions_dir : Path
        The instructor's solution notebooks (default: the repo's ``solutions/``).
    notebook : str, optional
        Grade only notebook ``NN`` (e.g. ``"03"``).
    jobs : int
        Notebooks graded in parallel.
    timeout : float
        Seconds allowed per cell.

    Returns
    -------
    DataFrame
        Columns ``student, notebook, exercise, passed, error, flags``, sorted.
    """
    submissions_dir = Path(submissions_dir)
    if not submissions_dir.is_dir():
        raise KitError(f"{submissions_dir} is not a folder of student submissions.")
    students = sorted(p for p in submissions_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not students:
        raise KitError(f"{submissions_dir} has no student folders (one folder per student).")
    solutions = config.notebooks_in(solutions_dir, [notebook] if notebook else None)
    if not solutions:
        raise KitError(f"No solution notebook {notebook or 'NN'}_*.ipynb in {solutions_dir}.")
    originals = {s.name: nbformat.read(s, as_version=4) for s in solutions}
    references = {name: release_notebook(nb, name, hidden=True) for name, nb in originals.items()}

    with tempfile.TemporaryDirectory(prefix="kit-grade-") as tmp:
        tasks = []
        for student in students:
            for name, reference in references.items():
                work = Path(tmp) / student.name / name.removesuffix(".ipynb")
                work.mkdir(parents=True)
                found = student / name
                tasks.append((student.name, name, reference, found if found.is_file() else None, work))
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            graded = pool.map(
                lambda t: (t[0], t[1], grade_notebook(originals[t[1]], t[2], t[3], t[4], timeout)), tasks)
            rows = [(student, name.removesuffix(".ipynb"), *result)
                    for student, name, results in graded for result in results]
    grades = pd.DataFrame(rows, columns=GRADES_COLUMNS).sort_values(
        ["student", "notebook", "exercise"], ignore_index=True)
    grades.to_csv(submissions_dir / "grades.csv", index=False)
    return grades


def flagged(grades: pd.DataFrame) -> pd.DataFrame:
    """The rows an instructor should review (non-empty ``flags``), with who, where and why."""
    return grades.loc[grades["flags"] != "", ["student", "notebook", "exercise", "flags"]]


def summary(grades: pd.DataFrame) -> pd.DataFrame:
    """Per-student table: exercises passed per notebook and in total (``passed/total``)."""
    counts = grades.groupby(["student", "notebook"])["passed"].agg(["sum", "count"])
    table = (counts["sum"].astype(str) + "/" + counts["count"].astype(str)).unstack("notebook")
    total = grades.groupby("student")["passed"].agg(["sum", "count"])
    table["total"] = total["sum"].astype(str) + "/" + total["count"].astype(str)
    return table
