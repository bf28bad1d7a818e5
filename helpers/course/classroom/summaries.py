"""The class tables made from ``grades.csv``'s rows: ``gradebook.csv`` (points per student and
notebook, for an LMS import), the exercises' pass rates, and the rows an instructor should review.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from helpers.course.classroom.gradebook import exercise_key
from helpers.course.classroom.layout import summary_path
from helpers.course.classroom.spreadsheet import spreadsheet_csv
from helpers.course.engine.verdict import Status
from helpers.owned import write_owned

#: The statuses an exercise may have (``verdict.Status``), in the class table's order.
STATUSES = tuple(str(status) for status in (Status.PASSED, Status.FAILED, Status.BLOCKED, Status.NOT_DONE))


def flagged(grades: pd.DataFrame) -> pd.DataFrame:
    """The rows an instructor should review (non-empty ``flags``), with who, where and why."""
    flags = grades["flags"].fillna("").astype(str).str.strip()  # a read-back CSV has NaN for ''
    return grades.loc[flags != "", ["student", "notebook", "exercise", "flags"]]


def summary(grades: pd.DataFrame, written: pd.DataFrame | None = None) -> pd.DataFrame:
    """The class table: points earned per student and notebook.

    Parameters
    ----------
    grades : DataFrame
        ``grades_table``'s rows.
    written : DataFrame, optional
        Written answers per student (``answers.written_marks``): the points marked by hand
        become the ``written`` column (empty while none is marked) and count in ``total``;
        what the *marked* answers are worth counts in ``max_total``, so that ``total`` and
        ``max_total`` count the same answers; ``unmarked`` says how many wait for a mark.

    Returns
    -------
    DataFrame
        Indexed by ``student`` (sorted): one float column per notebook (points earned; NaN
        where the student has no grade for it), ``written`` and ``unmarked`` when given,
        ``total`` (points earned) and ``max_total`` (what the graded exercises and the marked
        written answers are worth).
    """
    if grades.empty:
        return pd.DataFrame(columns=["total", "max_total"], index=pd.Index([], name="student"),
                            dtype=float)
    table = grades.pivot_table(index="student", columns="notebook", values="points",
                               aggfunc="sum").astype(float)
    table = table.reindex(sorted(table.columns), axis=1)
    table.columns.name = None
    by_student = grades.groupby("student")
    table["total"] = by_student["points"].sum().astype(float)
    table["max_total"] = by_student["max_points"].sum().astype(float)
    if written is not None and not written.empty:
        marks = written.reindex(table.index)
        table["written"] = marks["written"]
        table["unmarked"] = marks["unmarked"].fillna(0).astype(int)
        table["total"] += marks["written"].fillna(0.0)
        table["max_total"] += marks["marked_max"].fillna(0.0)
        table = table[[*table.columns[:-4], "written", "unmarked", "total", "max_total"]]
    return table.sort_index()


def pass_rates(grades: pd.DataFrame) -> pd.DataFrame:
    """Per notebook and exercise: students graded, the fraction who passed, counts per status.

    Returns
    -------
    DataFrame
        Columns ``notebook, exercise, students, pass_rate`` and one count column per status
        (``passed, failed, blocked, not done``), sorted by notebook and exercise.
    """
    columns = ["notebook", "exercise", "students", "pass_rate", *STATUSES]
    rows = []
    for (notebook, exercise), group in grades.groupby(["notebook", "exercise"], sort=False):
        counts = group["status"].value_counts()
        rows.append({"notebook": notebook, "exercise": exercise, "students": len(group),
                     "pass_rate": float(group["passed"].mean()),
                     **{status: int(counts.get(status, 0)) for status in STATUSES}})
    rows.sort(key=lambda row: (row["notebook"], exercise_key(row["exercise"])))
    return pd.DataFrame(rows, columns=columns)


def write_summary(submissions_dir: Path, grades: pd.DataFrame, written: pd.DataFrame | None = None) -> Path:
    """Write ``gradebook.csv`` (``summary``: ``student``, one column per notebook, ``written``
    when given, ``total``, ``max_total``), one row per student, for an LMS gradebook import.

    Returns
    -------
    Path
        ``SUBMISSIONS_DIR/gradebook.csv``, or the stamped file beside it when that file was
        edited since the kit wrote it (it is kept; see ``owned.where_written``).
    """
    text = spreadsheet_csv(summary(grades, written), index=True, index_label="student")
    return write_owned(summary_path(submissions_dir), text)
