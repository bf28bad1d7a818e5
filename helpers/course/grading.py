"""The grading engine: merge a student's notebook into the graded one, run it, decide.

One engine serves ``kit grade`` (``classgrade``: a class, sandboxed, with records and
feedback), ``kit check`` (``check``), and the tests (``grade_variants``):

1. The graded notebook is the released notebook with its hidden checks (reference outputs
   and check cells from ``solutions/``) with the student's exercise cells (matched by
   exercise id) and any cells the student added put in. A student cannot pass by editing
   outputs or checks.
2. nbval runs it (``--nbval-lax``, fresh kernel, per-cell timeout) in its own process, in a
   sandbox when grading a class (``run_notebook``).
3. Each exercise passes when its cell and its own checks (visible and hidden) pass; a check
   that fails because an earlier exercise is still a stub reports "blocked by N.M"; a dead
   kernel, a limit reached or a run stopped is said as such (``verdicts``).
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from tqdm import tqdm

from helpers import settings
from helpers.course import config, environment, flags, sandbox
from helpers.course.release import (
    Exercise,
    exercise_id,
    exercises,
    is_hidden,
    kit_metadata,
    release_notebook,
    without_run_on,
)
from helpers.errors import KitError
from helpers.exercises import STOPPED_ON, not_done

#: How alike (difflib's ratio) a cell without an id must be to a reference cell to be taken
#: for it, edited.
EDITED_SIMILARITY = 0.6
#: pytest's exit statuses when it ran every test (0: all passed, 1: some failed).
PYTEST_FINISHED = (0, 1)
#: The graded notebook's name in a job's folder.
NOTEBOOK_FILE = "graded.ipynb"
#: An exercise's points when its cell's metadata gives none (``kit.points``).
DEFAULT_POINTS = 1.0
#: The last lines of a student's traceback kept for feedback.
TRACEBACK_LINES = 40
#: The most characters of an expected or printed line, or an error, kept for feedback.
SHOWN_CHARS = 600


def graded_notebook(reference: NotebookNode, submission: NotebookNode) -> NotebookNode:
    """Merge a student's work into the released reference notebook.

    Exercise cells take the student's source (matched by exercise id, else by cell id);
    cells the student added (ids unknown to the reference) are kept, without outputs, after
    the reference cell they followed. Every other cell, and every stored output, comes from
    the reference. No cell keeps the ``raises-exception`` tag that lets Run All go on.

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
    submission = with_cell_ids(submission, reference)
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
            if isinstance(extra.get("metadata"), dict):  # a copied exercise or check cell is theirs
                extra.metadata.pop("kit", None)
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
    without_run_on(graded)  # an error fails its cell again, in released and added cells alike
    return graded


def with_cell_ids(submission: NotebookNode, reference: NotebookNode) -> NotebookNode:
    """The submission with an id on every cell (notebooks saved before nbformat 4.5 have none).

    A cell without an id takes the id of the reference's cell for the same exercise, else of
    the reference cell it stands in for: the two notebooks are aligned cell by cell
    (``difflib``, on type and source), so a cell the student edited in place still takes
    its reference cell's id (and is graded as that cell, not run a second time as their
    own). Any other cell is the student's own and gets a new id. Returns the submission
    itself when no id is missing.
    """
    if all(cell.get("id") for cell in submission.cells):
        return submission
    filled = nbformat.from_dict(submission)
    used = {cell.id for cell in filled.cells if cell.get("id")}
    by_exercise = {exercise_id(cell): cell.id for cell in reference.cells if exercise_id(cell)}
    matched = _aligned(filled.cells, [cell for cell in reference.cells if not is_hidden(cell)])
    for number, cell in enumerate(filled.cells):
        if cell.get("id"):
            continue
        ex = exercise_id(cell)
        candidates = [by_exercise[ex]] if ex in by_exercise else [matched.get(number)]
        new = next((i for i in candidates if i is not None and i not in used), None)
        while new is None or new in used:
            new, number = f"student-{number}", number + 1
        cell.id = new
        used.add(new)
    return filled


def _aligned(cells: list[NotebookNode], reference: list[NotebookNode]) -> dict[int, str]:
    """``{position in cells: id of the reference cell it stands for}``, for cells that are not
    exercises (those match by exercise id): equal runs pair up, and so do cells of the same
    type replaced in place by a similar one (edited)."""
    mine = [j for j, cell in enumerate(cells) if exercise_id(cell) is None]
    theirs = [cell for cell in reference if exercise_id(cell) is None]
    matcher = difflib.SequenceMatcher(None, [(c.cell_type, c.source) for c in theirs],
                                      [(cells[j].cell_type, cells[j].source) for j in mine],
                                      autojunk=False)
    pairs = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("equal", "replace"):
            continue
        for i, j in zip(range(i1, i2), range(j1, j2), strict=False):
            ours, ref = cells[mine[j]], theirs[i]
            if ours.cell_type == ref.cell_type and (tag == "equal" or difflib.SequenceMatcher(
                    None, ref.source, ours.source).ratio() >= EDITED_SIMILARITY):
                pairs[mine[j]] = ref.id
    return pairs


def code_numbers(nb: NotebookNode) -> dict[str, int]:
    """Map cell id -> nbval's ``Cell N`` number (position among code cells)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    return {c.id: n for n, c in enumerate(code)}


@dataclass
class NotebookRun:
    """What running a graded notebook under nbval gave.

    ``results`` maps nbval's cell number to its one-line error or None (cells missing did
    not run); ``details`` holds each failed cell's whole report (ANSI codes removed);
    ``problem`` says what stopped the whole run, if anything; ``outcome`` is the sandbox's
    account (None when the notebook ran without one).
    """

    results: dict[int, str | None]
    details: dict[int, str] = field(default_factory=dict)
    problem: str = ""
    outcome: sandbox.Outcome | None = None


def run_nbval(path: Path, timeout: float, progress: bool = False) -> dict[int, str | None]:
    """Run nbval on one notebook in a fresh process; return ``{cell number: error or None}``.

    Cells missing from the result did not run (the whole run was stopped). With
    ``progress``, a bar on stderr counts the cells as they finish.
    """
    return run_notebook(path, timeout, progress=progress).results


def run_notebook(path: Path, timeout: float, limits: sandbox.Limits | None = None,
                 slot: tuple[int, frozenset[int]] = (0, frozenset()),
                 budget: float | None = None, progress: bool = False) -> NotebookRun:
    """Run nbval on one notebook in a fresh process, in a sandbox when ``limits`` are given.

    In the sandbox the notebook is copied into the job's private folder and deleted once
    nbval has read it (student code cannot read the reference outputs and hidden checks
    from it), and the report comes back through a pipe (student code cannot forge it).
    Without a sandbox, ``progress`` shows a bar of the cells as they finish.
    """
    n_code = sum(c.cell_type == "code" for c in nbformat.read(path, as_version=4).cells)
    total = min(budget or float("inf"), timeout * (n_code + 2) + 60)
    if limits is not None:
        # -P: the job's folder, which student code can write, is not on pytest's import path;
        # no plugin is loaded unless named (a module planted there could not run in pytest)
        command = [sys.executable, "-P", "-m", "pytest", NOTEBOOK_FILE, "-c", "pytest.ini",
                   "--rootdir", ".", "-p", "nbval", *_nbval_options(timeout),
                   f"--junitxml={sandbox.REPORT}", f"--kit-output-mb={limits.output_mb}", "--kit-grading"]
        files = {NOTEBOOK_FILE: Path(path).read_bytes(), "pytest.ini": b"[pytest]\n"}
        outcome = sandbox.run(command, files, limits, total, settings.data_dir(), slot,
                              env={**config.REFERENCE_ENV, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
        results, details = read_report(outcome.report)
        problem = _run_problem(results, outcome, total)
        if outcome.returncode not in PYTEST_FINISHED and not outcome.timed_out and not outcome.stopped_for:
            results, details = {}, {}  # a run that did not finish gives no verdict on any cell
        return NotebookRun(results, details, problem, outcome)
    report = path.with_suffix(".xml")
    ini = path.parent / "pytest.ini"
    ini.write_text("[pytest]\n")
    command = [sys.executable, "-m", "pytest", str(path), "-c", str(ini), "--rootdir", str(path.parent),
               *_nbval_options(timeout), f"--junitxml={report}"]
    if not _ran_within(command, path.parent, total, n_code if progress else 0, path.name):
        return NotebookRun({}, problem=f"grading stopped: the notebook ran out of time ({total:.0f} s)")
    results, details = read_report(report.read_bytes() if report.is_file() else b"")
    return NotebookRun(results, details, _run_problem(results, None, total))


def _ran_within(command: list[str], cwd: Path, total: float, cells: int, name: str) -> bool:
    """Run ``command`` (pytest on one notebook); False if it ran out of ``total`` seconds.

    With ``cells`` > 0, a tqdm bar counts them as the plugin reports each one finished.
    """
    read_end, write_end = os.pipe()
    if cells:
        command = [*command, f"--kit-progress-fd={write_end}"]
    with subprocess.Popen(command, cwd=cwd, env=config.reference_environ(), stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          pass_fds=(write_end,)) as process:
        os.close(write_end)
        with os.fdopen(read_end, "rb") as finished, \
                tqdm(total=cells, desc=name, unit="cell", disable=not cells, file=sys.stderr) as bar:
            reader = threading.Thread(target=_count, args=(finished, bar), daemon=True)
            reader.start()
            try:
                process.wait(timeout=total)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                return False
            reader.join()
    return True


def _count(finished, bar) -> None:
    while chunk := finished.read1(64):
        bar.update(len(chunk))


def _nbval_options(timeout: float) -> list[str]:
    return ["-p", "no:cacheprovider", *config.NBVAL_ARGS, f"--nbval-cell-timeout={timeout}", "-q"]


def _run_problem(results: dict[int, str | None], outcome: sandbox.Outcome | None, total: float) -> str:
    """One line on what stopped a whole run, or "" when nbval reported every cell it ran."""
    if outcome is not None and outcome.timed_out:
        return f"grading stopped: the notebook ran out of time ({total:.0f} s)"
    if outcome is not None and outcome.stopped_for:
        return f"grading stopped: {outcome.stopped_for}"
    if outcome is not None and outcome.returncode not in PYTEST_FINISHED:
        last = [line for line in outcome.output.splitlines() if line.strip()][-1:] or [""]
        return f"grading stopped: the run ended with status {outcome.returncode}: {last[0][:200]}"
    if not results:
        return "grading stopped before any cell ran"
    return ""


def read_report(report: bytes) -> tuple[dict[int, str | None], dict[int, str]]:
    """nbval's JUnit report as ``({cell number: error or None}, {cell number: full report})``."""
    try:
        root = ET.fromstring(report)
    except ET.ParseError:
        return {}, {}
    results: dict[int, str | None] = {}
    details: dict[int, str] = {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        if not name.startswith("Cell "):
            continue
        number = int(name[5:])
        problem = next((child for child in case if child.tag in ("failure", "error", "skipped")),
                       None)
        results[number] = None if problem is None else _short_reason(problem)
        if problem is not None:
            details[number] = _ANSI.sub("", (problem.get("message") or "") + "\n" + (problem.text or ""))
    return results, details


ENVIRONMENT_LINES = (environment.REFERENCE_LABEL, environment.RUN_LABEL)
_ANSI = re.compile(r"(?:\x1b|#x1B)\[[0-9;]*m")
_CELL_PREFIX = re.compile(r"^Cell \d+: ")
_EXCEPTION = re.compile(r"^[A-Za-z_.]*(?:Error|Exception|Interrupt|Exit)\b(?::.*)?$")


_FRAME = re.compile(r"^Cell In\[\d+\], line (?P<line>\d+)(?:, in (?P<function>[\w.<>]+))?")
_ARROW = re.compile(r"^-+> *\d+ ?(?P<code>.*)$")
_LABELS = ("expected (reference):", "got (your output):")
_DIFFERS = "output differs from the reference"
#: How the kit's plugin and nbval say that a cell did not run to its end.
_HEADLINES = ("Timeout of", "the kernel died", "not run: ", "output limit:")


def _short_reason(problem: ET.Element) -> str:
    """One line saying why a cell failed: the exception, a timeout, or an output mismatch."""
    if problem.tag == "skipped":
        said = problem.get("message") or ""
        return "not run: an earlier cell timed out" if "timed out" in said else \
            "not run: the cell is marked NBVAL_SKIP"
    message = _ANSI.sub("", problem.get("message") or "")
    # what nbval and the kit's plugin said, before the cell's source (which the student wrote)
    said = [_CELL_PREFIX.sub("", line.strip()) for line in message.split("\nInput:")[0].splitlines()
            if line.strip()]
    headline = next((line for line in said if line.startswith(_HEADLINES)), None)
    if headline:
        return headline[:200]
    if any("Kernel dead" in line for line in said):
        return "the kernel died"
    text = message + "\n" + _ANSI.sub("", problem.text or "")
    lines = [_CELL_PREFIX.sub("", line.strip()) for line in text.splitlines() if line.strip()]
    raised = [line for line in lines if _EXCEPTION.match(line)]
    if raised:
        where = "" if _STUB.search(raised[-1]) else _last_frame(lines)
        return raised[-1][:200] + (f" ({where})" if where else "")
    if any("outputs differ" in line for line in lines):
        return _output_difference(lines)
    return (lines[0] if lines else problem.tag)[:200]


def _last_frame(lines: list[str]) -> str:
    """Where in the notebook's cells the error was raised: ``in f, line 3: return c / 0``."""
    frames = [i for i, line in enumerate(lines) if _FRAME.match(line)]
    if not frames:
        return ""
    found = _FRAME.match(lines[frames[-1]])
    code = next((m["code"].strip() for line in lines[frames[-1] + 1:] if (m := _ARROW.match(line))), "")
    place = (f"in {found['function']}, " if found["function"] else "") + f"line {found['line']}"
    return f"{place}: {code[:120]}" if code else place


def _output_difference(lines: list[str]) -> str:
    """The kit's comparison (nbval prints it after "Traceback:"): what differs, then the
    expected and printed lines, labelled, then the environments if they are named."""
    after = lines[lines.index("Traceback:") + 1:] if "Traceback:" in lines else []
    reason = _DIFFERS + (f": {after[0]}"[:200] if after else "")
    shown = [next(line[:160] for line in after if line.startswith(label))
             for label in _LABELS if any(line.startswith(label) for line in after)]
    environments = [line for line in after if line.startswith(ENVIRONMENT_LINES)]
    reason = "; ".join([reason, *shown])
    return f"{reason} [{'; '.join(environments)}]" if environments else reason


def grade_notebook(solution: NotebookNode, reference: NotebookNode, submission: NotebookNode,
                   work: Path, timeout: float, limits: sandbox.Limits | None = None,
                   slot: tuple[int, frozenset[int]] = (0, frozenset()),
                   budget: float | None = None) -> tuple[NotebookRun, list[dict]]:
    """Grade one student's notebook in ``work`` (a scratch folder); one verdict per exercise.

    ``reference`` is the graded version of ``solution`` (``release_notebook(..., hidden=True)``).
    With ``limits`` the notebook runs in a sandbox (see ``sandbox``), for at most ``budget``
    seconds in all (default: every cell its ``timeout``). Each verdict is a dict with the keys
    of a grading record's exercise (see ``verdicts``).
    """
    graded = graded_notebook(reference, submission)
    path = work / NOTEBOOK_FILE
    nbformat.write(graded, path)
    run = run_notebook(path, timeout, limits, slot, budget)
    known = {cell.id for cell in reference.cells}
    theirs = {cell.id for cell in graded.cells if exercise_id(cell) or cell.id not in known}
    try:
        found = flags.exercise_flags(graded, reference, solution, theirs)
    except (RecursionError, MemoryError, ValueError):  # code too deep to walk: flag, keep verdicts
        found = {ex.id: ["code too deeply nested to look through"] for ex in exercises(reference)}
    return run, verdicts(solution, graded, run, found, added=theirs - {
        cell.id for cell in graded.cells if exercise_id(cell)})


def points_of(solution: NotebookNode) -> dict[str, float]:
    """Each exercise's points: its cell's ``kit.points`` in the solution (default 1).

    Raises
    ------
    KitError
        If a cell's points are not a positive number.
    """
    found = {}
    for cell in solution.cells:
        ex = exercise_id(cell)
        if ex is None:
            continue
        value = kit_metadata(cell).get("points", DEFAULT_POINTS)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise KitError(f"exercise {ex}: points must be a positive number, not {value!r}.")
        found[ex] = float(value)
    return found


def status_of(exercise: str, passed: bool, error: str) -> str:
    """``"passed"``, ``"not done"`` (its stub raised), ``"blocked"`` (by another) or ``"failed"``."""
    if passed:
        return "passed"
    if error.startswith(f"NotImplementedError: exercise {exercise}"):
        return "not done"
    return "blocked" if error.startswith("blocked by") else "failed"


def verdicts(solution: NotebookNode, graded: NotebookNode, run: NotebookRun,
             found_flags: Mapping[str, Sequence[str]], added: set[str] | frozenset[str] = frozenset()
             ) -> list[dict]:
    """One record entry per exercise: status, points, and for a failure the failing check's
    title, expected and got, and the student's traceback (nothing of a hidden check's).

    ``added`` are the ids of cells the student added: a failure after one of them raised
    says so, since that cell may be why.
    """
    items = exercises(graded)
    points = points_of(solution)
    numbers = code_numbers(graded)
    by_id = {cell.id: cell for cell in graded.cells}
    raised = sorted((numbers[i], by_id[i], run.results[numbers[i]]) for i in added
                    if i in numbers and run.results.get(numbers[i]))
    entries = []
    for ex, (_, passed, error) in zip(items, exercise_rows(items, graded, run.results, run.problem),
                                      strict=True):
        entry = {"exercise": ex.id, "title": heading_above(graded, ex.cell_ids[0]),
                 "points": points.get(ex.id, DEFAULT_POINTS), "passed": passed,
                 "status": status_of(ex.id, passed, error), "error": error, "check": "",
                 "hidden": False, "expected": "", "got": "", "traceback": "",
                 "flags": "; ".join(found_flags.get(ex.id, []))}
        failed = None if passed or not run.results else first_failure(ex, numbers, run.results)
        if failed is not None and entry["status"] == "failed":
            cell = by_id[ex.cell_ids[failed[0]]]
            hidden = is_hidden(cell)
            expected, got, trace = _explained(run.details.get(numbers[cell.id], ""))
            if hidden and error.startswith(_DIFFERS):  # nothing of a hidden check's expected output
                error = f"{_DIFFERS} (a hidden check)"
            elif hidden and _EXCEPTION.match(error.split(" (", 1)[0]):  # nor of its code or values
                error = f"{error.split(':', 1)[0]} in a hidden check"
            before = [(c, e) for number, c, e in raised if number < numbers[cell.id]]
            if before:
                first_line = next((line for line in before[0][0].source.splitlines() if line.strip()), "")
                error += f" (earlier, your added cell '{first_line[:60]}' raised {before[0][1][:120]})"
            entry.update(check=heading_above(graded, cell.id) if failed[0] else "your exercise cell",
                         hidden=hidden, expected="" if hidden else expected[:SHOWN_CHARS],
                         got="" if hidden else got[:SHOWN_CHARS],  # it may quote the check itself
                         traceback="" if hidden else trace, error=error[:SHOWN_CHARS])
        entries.append(entry)
    return entries


def _explained(detail: str) -> tuple[str, str, str]:
    """``(expected, got, traceback)`` from a failed cell's report."""
    lines = [line.strip() for line in detail.splitlines()]
    expected = next((line.split(":", 1)[1].strip() for line in lines
                     if line.startswith(_LABELS[0])), "")
    got = next((line.split(":", 1)[1].strip() for line in lines if line.startswith(_LABELS[1])), "")
    trace = detail.split("Traceback:", 1)[1].strip() if "Traceback:" in detail and not expected else ""
    return expected, got, "\n".join(trace.splitlines()[-TRACEBACK_LINES:])


def heading_above(nb: NotebookNode, cell_id: str) -> str:
    """The last Markdown heading above a cell (what the student sees as its title), or ""."""
    index = next(i for i, cell in enumerate(nb.cells) if cell.get("id") == cell_id)
    for cell in reversed(nb.cells[:index]):
        headings = [line.lstrip("#").strip() for line in cell.source.splitlines()
                    if cell.cell_type == "markdown" and line.startswith("#")]
        if headings:
            return headings[-1]
    return ""


def exercise_rows(items: list[Exercise], graded: NotebookNode, results: dict[int, str | None],
                  problem: str = "") -> list[tuple[str, bool, str]]:
    """Decide each exercise from its cells' results: ``(exercise, passed, error)``.

    An exercise passes when its cell and all its own checks ran without error; the error
    is the first one, or "blocked by N.M" when an earlier exercise is still a stub (its
    error shows in the check, or the check misses a name that a cell failing on the stub
    did not define).
    """
    if not results:
        return [(ex.id, False, problem or "grading stopped: the notebook ran out of time") for ex in items]
    numbers = code_numbers(graded)
    stubs = sorted((number, found["exercise"]) for number, error in results.items()
                   if error and (found := _STUB.search(error)))
    rows = []
    for ex in items:
        failed = first_failure(ex, numbers, results)
        if failed is None:
            rows.append((ex.id, True, ""))
            continue
        position, error = failed
        start, failing = numbers[ex.cell_ids[0]], numbers[ex.cell_ids[position]]
        earlier = [stub for number, stub in stubs if number < failing and (stub != ex.id or number >= start)]
        rows.append((ex.id, False, _blocked(ex.id, error, earlier)))
    return rows


def first_failure(ex: Exercise, numbers: dict[str, int],
                  results: dict[int, str | None]) -> tuple[int, str] | None:
    """The first of an exercise's cells that failed, as ``(position, error)``, or None.

    Position 0 is the exercise cell, 1 its first check, and so on; ``numbers`` maps cell ids
    to nbval's cell numbers (``code_numbers``).
    """
    errors = [results.get(numbers[cell_id], "not run") for cell_id in ex.cell_ids]
    return next(((i, e) for i, e in enumerate(errors) if e is not None), None)


_SNAPSHOT = "__kit_state__"
# the snapshot leaves out the previous snapshot, which restoring it would bring back
_SNAPSHOT_SOURCE = f"{_SNAPSHOT} = dict(globals())\n{_SNAPSHOT}.pop({_SNAPSHOT!r}, None)"
# IPython's own names (_, __, _i, _ii, _iN, _N) are left alone: it keeps and culls them itself
_RESTORE_SOURCE = f"""\
for _kit_name in set(globals()) - set({_SNAPSHOT}) - {{{_SNAPSHOT!r}}}:
    if not __import__("re").fullmatch(r"_+|_i+|_i?\\d+", _kit_name):
        del globals()[_kit_name]
globals().update({_SNAPSHOT})"""


def _kernel_cell(source: str, cell_id: str) -> NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.id = cell_id
    return cell


def variants_notebook(solution: NotebookNode, answers: Mapping[str, Sequence[str]],
                      alone: Mapping[str, Sequence[int]] | None = None
                      ) -> tuple[NotebookNode, dict[str, list[dict[str, Exercise]]]]:
    """One notebook that grades several answers to some of a notebook's exercises in one kernel.

    The graded notebook of a student who solved everything (hidden checks included) is cut
    after the last check of the last exercise named. For each answer to an exercise, the
    notebook from that exercise's cell to the cut is repeated with the answer as the exercise
    cell, so the answer is graded on its own checks and on every later exercise's (which
    should not be charged for it). Before each answer the kernel's names are put back as they
    were before the exercise (names added since are deleted, names rebound are restored), so
    no answer is graded on what an earlier one left behind; objects changed in place stay
    changed, so end each exercise's answers with its solution, which must pass again. The
    next exercise then starts from that state and the solved cells up to it.

    Parameters
    ----------
    solution : NotebookNode
        The instructor's notebook.
    answers : mapping of str to sequence of str
        For each exercise id (e.g. ``"1.2"``), the exercise cell's source for each answer.
    alone : mapping of str to sequence of int, optional
        For each exercise, the positions of answers graded on their own exercise only (their
        run stops after its last check): solutions, whose later exercises the next
        exercise's runs grade anyway.

    Returns
    -------
    (NotebookNode, dict of str to list of dict of str to Exercise)
        The notebook, and for each exercise named and each of its answers, the cells that
        decide that exercise and every later one in that answer's run.
    """
    reference = release_notebook(solution, hidden=True)
    complete = graded_notebook(reference, solution)
    found = {ex.id: ex for ex in exercises(complete)}
    unknown = [ex for ex in answers if ex not in found]
    if unknown:
        raise KitError(f"No exercise {', '.join(unknown)} in this notebook "
                       f"(it has {', '.join(found) or 'none'}).")
    ids = [cell.id for cell in complete.cells]
    first_cell = {ex: ids.index(found[ex].cell_ids[0]) for ex in found}
    named = sorted(answers, key=first_cell.get)
    cut = max(ids.index(found[ex].cell_ids[-1]) for ex in named) + 1
    cells, items, done = [], {}, 0
    for exercise in named:
        start = first_cell[exercise]
        name = exercise.replace(".", "_")  # cell ids allow no dots
        if done:  # back to the state before the previous exercise, then its solution onwards
            cells.append(_kernel_cell(_RESTORE_SOURCE, f"kit-restore-before-{name}"))
        cells += [*complete.cells[done:start], _kernel_cell(_SNAPSHOT_SOURCE, f"kit-snapshot-{name}")]
        graded = [ex for ex in found.values() if start <= first_cell[ex.id] < cut]
        items[exercise] = []
        own_end = ids.index(found[exercise].cell_ids[-1]) + 1
        for number, source in enumerate(answers[exercise]):
            suffix = f"-{name}-v{number}"
            end = own_end if number in (alone or {}).get(exercise, ()) else cut
            cells.append(_kernel_cell(_RESTORE_SOURCE, f"kit-restore{suffix}"))
            for cell in complete.cells[start:end]:
                repeated = nbformat.from_dict(cell)
                repeated.id = cell.id + suffix
                if cell.id == found[exercise].cell_ids[0]:
                    repeated.source = source
                cells.append(repeated)
            items[exercise].append({ex.id: Exercise(ex.id, tuple(i + suffix for i in ex.cell_ids))
                                    for ex in graded if first_cell[ex.id] < end})
        done = start
    complete.cells = cells
    return complete, items


Decision = tuple[bool, str, int | None]


def grade_variants(solution: NotebookNode, answers: Mapping[str, Sequence[str]], work: Path,
                   timeout: float = config.CELL_TIMEOUT,
                   alone: Mapping[str, Sequence[int]] | None = None) -> dict[str, list[dict[str, Decision]]]:
    """Grade several answers to exercises of one notebook, as ``kit grade`` would.

    See ``variants_notebook``; the notebook runs under nbval in one fresh process.

    Returns
    -------
    dict of str to list of dict of str to (bool, str, int or None)
        For each exercise named and each of its answers, in order: for that exercise and every
        later one, ``(passed, error, position)``. ``position`` is the first failing cell's
        (0 the exercise cell, 1 its first check...; None when it passed or the run stopped).
    """
    graded, items = variants_notebook(solution, answers, alone)
    path = Path(work) / "variants.ipynb"
    nbformat.write(graded, path)
    results = run_nbval(path, timeout)
    numbers = code_numbers(graded)

    def decided(ex: Exercise) -> Decision:
        [(_, passed, error)] = exercise_rows([ex], graded, results)
        failed = first_failure(ex, numbers, results) if results else None
        return passed, error, failed[0] if failed else None

    return {exercise: [{ex_id: decided(ex) for ex_id, ex in run.items()} for run in runs]
            for exercise, runs in items.items()}


_STUB = re.compile(r"NotImplementedError: exercise (?P<exercise>[\w.]+)")


def _blocked(exercise: str, error: str, earlier_stubs: Sequence[str] = ()) -> str:
    """Say "blocked by N.M" when an exercise failed only because another one is still a stub.

    ``earlier_stubs`` are the exercises whose stub error showed in cells run before the
    failing one (this exercise's own only from its cell on), in order: a ``NameError`` after
    one of them is put down to the last, so a stub whose check misses a name reads as not done.
    """
    stub = _STUB.search(error)
    if stub and stub["exercise"] != exercise:
        return f"blocked by {stub['exercise']} (not done yet)"
    named = STOPPED_ON.search(error)  # the kernel said which exercise the missing name waits for
    if error.startswith("NameError") and (named or earlier_stubs):
        cause = named["exercise"] if named else earlier_stubs[-1]
        return not_done(cause) if cause == exercise else \
            f"blocked by {cause} (not done yet)"
    return error
