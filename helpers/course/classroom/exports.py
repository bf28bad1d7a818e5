"""The class table for a learning platform: a roster, and Canvas's and Moodle's import formats.

Grading knows students by their folder names. ``SUBMISSIONS_DIR/roster.csv``, which the
instructor keeps (``ROSTER_COLUMNS``: folder, student_id, name, email), says who each folder
is; with it, ``kit grade --summary`` also writes the class table (``summaries.summary``:
points per notebook, written answers, total) as

- ``gradebook_canvas.csv``: Canvas's gradebook import ("Import" in the Gradebook): the
  columns ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column
  per assignment, and a ``Points Possible`` row under the header, as Canvas's own export
  writes it. Canvas matches a row by ``SIS User ID`` (the roster's student id) or ``SIS Login
  ID`` (its email); ``ID`` (Canvas's internal number) is left empty.
- ``gradebook_moodle.csv``: Moodle's "Import grades: CSV file": one row per student with
  ``ID number`` and ``Email address`` (either maps to the user: "Identify user by") and
  ``Full name``, then one numeric column per grade item, each mapped to a grade item on
  import.

Folders missing from the roster are named on stderr and left out; roster rows without a
graded notebook get empty cells.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from helpers.course.classroom.layout import ROSTER_FILE, export_path, roster_path
from helpers.course.classroom.spreadsheet import read_table
from helpers.course.classroom.summaries import summary
from helpers.course.safe_text import printable
from helpers.errors import KitError
from helpers.log import LOGGER
from helpers.owned import write_owned

ROSTER_COLUMNS = ["folder", "student_id", "name", "email"]
#: Canvas's identifying columns, in its gradebook export's order.
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS_ROW = "Points Possible"
#: Moodle's identifying columns (its grade export's names).
MOODLE_COLUMNS = ["ID number", "Email address", "Full name"]
#: The class table's columns that are no assignment of their own: an LMS sums its own total.
_NOT_GRADED = ("unmarked", "total", "max_total")


def read_roster(submissions_dir: Path) -> pd.DataFrame | None:
    """The roster (``ROSTER_COLUMNS``, one row per folder), or None when there is none.

    Raises
    ------
    KitError
        For a file without those columns, an empty folder or student id, or a folder or
        student id listed twice, naming it.
    """
    path = roster_path(submissions_dir)
    if not path.is_file():
        return None
    roster = read_table(path, ROSTER_COLUMNS)[ROSTER_COLUMNS].apply(lambda column: column.str.strip())
    for column in ("folder", "student_id"):
        if (roster[column] == "").any():
            raise KitError(f"{path}: every row needs a {column}.")
        twice = roster[column][roster[column].duplicated()]
        if not twice.empty:
            raise KitError(f"{path}: {column} {twice.iloc[0]!r} is listed twice.")
    return roster


def _scores(table: pd.DataFrame, roster: pd.DataFrame) -> pd.DataFrame:
    """The class table's assignment columns for the roster's rows, in its order (empty where
    nothing is graded); graded folders missing from the roster are named on stderr."""
    unknown = sorted(set(table.index) - set(roster.folder))
    if unknown:
        LOGGER.warning(f"not in {ROSTER_FILE}, left out of the LMS files: {', '.join(unknown)}")
    graded = [column for column in table.columns if column not in _NOT_GRADED]
    return table.reindex(roster.folder)[graded].reset_index(drop=True)


def points_possible(grades: pd.DataFrame, written: pd.DataFrame | None = None) -> dict[str, float]:
    """What each column of the class table is worth: each notebook's exercises, the written
    answers (``answers.written_marks``) and the total."""
    per_student = grades.groupby(["student", "notebook"])["max_points"].sum()
    possible = {str(k): float(v) for k, v in per_student.groupby(level="notebook").max().items()}
    if written is not None and not written.empty:
        possible["written"] = float(written["written_max"].max())
    return {**possible, "total": sum(possible.values())}


def canvas_table(table: pd.DataFrame, roster: pd.DataFrame, possible: dict[str, float]) -> pd.DataFrame:
    """The class table (``summaries.summary``) in Canvas's gradebook import format, with the
    ``Points Possible`` row from ``possible`` (``points_possible``)."""
    scores = _scores(table, roster)
    people = pd.DataFrame({"Student": roster.name.to_numpy(), "ID": "",
                           "SIS User ID": roster.student_id.to_numpy(),
                           "SIS Login ID": roster.email.to_numpy(), "Section": ""})
    header = pd.DataFrame([{**dict.fromkeys(CANVAS_COLUMNS, ""), "Student": CANVAS_POINTS_ROW,
                            **{column: possible.get(column, float("nan")) for column in scores.columns}}])
    return pd.concat([header, pd.concat([people, scores], axis=1)], ignore_index=True)


def moodle_table(table: pd.DataFrame, roster: pd.DataFrame) -> pd.DataFrame:
    """The class table (``summaries.summary``) in Moodle's CSV grade import format."""
    people = pd.DataFrame({"ID number": roster.student_id.to_numpy(),
                           "Email address": roster.email.to_numpy(), "Full name": roster.name.to_numpy()})
    return pd.concat([people, _scores(table, roster)], axis=1)


def write_exports(submissions_dir: Path, grades: pd.DataFrame,
                  written: pd.DataFrame | None = None) -> list[Path]:
    """Write the class table (``summaries.summary`` of ``grades`` and ``written``) in Canvas's
    and Moodle's formats when there is a roster; return the paths written (none without one).
    A file the instructor changed is kept, and the new one goes beside it (``owned.write_owned``)."""
    roster = read_roster(submissions_dir)
    if roster is None:
        return []
    table = summary(grades, written)  # an answer not marked yet is empty there, no grade of 0
    canvas = canvas_table(table, roster, points_possible(grades, written))
    return [write_owned(export_path(submissions_dir, "canvas"), _lms_csv(canvas)),
            write_owned(export_path(submissions_dir, "moodle"), _lms_csv(moodle_table(table, roster)))]


def _lms_csv(table: pd.DataFrame) -> str:
    """A table as an LMS imports it: printable text, no spreadsheet marks (an LMS would keep a
    leading apostrophe in an id or a name), empty cells where nothing is graded."""
    return table.map(lambda value: printable(value) if isinstance(value, str) else value).to_csv(index=False)
