"""Verdicts as data: how each cell ended, and what grading decided for each exercise.

The nbval plugin records each cell of a graded notebook as a ``CellResult`` (how it ended,
and for a failure the exception, the output difference, the traceback) and hands them over
as JSON; nothing reads a verdict back from text. ``decide`` turns them into one ``Verdict``
per exercise, and every reader renders from its fields: the gradebook's records
(``Verdict.record``), the students' feedback, ``kit check``'s lines and ``check("N.M")``
(``describe``).

One vocabulary of statuses (``Status``): passed, not done (its stub raised), blocked (by
another exercise that is still a stub), failed.
"""

from __future__ import annotations

import dataclasses
import re
import sysconfig
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from nbformat import NotebookNode

from helpers.course.notebook.cells import (
    DEFAULT_POINTS,
    Exercise,
    exercises,
    hidden_intent,
    hidden_lines,
    is_graded_hidden,
)
from helpers.course.notebook.compare import Difference
from helpers.course.notebook.merge import code_numbers, heading_above
from helpers.course.safe_text import printable
from helpers.exercises import NOT_DONE, not_done
from helpers.settings import REPO_ROOT


class Status(StrEnum):
    """What grading decided for one exercise."""

    PASSED = "passed"
    NOT_DONE = "not done"
    BLOCKED = "blocked"
    FAILED = "failed"


class Ending(StrEnum):
    """How one cell of a graded notebook ended."""

    PASSED = "passed"
    RAISED = "raised"  # the cell raised an exception
    DIFFERS = "differs"  # it ran, and printed other than its reference
    STOPPED = "stopped"  # a timeout, a dead kernel, the output limit, or not run at all


class Problem(StrEnum):
    """What kept a whole notebook from being graded in full (``NONE``: nothing did).

    Whose problem it is decides whether its record is final. Every problem but
    ``NOT_STARTED`` comes from the submission: grading the same file again against the same
    solution would end the same way (it is missing, too large or unreadable; its code ran out
    of time, went past a limit or killed the run; the kit raised on it). Such a record stands
    until the submission or the solution changes (or ``kit grade --force``, after mending the
    kit). ``NOT_STARTED`` is the grader's own failure, whatever the notebook holds (its
    sandbox could not start, or the run ended before any cell without being killed): only
    that one is graded again on the next ``kit grade`` (``regrade``).
    """

    NONE = "none"
    MISSING = "missing"  # no notebook handed in under its name, or one holding another's exercises
    TOO_LARGE = "too large"
    UNREADABLE = "unreadable"
    OUT_OF_TIME = "out of time"
    OVER_LIMIT = "over a limit"  # memory, processes, output or disk
    NOT_MERGED = "not merged"  # the kit raised on the notebook (merging, reading or deciding it)
    NOT_STARTED = "not started"  # the grader could not start the run, or it reported no cell
    RUN_FAILED = "run failed"  # the run died while the notebook's code ran (killed by it)

    @property
    def regrade(self) -> bool:
        """Whether the grader failed, not the submission: grade it again next time."""
        return self in _REGRADE


_REGRADE = frozenset({Problem.NOT_STARTED})


#: The most characters of a one-line error, and of an expected or printed line in it.
ERROR_CHARS, LINE_CHARS = 200, 160
#: The most characters of an expected or printed line, or an error, kept for feedback.
SHOWN_CHARS = 600
#: Where a failure is when the exercise cell itself failed (its checks are titled).
EXERCISE_CELL = "your exercise cell"
OUT_OF_TIME = "grading stopped: the notebook ran out of time"
#: The last lines of a student's traceback kept for feedback.
TRACEBACK_LINES = 40
#: A verdict's texts that reach the student's feedback.
SHOWN_TEXTS = ("reason", "expected", "got", "traceback")
#: What a student's feedback shows where their code printed a hidden check's code.
HIDDEN_CODE = "[code of a hidden check, not shown]"
DIFFERS = "output differs from the reference"
#: Why a stub's error that names an exercise which passed fails the exercise it was raised in.
RAISED_AFTER_PASS = "raised by your code: exercise {} passed"


@dataclass(frozen=True)
class CellResult:
    """How one cell ran, as the nbval plugin recorded it.

    Parameters
    ----------
    number : int
        nbval's cell number (the position among the notebook's code cells).
    ending : Ending
        How it ended.
    message : str
        For a cell stopped, what stopped it ("Timeout of 30 seconds exceeded ...", "the kernel
        died", "not run: ..."); for one that raised, the exception's line as the notebook
        showed it (``ValueError: shapes (3,) and (4,) not aligned``).
    where : str
        For an exception, the place in the notebook's code it was raised
        (``in f, line 3: return a / b``).
    stub : str
        The exercise whose unfinished stub raised (``"1.2"``), else "".
    waits_for : str
        For a ``NameError`` on a name a stopped cell did not define: the exercise that stopped it.
    difference : Difference or None
        For a cell whose output differs.
    environments : tuple of str
        With a difference: the reference's and this run's libraries, when they differ.
    traceback : str
        The exception's traceback, as the notebook showed it.
    recorded : str
        For a hidden check that passed, the last value it handed the grader
        (``hidden.record``), as JSON text; "" when it recorded none.
    """

    number: int
    ending: Ending
    message: str = ""
    where: str = ""
    stub: str = ""
    waits_for: str = ""
    difference: Difference | None = None
    environments: tuple[str, ...] = ()
    traceback: str = ""
    recorded: str = ""

    @property
    def exception(self) -> str:
        """The exception's type name (``"NameError"``), "" when the cell did not raise."""
        return self.message.split(":", 1)[0] if self.ending is Ending.RAISED else ""

    def error(self) -> str:
        """The one line that says why the cell failed ("" when it passed)."""
        if self.ending is Ending.PASSED:
            return ""
        if self.ending is Ending.DIFFERS:
            return differs_line(self.difference, self.environments)
        message = printable(self.message).replace("\n", " ")[:ERROR_CHARS]
        if self.ending is Ending.RAISED and self.where and not self.stub:
            return f"{message} ({printable(self.where)})"
        return message

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellResult:
        """A result as ``to_json`` wrote it.

        Raises
        ------
        ValueError, TypeError, KeyError
            If ``data`` is not such a result.
        """
        difference = data.get("difference")
        return cls(number=int(data["number"]), ending=Ending(data["ending"]),
                   message=str(data.get("message", "")), where=str(data.get("where", "")),
                   stub=str(data.get("stub", "")), waits_for=str(data.get("waits_for", "")),
                   difference=Difference(**difference) if difference else None,
                   environments=tuple(str(line) for line in data.get("environments", ())),
                   traceback=str(data.get("traceback", "")), recorded=str(data.get("recorded", "")))


def differs_line(difference: Difference | None, environments: Sequence[str] = ()) -> str:
    """``output differs from the reference: <where>; expected (reference): ...; got ...``."""
    if difference is None:
        return DIFFERS
    summary, *shown = (printable(line) for line in difference.lines())
    line = "; ".join([f"{DIFFERS}: {summary}"[:len(DIFFERS) + ERROR_CHARS],
                      *(text.strip()[:LINE_CHARS] for text in shown)])
    return f"{line} [{'; '.join(environments)}]" if environments else line


def _grader_paths() -> list[tuple[str, str]]:
    """The grader's own folders a traceback may name, longest first, each with the short name
    a student reads instead: the installed packages, Python's library, the kit's code."""
    paths = sysconfig.get_paths()
    named = {paths["purelib"]: "<site-packages>", paths["platlib"]: "<site-packages>",
             paths["stdlib"]: "<python>", str(REPO_ROOT): "<kit>"}
    return sorted(named.items(), key=lambda item: -len(item[0]))


def without_grader_paths(text: str) -> str:
    """``text`` with the grader's folders (its venv, Python, the kit's checkout) shortened to
    ``<site-packages>``, ``<python>`` and ``<kit>``: a student's feedback names files, not where
    the instructor's machine keeps them."""
    for path, short in _grader_paths():
        text = text.replace(f"{path}/", f"{short}/")  # a whole folder, not a prefix of another
    return text


@dataclass(frozen=True)
class Verdict:
    """What grading decided for one exercise.

    Parameters
    ----------
    exercise : str
        ``"N.M"``.
    status : Status
        Passed, not done, blocked or failed.
    reason : str
        Why it did not pass, in one line ("" when it passed).
    title : str
        The heading above the exercise.
    where : str
        The heading above the failing cell.
    position : int or None
        Which of the exercise's cells failed first: 0 the exercise cell, 1 its first check, and
        so on (None when it passed, or the run stopped before any cell was reported).
    points : float
        What the exercise is worth.
    partial : float
        For an exercise that failed but whose checks declare their own points: the points of
        the checks that passed (its cell ran); else 0.
    expected, got : str
        For an output difference in a visible check: the line expected and the line printed.
    difference : Difference or None
        The output difference itself (not kept for a hidden check).
    environments : tuple of str
        The reference's and this run's libraries, when they differ.
    hidden : bool
        Whether the failing check is a hidden one (nothing of it is shown).
    traceback : str
        The student's traceback (the last lines).
    flags : tuple of str
        What the instructor should look at (see ``flags``).
    awarded : float or None
        Points the instructor awarded instead (``overrides.read_overrides``); None: as graded.
    comment : str
        The instructor's comment on the exercise.
    stopped : bool
        Whether it failed because its run was stopped (a timeout, a dead kernel, a limit, a
        cell never run), not by what its code did: such a verdict may change on a quieter
        machine.
    note : str
        Where the exercise was found, when not in its own cell (``merge.Location.note``).
    """

    exercise: str
    status: Status
    reason: str = ""
    title: str = ""
    where: str = ""
    position: int | None = None
    points: float = DEFAULT_POINTS
    partial: float = 0.0
    expected: str = ""
    got: str = ""
    difference: Difference | None = None
    environments: tuple[str, ...] = ()
    hidden: bool = False
    traceback: str = ""
    flags: tuple[str, ...] = ()
    awarded: float | None = None
    comment: str = ""
    stopped: bool = False
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    @property
    def earned(self) -> float:
        """The points earned: what the instructor awarded, else all of them if passed, else
        those of the checks that passed (``partial``)."""
        if self.awarded is not None:
            return self.awarded
        return self.points if self.passed else self.partial

    def record(self) -> dict[str, Any]:
        """The exercise's entry in a grading record: every field as JSON data (``status`` as
        text, ``difference`` as an object or null, ``environments`` and ``flags`` as lists),
        and for people reading the file ``DERIVED_KEYS``: ``passed`` and ``check`` (the
        heading of the cell that failed, "" unless it failed). ``from_record`` reads it back
        whole."""
        fields = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        check = (EXERCISE_CELL if self.position == 0 else self.where) if self.status is Status.FAILED else ""
        return {**fields, "status": str(self.status), "environments": list(self.environments),
                "flags": list(self.flags),
                "difference": None if self.difference is None else dataclasses.asdict(self.difference),
                "passed": self.passed, "check": check}

    @classmethod
    def from_record(cls, entry: Mapping[str, Any]) -> Verdict:
        """The verdict ``record`` wrote (a field it lacks takes its default; ``DERIVED_KEYS``
        are not read)."""
        fields = {field.name: entry[field.name] for field in dataclasses.fields(cls) if field.name in entry}
        difference = fields.get("difference")
        return cls(**{**fields, "status": Status(entry["status"]),
                      "difference": None if difference is None else Difference(**difference),
                      "environments": tuple(fields.get("environments", ())),
                      "flags": tuple(fields.get("flags", ()))})


#: What ``Verdict.record`` adds for people reading the file, derived from the fields.
DERIVED_KEYS = {"passed": (bool,), "check": (str,)}


def decide(graded: NotebookNode, results: Mapping[int, CellResult], problem: str = "", *,
           items: Sequence[Exercise] | None = None, points: Mapping[str, float] | None = None,
           check_points: Mapping[str, float] | None = None, flags: Mapping[str, Sequence[str]] | None = None,
           added: Iterable[str] = ()) -> list[Verdict]:
    """One verdict per exercise of a notebook that nbval ran: the one decision of the kit.

    An exercise passes when its cell and all its own checks ran as their references say. A
    failure is put down to an unfinished stub when one is why: the exercise's own (not done)
    or another's (blocked by it), shown in the failing cell or, for a ``NameError``, in the
    cell that should have defined the name.

    Parameters
    ----------
    graded : NotebookNode
        The notebook as it ran.
    results : mapping of int to CellResult
        How each cell ended, by nbval's cell number; cells missing did not run. Empty when the
        run stopped before reporting any.
    problem : str
        What stopped the whole run ("" when nothing did). The exercises whose cells all ended
        before it keep their verdicts; the one it stopped in fails with it, and later ones as
        not run.
    items : sequence of Exercise, optional
        The exercises to decide (default every exercise of ``graded``).
    points, flags : mapping, optional
        Each exercise's points (default 1) and what the instructor should look at.
    check_points : mapping of str to float, optional
        The points of each check that declares its own, by cell id: an exercise that fails
        after its own cell ran earns those of its checks that passed (``Verdict.partial``).
    added : iterable of str
        Ids of the cells the student added: a failure after one of them raised says so.
    """
    items = exercises(graded) if items is None else items
    points, flags = points or {}, flags or {}
    numbers = code_numbers(graded)
    by_id = {cell.id: cell for cell in graded.cells}
    first = [Verdict(ex.id, Status.PASSED, title=heading_above(graded, ex.cell_ids[0]),
                     points=points.get(ex.id, DEFAULT_POINTS),
                     flags=tuple(flags.get(ex.id, ())))
             for ex in items]
    if not results:
        return [replace(verdict, status=Status.FAILED, reason=problem or OUT_OF_TIME, stopped=True)
                for verdict in first]
    raised = sorted((numbers[i], by_id[i], results[numbers[i]]) for i in added
                    if numbers.get(i) in results and results[numbers[i]].ending is not Ending.PASSED)
    # by position: the tests' harness decides one exercise many times, once per answer
    failures = [_first_failure(ex, numbers, results) for ex in items]
    done = {ex.id for ex, failed in zip(items, failures, strict=True) if failed is None}
    decided, stopped_in = [], ""
    for ex, passed, failed in zip(items, first, failures, strict=True):
        if failed is None:
            decided.append(passed)
            continue
        position, cell = failed
        verdict = replace(passed, where=heading_above(graded, ex.cell_ids[position]), position=position,
                          stopped=cell.ending is Ending.STOPPED, **_status_and_reason(ex.id, cell, done))
        if problem and cell.number not in results:  # the run stopped before this cell ended
            reason = f"not run: grading stopped in {stopped_in}" if stopped_in else problem
            stopped_in = stopped_in or ex.id
            verdict = replace(verdict, status=Status.FAILED, reason=reason, stopped=True)
        elif verdict.status is Status.FAILED:
            failing = by_id[ex.cell_ids[position]]
            verdict = _explained(verdict, cell, is_graded_hidden(failing), hidden_intent(failing.source),
                                 [(c, r) for number, c, r in raised if number < cell.number])
        if verdict.status is Status.FAILED:  # a stop too keeps the checks that passed before it
            verdict = replace(verdict, partial=_partial(ex, position, numbers, results, check_points or {}))
        decided.append(verdict)
    secrets = hidden_lines(graded)
    return [_without_secrets(verdict, secrets) for verdict in decided]


def _without_secrets(verdict: Verdict, secrets: Sequence[str]) -> Verdict:
    """The verdict with every text a student may see cleared of the hidden checks' code
    (``secrets``): student code can read the cell that calls it and print it, or raise it,
    in a later exercise's error."""
    texts: dict[str, Any] = {name: scrubbed(getattr(verdict, name), secrets) for name in SHOWN_TEXTS}
    difference = verdict.difference
    if difference is not None:
        cleared: dict[str, Any] = {name: scrubbed(getattr(difference, name), secrets)
                                   for name in ("expected", "got", "reason")}
        difference = replace(difference, **cleared)
    return replace(verdict, difference=difference, **texts)


def scrubbed(text: str, secrets: Sequence[str]) -> str:
    """``text`` with each of the ``secrets`` (lines of hidden checks) it holds replaced by
    ``HIDDEN_CODE``; the whole of it replaced when one is still there once all white space is
    taken out (a line re-spaced or split over several)."""
    for secret in secrets:
        text = text.replace(secret, HIDDEN_CODE)
    squashed = _squashed(text)
    return HIDDEN_CODE if any(_squashed(secret) in squashed for secret in secrets) else text


def _squashed(text: str) -> str:
    return re.sub(r"\s+|\\n|\\t", "", text)


def _first_failure(ex: Exercise, numbers: Mapping[str, int],
                   results: Mapping[int, CellResult]) -> tuple[int, CellResult] | None:
    """The first of an exercise's cells that did not pass (0 the exercise cell, 1 its first
    check, ...) with its result, or None."""
    for position, cell_id in enumerate(ex.cell_ids):
        result = results.get(numbers[cell_id]) or CellResult(numbers[cell_id], Ending.STOPPED, "not run")
        if result.ending is not Ending.PASSED:
            return position, result
    return None


def _partial(ex: Exercise, position: int, numbers: Mapping[str, int], results: Mapping[int, CellResult],
             check_points: Mapping[str, float]) -> float:
    """The points of the exercise's checks that passed, when its own cell ran (``position``,
    its first failure, is a check): partial credit, where its checks declare points."""
    if position == 0:
        return 0.0
    return float(sum(check_points[cell_id] for cell_id in ex.cell_ids[1:] if cell_id in check_points
                     and numbers[cell_id] in results and results[numbers[cell_id]].ending is Ending.PASSED))


def _status_and_reason(exercise: str, cell: CellResult, done: Collection[str] = ()) -> dict[str, Any]:
    """Not done, blocked or failed, and the line that says why.

    A ``NameError`` is put down to a stub only when the kernel said the missing name waits
    for it (a name the stub's cell stopped before defining); any other missing name is the
    student's own error (a typo), whatever stubs raised before it. An exercise is blocked by
    another only while that one has not passed (``done``: the exercises that passed): a stub's
    error naming an exercise that passed was raised by the student's own code, and fails it.
    """
    blocker = cell.stub
    if not blocker and cell.exception == "NameError":
        blocker = cell.waits_for
    if blocker and blocker != exercise and blocker in done:
        return {"status": Status.FAILED, "reason": f"{cell.error()} ({RAISED_AFTER_PASS.format(blocker)})"}
    if blocker and blocker != exercise:
        return {"status": Status.BLOCKED, "reason": f"blocked by {blocker} ({NOT_DONE})"}
    if blocker:  # its stub's error as the notebook showed it, or the name its stub left undefined
        return {"status": Status.NOT_DONE, "reason": cell.error() if cell.stub else not_done(exercise)}
    return {"status": Status.FAILED, "reason": cell.error()}


def _explained(verdict: Verdict, cell: CellResult, hidden: bool, intent: str,
               raised_before: list[tuple[NotebookNode, CellResult]]) -> Verdict:
    """A failure with what the student may see of it: of a hidden check only its stated
    ``intent``, never its output, code or values; and the first of their added cells that
    raised before it."""
    reason = verdict.reason
    if hidden and cell.ending is Ending.DIFFERS:
        reason = f"{DIFFERS} (a hidden check" + (f": {intent})" if intent else ")")
    elif hidden and cell.ending is Ending.RAISED:
        reason = f"{cell.exception} in a hidden check" + (f" ({intent})" if intent else "")
    if raised_before:
        added, result = raised_before[0]
        first_line = next((line for line in added.source.splitlines() if line.strip()), "")
        reason += f" (earlier, your added cell '{first_line[:60]}' raised {result.error()[:120]})"
    if hidden:
        return replace(verdict, reason=reason[:SHOWN_CHARS], hidden=True)
    difference = cell.difference
    shown = difference if difference is not None and difference.line > 0 else None
    return replace(verdict, reason=reason[:SHOWN_CHARS], difference=difference,
                   environments=cell.environments,
                   expected=printable(shown.expected).strip()[:SHOWN_CHARS] if shown is not None else "",
                   got=printable(shown.got).strip()[:SHOWN_CHARS] if shown is not None else "",
                   traceback=_shown_traceback(cell.traceback))


def _shown_traceback(traceback: str) -> str:
    """The last ``TRACEBACK_LINES`` of a student's traceback, printable, without the grader's folders."""
    return without_grader_paths(printable("\n".join(traceback.splitlines()[-TRACEBACK_LINES:])))
