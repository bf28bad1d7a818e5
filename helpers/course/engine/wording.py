"""A verdict in words, as ``kit check`` and ``check()`` show it to the student: ✓, not done yet,
or ✗ with the check's title and why (``describe``); why a failed exercise failed, one line
each (``explanation``). Deciding the verdict is ``verdict``'s; the instructor's feedback files
are ``classroom.feedback``'s.
"""

from __future__ import annotations

from helpers.course.engine.verdict import DIFFERS, Status, Verdict
from helpers.course.safe_text import printable
from helpers.exercises import NOT_DONE


def describe(verdict: Verdict) -> str:
    """A few lines for one exercise: ✓; not done yet; or ✗, the check's title and why; and
    where the exercise was found when not in its own cell."""
    shown = _described(verdict)
    return f"{shown}\n    {printable(verdict.note)}" if verdict.note else shown


def _described(verdict: Verdict) -> str:
    if verdict.status is Status.PASSED:
        return f"✓ {verdict.exercise}"
    if verdict.status is Status.NOT_DONE:
        return f"✗ {verdict.exercise}  {NOT_DONE}"
    if verdict.status is Status.BLOCKED:
        return f"✗ {verdict.exercise}  {verdict.reason}"
    title = f"  {verdict.where}" if verdict.where else ""
    return f"✗ {verdict.exercise}{title}\n    " + "\n    ".join(explanation(verdict))


def explanation(verdict: Verdict) -> list[str]:
    """Why a failed exercise failed, one line each: the error, or the output difference with
    the line expected and the line printed, and the libraries when they differ."""
    difference = verdict.difference
    if difference is None or verdict.hidden:
        return [verdict.reason]
    summary, *shown = (printable(line) for line in difference.lines())
    lines = [f"{DIFFERS}: {summary}", *shown]
    if verdict.environments:
        lines.append(f"({'; '.join(verdict.environments)})")
    return lines
