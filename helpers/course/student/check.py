"""``kit check`` and ``check("N.M")``: the student's self-check.

``kit check`` goes through the grading engine:

The student's working copy (``work/NN_topic.ipynb``) is merged into the pristine released
notebook (``notebooks/``) the way ``kit grade`` merges a submission: their exercise cells and
the cells they added; every check cell and every reference output from the release. It runs
under nbval in a fresh kernel, and each exercise gets one line. The release has no hidden
checks, so a pass here is necessary, not sufficient, for a pass in ``kit grade``. ``kit check``
alone keeps each copy's verdicts (``remember``) and reuses them while nothing they depend on
changed (``check_key``); ``kit check NN`` always runs the notebook.

``check("1.2")`` inside a notebook (``from helpers.course.student.check import check``) runs exercise
1.2's visible checks on the live kernel, with the names the student's cells defined, and
compares what they show (what they print, and the value of a last line) with the release's
reference outputs as grading does (``compare``); ``verdict.decide`` decides, as for grading.
"""

from __future__ import annotations

import ast
import contextlib
import functools
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

from helpers import fetch, settings
from helpers.course import config
from helpers.course.engine import grading
from helpers.course.engine.verdict import CellResult, Ending, Status, Verdict, decide, describe
from helpers.course.notebook import compare, environment
from helpers.course.notebook.cells import exercises
from helpers.course.notebook.merge import code_numbers, graded_notebook
from helpers.course.notebook.release import edited_notice, edited_since_release
from helpers.course.student.kernel import KIT_PACKAGE
from helpers.errors import KitError
from helpers.exercises import defined_names, ipython_shell, unfinished, waits_for
from helpers.files import atomic_write
from helpers.settings import work_dir

#: Where ``kit check`` keeps each working copy's last verdicts (in the workspace).
CHECKED_FILE = ".kit-checked.json"


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
    """
    for path in (submission, reference):
        if not Path(path).is_file():
            raise KitError(f"{path} is not a notebook file.")
    try:
        theirs = nbformat.read(submission, as_version=4)
    except Exception as err:  # any unreadable notebook is a message, not a crash
        raise KitError(f"{submission} is not a readable notebook ({type(err).__name__}).") from err
    released = nbformat.read(reference, as_version=4)
    label = Path(submission).name if progress else ""
    with tempfile.TemporaryDirectory(prefix="kit-check-") as folder:
        _, verdicts = grading.grade(graded_notebook(released, theirs), Path(folder), timeout,
                                    items=exercises(released), progress=label)
    return verdicts


def check_workspace(copies: list[Path], timeout: float = config.CELL_TIMEOUT,
                    notebooks: Path = config.NOTEBOOKS_DIR, report: bool = False,
                    found: dict[str, list[Verdict]] | None = None) -> dict[str, list[Verdict]]:
    """Check every working copy that has a released notebook with exercises, by file name.

    A copy checked before (``remember``) whose bytes, release and kit code are unchanged keeps
    its verdicts without a run. With ``report``, show each notebook's cells as they run and
    print a line as each is done (``[k/n] name: m/e pass``; a whole workspace takes minutes).
    Verdicts go into ``found`` (default a new dict) as each notebook is done, so a caller
    interrupted meanwhile keeps them.
    """
    found = {} if found is None else found
    todo = [copy for copy in copies if has_exercises(notebooks / copy.name)]
    for k, copy in enumerate(todo, 1):
        reference = notebooks / copy.name
        key = check_key(copy, reference, timeout)  # before the run: the copy may change meanwhile
        verdicts = remembered(copy, key)
        again = verdicts is not None
        if not again:
            verdicts = check_notebook(copy, reference, timeout, progress=report)
            remember(copy, key, verdicts)
        found[copy.name] = verdicts
        if report:
            print(f"[{k}/{len(todo)}] {copy.name}: {sum(v.passed for v in verdicts)}/{len(verdicts)} pass"
                  + (" (unchanged since its last check)" if again else ""), flush=True)
    return found


def check_key(copy: Path, reference: Path, timeout: float) -> str:
    """What a check's verdicts depend on: the copy, its release, the kit's code and its
    comparison rules, the libraries and BLAS kernels, the data folder and what of it is
    verified, the profile and the cell timeout."""
    digest = hashlib.sha256(Path(copy).read_bytes())
    digest.update(Path(reference).read_bytes())
    digest.update(_kit_code().encode())
    data = {name: fetch.is_verified(name) for name in fetch.DATASETS}
    digest.update(json.dumps([environment.current(), str(settings.data_dir()), data, settings.profile(),
                              timeout, config.SANITIZE_FILE.read_text()], sort_keys=True).encode())
    return digest.hexdigest()


@functools.cache
def _kit_code() -> str:
    """A digest of the kit's own code (``helpers``), which a check's verdicts depend on too."""
    digest = hashlib.sha256()
    for path in sorted(KIT_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(KIT_PACKAGE).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def remembered(copy: Path, key: str) -> list[Verdict] | None:
    """The verdicts ``remember`` kept for ``copy`` under ``key`` (``check_key``); None when
    anything it depends on changed since, or the record is missing or garbled."""
    try:
        kept = _checked(Path(copy).parent)[Path(copy).name]
        if kept["key"] != key:
            return None
        return [Verdict.from_record(entry) for entry in kept["verdicts"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def remember(copy: Path, key: str, verdicts: list[Verdict]) -> None:
    """Keep a check's verdicts beside the copy (``CHECKED_FILE``, the kit's own file) under
    ``key`` (``check_key``, taken before the run); a run that stopped (time, a dead kernel, a
    limit) is not kept, since a busy machine may have caused it."""
    if any(verdict.stopped for verdict in verdicts):
        return
    kept = _checked(Path(copy).parent)
    kept[Path(copy).name] = {"key": key, "verdicts": [v.record() for v in verdicts]}
    atomic_write(Path(copy).parent / CHECKED_FILE,
                 lambda tmp: tmp.write_text(json.dumps(kept, indent=1), encoding="utf-8"))


def _checked(workspace: Path) -> dict:
    """The workspace's record of kept checks (``CHECKED_FILE``); empty when it is missing or
    not a JSON object."""
    try:
        kept = json.loads((workspace / CHECKED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


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
    """The notebook ``which`` names: a path to a notebook, or a number looked up in the workspace."""
    if which.endswith(".ipynb"):
        return Path(which).resolve()
    work = work or work_dir()
    if re.fullmatch(r"\d+\.\d+", which):
        raise KitError(f"{which} is an exercise: `kit check {int(which.split('.')[0]):02d}` checks its "
                       f"notebook, and check(\"{which}\") in that notebook checks it alone.")
    found = config.notebooks_in(work, [which]) if which.isdigit() else []
    if not found:
        have = ", ".join(path.name[:2] for path in config.notebooks_in(work)) if work.is_dir() else ""
        raise KitError(f"No notebook {which!r} in your workspace {work}; "
                       + (f"its notebooks are {have}." if have else
                          "`kit work` copies the released notebooks there."))
    return found[0]


def released_for(submission: Path, notebooks: Path = config.NOTEBOOKS_DIR) -> Path:
    """The released notebook a working copy came from (same ``NN_topic.ipynb`` name)."""
    reference = notebooks / submission.name
    if not reference.is_file():
        raise KitError(f"{submission.name} is not one of the released notebooks in {notebooks}.")
    if edited_since_release(reference):
        raise KitError(edited_notice(reference))
    return reference


def check(exercise: str, namespace: dict | None = None, notebooks: Path = config.NOTEBOOKS_DIR) -> None:
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


def check_exercise(exercise: str, namespace: dict | None = None,
                   notebooks: Path = config.NOTEBOOKS_DIR) -> Verdict:
    """The verdict ``check`` prints: one exercise's visible checks run in ``namespace``.

    Parameters and errors as for ``check``.
    """
    if not isinstance(exercise, str):
        raise KitError(f"Write the exercise as a string, check(\"{exercise}\"): a number like 1.10 "
                       "would read as 1.1.")
    released, notebook = _released_with(exercise, notebooks)
    item = next((ex for ex in exercises(released) if ex.id == exercise), None)
    if item is None:
        known = ", ".join(ex.id for ex in exercises(released))
        raise KitError(f"Exercise {exercise} is not in {notebook}, whose exercises are {known}.")
    names = _user_names() if namespace is None else namespace
    cells = {cell.id: cell for cell in released.cells}
    missing = sorted(defined_names(cells[item.cell_ids[0]].source) - set(names))
    if missing:
        raise KitError(f"Exercise {exercise} is in {notebook} and defines {', '.join(missing)}, which "
                       f"{'is' if len(missing) == 1 else 'are'} not defined here: run check(\"{exercise}\") "
                       "in that notebook, after running its exercise cell.")
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
        return CellResult(number, Ending.RAISED, f"{type(err).__name__}: {err}",
                          stub=unfinished(err) or "", waits_for=waits_for(err) or "")
    text = printed.getvalue()
    shown = [{"output_type": "stream", "name": "stdout", "text": text}] if text else []
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
    tree = ast.parse(source)
    shown = tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";")
    last = tree.body.pop() if shown else None  # a trailing ";" hides the value, as in a notebook
    exec(compile(tree, "<check>", "exec"), namespace)  # noqa: S102
    return eval(compile(ast.Expression(last.value), "<check>", "eval"), namespace) if last else None  # noqa: S307


def _formatted(value: Any) -> dict[str, Any]:
    """A value's representations, as the kernel would send them (``text/plain`` and others)."""
    shell = ipython_shell()
    return shell.display_formatter.format(value)[0] if shell is not None else {"text/plain": repr(value)}
