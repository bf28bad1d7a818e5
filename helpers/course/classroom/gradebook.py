"""The class's grading records, and ``grades.csv`` made from them.

After grading one student's notebook, ``kit grade`` writes its *record*
(``record.Record``, as JSON) to ``SUBMISSIONS_DIR/.kit-grading/records/<student>/<notebook>.json``.
Everything else is made from the records with the instructor's corrections applied
(``read_graded``: ``overrides``), so it needs no notebook run:

- ``grades.csv``: one row per student, notebook and exercise, from every record (a regrade of
  one notebook keeps the others' rows);
- ``gradebook.csv`` and the class tables (``summaries``), the marks of written answers
  (``answers``), the feedback files (``feedback``) and the LMS files (``exports``).

A record also lets grading resume: a notebook whose submission and solution are those of its
record needs no new run (``is_current``). The CSV files are written with
``owned.write_owned`` (an instructor's edited copy is never overwritten) and
``spreadsheet.spreadsheet_csv`` (no cell runs as a formula).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.course.classroom.layout import (
    grades_path,
    record_path,
    records_root,
)
from helpers.course.classroom.overrides import read_overrides, with_overrides
from helpers.course.classroom.record import Record
from helpers.course.classroom.spreadsheet import spreadsheet_csv
from helpers.course.safe_text import printable
from helpers.errors import KitError
from helpers.files import atomic_write
from helpers.log import LOGGER
from helpers.owned import write_owned

GRADES_COLUMNS = ["student", "notebook", "exercise", "status", "passed", "points", "max_points",
                  "error", "flags", "file", "comment"]
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




