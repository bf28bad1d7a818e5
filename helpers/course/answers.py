"""Answer sheets: every student's written answers to one notebook, for marking by hand.

A written answer is a markdown cell whose metadata names the question (``{"kit": {"answer":
"3.a"}}``; see ``release``). ``kit grade`` reads those cells from the submitted notebooks (no
run needed) and writes, per notebook with questions, ``SUBMISSIONS_DIR/answers_<notebook>.csv``
(``SHEET_COLUMNS``: one row per student and question, ``points`` left empty for the
instructor) and ``answers_<notebook>.html``, the same answers grouped by question beside the
model answer, to read offline. A student who deleted or emptied an answer cell, or handed in
no notebook, has an empty answer.

The instructor types points into the CSV. Writing again merges: the points found in the sheet
are carried over, by student and question, into the new one; and a sheet the instructor has
changed is never overwritten (``owned.write_owned``): the merged sheet goes beside it under a
stamped name. ``written_points`` sums each student's points over the sheets, for the class
table of ``kit grade --summary``.
"""

from __future__ import annotations

import html
import sys
from collections.abc import Mapping
from pathlib import Path

import nbformat
import pandas as pd
from nbformat import NotebookNode

from helpers.course import layout
from helpers.course.gradebook import from_spreadsheet, spreadsheet_csv
from helpers.course.release import ANSWER_PLACEHOLDER, answer_cells, answer_id, blank_answers
from helpers.errors import KitError
from helpers.owned import write_owned

SHEET_COLUMNS = ["student", "question", "prompt", "answer", "points"]
_BEGIN, _END = "=== BEGIN ANSWER ===", "=== END ANSWER ==="
_CSP = "default-src 'none'; style-src 'unsafe-inline'"  # the page loads and runs nothing
_CSS = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.45; color: #1a1a1a; }
table { border-collapse: collapse; margin: 1rem 0; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.answer { white-space: pre-wrap; } .empty { color: #8a5a00; }
.model { background: #f1f7f1; border-left: 4px solid #17663a; padding: 0.5rem 1rem; white-space: pre-wrap; }
"""


def questions(solution: NotebookNode, name: str = "notebook") -> dict[str, tuple[str, str, str]]:
    """A solution's questions: ``{id: (prompt, model answer, released cell source)}``.

    The prompt is the cell's text before the model answer, the released source what the
    student starts from (the model answer replaced by ``YOUR ANSWER HERE``).
    """
    found = {}
    for cell in answer_cells(solution, name):
        prompt, _, rest = cell.source.partition(_BEGIN)
        found[answer_id(cell)] = (prompt.strip(), rest.partition(_END)[0].strip(), blank_answers(cell.source))
    return found


def written_answer(source: str, released: str) -> str:
    """What the student wrote in an answer cell: its text without the question around the
    placeholder, and without the placeholder itself ('' for a cell left as released)."""
    before, _, after = (part.strip() for part in released.partition(ANSWER_PLACEHOLDER))
    text = source.strip()
    if before and text.startswith(before):
        text = text[len(before):]
    if after and text.endswith(after):
        text = text[:-len(after)]
    return text.replace(ANSWER_PLACEHOLDER, "").strip()


def student_answers(submission: Path | None, asked: Mapping[str, tuple[str, str, str]]) -> dict[str, str]:
    """``{question id: answer}`` from one submitted notebook ('' for each answer not found).

    A missing or unreadable notebook answers nothing; of two cells with one id (a copied
    cell), the first that holds an answer counts.
    """
    answers = dict.fromkeys(asked, "")
    if submission is None:
        return answers
    try:
        cells = nbformat.read(submission, as_version=4).cells
    except Exception:  # any unreadable notebook answers nothing; grading says why
        return answers
    for cell in cells:
        question = answer_id(cell) if isinstance(cell, dict) else None
        if question in answers and not answers[question] and isinstance(cell.get("source"), str):
            answers[question] = written_answer(cell.source, asked[question][2])
    return answers


def read_sheet(path: Path) -> pd.DataFrame:
    """An answer sheet as the instructor left it, every value as text (empty table if none)."""
    if not Path(path).is_file():
        return pd.DataFrame(columns=SHEET_COLUMNS)
    try:
        sheet = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError) as err:
        raise KitError(f"{path} is not a readable answer sheet ({err}); mend or remove it.") from None
    missing = [column for column in ("student", "question", "points") if column not in sheet.columns]
    if missing:
        raise KitError(f"{path} lacks the column(s) {', '.join(missing)} of an answer sheet.")
    return sheet.map(from_spreadsheet)


def sheet(asked: Mapping[str, tuple[str, str, str]], submissions: Mapping[str, Path | None],
          kept: pd.DataFrame) -> pd.DataFrame:
    """The answer sheet of one notebook: each student's answer to each question (``asked``, as
    from ``questions``), with the points of ``kept`` (an earlier sheet) carried over by
    student and question."""
    points = {(row.student, row.question): row.points for row in kept.itertuples()}
    rows = [{"student": student, "question": question, "prompt": asked[question][0], "answer": answer,
             "points": points.get((student, question), "")}
            for student, path in sorted(submissions.items())
            for question, answer in student_answers(path, asked).items()]
    return pd.DataFrame(rows, columns=SHEET_COLUMNS)


def render_html(notebook: str, table: pd.DataFrame, models: Mapping[str, str]) -> str:
    """The sheet as one offline HTML page: per question, its model answer and every student's
    answer and points. Every text is escaped."""
    body = [f"<h1>Written answers: {html.escape(notebook)}</h1>"]
    for question, group in table.groupby("question", sort=False):
        rows = "".join(
            f"<tr><td>{html.escape(row.student)}</td>"
            + (f'<td class="answer">{html.escape(row.answer)}</td>' if row.answer
               else '<td class="empty">(no answer)</td>')
            + f"<td>{html.escape(str(row.points))}</td></tr>" for row in group.itertuples())
        body += [f"<h2>{html.escape(question)}</h2><p>{html.escape(group.prompt.iloc[0])}</p>",
                 f'<div class="model">{html.escape(models.get(question, ""))}</div>',
                 f"<table><thead><tr><th>student</th><th>answer</th><th>points</th></tr></thead>"
                 f"<tbody>{rows}</tbody></table>"]
    return "\n".join(["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
                      f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
                      f"<title>Written answers: {html.escape(notebook)}</title><style>{_CSS}</style>"
                      "</head><body>", *body, "</body></html>", ""])


def write_sheets(submissions_dir: Path, solution_path: Path,
                 submissions: Mapping[str, Path | None]) -> list[Path]:
    """Write the CSV and HTML answer sheets of one notebook; return the paths written.

    Parameters
    ----------
    submissions_dir : Path
        The class folder: the sheets go there.
    solution_path : Path
        The solution notebook, which holds the questions.
    submissions : mapping of str to Path or None
        Each student's submitted notebook (None: handed in nothing).

    Returns
    -------
    list of Path
        The CSV and the HTML written (a stamped name beside a sheet the instructor changed);
        none for a notebook without written answers.
    """
    solution_path = Path(solution_path)
    asked = questions(nbformat.read(solution_path, as_version=4), solution_path.name)
    if not asked:
        return []
    csv_path = layout.sheet_path(submissions_dir, solution_path.stem)
    table = sheet(asked, submissions, read_sheet(csv_path))
    models = {question: model for question, (_, model, _) in asked.items()}
    return [write_owned(csv_path, spreadsheet_csv(table)),
            write_owned(layout.sheet_path(submissions_dir, solution_path.stem, ".html"),
                        render_html(solution_path.stem, table, models))]


def written_points(submissions_dir: Path) -> pd.Series:
    """Each student's points for written answers, summed over every answer sheet.

    Raises
    ------
    KitError
        A ``points`` value that is neither empty nor a number >= 0, naming the sheet, student
        and question.
    """
    totals: dict[str, float] = {}
    for path in layout.sheet_paths(submissions_dir):
        if path.stem.count("."):  # a stamped sheet written beside one the instructor has marked
            _warn_if_newer(path, path.with_name(f"{path.stem.split('.')[0]}.csv"))
            continue
        for row in read_sheet(path).itertuples():
            totals[row.student] = totals.get(row.student, 0.0) + _points(path, row)
    return pd.Series(totals, name="written", dtype=float).sort_index()


def _warn_if_newer(stamped: Path, counted: Path) -> None:
    """Say that marks typed into a newer stamped sheet are not counted (only ``counted``'s are)."""
    if counted.is_file() and stamped.stat().st_mtime > counted.stat().st_mtime:
        print(f"{stamped.name} is newer than {counted.name}, whose points are the ones counted: copy its new "
              f"answers' points into {counted.name} (or replace it with {stamped.name}).", file=sys.stderr)


def _points(path: Path, row) -> float:
    text = str(row.points).strip()
    if not text:
        return 0.0
    value = pd.to_numeric(text, errors="coerce")
    if pd.isna(value) or value < 0:
        raise KitError(f"{path}: the points of {row.student}, question {row.question}, must be empty "
                       f"or a number >= 0, not {text!r}.")
    return float(value)
