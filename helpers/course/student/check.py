"""``kit check`` and ``check("N.M")``: the student's self-check.

``kit check NN`` (and ``kit check --run``) goes through the grading engine:

The student's working copy (``work/NN_topic.ipynb``) is merged into the pristine released
notebook (``notebooks/``) the way ``kit grade`` merges a submission: their exercise cells and
the cells they added; every check cell and every reference output from the release. It runs
under nbval in a fresh kernel, and each exercise gets one line. The release has no hidden
checks, so a pass here is necessary, not sufficient, for a pass in ``kit grade``. Each check
of a workspace copy is saved (``remember``): ``kit check`` alone shows the saved verdicts and
runs nothing (``progress``), and ``kit check --run`` reuses them while nothing they depend on
changed (``check_key``); ``kit check NN`` always runs the notebook. Ctrl-C or SIGTERM stops a
check whole (``CheckInterrupted``, with the verdicts decided before the stop).

``check("1.2")`` inside a notebook (``from helpers.course.student.check import check``) runs exercise
1.2's visible checks on the live kernel, with the names the student's cells defined, and
compares what they show (what they print, and the value of a last line) with the release's
reference outputs as grading does (``compare``); ``verdict.decide`` decides, as for grading.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import json
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
from nbformat import NotebookNode

from helpers import fetch, settings, syntax
from helpers.course import config, stops
from helpers.course.engine import grading
from helpers.course.engine.nbval_run import RunInterrupted
from helpers.course.engine.verdict import CellResult, Ending, Status, Verdict, decide
from helpers.course.engine.wording import describe
from helpers.course.notebook import compare, environment
from helpers.course.notebook.cells import Exercise, exercises
from helpers.course.notebook.merge import code_numbers, graded_notebook
from helpers.course.notebook.release import edited_notice, edited_since_release
from helpers.course.student import integrity, unsaved
from helpers.course.student import progress as table
from helpers.course.student.copies import COPY_SUFFIX, copies_of
from helpers.course.student.progress import KEPT, SKIPPED, THIS_RUN, fingerprint
from helpers.errors import KitError
from helpers.exercises import defined_names, ipython_shell, unfinished, waits_for
from helpers.settings import work_dir

#: Where ``kit check`` keeps each working copy's last verdicts (in the workspace).
CHECKED_FILE = table.CHECKED_FILE
#: Added to a check's NameError on a name no stopped exercise explains: the usual cause.
RUN_ABOVE = " (run the notebook's cells above first: a restarted kernel has forgotten them)"

#: The notebooks that load the kit's Doc2Vec model (04's checks train it), and so train it
#: first when the data folder does not hold it yet.
DOC2VEC_NOTEBOOKS = ("04", "05", "06", "07", "08")
#: Seconds the kit's Doc2Vec model takes to train alone, on one core (docs/benchmarks.md).
DOC2VEC_TRAINING_SECONDS = 360


class CheckInterrupted(stops.Interrupted):
    """Ctrl-C or SIGTERM stopped a check: its processes and folders are gone; ``verdicts``
    holds those of the exercises decided before the stop."""

    def __init__(self, status: int, verdicts: list[Verdict]) -> None:
        super().__init__(status)
        self.verdicts = verdicts


def check_notebook(submission: Path, reference: Path,
                   timeout: float = config.CELL_TIMEOUT, progress: bool = False) -> list[Verdict]:
    """Check one working copy against its released notebook: one ``Verdict`` per exercise.

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

    Raises
    ------
    KitError
        If either file is missing or unreadable, or the kit's library is not as released or
        does not compile (``integrity.require_intact``).
    """
    integrity.require_intact()
    for path in (submission, reference):
        if not Path(path).is_file():
            raise KitError(f"{path} is not a notebook file.")
    try:
        theirs = nbformat.read(submission, as_version=4)
    except Exception as err:  # any unreadable notebook is a message, not a crash
        raise KitError(f"{submission} is not a readable notebook ({type(err).__name__}).") from err
    released = nbformat.read(reference, as_version=4)
    label = Path(submission).name if progress else ""
    graded, items = graded_notebook(released, theirs), exercises(released)
    with tempfile.TemporaryDirectory(prefix="kit-check-") as folder:
        try:
            _, verdicts = grading.grade(graded, Path(folder), timeout, items=items, progress=label)
        except RunInterrupted as stop:
            partial = grading.located(decided(graded, items, stop.results), released, theirs)
            raise CheckInterrupted(stop.status, partial) from None
    return grading.located(verdicts, released, theirs)


def decided(graded: NotebookNode, items: list[Exercise], results: dict[int, CellResult]) -> list[Verdict]:
    """The verdicts of the exercises a stopped run got to the end of: each of their cells
    ended, or one failed (``results``: how each cell that ended did, by nbval's number)."""
    numbers = code_numbers(graded)
    ended = [exercise for exercise in items if _ended(exercise, numbers, results)]
    return decide(graded, results, items=ended) if ended else []


def _ended(exercise: Exercise, numbers: dict[str, int], results: dict[int, CellResult]) -> bool:
    for cell_id in exercise.cell_ids:
        result = results.get(numbers[cell_id])
        if result is None:
            return False
        if result.ending is not Ending.PASSED:
            return True
    return True


def check_copy(copy: Path, reference: Path, timeout: float = config.CELL_TIMEOUT, *, reuse: bool = False,
               keep: bool = True, progress: bool = False,
               go_on: Callable[[Path], bool] | None = None) -> tuple[list[Verdict], str]:
    """Check one working copy against its release, and say where its verdicts come from.

    Parameters
    ----------
    copy, reference : Path
        The student's notebook and its release.
    timeout : float
        Seconds one cell may run.
    reuse : bool
        Take the saved verdicts of a check whose copy, release, kit and settings are
        unchanged (``remembered``) instead of running it.
    keep : bool
        Save the verdicts of a run (``remember``); only a workspace copy's are worth it.
    progress : bool
        Show a bar on stderr counting the cells as they run.
    go_on : callable, optional
        Asked ``go_on(copy)`` before a run; False skips it (no verdicts).

    Returns
    -------
    (list of Verdict, str)
        The verdicts, and the progress table's word for them (``progress.THIS_RUN``,
        ``KEPT`` or ``SKIPPED``).

    Raises
    ------
    CheckInterrupted
        On Ctrl-C or SIGTERM during the run, with the verdicts decided before it.
    """
    key = check_key(copy, reference, timeout)  # before the run: the copy may change meanwhile
    seen = fingerprint(copy, reference)
    verdicts = remembered(copy, key) if reuse else None
    if verdicts is not None:
        return verdicts, KEPT
    if go_on is not None and not go_on(copy):
        return [], SKIPPED
    verdicts = check_notebook(copy, reference, timeout, progress=progress)
    if keep:
        remember(copy, key, verdicts, seen)
    return verdicts, THIS_RUN


def check_workspace(copies: list[Path], timeout: float = config.CELL_TIMEOUT,
                    notebooks: Path = config.NOTEBOOKS_DIR, say: Callable[[str], None] | None = None,
                    found: dict[str, list[Verdict]] | None = None) -> dict[str, list[Verdict]]:
    """Check every working copy that has a released notebook with exercises, by file name.

    A copy checked before (``remember``) whose bytes, release and kit code are unchanged keeps
    its verdicts without a run. Given ``say`` (the command's own output, e.g. ``print``), show
    each notebook's cells as they run and ``say`` a line as each is done
    (``[k/n] name: m/e pass``; a whole workspace takes minutes). Verdicts go into ``found``
    (default a new dict) as each notebook is done, so a caller interrupted meanwhile keeps them.
    """
    found = {} if found is None else found
    todo = [copy for copy in copies if has_exercises(notebooks / copy.name)]
    for k, copy in enumerate(todo, 1):
        verdicts, state = check_copy(copy, notebooks / copy.name, timeout, reuse=True,
                                     progress=say is not None)
        found[copy.name] = verdicts
        if say is not None:
            say(f"[{k}/{len(todo)}] {copy.name}: {sum(v.passed for v in verdicts)}/{len(verdicts)} pass"
                + (" (unchanged since its last check)" if state == KEPT else ""))
    return found


def check_key(copy: Path, reference: Path, timeout: float) -> str:
    """What a check's verdicts depend on: the copy, its release, the kit's code and its
    comparison rules, the libraries and BLAS kernels, the data folder and each data set's
    fetch stamp (read, not rescanned: a run checks the files it reads), the profile and the
    cell timeout."""
    digest = hashlib.sha256(Path(copy).read_bytes())
    digest.update(Path(reference).read_bytes())
    digest.update(table.kit_code().encode())
    data = {name: fetch.fetched_stamp(name) for name in fetch.DATASETS}
    digest.update(json.dumps([environment.current(), str(settings.data_dir()), data, settings.profile(),
                              timeout, config.SANITIZE_FILE.read_text()], sort_keys=True).encode())
    return digest.hexdigest()


def remembered(copy: Path, key: str) -> list[Verdict] | None:
    """The verdicts ``remember`` kept for ``copy`` under ``key`` (``check_key``); None when
    anything it depends on changed since, or the record is missing or garbled."""
    try:
        kept = table.read_checked(Path(copy).parent)[Path(copy).name]
        if kept["key"] != key:
            return None
        return [Verdict.from_record(entry) for entry in kept["verdicts"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def remember(copy: Path, key: str, verdicts: list[Verdict], seen: dict[str, str] | None = None) -> None:
    """Keep a check's verdicts beside the copy (``CHECKED_FILE``, the kit's own file) under
    ``key`` (``check_key``) with what they came from (``seen``: ``progress.fingerprint``),
    both taken before the run; a run that stopped (time, a dead kernel, a limit) is not
    kept, since a busy machine may have caused it."""
    if any(verdict.stopped for verdict in verdicts):
        return
    table.write_checked(copy, {"key": key, "verdicts": [v.record() for v in verdicts], **(seen or {})})


def has_exercises(released: Path) -> bool:
    """Whether a released notebook exists and has exercises (not the student's own notebook,
    nor one with nothing to check)."""
    return released.is_file() and bool(exercises(nbformat.read(released, as_version=4)))


def progress(verdicts_by_notebook: dict[str, list[Verdict]]) -> pd.DataFrame:
    """The progress table: per notebook, how many exercises passed, are not done, blocked, failed."""
    statuses = [str(status) for status in Status]
    counts = [{"notebook": name, "exercises": len(verdicts),
               **{str(status): sum(v.status is status for v in verdicts) for status in Status}}
              for name, verdicts in verdicts_by_notebook.items()]
    return pd.DataFrame(counts, columns=["notebook", "exercises", *statuses]).set_index("notebook")


def working_copy(which: str, work: Path | None = None) -> Path:
    """The notebook ``which`` names: a number (``01``) or a name (``01_naive_bayes``, with or
    without ``.ipynb``) looked up in the workspace, or a path to a notebook file.

    Raises
    ------
    KitError
        If it names an exercise, a released notebook in ``notebooks/`` (the blank release the
        checks compare with, not the student's work), or nothing in the workspace.
    """
    work = work or work_dir()
    if re.fullmatch(r"\d+\.\d+", which):
        raise KitError(f"{which} is an exercise: `kit check {int(which.split('.')[0]):02d}` checks its "
                       f"notebook, and check(\"{which}\") in that notebook checks it alone.")
    if which.endswith(".ipynb"):  # a file: that one
        named = work / which
        if Path(which).name == which and named.is_file():
            return named
        return _not_the_release(Path(which).resolve())
    released = config.notebooks_in(config.NOTEBOOKS_DIR, [which]) if which.isdigit() else \
        [path for path in [config.NOTEBOOKS_DIR / f"{which}.ipynb"] if path.is_file()]
    found = copies_of(released[0], work) if released and work.is_dir() else []
    if not found:
        have = ", ".join(path.name[:2] for path in config.notebooks_in(work)) if work.is_dir() else ""
        raise KitError(f"No notebook {which!r} in your workspace {work}; "
                       + (f"its notebooks are {have}." if have else
                          "`kit work` copies the released notebooks there."))
    return found[0]


def copies_note(copy: Path, work: Path | None = None) -> str:
    """What to tell the student when ``copy`` is not the only copy of its notebook in the
    workspace, or not under the released name ('' when it is both)."""
    work = work or work_dir()
    released = released_for(copy).name
    others = [path.name for path in copies_of(released_for(copy), work) if path != copy]
    if not others and copy.name == released:
        return ""
    also = f"; {work.name}/ also holds {', '.join(others)}" if others else ""
    return (f"checking {copy.name} as your copy of {released}{also}: hand in the one your course "
            "asks for, under the released name")


def _not_the_release(path: Path) -> Path:
    """``path``, unless it is a released notebook: checking the blank release against itself
    says nothing of the student's work."""
    if path.parent == config.NOTEBOOKS_DIR.resolve():
        raise KitError(f"{path.parent.name}/{path.name} is the blank release, which the checks compare "
                       f"your work with: check your copy in your workspace instead, `kit check "
                       f"{path.name[:2]}` ({work_dir() / path.name}).")
    return path


def training_notice(name: str) -> str:
    """What checking the notebook ``name`` would train first that the practical has not
    trained yet, and how long that takes; "" when nothing."""
    if name[:2] not in DOC2VEC_NOTEBOOKS or not doc2vec_untrained():
        return ""
    from helpers import embeddings

    models = embeddings.model_path(embeddings.config_for()).parent
    return (f"Checking {name} trains the kit's Doc2Vec model first: {models} does not hold it yet "
            "(running notebook 04 in the lab trains it once, and every run after reuses it). "
            f"That takes about {round(DOC2VEC_TRAINING_SECONDS / 60)} minutes on one core "
            f"({DOC2VEC_TRAINING_SECONDS} s measured, docs/benchmarks.md), longer on a busy machine.")


def doc2vec_untrained() -> bool:
    """Whether the data folder lacks a Doc2Vec model the notebooks load (the quick profile's,
    and the current profile's), as a check's kernel (hashing as the reference) would look
    for it; False when the data is not there (the check says so itself)."""
    from helpers import embeddings  # gensim: only for the notebooks that need it

    try:
        paths = [embeddings.model_path(model, hashed_as_reference=True)
                 for model in (embeddings.config_for("quick"), embeddings.config_for())]
    except KitError:
        return False
    return not all(path.is_file() for path in paths)


def released_for(submission: Path, notebooks: Path | None = None) -> Path:
    """The released notebook a working copy came from: the same ``NN_topic.ipynb`` name, a
    second copy's name (``NN_topic (1).ipynb``), or, renamed, the release whose exercise cells
    it holds."""
    submission, notebooks = Path(submission), notebooks or config.NOTEBOOKS_DIR
    reference = notebooks / f"{COPY_SUFFIX.sub('', submission.stem)}.ipynb"
    if not reference.is_file():
        holding = [path for path in config.notebooks_in(notebooks)
                   if submission.is_file() and submission in copies_of(path, submission.parent)]
        if not holding:
            raise KitError(f"{submission.name} is not one of the released notebooks in {notebooks}, "
                           "and holds none of their exercise cells.")
        reference = holding[0]
    if edited_since_release(reference):
        raise KitError(edited_notice(reference))
    return reference


def check(exercise: str | None = None, namespace: dict | None = None,
          notebooks: Path = config.NOTEBOOKS_DIR) -> None:
    """Run one exercise's visible checks here, on the live kernel, and print what passes.

    It prints one line (``✓ 1.2``, or ``✗`` and why) and returns nothing, so a notebook shows
    no ``Out[...]`` under it; ``check_exercise`` gives the verdict itself.

    Parameters
    ----------
    exercise : str
        ``"N.M"``, as in the notebook's headings.
    namespace : dict, optional
        Where the checks run: default the notebook's own names (IPython's ``user_ns``).
    notebooks : Path
        The released notebooks, which hold the checks and their reference outputs.

    Raises
    ------
    KitError
        If ``exercise`` is not a released exercise, or its exercise cell's names are not
        defined here (another notebook's exercise, or its cell not run yet). In a notebook
        the kit shows it as one line (``helpers.exercises``).
    """
    print(describe(check_exercise(exercise, namespace, notebooks)))


def _this_notebook(notebooks: Path) -> str | None:
    """The name of the release of the notebook this kernel runs for in the lab, or None when
    it is not known (not the lab's kernel, or not a copy of a release)."""
    lab = unsaved.lab_notebook()
    try:
        return released_for(lab, notebooks).name if lab is not None else None
    except KitError:
        return None


def _not_run_yet(exercise: str, notebook: str, missing: list[str], here: str | None) -> str:
    """What ``check`` says when the exercise's names are not in the kernel: in its own
    notebook, run the cells above; in another, go there; where unknown, both."""
    said = (f"Exercise {exercise} (in {notebook}) defines {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not defined in this kernel yet.")
    run_above = ("run its cells from the top down to the exercise cell first (Run > Run All Above "
                 "Selected Cell): a restarted kernel has forgotten them.")
    go_there = f"run check(\"{exercise}\") in {notebook}."
    if here == notebook:
        return f"{said} In this notebook: {run_above}"
    if here is not None:
        return f"{said} This kernel runs {here}: {go_there}"
    return f"{said} In {notebook}: {run_above} In another notebook: {go_there}"


def check_exercise(exercise: str | None, namespace: dict | None = None,
                   notebooks: Path = config.NOTEBOOKS_DIR) -> Verdict:
    """The verdict ``check`` prints: one exercise's visible checks run in ``namespace``.

    Parameters and errors as for ``check``.
    """
    if exercise is None:
        raise KitError('check needs the exercise to check, as a string: check("1.2") runs exercise 1.2\'s '
                       "visible checks here.")
    if not isinstance(exercise, str):
        raise KitError(f"Write the exercise as a string, check(\"{exercise}\"): a number like 1.10 "
                       "would read as 1.1.")
    integrity.require_intact()  # a library changed under the notebook could pass a wrong answer
    released, notebook = _released_with(exercise, notebooks)
    item = next((ex for ex in exercises(released) if ex.id == exercise), None)
    if item is None:
        known = ", ".join(ex.id for ex in exercises(released))
        raise KitError(f"Exercise {exercise} is not in {notebook}, whose exercises are {known}.")
    names = _user_names() if namespace is None else namespace
    cells = {cell.id: cell for cell in released.cells}
    missing = sorted(defined_names(cells[item.cell_ids[0]].source) - set(names))
    if missing:
        raise KitError(_not_run_yet(exercise, notebook, missing, _this_notebook(notebooks)))
    numbers = code_numbers(released)
    sanitize = compare.sanitizer(config.SANITIZE_FILE)
    reference_env = released.metadata.get("kit", {}).get("reference_env")

    def environments(blas: bool) -> tuple[str, ...]:
        return environment.mismatch_lines(reference_env, blas=blas)

    # the exercise cell ran in the student's kernel; its checks run here, until one fails
    results = {numbers[item.cell_ids[0]]: CellResult(numbers[item.cell_ids[0]], Ending.PASSED)}
    for cell_id in item.cell_ids[1:]:
        result = _live_result(cells[cell_id], numbers[cell_id], names, sanitize, environments)
        results[result.number] = result
        if result.ending is not Ending.PASSED:
            break
    [verdict] = decide(released, results, items=[item])
    return verdict


def _released_with(exercise: str, notebooks: Path) -> tuple[NotebookNode, str]:
    """The released notebook exercise ``N.M`` belongs to (notebook ``NN``), and its file name."""
    found = config.notebooks_in(notebooks, [exercise.split(".")[0]]) if "." in exercise else []
    if not found:
        numbers = ", ".join(path.name.split("_")[0] for path in config.notebooks_in(notebooks))
        raise KitError(f"No released notebook has exercise {exercise!r}: write it as \"N.M\", N a "
                       f"notebook's number ({numbers}).")
    return nbformat.read(found[0], as_version=4), found[0].name


def _user_names() -> dict:
    shell = ipython_shell()
    return shell.user_ns if shell is not None else vars(sys.modules["__main__"])


def _live_result(cell: NotebookNode, number: int, namespace: dict, sanitize: Any,
                 environments: Callable[[bool], tuple[str, ...]]) -> CellResult:
    """Run one check cell in ``namespace`` and compare what it shows with its reference as
    grading does: what it prints, and the value of its last line (its ``text/plain``);
    ``environments(blas)`` names the libraries when they differ from the reference's."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            value = _run(cell.source, namespace)
    except Exception as err:  # the student's code raised: say what, as grading would
        waiting = waits_for(err) or ""
        hint = RUN_ABOVE if type(err) is NameError and not waiting else ""
        return CellResult(number, Ending.RAISED, f"{type(err).__name__}: {err}{hint}",
                          stub=unfinished(err) or "", waits_for=waiting)
    text = printed.getvalue()
    shown: list[dict[str, Any]] = [{"output_type": "stream", "name": "stdout", "text": text}] if text else []
    if value is not None:
        shown.append({"output_type": "execute_result", "data": _formatted(value)})
    difference = compare.compare_outputs(compare.grouped(cell.outputs, sanitize),
                                         compare.grouped(shown, sanitize), compare.tolerance_of(cell))
    if difference is None:
        return CellResult(number, Ending.PASSED)
    return CellResult(number, Ending.DIFFERS, difference=difference, environments=environments(
        difference.in_numbers))


def _run(source: str, namespace: dict) -> Any:
    """Run a cell's code; return the value of its last line when that is an expression (what
    a notebook shows as the cell's result), else None."""
    tree = syntax.parse(source)
    shown = tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";")
    last = tree.body.pop() if shown else None  # a trailing ";" hides the value, as in a notebook
    exec(compile(tree, "<check>", "exec"), namespace)  # noqa: S102
    if not isinstance(last, ast.Expr):  # None: the cell shows no value
        return None
    return eval(compile(ast.Expression(last.value), "<check>", "eval"), namespace)  # noqa: S307


def _formatted(value: Any) -> dict[str, Any]:
    """A value's representations, as the kernel would send them (``text/plain`` and others)."""
    shell = ipython_shell()
    return shell.display_formatter.format(value)[0] if shell is not None else {"text/plain": repr(value)}
