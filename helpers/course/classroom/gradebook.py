"""The class's grading records, and the tables derived from them.

After grading one student's notebook, ``kit grade`` writes its *record*
(``record.Record``, as JSON) to ``SUBMISSIONS_DIR/.kit-grading/records/<student>/<notebook>.json``.
Everything else is derived from the records, so it needs no notebook run:

- ``grades.csv``: one row per student, notebook and exercise, from every record (a regrade of
  one notebook keeps the others' rows);
- ``gradebook.csv``: one row per student, points earned per notebook (and, marked by hand, for
  written answers: ``helpers.course.classroom.answers``), ready for an LMS import;
- the feedback files (``helpers.course.classroom.feedback``).

An instructor corrects a verdict in ``SUBMISSIONS_DIR/overrides.csv`` (``OVERRIDE_COLUMNS``:
student, notebook, exercise, points, comment), never in the records or ``grades.csv``: every
table and feedback file is derived through ``with_overrides`` (``read_graded``), so a
correction holds in all of them and survives any regrade.

A record also lets grading resume: a notebook whose submission and solution are those of its
record needs no new run (``is_current``). The CSV files are written with
``owned.write_owned``: an instructor's edited copy is never overwritten.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.course.classroom.layout import (
    grades_path,
    overrides_path,
    record_path,
    records_root,
    summary_path,
)
from helpers.course.classroom.record import Record
from helpers.course.engine.verdict import Status
from helpers.course.safe_text import printable
from helpers.errors import KitError
from helpers.files import atomic_write
from helpers.log import LOGGER
from helpers.owned import write_owned

#: A spreadsheet evaluates a cell that starts with one of these as a formula ("CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: What makes such a cell plain text in every spreadsheet: a leading apostrophe.
TEXT_MARK = "'"
#: Texts the kit marks: those a spreadsheet would run, and those that start with the mark
#: already, so that reading back removes only the kit's own.
_MARKED_STARTS = (*FORMULA_STARTS, TEXT_MARK)

#: The statuses an exercise may have (``verdict.Status``), in the class table's order.
STATUSES = tuple(str(status) for status in (Status.PASSED, Status.FAILED, Status.BLOCKED, Status.NOT_DONE))

GRADES_COLUMNS = ["student", "notebook", "exercise", "status", "passed", "points", "max_points",
                  "error", "flags", "file", "comment"]
#: The instructor's corrections: points replace what the exercise earned (empty: as graded).
OVERRIDE_COLUMNS = ["student", "notebook", "exercise", "points", "comment"]

# --------------------------------------------------------------------------- records


def write_record(submissions_dir: Path, record: Record) -> Path:
    """Write ``record`` atomically as JSON (``Record.to_json``) and return its path."""
    path = record_path(submissions_dir, record.student, record.notebook)
    text = json.dumps(record.to_json(), indent=1, ensure_ascii=False) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return path


def _skip(path: Path, reason: str) -> None:
    reason = " ".join(reason.split())  # one line, whatever the reason holds
    LOGGER.warning(printable(f"skipped grading record {path}: {reason}"))


def read_record(submissions_dir: Path, student: str, notebook: str) -> Record | None:
    """The record of ``student``'s ``notebook``, or None if there is none that can be used.

    A record that is unreadable, garbled, of another version or stored under another
    student's or notebook's name costs one line on stderr naming the file, and is ignored.
    """
    path = record_path(submissions_dir, student, notebook)
    if not path.is_file():
        return None
    return _load(path, student, notebook)


def _load(path: Path, student: str, notebook: str) -> Record | None:
    try:
        record = Record.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as err:
        _skip(path, f"{type(err).__name__}: {err}")
        return None
    except KitError as err:
        _skip(path, str(err))
        return None
    if (record.student, record.notebook) != (student, notebook):
        _skip(path, f"it is the record of {record.student}/{record.notebook}")
        return None
    return record


def read_records(submissions_dir: Path) -> list[Record]:
    """Every usable record under ``submissions_dir``, sorted by student and notebook.

    Records that cannot be used are skipped, each with one line on stderr (``read_record``).
    """
    root = records_root(submissions_dir)
    records = []
    for path in sorted(root.glob("*/*.json")):
        if path.name.startswith(".") or path.parent.name.startswith("."):
            continue
        record = _load(path, path.parent.name, path.stem)
        if record is not None:
            records.append(record)
    return sorted(records, key=lambda r: (r.student, r.notebook))


def is_current(record: Record | None, submission_sha256: str | None, solution_sha256: str) -> bool:
    """True if ``record`` graded this very submission against this very solution.

    ``submission_sha256`` is None for a missing notebook: a record of the same notebook
    missing against the same solution is current too. No record (None) is never current.
    """
    return (record is not None and record.submission_sha256 == submission_sha256
            and record.solution_sha256 == solution_sha256)


# --------------------------------------------------------------------------- grades.csv


def exercise_key(exercise: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key for exercise ids: ``"1.2"`` before ``"1.10"``."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.findall(r"\d+|\D+", exercise))


def grades_table(records: Iterable[Record]) -> pd.DataFrame:
    """One row per exercise of every record (``GRADES_COLUMNS``), sorted.

    ``points`` is what the student earned (what the instructor awarded, in records through
    ``with_overrides``), ``max_points`` what the exercise is worth; ``file`` is the submission
    graded ('' when it was missing); ``comment`` the instructor's.
    """
    rows: list[dict[str, Any]] = [
        {"student": r.student, "notebook": r.notebook, "exercise": v.exercise, "status": str(v.status),
         "passed": v.passed, "points": v.earned, "max_points": v.points, "error": v.reason,
         "flags": "; ".join(v.flags), "file": r.file or "", "comment": v.comment}
        for r in records for v in r.exercises
    ]
    rows.sort(key=lambda row: (row["student"], row["notebook"], exercise_key(row["exercise"])))
    table = pd.DataFrame(rows, columns=GRADES_COLUMNS)
    return table.astype({"passed": bool, "points": float, "max_points": float})


def read_overrides(submissions_dir: Path) -> pd.DataFrame:
    """The instructor's corrections (``OVERRIDE_COLUMNS``, ``points`` a number or NaN), or an
    empty table when there is no ``overrides.csv``.

    Raises
    ------
    KitError
        For a file that is not such a table, points that are neither empty nor a number >= 0,
        or two rows for one exercise, naming the line.
    """
    path = overrides_path(submissions_dir)
    if not path.is_file():
        return pd.DataFrame(columns=OVERRIDE_COLUMNS)
    table = read_table(path, OVERRIDE_COLUMNS)
    for key in ("student", "notebook", "exercise"):
        table[key] = table[key].str.strip()
    points = pd.to_numeric(table.points.str.strip().replace("", "nan"), errors="coerce")
    for line, (text, value) in enumerate(zip(table.points, points, strict=True), start=2):
        if text.strip() and (pd.isna(value) or value < 0):
            raise KitError(f"{path}, line {line}: points must be empty or a number >= 0, not {text!r}.")
    twice = table.duplicated(["student", "notebook", "exercise"], keep=False)
    if twice.any():
        row = table[twice].iloc[0]
        raise KitError(f"{path}: {row.student}, {row.notebook}, exercise {row.exercise} has more than "
                       "one row.")
    return table.assign(points=points)[OVERRIDE_COLUMNS]


def check_overrides(overrides: pd.DataFrame, worth: Mapping[str, Mapping[str, float]]) -> None:
    """Refuse, before any grading, a correction that awards more than its exercise is worth.

    Parameters
    ----------
    overrides : DataFrame
        From ``read_overrides``.
    worth : mapping
        Per notebook, each exercise's points (``grading.points_of`` of its solution).

    Raises
    ------
    KitError
        Naming the first such correction.
    """
    for row in overrides.to_dict("records"):
        most = worth.get(row["notebook"], {}).get(row["exercise"])
        if most is not None and not pd.isna(row["points"]) and row["points"] > most:
            raise KitError(f"overrides: {row['student']}, {row['notebook']}, exercise {row['exercise']} is "
                           f"worth {most:g} points, not {row['points']:g}.")


def read_table(path: Path, columns: list[str]) -> pd.DataFrame:
    """A CSV file the instructor keeps, every value as text (spreadsheet marks removed).

    Raises
    ------
    KitError
        If it cannot be read, lacks one of ``columns``, or a row has more or fewer fields than
        its header (an unquoted comma shifts every later column), naming the line.
    """
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise KitError(f"{path} is not a readable table ({err}); mend or remove it.") from None
    header = rows[0] if rows else []
    missing = [column for column in columns if column not in header]
    if missing:
        raise KitError(f"{path} lacks the column(s) {', '.join(missing)} (it needs {', '.join(columns)}).")
    for line, row in enumerate(rows[1:], start=2):
        if row and len(row) != len(header):
            raise KitError(f"{path}, line {line} has {len(row)} fields where the header has {len(header)}: "
                           "put text holding a comma in double quotes.")
    table = pd.DataFrame([row for row in rows[1:] if row], columns=header, dtype=str)
    return table.map(from_spreadsheet)


def with_overrides(records: Iterable[Record], overrides: pd.DataFrame, complain: bool = True) -> list[Record]:
    """``records`` with the instructor's corrections: each overridden exercise's verdict gains
    ``awarded`` (its points, when given) and ``comment``. The records on disk are untouched.

    Parameters
    ----------
    records : iterable of Record
        Grading records.
    overrides : DataFrame
        From ``read_overrides``.
    complain : bool
        Name on stderr each correction that matches no graded exercise of ``records`` (a
        typo, or a notebook not graded yet).

    Raises
    ------
    KitError
        If a correction awards more points than its exercise is worth.
    """
    wanted = {(row["student"], row["notebook"], row["exercise"]): row for row in overrides.to_dict("records")}
    used, corrected = set(), []
    for record in records:
        verdicts = []
        for verdict in record.exercises:
            key = (record.student, record.notebook, verdict.exercise)
            if key in wanted:
                used.add(key)
                verdict = replace(verdict, comment=wanted[key]["comment"])
                if not pd.isna(wanted[key]["points"]):
                    if wanted[key]["points"] > verdict.points:
                        raise KitError(f"overrides: {', '.join(key[:2])}, exercise {key[2]} is worth "
                                       f"{verdict.points:g} points, not {wanted[key]['points']:g}.")
                    verdict = replace(verdict, awarded=float(wanted[key]["points"]))
            verdicts.append(verdict)
        corrected.append(replace(record, exercises=tuple(verdicts)))
    for key in sorted(wanted.keys() - used) if complain else ():
        LOGGER.warning(f"overrides: {', '.join(key[:2])}, exercise {key[2]} matches no graded exercise; "
                       "not applied.")
    return corrected


def read_graded(submissions_dir: Path) -> list[Record]:
    """Every usable record (``read_records``) with the instructor's corrections applied
    (``with_overrides``): what every table and feedback file is made from."""
    return with_overrides(read_records(submissions_dir), read_overrides(submissions_dir))


def write_grades(submissions_dir: Path, records: Iterable[Record]) -> Path:
    """Write ``grades.csv`` from ``records`` (pass every record: it replaces the whole table).

    Returns
    -------
    Path
        ``SUBMISSIONS_DIR/grades.csv``, or the stamped file beside it when that file was
        edited since the kit wrote it (it is kept; see ``owned.where_written``).
    """
    text = spreadsheet_csv(grades_table(records))
    return write_owned(grades_path(submissions_dir), text)


def spreadsheet_text(value: Any) -> Any:
    """A text cell as a spreadsheet shows it and never runs it; any other value unchanged.

    Control characters and terminal colour codes are removed (tabs and line breaks kept), and
    a text that starts like a formula (``FORMULA_STARTS``) gets a leading apostrophe, which
    marks a cell as text in Excel, LibreOffice and Google Sheets.
    """
    if not isinstance(value, str):
        return value
    text = printable(value)
    return TEXT_MARK + text if text.startswith(_MARKED_STARTS) else text


def from_spreadsheet(text: str) -> str:
    """Undo ``spreadsheet_text``'s apostrophe: the text a cell read back from a CSV stands for."""
    marked = text.startswith(TEXT_MARK) and text[len(TEXT_MARK):].startswith(_MARKED_STARTS)
    return text[len(TEXT_MARK):] if marked else text


def spreadsheet_csv(table: pd.DataFrame, index: bool = False, index_label: str | None = None) -> str:
    """``table`` as CSV text whose every text cell (and index label) is ``spreadsheet_text``."""
    safe = table.map(spreadsheet_text)
    if index:
        safe.index = safe.index.map(spreadsheet_text)
    return safe.to_csv(index=index, index_label=index_label)


# --------------------------------------------------------------------------- class tables


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
