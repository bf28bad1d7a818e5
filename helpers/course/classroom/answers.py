"""Answer sheets: every student's written answers to one notebook, for marking by hand.

A written answer is a markdown cell whose metadata names the question (``{"kit": {"answer":
"3.a"}}``; see ``cells``). ``kit grade`` reads those cells from the submitted notebooks (no
run needed) and writes, per notebook with questions, ``SUBMISSIONS_DIR/answers_<notebook>.csv``
(``SHEET_COLUMNS``: one row per student and question, with the question's ``max_points``;
``points`` and ``comment`` left empty for the instructor) and ``answers_<notebook>.html``, the
same answers grouped by question beside the model answer and its marking scheme, to read
offline. A student who deleted or emptied an answer cell, or handed in no notebook, has an
empty answer.

The instructor types points (0 to ``max_points``) and a comment into the CSV. Writing again
merges: the points and comments found in the sheet are carried over, by student and question,
into the new one; and a sheet the instructor has changed is never overwritten
(``owned.write_owned``): the merged sheet goes beside it under a stamped name.
``written_marks`` sums each student's points and maxima over the sheets, for the class table
of ``kit grade --summary``; ``marked`` gives each student's marks and comments per notebook,
for their feedback.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pandas as pd
from nbformat import NotebookNode

from helpers.course import config
from helpers.course.classroom import layout
from helpers.course.classroom.spreadsheet import read_table, spreadsheet_csv
from helpers.course.notebook.answer_text import written_answer
from helpers.course.notebook.cells import answer_cells, answer_id, answer_points, marking_scheme
from helpers.course.notebook.release import released_answer
from helpers.course.safe_text import printable
from helpers.errors import KitError
from helpers.log import LOGGER
from helpers.owned import changed_since_written, write_owned

SHEET_COLUMNS = ["student", "question", "prompt", "answer", "max_points", "points", "comment"]
#: The columns an instructor fills in, carried over when a sheet is written again.
MARKED_COLUMNS = ("points", "comment")
_BEGIN, _END = "=== BEGIN ANSWER ===", "=== END ANSWER ==="
_CSP = "default-src 'none'; style-src 'unsafe-inline'"  # the page loads and runs nothing
_CSS = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.45; color: #1a1a1a; }
table { border-collapse: collapse; margin: 1rem 0; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.answer { white-space: pre-wrap; } .empty { color: #8a5a00; }
.model { background: #f1f7f1; border-left: 4px solid #17663a; padding: 0.5rem 1rem; white-space: pre-wrap; }
.marking { background: #f4f4fb; border-left: 4px solid #3a3a8a; padding: 0.5rem 1rem; }
"""


@dataclass(frozen=True)
class Question:
    """One written question of a solution notebook.

    Parameters
    ----------
    prompt : str
        The cell's text before the model answer.
    model : str
        The model answer.
    released : str
        The cell as the student starts from it (the model answer replaced by the placeholder).
    points : float
        What the answer is worth (``cells.answer_points``).
    marking : tuple of str
        What earns the marks (``cells.marking_scheme``), for the marker only.
    """

    prompt: str
    model: str
    released: str
    points: float
    marking: tuple[str, ...] = ()


def questions(solution: NotebookNode, name: str = "notebook") -> dict[str, Question]:
    """A solution's questions, by id, in order (see ``Question``).

    Raises
    ------
    KitError
        If an answer cell has no unique id or its points are not a positive number.
    """
    found = {}
    for cell in answer_cells(solution, name):
        question = answer_id(cell)
        assert question is not None  # answer_cells keeps only the cells with an answer id
        prompt, _, rest = cell.source.partition(_BEGIN)
        found[question] = Question(prompt.strip(), rest.partition(_END)[0].strip(),
                                   released_answer(cell, name), answer_points(cell, name),
                                   marking_scheme(cell))
    return found


def student_answers(submission: Path | None, asked: Mapping[str, Question]) -> dict[str, str]:
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
            answers[question] = written_answer(cell.source, asked[question].released)
    return answers


def read_sheet(path: Path) -> pd.DataFrame:
    """An answer sheet as the instructor left it, every value as text (empty table if none;
    a sheet written before ``max_points`` and ``comment`` existed gets them empty)."""
    if not Path(path).is_file():
        return pd.DataFrame(columns=SHEET_COLUMNS)
    sheet = read_table(Path(path), ["student", "question", "points"])
    for column in ("max_points", "comment"):
        if column not in sheet.columns:
            sheet[column] = ""
    return sheet


def sheet(asked: Mapping[str, Question], submissions: Mapping[str, Path | None],
          kept: pd.DataFrame) -> pd.DataFrame:
    """The answer sheet of one notebook: each student's answer to each question (``asked``, as
    from ``questions``), with the points and comments of ``kept`` (an earlier sheet) carried
    over by student and question."""
    marks = {(row["student"], row["question"]): row for row in kept.to_dict("records")}
    rows = [{"student": student, "question": question, "prompt": asked[question].prompt, "answer": answer,
             "max_points": f"{asked[question].points:g}",
             **{column: marks.get((student, question), {}).get(column, "") for column in MARKED_COLUMNS}}
            for student, path in sorted(submissions.items())
            for question, answer in student_answers(path, asked).items()]
    return pd.DataFrame(rows, columns=SHEET_COLUMNS)


def render_html(notebook: str, table: pd.DataFrame, asked: Mapping[str, Question]) -> str:
    """The sheet as one offline HTML page: per question, its model answer, marking scheme and
    maximum, and every student's answer, points and comment. Every text is printable and
    escaped (``_e``)."""
    body = [f"<h1>Written answers: {_e(notebook)}</h1>"]
    for question, group in table.groupby("question", sort=False):
        rows = "".join(
            f"<tr><td>{_e(row.student)}</td>"
            + (f'<td class="answer">{_e(row.answer)}</td>' if row.answer
               else '<td class="empty">(no answer)</td>')
            + f"<td>{_e(str(row.points))}</td><td>{_e(str(row.comment))}</td></tr>"
            for row in group.itertuples())
        asking = asked.get(question)
        marking = "".join(f"<li>{_e(line)}</li>" for line in (asking.marking if asking else ()))
        body += [f"<h2>{_e(question)} ({_e(str(group.max_points.iloc[0]))} points)</h2>"
                 f"<p>{_e(group.prompt.iloc[0])}</p>",
                 f'<div class="model">{_e(asking.model if asking else "")}</div>',
                 f'<div class="marking"><strong>Marking</strong><ul>{marking}</ul></div>' if marking else "",
                 f"<table><thead><tr><th>student</th><th>answer</th><th>points</th><th>comment</th></tr>"
                 f"</thead><tbody>{rows}</tbody></table>"]
    return "\n".join(["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
                      f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
                      f"<title>Written answers: {_e(notebook)}</title><style>{_CSS}</style>"
                      "</head><body>", *body, "</body></html>", ""])


def _e(text: object) -> str:
    """``text`` as HTML: ``printable`` (an answer may hold anything) and escaped."""
    return html.escape(printable(str(text)), quote=True)


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
        The CSV and the HTML written (a stamped name beside a sheet the instructor changed,
        when the answers handed in changed since); none for a notebook without written
        answers, or when the instructor's marked sheet already holds every answer as it is.
    """
    solution_path = Path(solution_path)
    asked = questions(nbformat.read(solution_path, as_version=4), solution_path.name)
    if not asked:
        return []
    csv_path = layout.sheet_path(submissions_dir, solution_path.stem)
    kept = read_sheet(csv_path)
    table = sheet(asked, submissions, kept)
    if changed_since_written(csv_path) and _same_sheet(table, kept):
        return []  # marks typed in and nothing new handed in: no copy beside it, no warning
    return [write_owned(csv_path, spreadsheet_csv(table)),
            write_owned(layout.sheet_path(submissions_dir, solution_path.stem, ".html"),
                        render_html(solution_path.stem, table, asked))]


def _same_sheet(table: pd.DataFrame, kept: pd.DataFrame) -> bool:
    """Whether ``kept`` (a sheet as read) holds the rows of ``table`` (``sheet``), as text."""
    as_text = [frame.reindex(columns=SHEET_COLUMNS).fillna("").astype(str).reset_index(drop=True)
               for frame in (table, kept)]
    return as_text[0].equals(as_text[1])


def marked(submissions_dir: Path) -> pd.DataFrame:
    """Every row of the counted answer sheets, with ``notebook``, and ``points`` and
    ``max_points`` as numbers (``points`` NaN where not marked yet).

    Only the sheets the kit names ``answers_<notebook>.csv`` count: a stamped one written beside
    a marked sheet is named when it is newer, and not counted.

    Raises
    ------
    KitError
        A ``points`` value that is neither empty nor a number from 0 to the question's
        ``max_points``, naming the sheet, student and question.
    """
    tables = []
    for path in layout.sheet_paths(submissions_dir):
        if path.stem.count("."):  # a stamped sheet written beside one the instructor has marked
            _warn_if_newer(path, path.with_name(f"{path.stem.split('.')[0]}.csv"))
            continue
        notebook = path.stem.removeprefix(layout.SHEET_PREFIX)
        table = _with_maxima(read_sheet(path), notebook)
        table["max_points"] = [_number(path, row, "max_points") for row in table.itertuples()]
        table["points"] = [_number(path, row, "points", row.max_points) for row in table.itertuples()]
        tables.append(table.assign(notebook=notebook))
    columns = [*SHEET_COLUMNS, "notebook"]
    return pd.concat(tables, ignore_index=True)[columns] if tables else pd.DataFrame(columns=columns)


def _with_maxima(sheet: pd.DataFrame, notebook: str) -> pd.DataFrame:
    """A sheet whose empty ``max_points`` (one written before the column existed) are filled
    from its solution's questions, where ``solutions/`` has that notebook."""
    solution = config.SOLUTIONS_DIR / f"{notebook}.ipynb"
    if not (sheet["max_points"] == "").any() or not solution.is_file():
        return sheet
    worth = {question: f"{asked.points:g}" for question, asked in
             questions(nbformat.read(solution, as_version=4), notebook).items()}
    filled = [text or worth.get(question, "") for text, question in zip(sheet.max_points, sheet.question,
                                                                         strict=True)]
    return sheet.assign(max_points=filled)


def written_marks(submissions_dir: Path) -> pd.DataFrame:
    """Each student's points for written answers, summed over every counted answer sheet.

    Returns
    -------
    DataFrame
        Indexed by ``student``: ``written`` (the points marked; NaN while none is marked, not
        0), ``written_max`` (what all the student's answers are worth), ``marked_max`` (what
        the marked ones are worth) and ``unmarked`` (how many answers wait for a mark).

    Raises
    ------
    KitError
        As ``marked``.
    """
    table = marked(submissions_dir).assign(unmarked=lambda t: t.points.isna())
    table["marked_max"] = table.max_points.where(~table.unmarked, 0.0)
    # min_count: a student with no answer marked yet has no written points (NaN), not 0
    totals = table.groupby("student").agg(written=("points", lambda points: points.sum(min_count=1)),
                                          written_max=("max_points", "sum"), marked_max=("marked_max", "sum"),
                                          unmarked=("unmarked", "sum"))
    return totals.astype({"written": float, "written_max": float, "marked_max": float,
                          "unmarked": int}).sort_index()


def _warn_if_newer(stamped: Path, counted: Path) -> None:
    """Say that marks typed into a newer stamped sheet are not counted (only ``counted``'s are)."""
    if counted.is_file() and stamped.stat().st_mtime > counted.stat().st_mtime:
        LOGGER.warning(f"{stamped.name} is newer than {counted.name}, whose points are the ones counted: "
                       f"copy its new answers' points into {counted.name} (or replace it with "
                       f"{stamped.name}).")


def _number(path: Path, row, column: str, most: float | None = None) -> float:
    """A sheet's number in ``column`` (NaN when empty), from 0 up to ``most`` when given."""
    text = str(getattr(row, column)).strip()
    if not text:
        return float("nan")
    value = pd.to_numeric(text, errors="coerce")
    upper = "" if most is None or pd.isna(most) else f" to {most:g}"
    if pd.isna(value) or value < 0 or (upper and value > most):
        raise KitError(f"{path}: the {column} of {row.student}, question {row.question}, must be empty "
                       f"or a number from 0{upper}, not {text!r}.")
    return float(value)
