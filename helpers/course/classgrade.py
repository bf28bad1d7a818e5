"""``kit grade``: grade a class, one sandboxed job per (student, notebook), resumable.

``SUBMISSIONS_DIR`` holds one folder per student with their notebooks. For each student and
notebook a *task* finds the submission (by name, else a renamed copy recognised by its
exercises), merges it into the graded notebook (``grading.graded_notebook``) and runs it in
a sandbox (``sandbox``) on a private scratch folder, which is then thrown away. Its verdicts
become a *record* (``gradebook``), written as soon as the task ends, from which
``grades.csv``, the class table and each student's feedback files are rebuilt. A task whose
submission and solution are unchanged since its record is skipped unless ``force``.

Before the first student, the solutions themselves are graded once outside the sandbox
(``prepare``): this builds every cache the notebooks read (cross-validation predictions,
Doc2Vec models and vectors) in the data folder, which the sandboxes then see read-only, and
proves the solutions pass here. Tasks run in a thread pool (``jobs``) or on a Dask cluster
(``scheduler``, see ``cluster``).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pandas as pd
from nbformat import NotebookNode

from helpers import settings
from helpers.course import cluster, config, feedback, gradebook, grading, owned, sandbox
from helpers.course.release import exercise_id, exercises, release_notebook
from helpers.errors import KitError

#: Where ``prepare`` records which solutions it graded (in the data folder, beside the caches).
PREPARED_FILE = Path("grading") / "prepared.json"
#: Seconds one cell may run when ``prepare`` grades a solution (it trains the models).
PREPARE_CELL_TIMEOUT = 3600


@dataclass(frozen=True)
class Task:
    """One (student, notebook) to grade; plain data, so it travels to a Dask worker."""

    student: str
    notebook: str
    submissions_dir: str
    solutions_dir: str
    timeout: float
    limits: sandbox.Limits = field(default_factory=sandbox.Limits)
    jobs: int = 1

    def __str__(self) -> str:
        return f"{self.student}/{self.notebook}"


def sha256_of(path: Path) -> str:
    """The sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def find_submission(folder: Path, notebook: str, wanted: set[str], others: set[str]
                    ) -> tuple[Path | None, str]:
    """The student's file for ``notebook`` and a note on how it was found.

    The file named ``notebook.ipynb`` if there is one; else a notebook whose exercise cells
    carry this notebook's exercise ids (``wanted``), e.g. ``01_naive_bayes (1).ipynb``; files
    named for another notebook (``others``) are never taken.
    """
    exact = folder / f"{notebook}.ipynb"
    if exact.is_file():
        return exact, ""
    for path in sorted(folder.glob("*.ipynb")):
        if path.stem in others:
            continue
        try:
            ids = {exercise_id(cell) for cell in nbformat.read(path, as_version=4).cells}
        except Exception:  # an unreadable stray notebook is just not this one
            continue
        if wanted and wanted & ids:
            return path, f"graded '{path.name}' (no {exact.name}; matched by its exercises)"
    return None, ""


def grade_task(task: Task) -> dict:
    """Grade one (student, notebook): return its record (see ``gradebook``)."""
    solutions = Path(task.solutions_dir)
    solution = nbformat.read(solutions / f"{task.notebook}.ipynb", as_version=4)
    reference = release_notebook(solution, task.notebook, hidden=True)
    others = {p.stem for p in config.notebooks_in(solutions)} - {task.notebook}
    folder = Path(task.submissions_dir) / task.student
    path, note = find_submission(folder, task.notebook, {ex.id for ex in exercises(reference)}, others)
    record = _record(task, solutions, path, note)
    if path is None:
        return _without_run(record, solution, "notebook missing")
    try:
        submission = nbformat.read(path, as_version=4)
    except Exception as err:  # any unreadable notebook is a grade, not a crash
        return _without_run(record, solution, f"not a readable notebook ({type(err).__name__})")
    scratch = Path(tempfile.mkdtemp(prefix="kit-grade-"))
    try:
        with _slots(task.jobs).take() as slot:
            run, entries = grading.grade_notebook(solution, reference, submission, scratch,
                                                  task.timeout, task.limits, slot)
    except KitError:
        raise
    except Exception as err:  # malformed metadata and the like: this student's row says so
        return _without_run(record, solution, f"the notebook could not be graded ({type(err).__name__}: "
                            f"{str(err)[:160]})")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    outcome = run.outcome
    record.update(problem=run.problem, exercises=entries, sandbox=sandbox.kind(),
                  seconds=round(outcome.seconds, 1) if outcome else None,
                  cpu_seconds=round(outcome.cpu_seconds, 1) if outcome else None,
                  peak_memory_mb=round(outcome.peak_memory_mb, 1) if outcome else None)
    return record


def _record(task: Task, solutions: Path, path: Path | None, note: str) -> dict:
    return {"version": gradebook.RECORD_VERSION, "student": task.student, "notebook": task.notebook,
            "file": path.name if path else None, "note": note,
            "submission_sha256": sha256_of(path) if path else None,
            "solution_sha256": sha256_of(solutions / f"{task.notebook}.ipynb"),
            "graded_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "sandbox": "none", "seconds": None, "cpu_seconds": None, "peak_memory_mb": None,
            "problem": "", "exercises": []}


def _without_run(record: dict, solution: NotebookNode, problem: str) -> dict:
    points = grading.points_of(solution)
    record["problem"] = problem
    record["exercises"] = [
        {"exercise": ex, "title": "", "points": value, "passed": False, "status": "failed",
         "error": problem, "check": "", "hidden": False, "expected": "", "got": "",
         "traceback": "", "flags": ""} for ex, value in points.items()]
    return record


_SLOTS: dict[int, sandbox.Slots] = {}


def _slots(jobs: int) -> sandbox.Slots:
    """This process's job slots (one set per ``jobs``, shared by its threads)."""
    return _SLOTS.setdefault(jobs, sandbox.Slots(jobs))


def prepared_path() -> Path:
    """The record of solutions ``prepare`` graded, in the data folder."""
    return settings.data_dir() / PREPARED_FILE


def prepare(solutions_dir: Path = config.SOLUTIONS_DIR, notebooks: list[str] | None = None,
            timeout: float = PREPARE_CELL_TIMEOUT, force: bool = False) -> list[str]:
    """Grade the solutions once, outside the sandbox: build the caches, prove they pass here.

    Parameters
    ----------
    solutions_dir : Path
        The solution notebooks.
    notebooks : list of str, optional
        Names (``01_naive_bayes``) to prepare; default all with exercises.
    timeout : float
        Seconds one cell may run.
    force : bool
        Grade again solutions already prepared (unchanged since).

    Returns
    -------
    list of str
        The notebooks graded now.

    Raises
    ------
    KitError
        If a solution does not get full marks here: grading students against it would be
        unfair until that is mended.
    """
    done = _read_prepared()
    graded_now = []
    for path in config.notebooks_in(solutions_dir):
        if notebooks is not None and path.stem not in notebooks:
            continue
        solution = nbformat.read(path, as_version=4)
        digest = sha256_of(path)
        if not exercises(solution) or (done.get(path.stem) == digest and not force):
            continue
        print(f"kit grade: preparing {path.stem} (its solution builds the shared caches) ...",
              file=sys.stderr, flush=True)
        reference = release_notebook(solution, path.stem, hidden=True)
        with tempfile.TemporaryDirectory(prefix="kit-prepare-") as scratch:
            run, entries = grading.grade_notebook(solution, reference, solution, Path(scratch), timeout)
        failing = [f"{e['exercise']}: {e['error']}" for e in entries if not e["passed"]]
        if failing or run.problem:
            raise KitError(f"The solution of {path.stem} does not pass here, so students cannot be "
                           f"graded against it: {'; '.join(failing) or run.problem}")
        done[path.stem] = digest
        _write_prepared(done)
        graded_now.append(path.stem)
    return graded_now


def _read_prepared() -> dict[str, str]:
    try:
        found = json.loads(prepared_path().read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _write_prepared(done: dict[str, str]) -> None:
    from helpers.fetch import atomic_write
    atomic_write(prepared_path(), lambda tmp: tmp.write_text(json.dumps(done, indent=1, sort_keys=True)))


def students_in(submissions_dir: Path, student: str | None = None) -> list[Path]:
    """The student folders: every sub-folder but hidden ones and the kit's ``feedback/``."""
    submissions_dir = Path(submissions_dir)
    if not submissions_dir.is_dir():
        raise KitError(f"{submissions_dir} is not a folder of student submissions.")
    found = sorted(p for p in submissions_dir.iterdir()
                   if p.is_dir() and not p.name.startswith(".") and p.name != gradebook.FEEDBACK_DIR)
    if student is not None:
        found = [p for p in found if p.name == student]
        if not found:
            raise KitError(f"No student folder {student!r} in {submissions_dir}.")
    if not found:
        raise KitError(f"{submissions_dir} has no student folders (one folder per student).")
    return found


def grade(submissions_dir: Path, solutions_dir: Path = config.SOLUTIONS_DIR,
          notebook: str | None = None, jobs: int = config.GRADE_JOBS,
          timeout: float = config.CELL_TIMEOUT, *, student: str | None = None, force: bool = False,
          limits: sandbox.Limits | None = None, scheduler: str | cluster.Scheduler | None = None,
          report: bool = False) -> pd.DataFrame:
    """Grade a class; keep a record per (student, notebook); write grades.csv and feedback.

    Parameters
    ----------
    submissions_dir : Path
        One sub-folder per student, holding their ``NN_topic.ipynb`` files.
    solutions_dir : Path
        The instructor's solution notebooks (default: the repo's ``solutions/``).
    notebook : str, optional
        Grade only notebook ``NN`` (e.g. ``"03"``).
    jobs : int
        Notebooks graded at once on this machine (without ``scheduler``).
    timeout : float
        Seconds allowed per cell.
    student : str, optional
        Grade only this student's folder.
    force : bool
        Grade again what is graded already (same submission, same solution).
    limits : sandbox.Limits, optional
        What each job may use (default ``sandbox.Limits()``).
    scheduler : str, optional
        ``local:N`` or a Dask scheduler's address (see ``cluster``).
    report : bool
        Print a line as each task ends.

    Returns
    -------
    DataFrame
        Every kept record's rows (``gradebook.GRADES_COLUMNS``), this run's and earlier ones.
    """
    submissions_dir, solutions_dir = Path(submissions_dir).resolve(), Path(solutions_dir).resolve()
    students = students_in(submissions_dir, student)
    solutions = config.notebooks_in(solutions_dir, [notebook] if notebook else None)
    if not solutions:
        raise KitError(f"No solution notebook {notebook or 'NN'}_*.ipynb in {solutions_dir}.")
    graded = [p for p in solutions if exercises(nbformat.read(p, as_version=4))]
    kept = {(r["student"], r["notebook"]): r for r in gradebook.read_records(submissions_dir)}
    # a Dask worker grades one task at a time on all its cores; threads here share the cores
    per_machine = 1 if scheduler else jobs
    tasks = []
    for folder in students:
        for path in graded:
            if not force and _unchanged(kept.get((folder.name, path.stem)), folder, path):
                continue
            tasks.append(Task(folder.name, path.stem, str(submissions_dir), str(solutions_dir),
                              timeout, limits or sandbox.Limits(), per_machine))
    if tasks:
        prepare(solutions_dir, sorted({t.notebook for t in tasks}))
        sandbox.kind()  # says once, before any student, if the sandbox is the weaker one

    # grades.csv follows each result, unless it is the user's: then it is written once, beside
    stream = not owned.changed_since_written(submissions_dir / gradebook.GRADES_FILE)

    def keep(task: Task, record: dict) -> None:
        gradebook.write_record(submissions_dir, record)
        feedback.write_feedback(submissions_dir, record)
        if stream:
            gradebook.write_grades(submissions_dir, gradebook.read_records(submissions_dir))
        if report:
            got = sum(e["passed"] for e in record["exercises"])
            print(f"{task.student} {task.notebook}: {got}/{len(record['exercises'])}"
                  + (f" ({record['problem']})" if record["problem"] else ""), flush=True)

    cluster.run_tasks(grade_task, tasks, scheduler=scheduler, jobs=jobs, on_result=keep)
    records = gradebook.read_records(submissions_dir)
    written = gradebook.write_grades(submissions_dir, records)
    print(owned.where_written("grades", submissions_dir / gradebook.GRADES_FILE, written))
    return gradebook.grades_table(records)


def _unchanged(record: dict | None, folder: Path, solution: Path) -> bool:
    """True when ``record`` graded the file that would be graded now, against this solution."""
    if record is None:
        return False
    path = folder / record["file"] if record.get("file") else None
    submission = sha256_of(path) if path is not None and path.is_file() else None
    if record.get("file") is None and any(folder.glob("*.ipynb")):
        return False  # a notebook may have arrived since it was graded missing
    return gradebook.is_current(record, submission, sha256_of(solution))
