"""The error-annotation sheet of notebook 05: written by the kit, filled in by you, read back.

``annotation_sheet`` lists a headline system's most confident CV errors with the rule-based
guess at each one's category (``helpers.analysis.suggest_categories``) and empty columns
for you; ``write_annotation_sheet`` never overwrites a sheet that changed in any way since the
kit wrote it (``helpers.owned``); ``read_annotations`` checks and normalises what you wrote,
and ``annotated_categories`` gives your categories once enough rows have one.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from helpers import data, settings, systems
from helpers.analysis import cue_table, cue_thresholds, ranked_errors, suggest_categories
from helpers.errors import InputError, KitError
from helpers.own_reviews import read_text_csv, read_text_csv_lines
from helpers.owned import changed_since_written, write_owned
from helpers.text import snippet
from helpers.validation import check_int

ENTRY_COLUMNS = ("category", "fixability", "source", "note")
SHEET_COLUMNS = ("doc_id", "system", "label", "margin", "snippet", "suggested_category", *ENTRY_COLUMNS)
FIXABILITY = ("easy", "hard", "unfixable")
SOURCES = ("features", "model", "data", "label")
SHEET_SNIPPET_WORDS = 30
#: Rows that need a category before the error classes are worth choosing from.
MIN_ANNOTATED = 20


def sheet_path() -> Path:
    """Where the annotation sheet lives: ``data/annotations/errors.csv``."""
    return settings.data_dir() / "annotations" / "errors.csv"


def annotation_sheet(name: str = "svm-bow", n: int = 50) -> pd.DataFrame:
    """The ``n`` most confident CV errors of headline system ``name``, ready to annotate.

    Returns
    -------
    DataFrame
        doc_id, system, label, margin, snippet, suggested_category, and the empty columns
        category, fixability, source, note for the student.
    """
    reviews = data.load_movie_reviews()
    errors = ranked_errors(systems.predictions(name, progress=False), reviews, n)
    cues = cue_table(reviews)
    guesses = suggest_categories(cues, reviews.label, cue_thresholds(cues))
    sheet = pd.DataFrame({"doc_id": errors.doc_id, "system": name, "label": errors.label,
                          "margin": errors.margin.round(4),
                          "snippet": [snippet(t, SHEET_SNIPPET_WORDS) for t in errors.text],
                          "suggested_category": guesses.loc[errors.doc_id].to_numpy()})
    for column in ENTRY_COLUMNS:
        sheet[column] = ""
    return sheet


def _entries(sheet: pd.DataFrame) -> pd.Series:
    """Whether each row has anything in the student's columns."""
    present = [c for c in ENTRY_COLUMNS if c in sheet]
    return sheet[present].fillna("").astype(str).apply(lambda c: c.str.strip() != "").any(axis=1)


def has_annotations(path: str | Path | None = None) -> bool:
    """Whether the sheet at ``path`` holds anything of yours: any change since the kit wrote it
    (or a sheet the kit did not write), or an entry in a student column."""
    path = Path(path) if path is not None else sheet_path()
    return path.is_file() and (changed_since_written(path) or bool(_entries(read_text_csv(path)).any()))


def write_annotation_sheet(sheet: pd.DataFrame, path: str | Path | None = None) -> Path:
    """Write ``sheet`` as CSV (default ``data/annotations/errors.csv``), never over your sheet.

    Returns
    -------
    Path
        ``path``; or, when ``path`` holds a sheet that changed in any way since the kit wrote
        it (or one the kit did not write), the stamped file beside it that holds the new sheet:
        yours is kept as it is (``helpers.owned.write_owned``; ``where_written`` says so).
    """
    path = Path(path) if path is not None else sheet_path()
    return write_owned(path, lambda tmp: sheet[list(SHEET_COLUMNS)].to_csv(tmp, index=False))


def read_annotations(path: str | Path | None = None) -> pd.DataFrame:
    """Read the annotation sheet back, normalised (lowercase, trimmed) and checked.

    Returns
    -------
    DataFrame
        The sheet with ``margin`` as float and an ``annotated`` column (any entry given).

    Raises
    ------
    KitError
        No sheet (run ``kit annotate``), missing columns, or fixability/source values
        outside ``FIXABILITY``/``SOURCES`` (with their line numbers).
    """
    path = Path(path) if path is not None else sheet_path()
    if not path.is_file():
        raise KitError(f"No annotation sheet at {path}: write one with `kit annotate`.")
    sheet, lines = read_text_csv_lines(path)
    missing = [c for c in SHEET_COLUMNS if c not in sheet]
    if missing:
        raise KitError(f"{path} lacks the column(s) {', '.join(missing)}: "
                       "keep the header kit annotate wrote.")
    for column in ("category", "fixability", "source"):
        sheet[column] = sheet[column].str.strip().str.lower()
    for column, allowed in (("fixability", FIXABILITY), ("source", SOURCES)):
        bad = sheet.index[~sheet[column].isin(("", *allowed))]
        if len(bad):
            named = ", ".join(f"line {lines[i]}: {sheet[column][i]!r}" for i in bad[:5])
            raise KitError(f"{path}: {column} must be one of {', '.join(allowed)} or empty ({named}).")
    sheet["margin"] = pd.to_numeric(sheet.margin, errors="coerce")
    sheet["annotated"] = _entries(sheet)
    return sheet


def annotation_counts(sheet: pd.DataFrame) -> dict[str, pd.Series]:
    """Frequency of each category, fixability and source among the annotated rows."""
    done = sheet[sheet.annotated]
    return {c: done[c].replace("", "(blank)").value_counts() for c in ("category", "fixability", "source")}


def suggestion_agreement(sheet: pd.DataFrame) -> float:
    """Share of annotated rows (with a category) whose category is the rule-based guess."""
    done = sheet[sheet.annotated & (sheet.category != "")]
    if done.empty:
        raise KitError("No annotated categories yet: fill in the category column first.")
    return float((done.category == done.suggested_category).mean())


def annotated_categories(sheet: pd.DataFrame, minimum: int = MIN_ANNOTATED) -> pd.Series:
    """Your category for each annotated review, once at least ``minimum`` rows have one.

    Parameters
    ----------
    sheet : DataFrame
        From ``read_annotations``.
    minimum : int
        How many rows need a category: a class chosen from a handful of reviews is a guess.

    Returns
    -------
    Series
        Category by doc_id, for the rows with a category.

    Raises
    ------
    InputError
        ``sheet`` is not a sheet from ``read_annotations``; ``minimum`` is not a whole number
        >= 1; fewer than ``minimum`` rows have a category (how many do is said).
    """
    check_int(minimum, "minimum")
    if not isinstance(sheet, pd.DataFrame) or not {"doc_id", "category"} <= set(sheet.columns):
        raise InputError("sheet must be the table read_annotations returns (doc_id and category columns).")
    given = sheet[sheet.category.fillna("").astype(str).str.strip() != ""]
    if len(given) < minimum:
        raise InputError(f"{len(given)} of {len(sheet)} rows of the annotation sheet have a category: "
                         f"give at least {minimum} a category before choosing an error class.")
    return pd.Series(given.category.to_numpy(), index=pd.Index(given.doc_id, name="doc_id"), name="category")
