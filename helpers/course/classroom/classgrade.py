"""``kit grade``: grade a class, one sandboxed job per (student, notebook), resumable.

``SUBMISSIONS_DIR`` holds one folder per student with their notebooks. For each student and
notebook a *task* finds the submission (by name, else a renamed copy recognised by its
exercises), merges it into the graded notebook (``merge.graded_notebook``) and runs it in
a sandbox (``sandbox``) on a private scratch folder, which is then thrown away. Its verdicts
become a *record* (``gradebook``), written as soon as the task ends, from which
``grades.csv``, the class table and each student's feedback files are rebuilt. The written
answers are collected into one sheet per notebook for marking by hand (``answers``). A task whose
submission and solution are unchanged since its record is skipped unless ``force``.

Before the first student, the solutions themselves are graded once outside the sandbox
(``prepare``): this builds every cache the notebooks read (cross-validation predictions,
Doc2Vec models and vectors) in the data folder, which the sandboxes then see read-only, and
proves the solutions pass here. Tasks run in a thread pool (``jobs``) or on a Dask cluster
(``scheduler``, see ``cluster``).
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import nbformat
import pandas as pd
from nbformat import NotebookNode

from helpers import files, settings
from helpers.course import config
from helpers.course.classroom import answers, cluster, feedback, gradebook, layout, overrides
from helpers.course.classroom.gradebook import exercise_key
from helpers.course.classroom.record import Record
from helpers.course.engine import grading, sandbox
from helpers.course.engine.limits import Job
from helpers.course.engine.nbval_run import NotebookRun
from helpers.course.engine.verdict import Problem, Status, Verdict
from helpers.course.notebook.cells import exercise_id, exercises
from helpers.course.notebook.release import manifest, release_notebook
from helpers.course.safe_text import printable
from helpers.errors import KitError
from helpers.log import LOGGER

#: Where ``prepare`` records which solutions it graded (in the data folder, beside the caches).
PREPARED_FILE = Path("grading") / "prepared.json"
#: Seconds one cell may run when ``prepare`` grades a solution (it trains the models).
PREPARE_CELL_TIMEOUT = 3600
#: A student's whole notebook may take this many times what the solution took in
#: ``prepare`` (caches built), and at least BUDGET_FLOOR seconds.
BUDGET_FACTOR = 10
BUDGET_FLOOR = 600
#: Larger files are not read as notebooks (a student's folder may hold anything).
MAX_NOTEBOOK_MB = 50
#: What a record says of a notebook the kit raised on, and the most characters of the error kept.
NOT_GRADED, ERROR_CHARS = "the notebook could not be graded", 160
#: An exit status above this is a process killed by a signal (128 + its number, as a shell or
#: bubblewrap reports it); below 0, as Python reports it.
SIGNALLED = 128
#: Why a student folder with an odd name is left out, and what to do.
ODD_FOLDER = ("its name is not a plain file name as it is (bytes that are not UTF-8, control or "
              "escape characters, a backslash); rename it and grade again")


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


@dataclass(frozen=True)
class ClassGrading:
    """What ``grade`` did.

    Attributes
    ----------
    records : list of Record
        Every usable record of the class, this run's and earlier ones, with the instructor's
        corrections (``gradebook.read_graded``).
    graded : list of Record
        This run's records, as they were written (in the order the tasks ended).
    grades : Path
        Where ``grades.csv`` was written (beside it when the instructor edited it).
    sheets : list of (str, Path)
        Each notebook whose written answers were collected, and where its sheet was written.
    """

    records: list[Record]
    graded: list[Record]
    grades: Path
    sheets: list[tuple[str, Path]]

    @property
    def table(self) -> pd.DataFrame:
        """``gradebook.grades_table`` of ``records``: one row per student, notebook and exercise."""
        return gradebook.grades_table(self.records)


def sha256_of(path: Path) -> str:
    """The sha256 of a file's bytes."""
    return files.sha256sum(Path(path))


def find_submission(folder: Path, notebook: str, wanted: set[str], others: Mapping[str, set[str]]
                    ) -> tuple[Path | None, str, str]:
    """The student's file for ``notebook``, a note on how it was found, and why none is graded.

    The file named ``notebook.ipynb`` if there is one and it does not hold another notebook's
    exercises instead of this one's (``wanted``): a notebook saved under the wrong name is not
    run. Else, of the files whose exercise cells carry this notebook's exercise ids (e.g.
    ``01_naive_bayes (1).ipynb``), the one with the most of them, then the newest; files named
    for another notebook (keys of ``others``, each with its exercise ids) and files over
    ``MAX_NOTEBOOK_MB`` are never taken, but one of them holding this notebook's exercises is
    named in the problem. The note names newer files that also hold this notebook's exercises.

    Returns
    -------
    (Path or None, str, str)
        The file to grade (None: none), the note, and the problem when there is none to grade.
    """
    exact = folder / f"{notebook}.ipynb"
    misnamed = ""
    if exact.is_file():
        ids = _exercise_ids(exact)
        theirs = [(name, sorted(ids & held, key=exercise_key)) for name, held in others.items() if ids & held]
        if wanted & ids or not theirs:
            newer = [path.name for path in _files(folder) if path != exact and path.stem not in others
                     and path.stat().st_mtime > exact.stat().st_mtime and wanted & _exercise_ids(path)]
            note = f"also holding its exercises, newer than {exact.name}: {', '.join(newer)}" if newer else ""
            return exact, note, ""
        name, shared = theirs[0]
        misnamed = f"{exact.name} holds {name}'s exercises ({', '.join(shared)}), not this notebook's"
    holding = sorted(((len(wanted & _exercise_ids(path)), path.stat().st_mtime, path.name, path)
                      for path in _files(folder) if path != exact and path.stem not in others
                      and wanted & _exercise_ids(path)), reverse=True)
    if not holding:
        if misnamed:
            return None, "", misnamed
        elsewhere = [path.name for path in _files(folder)
                     if path.stem in others and wanted & _exercise_ids(path)]
        if not elsewhere:
            return None, "", "notebook missing"
        hint = f"{elsewhere[0]} holds this notebook's exercises: rename it {exact.name}"
        return None, "", f"notebook missing ({hint})"
    chosen = holding[0][3]
    rest = [entry[2] for entry in holding[1:]]
    also = f"; also holding its exercises: {', '.join(rest)}" if rest else ""
    why = misnamed or f"no {exact.name}"
    return chosen, f"graded '{chosen.name}' ({why}; matched by its exercises{also})", ""


def _files(folder: Path) -> list[Path]:
    """The notebook files in a student's folder (folders named like notebooks are not files)."""
    return sorted(path for path in folder.glob("*.ipynb") if path.is_file())


def _exercise_ids(path: Path) -> set[str]:
    """The exercise ids a student's file holds (none for a file too large or unreadable)."""
    try:
        info = path.stat()
    except OSError:
        return set()
    if info.st_size > MAX_NOTEBOOK_MB * 2**20:
        return set()
    return set(_read_ids(path, info.st_mtime_ns, info.st_size, info.st_ino))


@functools.lru_cache(maxsize=4096)
def _read_ids(path: Path, mtime_ns: int, size: int, inode: int) -> frozenset[str]:
    """A file's exercise ids, read once per version of it (its time, size and inode)."""
    try:
        cells = nbformat.read(path, as_version=4).cells
        return frozenset(found for cell in cells if (found := exercise_id(cell)) is not None)
    except Exception:  # an unreadable stray notebook is just not this one
        return frozenset()


def grade_task(task: Task) -> Record:
    """Grade one (student, notebook): return its record.

    Whatever the submission makes the kit raise becomes that student's record (the notebook
    could not be graded: ``Problem.NOT_MERGED``), never an error that stops the class; a run
    the grader could not start is ``Problem.NOT_STARTED``, graded again next time. Only a
    solution the kit cannot use raises: that is the instructor's error.
    """
    solutions = Path(task.solutions_dir)
    solution = nbformat.read(solutions / f"{task.notebook}.ipynb", as_version=4)
    reference = release_notebook(solution, task.notebook, hidden=True)
    grading.points_of(solution)  # a malformed solution is the instructor's error: raise it here
    record = _record(task, solutions, None, "")
    try:
        path, note, missing = find_submission(Path(task.submissions_dir) / task.student, task.notebook,
                                              {ex.id for ex in exercises(reference)},
                                              _others(solutions / f"{task.notebook}.ipynb"))
        record = _record(task, solutions, path, note)
        return _graded(task, solution, reference, record, path, missing)
    except grading.RunNotStarted as err:
        return _without_run(record, solution, Problem.NOT_STARTED, f"grading could not start: {err}")
    except Exception as err:  # the student's notebook made the kit raise: their record says so
        return _without_run(record, solution, Problem.NOT_MERGED, could_not_be_graded(err))


def could_not_be_graded(error: Exception) -> str:
    """The problem line of a notebook the kit raised on: ``the notebook could not be graded
    (ValueError: ...)``."""
    return f"{NOT_GRADED} ({type(error).__name__}: {str(error)[:ERROR_CHARS]})"


def _graded(task: Task, solution: NotebookNode, reference: NotebookNode, record: Record, path: Path | None,
            missing: str) -> Record:
    """The record of the submission found at ``path`` (None: ``missing`` says why none was)."""
    if path is None:
        return _without_run(record, solution, Problem.MISSING, missing)
    if path.stat().st_size > MAX_NOTEBOOK_MB * 2**20:
        return _without_run(record, solution, Problem.TOO_LARGE, f"the notebook is over {MAX_NOTEBOOK_MB} MB")
    try:
        submission = nbformat.read(path, as_version=4)
    except Exception as err:  # any unreadable notebook is a grade, not a crash
        return _without_run(record, solution, Problem.UNREADABLE,
                            f"not a readable notebook ({type(err).__name__})")
    scratch = Path(tempfile.mkdtemp(prefix="kit-grade-"))
    try:
        with _slots(task.jobs).take() as slot:
            job = Job(task.limits, slot, _budget(task.notebook))
            run, verdicts = grading.grade_notebook(solution, reference, submission, scratch,
                                                   task.timeout, job)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    outcome = run.outcome
    return replace(record, problem=_whose(run), problem_line=run.problem_line, exercises=tuple(verdicts),
                   sandbox=sandbox.kind(), seconds=round(outcome.seconds, 1) if outcome else None,
                   cpu_seconds=round(outcome.cpu_seconds, 1) if outcome else None,
                   peak_memory_mb=round(outcome.peak_memory_mb, 1) if outcome else None)


#: pytest's status when interrupted (SIGINT, which student code can send the grading process)
#: or when it could not collect the notebook (the student's notebook too).
PYTEST_INTERRUPTED = 2


def _whose(run: NotebookRun) -> Problem:
    """The run's problem, with a run that ended abnormally before reporting any cell, and was
    not killed, put down to the grader (``NOT_STARTED``: pytest or its plugin could not run
    the notebook). A run killed or interrupted by a signal (the student's code signalling the
    grading process) or one that died after its cells began to report stays ``RUN_FAILED``,
    the submission's."""
    outcome = run.outcome
    killed = outcome is not None and (outcome.returncode < 0 or outcome.returncode > SIGNALLED
                                      or outcome.returncode == PYTEST_INTERRUPTED)
    if run.problem is Problem.RUN_FAILED and not run.results and not killed:
        return Problem.NOT_STARTED
    return run.problem


def _budget(notebook: str) -> float | None:
    """Seconds a student's run of ``notebook`` may take in all (from what ``prepare`` measured)."""
    seconds = _read_prepared().get(notebook, {}).get("seconds")
    return max(BUDGET_FLOOR, BUDGET_FACTOR * seconds) if seconds else None


def _record(task: Task, solutions: Path, path: Path | None, note: str) -> Record:
    return Record(task.student, task.notebook, file=path.name if path else None, note=note,
                  submission_sha256=sha256_of(path) if path else None,
                  solution_sha256=sha256_of(solutions / f"{task.notebook}.ipynb"),
                  graded_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"))


def _without_run(record: Record, solution: NotebookNode, problem: Problem, line: str) -> Record:
    verdicts = tuple(Verdict(ex, Status.FAILED, line, points=value)
                     for ex, value in grading.points_of(solution).items())
    return replace(record, problem=problem, problem_line=line, exercises=verdicts)


_SLOTS: dict[int, sandbox.Slots] = {}
_SLOTS_LOCK = threading.Lock()


def _slots(jobs: int) -> sandbox.Slots:
    """This process's job slots, shared by its threads. A Dask worker of a ``local:N``
    cluster (named 0..N-1) takes its own share of the cores."""
    with _SLOTS_LOCK:
        if jobs not in _SLOTS:
            _SLOTS[jobs] = sandbox.Slots(jobs, only=_dask_worker_number())
        return _SLOTS[jobs]


def _dask_worker_number() -> int | None:
    """This process's number in a local Dask cluster, or None outside one."""
    if "distributed" not in sys.modules:
        return None
    from distributed import get_worker
    try:
        name = get_worker().name
    except ValueError:
        return None
    return name if isinstance(name, int) else None


def prepared_path() -> Path:
    """The record of solutions ``prepare`` graded, in the data folder."""
    return settings.data_dir() / PREPARED_FILE


def library_digest(root: Path = settings.REPO_ROOT / "helpers") -> str:
    """The digest of the course library's code (``helpers/`` but its tooling, ``helpers/course/``).

    The caches a solution's preparation leaves are built by this code (a cache a new version
    adds, or computes otherwise), so a solution prepared under another library is prepared
    again. The digest of its ``release.manifest`` (line endings aside).
    """
    code = {path.relative_to(root).as_posix(): path.read_bytes()
            for path in root.rglob("*.py") if path.relative_to(root).parts[0] != "course"}
    return hashlib.sha256(manifest(code).encode()).hexdigest()


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
        Grade again solutions already prepared (each unchanged since, and the library too).

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
    library = library_digest()
    graded_now = []
    for path in config.notebooks_in(solutions_dir):
        if notebooks is not None and path.stem not in notebooks:
            continue
        solution = nbformat.read(path, as_version=4)
        digest = sha256_of(path)
        entry = done.get(path.stem, {})
        if not exercises(solution) or (entry.get("sha256") == digest and entry.get("library") == library
                                       and not force):
            continue
        LOGGER.info(f"kit grade: preparing {path.stem} (its solution builds the shared caches) ...")
        reference = release_notebook(solution, path.stem, hidden=True)
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="kit-prepare-") as scratch, settings.strict_caches_set():
            run, verdicts = grading.grade_notebook(solution, reference, solution, Path(scratch), timeout)
        failing = [f"{v.exercise}: {v.reason}" for v in verdicts if not v.passed]
        if failing or run.problem is not Problem.NONE:
            raise KitError(f"The solution of {path.stem} does not pass here, so students cannot be "
                           f"graded against it: {'; '.join(failing) or run.problem_line}")
        _record_prepared(path.stem, {"sha256": digest, "library": library,
                                     "seconds": round(time.monotonic() - started, 1)})
        graded_now.append(path.stem)
    return graded_now


def _read_prepared() -> dict[str, dict]:
    """``{notebook: {"sha256": solution's digest, "library": library_digest(), "seconds": its run}}``;
    {} if unreadable."""
    try:
        found = json.loads(prepared_path().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {name: entry for name, entry in found.items() if isinstance(entry, dict)}


def _record_prepared(notebook: str, entry: dict) -> None:
    """Add one notebook to the record, keeping what another ``prepare`` running at the same
    time recorded meanwhile (read and written under the record's lock)."""
    path = prepared_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with files.file_lock(path.with_name(f".{path.name}.lock")):
        done = {**_read_prepared(), notebook: entry}
        text = json.dumps(done, indent=1, sort_keys=True)
        files.atomic_write(path, lambda tmp: tmp.write_text(text))


def students_in(submissions_dir: Path, student: str | None = None) -> list[Path]:
    """The student folders: every sub-folder but hidden ones and the kit's ``feedback/``.

    A folder without a notebook is a student who handed nothing in, but a class where no
    folder holds one is refused: it is some other folder, not a class's submissions. A folder
    whose name is not a plain name (``layout.is_plain_name``: bytes that are not UTF-8, control
    or escape characters) is left out, and ``odd_folders`` names it: the rest of the class is
    graded.
    """
    submissions_dir = Path(submissions_dir)
    if not submissions_dir.is_dir():
        raise KitError(f"{submissions_dir} is not a folder of student submissions.")
    found = layout.student_folders(submissions_dir)
    if student is not None:
        found = [p for p in found if p.name == student]
        if not found:
            raise KitError(f"No student folder {student!r} in {submissions_dir}.")
    if not found:
        raise KitError(f"{submissions_dir} has no student folders (one folder per student).")
    if student is None and not any(any(folder.glob("*.ipynb")) for folder in found):
        raise KitError(f"None of the {len(found)} folder(s) in {submissions_dir} holds a notebook, so it is "
                       "not a folder of submissions: give the folder that holds one folder per student, "
                       "each with the student's .ipynb files.")
    return found


def odd_folders(submissions_dir: Path) -> list[str]:
    """The folders ``students_in`` leaves out for their names, each as a line that names it
    (``repr``, so no byte of it reaches a terminal raw) and says what to do."""
    odd = sorted(path.name for path in Path(submissions_dir).iterdir()
                 if layout.is_student_folder(path) and not layout.is_plain_name(path.name))
    return [f"kit grade: the folder {name!r} is not graded: {ODD_FOLDER}." for name in odd]


def grade(submissions_dir: Path, solutions_dir: Path = config.SOLUTIONS_DIR,
          notebook: str | None = None, jobs: int = config.GRADE_JOBS,
          timeout: float = config.CELL_TIMEOUT, *, student: str | None = None, force: bool = False,
          limits: sandbox.Limits | None = None, scheduler: str | cluster.Scheduler | None = None,
          on_graded: Callable[[Task, Record], None] | None = None) -> ClassGrading:
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
    on_graded : callable, optional
        Called with each task and its record as soon as the record is written.

    Returns
    -------
    ClassGrading
        The class's records, this run's, and the files written.
    """
    submissions_dir, solutions_dir = Path(submissions_dir).resolve(), Path(solutions_dir).resolve()
    students = students_in(submissions_dir, student)
    for line in odd_folders(submissions_dir) if student is None else ():
        LOGGER.warning(line)
    solutions = config.notebooks_in(solutions_dir, [notebook] if notebook else None)
    if not solutions:
        raise KitError(f"No solution notebook {notebook or 'NN'}_*.ipynb in {solutions_dir}.")
    graded = [p for p in solutions if exercises(nbformat.read(p, as_version=4))]
    kept = {(r.student, r.notebook): r for r in gradebook.read_records(submissions_dir)}
    # the instructor's files are checked before any run: an error in them stops nothing midway
    corrections = overrides.read_overrides(submissions_dir)
    overrides.check_overrides(corrections, {path.stem: grading.points_of(nbformat.read(path, as_version=4))
                                          for path in graded})
    marks = answers.marked(submissions_dir)
    # jobs running at once on one machine share its cores: threads here, a local cluster's
    # workers, or one worker per machine of a cluster elsewhere
    if isinstance(scheduler, str):
        scheduler = cluster.parse_scheduler(scheduler)
    per_machine = jobs if scheduler is None else scheduler.workers or 1
    tasks = []
    for folder in students:
        for path in graded:
            if not force and _unchanged(kept.get((folder.name, path.stem)), folder, path):
                continue
            tasks.append(Task(folder.name, path.stem, str(submissions_dir), str(solutions_dir),
                              timeout, limits or sandbox.Limits(), per_machine))
    if tasks:
        prepare(solutions_dir, sorted({t.notebook for t in tasks if _handed_in(t)}))

    graded_now: list[Record] = []

    def keep(task: Task, record: Record) -> None:
        try:
            record = _written(submissions_dir, record, corrections, marks)
        except Exception as err:  # writing what one notebook made the kit raise: its record says so
            solution = nbformat.read(solutions_dir / f"{task.notebook}.ipynb", as_version=4)
            record = _written(submissions_dir, _crashed(record, solution, err), corrections, marks)
        graded_now.append(record)
        if on_graded is not None:
            on_graded(task, record)

    try:
        with sandbox.stopping_together():  # the jobs run in sessions of their own
            # (kind says once if the sandbox is the weaker one)
            if tasks and sandbox.kind() == sandbox.BUBBLEWRAP:
                sandbox.self_test(settings.data_dir())
            cluster.run_tasks(grade_task, tasks, scheduler=scheduler, jobs=jobs, on_result=keep)
    except KeyboardInterrupt:
        _grades_after_a_stop(submissions_dir)
        raise
    # once per run (each record and feedback file is written as it comes): linear in the class
    records = gradebook.read_graded(submissions_dir)
    written = gradebook.write_grades(submissions_dir, records)
    return ClassGrading(records, graded_now, written, write_answer_sheets(submissions_dir, solutions))


def _grades_after_a_stop(submissions_dir: Path) -> None:
    """Rebuild the grades table from what was graded before a stop; the stop is what the user sees."""
    try:
        gradebook.write_grades(submissions_dir, gradebook.read_graded(submissions_dir))
    except (KitError, OSError) as err:
        LOGGER.warning(f"{layout.GRADES_FILE} not rebuilt after the stop ({err}); `kit grade --summary` "
                       "rebuilds it.")


def _written(submissions_dir: Path, record: Record, corrections: pd.DataFrame, marks: pd.DataFrame) -> Record:
    """Write a record and its student's feedback; return it as stored (every text printable)."""
    record = record.as_stored()
    gradebook.write_record(submissions_dir, record)
    [corrected] = overrides.with_overrides([record], corrections, complain=False)
    feedback.write_feedback(submissions_dir, corrected, marks)
    return record


def _crashed(record: Record, solution: NotebookNode, error: Exception) -> Record:
    """What is left of a record the kit raised on while writing it: who, which file, and that
    the notebook could not be graded (final while the file is unchanged, like any other)."""
    file = printable(record.file) if record.file is not None else None
    kept = Record(record.student, record.notebook, file, record.solution_sha256, record.graded_at,
                  submission_sha256=record.submission_sha256)
    return _without_run(kept, solution, Problem.NOT_MERGED, could_not_be_graded(error))


def write_answer_sheets(submissions_dir: Path, solutions: list[Path]) -> list[tuple[str, Path]]:
    """Write the answer sheets (``answers``) of ``solutions`` for every student of the class.

    Every student, even when one was graded: a sheet is the whole class's answers.

    Returns
    -------
    list of (str, Path)
        Each notebook with written answers, and where its sheet was written (beside the
        intended file when the instructor edited that one: ``owned.write_owned``).
    """
    students = students_in(submissions_dir)
    sheets = []
    for solution in solutions:
        found = {folder.name: _submission(folder, solution)[0] for folder in students}
        written = answers.write_sheets(submissions_dir, solution, found)
        if written:
            sheets.append((solution.stem, written[0]))
    return sheets


def _handed_in(task: Task) -> bool:
    """True when the student handed in a notebook for the task (else nothing needs preparing)."""
    return _submission(Path(task.submissions_dir) / task.student, Path(task.solutions_dir) /
                       f"{task.notebook}.ipynb")[0] is not None


def _submission(folder: Path, solution: Path) -> tuple[Path | None, str, str]:
    """``find_submission`` for the notebook of ``solution`` (its exercises are the release's)."""
    return find_submission(folder, solution.stem, _solution_ids(solution), _others(solution))


def _others(solution: Path) -> dict[str, set[str]]:
    """The exercise ids of every other solution beside ``solution``, by notebook."""
    return {path.stem: _solution_ids(path) for path in config.notebooks_in(solution.parent)
            if path.stem != solution.stem}


def _solution_ids(solution: Path) -> set[str]:
    """A solution's exercise ids, read once per version of the file (an unreadable solution
    raises: it is the instructor's error, not a student's)."""
    info = solution.stat()
    return set(_read_solution_ids(solution, info.st_mtime_ns, info.st_size))


@functools.lru_cache(maxsize=64)
def _read_solution_ids(solution: Path, mtime_ns: int, size: int) -> frozenset[str]:
    return frozenset(ex.id for ex in exercises(nbformat.read(solution, as_version=4)))


def _unchanged(record: Record | None, folder: Path, solution: Path) -> bool:
    """True when ``record`` graded the file that would be graded now, against this solution,
    and the grader itself did not fail (a problem of the submission's own is final while it
    is unchanged: ``Problem.regrade``). A record names its file as written (``printable``);
    a file that cannot be read now is graded again, and its task says why."""
    if record is None or record.problem.regrade:
        return False
    try:
        path, _, _ = _submission(folder, solution)
        if (printable(path.name) if path else None) != record.file:
            return False
        return gradebook.is_current(record, sha256_of(path) if path else None, sha256_of(solution))
    except OSError:
        return False
