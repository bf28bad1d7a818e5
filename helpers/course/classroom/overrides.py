"""The instructor's corrections: ``SUBMISSIONS_DIR/overrides.csv``.

An instructor corrects a verdict there (``OVERRIDE_COLUMNS``: student, notebook, exercise,
points, comment), never in the records or ``grades.csv``: every table and feedback file is made
from the records through ``with_overrides`` (``gradebook.read_graded``), so a correction holds
in all of them and survives any regrade. ``check_overrides`` refuses, before any grading, a
correction that awards more than its exercise is worth.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

import pandas as pd

from helpers.course.classroom.layout import overrides_path
from helpers.course.classroom.record import Record
from helpers.course.classroom.spreadsheet import read_table
from helpers.errors import KitError
from helpers.log import LOGGER

#: The instructor's corrections: points replace what the exercise earned (empty: as graded).
OVERRIDE_COLUMNS = ["student", "notebook", "exercise", "points", "comment"]


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
