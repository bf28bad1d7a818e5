"""One feedback file per student and notebook, from its grading record's verdicts.

``kit grade`` (and ``kit grade --feedback-only``, from the records alone) writes
``SUBMISSIONS_DIR/feedback/<student>/<notebook>.html`` and ``.md``: which file was graded,
each exercise's status and points, and for each exercise that did not pass the failing check,
what it expected beside what the student's code printed, the error and the traceback; then the
written answers the instructor has marked (``answers.marked``): points, maximum and comment.

Everything in a record may come from a student's code, so the HTML escapes every text and
runs nothing (no JavaScript, no external resources: it reads offline), and the Markdown puts
student output in fences no backtick run in it can close. A hidden check's expected output is
never shown: it would give the answer away.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.course.classroom import answers, gradebook, layout
from helpers.course.classroom.record import Record
from helpers.course.engine.verdict import Verdict
from helpers.course.notebook.compare import EXPECTED, GOT
from helpers.course.safe_text import printable
from helpers.owned import write_owned

TRACEBACK_LABEL = "traceback"
HIDDEN_NOTE = "a hidden check failed (its expected output is not shown)"
FLAGGED = "flagged for review"
NOTHING_PRINTED = "(nothing printed)"
WRITTEN = "Written answers"
NOTES = "Your instructor's notes"


# Only what is in the page: the style sheet; no script, image, font or frame may load.
_CSP = "default-src 'none'; style-src 'unsafe-inline'"
_CSS = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.45; color: #1a1a1a; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.passed { color: #17663a; } .failed, .blocked { color: #a4161a; } .not-done { color: #8a5a00; }
.problem { background: #fff1f0; border-left: 4px solid #a4161a; padding: 0.5rem 1rem; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.pair h4, section h4 { margin: 0.8rem 0 0.3rem; }
pre { background: #f6f6f6; border: 1px solid #ddd; padding: 0.6rem; overflow-x: auto;
      white-space: pre-wrap; word-break: break-word; margin: 0; }
footer { margin-top: 2rem; color: #555; font-size: 0.9rem; }
"""


# --------------------------------------------------------------------------- shared wording


def _points(value: float) -> str:
    return f"{value:g}"


def _status(verdict: Verdict) -> str:
    flagged = f"; {FLAGGED}" if verdict.flags else ""
    return f"{verdict.status}{flagged}"


def _earned(verdict: Verdict) -> str:
    partial = " (the checks that passed)" if verdict.partial and verdict.awarded is None else ""
    return f"{_points(verdict.earned)} / {_points(verdict.points)}{partial}"


def _total(verdicts: Sequence[Verdict]) -> str:
    return f"{_points(sum(v.earned for v in verdicts))} / {_points(sum(v.points for v in verdicts))}"


def _heading(verdict: Verdict) -> str:
    title = f": {verdict.title}" if verdict.title else ""
    return f"Exercise {verdict.exercise}{title} ({verdict.status})"


def _shows_got(verdict: Verdict) -> bool:
    return bool(verdict.got) or (not verdict.hidden and bool(verdict.expected))


def _run(record: Record) -> str:
    def seconds(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f} s"

    memory = record.peak_memory_mb
    ran = ("nothing ran" if record.seconds is None and record.cpu_seconds is None else
           f"{seconds(record.seconds)} wall, {seconds(record.cpu_seconds)} CPU, peak memory "
           f"{'-' if memory is None else f'{memory:.1f} MB'}")
    return f"Run: {ran}. Graded {record.graded_at} (sandbox: {record.sandbox})."


# --------------------------------------------------------------------------- Markdown


def _fence(text: str) -> str:
    """``text`` (``printable``) in a fenced block longer than any backtick run in it, so
    nothing closes it."""
    text = printable(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip(chr(10))}\n{fence}"


def _code(text: str) -> str:
    """One line of untrusted text as an inline code span (shown as is, HTML and all)."""
    text = " ".join(printable(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}" if text else ""


def _md(text: str) -> str:
    """One line of plain text with what Markdown would act on (HTML, links, emphasis, table
    cells) backslash-escaped."""
    return re.sub(r"([\\`*\[\]<>|&#!])", r"\\\1", " ".join(printable(str(text)).split()))


def _marks(marks: pd.DataFrame | None, record: Record) -> list[dict]:
    """This record's marked written answers (points or a comment given), in sheet order."""
    if marks is None or marks.empty:
        return []
    mine = marks[(marks.student == record.student) & (marks.notebook == record.notebook)]
    return [row for row in mine.to_dict("records") if not pd.isna(row["points"]) or row["comment"]]


def _mark(row: dict) -> str:
    got = "not marked yet" if pd.isna(row["points"]) else _points(row["points"])
    return f"{got} / {_points(row['max_points'])}" if not pd.isna(row["max_points"]) else got


def render_markdown(record: Record, marks: pd.DataFrame | None = None) -> str:
    """The feedback on one record as Markdown (same content as ``render_html``); ``marks`` are
    the class's marked written answers (``answers.marked``)."""
    lines = [f"# Feedback: {_md(record.notebook)}, {_md(record.student)}", ""]
    graded = f"graded {_code(record.file)}" if record.file else "no notebook was found to grade"
    lines.append(f"- File: {graded}")
    if record.note:
        lines.append(f"- Note: {_md(record.note)}")
    if record.problem_line:
        lines.append(f"- **Problem with the whole notebook:** {_code(record.problem_line)}")
    verdicts = record.exercises
    lines += [f"- Points: {_total(verdicts)}", ""]
    if verdicts:
        lines += ["| exercise | title | status | points |", "|---|---|---|---|"]
        lines += [f"| {_md(v.exercise)} | {_md(v.title)} | {_status(v)} | {_earned(v)} |"
                  for v in verdicts]
        lines.append("")
    commented = [v for v in verdicts if v.comment]
    if commented:
        lines += [f"**{NOTES}**", ""] + [f"- {_md(v.exercise)}: {_md(v.comment)}" for v in commented] + [""]
    for v in [verdict for verdict in verdicts if not verdict.passed]:
        lines += [f"## {_md(_heading(v))}", ""]
        if v.where:
            lines += [f"Failing check: {_md(v.where)}", ""]
        if v.reason:
            lines += [f"Error: {_code(v.reason)}", ""]
        if v.hidden:
            lines += [f"*{HIDDEN_NOTE}*", ""]
        elif v.expected:
            lines += [f"**{EXPECTED}**", "", _fence(v.expected), ""]
        if _shows_got(v):
            lines += [f"**{GOT}**", "", _fence(v.got or NOTHING_PRINTED), ""]
        if v.traceback:
            lines += [f"**{TRACEBACK_LABEL}**", "", _fence(v.traceback), ""]
    written = _marks(marks, record)
    if written:
        lines += [f"## {WRITTEN}", "", "| question | points | comment |", "|---|---|---|"]
        lines += [f"| {_md(row['question'])} | {_mark(row)} | {_md(row['comment'])} |" for row in written]
        lines.append("")
    lines += ["---", "", _md(_run(record)), ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- HTML


def _e(text: Any) -> str:
    return html.escape(printable(str(text)), quote=True)


def _pre(label: str, text: str) -> str:
    return f"<div><h4>{_e(label)}</h4><pre>{_e(text)}</pre></div>"


def _html_exercise(v: Verdict) -> str:
    parts = [f"<section><h2>{_e(_heading(v))}</h2>"]
    if v.where:
        parts.append(f"<p>Failing check: {_e(v.where)}</p>")
    if v.reason:
        parts.append(f"<p>Error: <code>{_e(v.reason)}</code></p>")
    if v.hidden:
        parts.append(f"<p><em>{_e(HIDDEN_NOTE)}</em></p>")
    pair = []
    if not v.hidden and v.expected:
        pair.append(_pre(EXPECTED, v.expected))
    if _shows_got(v):
        pair.append(_pre(GOT, v.got or NOTHING_PRINTED))
    if pair:
        parts.append(f'<div class="pair">{"".join(pair)}</div>')
    if v.traceback:
        parts.append(_pre(TRACEBACK_LABEL, v.traceback))
    parts.append("</section>")
    return "\n".join(parts)


def render_html(record: Record, marks: pd.DataFrame | None = None) -> str:
    """The feedback on one record as a self-contained HTML page (``marks`` as for
    ``render_markdown``).

    Inline CSS only, no JavaScript, no external resource; every text is HTML-escaped.
    """
    title = f"Feedback: {record.notebook}, {record.student}"
    graded = (f"graded <code>{_e(record.file)}</code>" if record.file
              else "no notebook was found to grade")
    facts = [f"<li>File: {graded}</li>"]
    if record.note:
        facts.append(f"<li>Note: {_e(record.note)}</li>")
    if record.problem_line:
        facts.append(f'<li class="problem"><strong>Problem with the whole notebook:</strong> '
                     f"{_e(record.problem_line)}</li>")
    verdicts = record.exercises
    facts.append(f"<li>Points: {_total(verdicts)}</li>")
    body = [f"<h1>{_e(title)}</h1>", f"<ul>{''.join(facts)}</ul>"]
    if verdicts:
        rows = "".join(
            f"<tr><td>{_e(v.exercise)}</td><td>{_e(v.title)}</td>"
            f'<td class="{_e(v.status.replace(" ", "-"))}">{_e(_status(v))}</td>'
            f"<td>{_earned(v)}</td></tr>"
            for v in verdicts)
        body.append("<table><thead><tr><th>exercise</th><th>title</th><th>status</th>"
                    f"<th>points</th></tr></thead><tbody>{rows}</tbody></table>")
    commented = [v for v in verdicts if v.comment]
    if commented:
        notes = "".join(f"<li>{_e(v.exercise)}: {_e(v.comment)}</li>" for v in commented)
        body.append(f"<p><strong>{_e(NOTES)}</strong></p><ul>{notes}</ul>")
    body += [_html_exercise(v) for v in verdicts if not v.passed]
    written = _marks(marks, record)
    if written:
        rows = "".join(f"<tr><td>{_e(row['question'])}</td><td>{_e(_mark(row))}</td>"
                       f"<td>{_e(row['comment'])}</td></tr>" for row in written)
        body.append(f"<section><h2>{_e(WRITTEN)}</h2><table><thead><tr><th>question</th><th>points</th>"
                    f"<th>comment</th></tr></thead><tbody>{rows}</tbody></table></section>")
    body.append(f"<footer>{_e(_run(record))}</footer>")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        *body,
        "</body></html>",
        "",
    ])


# --------------------------------------------------------------------------- files


def write_feedback(submissions_dir: Path, record: Record, marks: pd.DataFrame | None = None) -> list[Path]:
    """Write the HTML and Markdown feedback on ``record``, with its marked written answers
    (``marks``, default read from the class's answer sheets); return the paths written.

    A feedback file edited since the kit wrote it is kept: the new one goes beside it under a
    stamped name, and that is the path returned (see ``owned.write_owned``).
    """
    marks = answers.marked(submissions_dir) if marks is None else marks
    page, text = layout.feedback_paths(submissions_dir, record.student, record.notebook)
    return [write_owned(page, render_html(record, marks)), write_owned(text, render_markdown(record, marks))]


def write_all_feedback(submissions_dir: Path, records: Iterable[Record] | None = None) -> list[Path]:
    """Write the feedback on every record (default: every usable record, with the instructor's
    corrections: ``gradebook.read_graded``)."""
    if records is None:
        records = gradebook.read_graded(submissions_dir)
    marks = answers.marked(submissions_dir)
    return [path for record in records for path in write_feedback(submissions_dir, record, marks)]
