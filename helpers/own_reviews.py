"""Your own labelled reviews: a folder of ``pos/`` and ``neg/`` text files, or a CSV.

``load_deployment`` reads what you put into ``data/deployment/`` (see its README) for the
deployment test of notebook 05, and ``seen_in_training`` tells which of them some system was
trained on already; ``read_text_csv`` is the kit's reader for the UTF-8 CSV
files you write (reviews, the annotation sheet).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pandas as pd

from helpers import data, settings
from helpers.errors import InputError
from helpers.text import HTML_BREAK

LABELS = ("neg", "pos")
REVIEW_SUFFIX = ".txt"  # any case: Windows and some editors write .TXT
SHOWN = 5  # names or lines quoted in one message


def load_reviews(path: str | Path) -> pd.DataFrame:
    """Load labelled reviews you collected: a folder with ``pos/`` and ``neg/``, or a CSV.

    A folder holds one review per ``.txt`` file (UTF-8; ``.TXT`` or any case too) directly
    in subfolders named ``pos`` and ``neg``; other files (notes, images) are left out. A
    folder inside ``pos/`` or ``neg/`` is an error, not read: the label is the folder a
    review sits in, and a nested copy (an unpacked archive, a backup) would silently add
    reviews twice or under a label nobody chose, so you are asked to move the files up.
    Hidden files and folders (``.ipynb_checkpoints``) are skipped.

    A CSV (UTF-8) has a header line with a ``text`` and a ``label`` column (``pos``/``neg``,
    any case) and optionally an ``id`` column (unique, non-empty); blank lines are skipped,
    a text holding commas or line breaks is quoted (``"Great, truly great"``). Nothing is
    modified.

    Parameters
    ----------
    path : str or Path
        The folder or the ``.csv`` file.

    Returns
    -------
    DataFrame
        Columns ``doc_id`` (``pos/<file name>`` for a folder; the ``id`` column or ``row<N>``,
        N the line the row starts on, for a CSV), ``label`` and ``text`` (whitespace
        collapsed).

    Raises
    ------
    InputError
        (a ``KitError``) The path is not a str or Path, or does not exist; the folder has no
        reviews, subfolders other than pos/neg, folders inside pos/ or neg/, a broken link
        or an unreadable file (named); a CSV is not readable (the line and what is wrong),
        lacks a column, has labels other than pos/neg, or empty or repeated ids (lines
        named); a file is not UTF-8 (named); a review is empty; two reviews have the same
        text (both named).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"path must be a folder or CSV file name (str or Path), not {path!r}.")
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path} does not exist: give a folder with pos/ and neg/ of .txt files, "
                         "or a .csv file with text,label columns.")
    table = _read_review_folder(path) if path.is_dir() else _read_review_csv(path)
    table["text"] = [" ".join(HTML_BREAK.sub(" ", t).split()) for t in table.text]
    empty = table.doc_id[table.text == ""].tolist()
    if empty:
        raise InputError(f"{path}: empty review(s) {', '.join(empty[:SHOWN])}: "
                         "write some text or remove them.")
    twins = table[table.text.duplicated(keep=False)].groupby("text").doc_id.apply(list)
    if len(twins):
        pairs = "; ".join(" = ".join(ids) for ids in twins.iloc[:3])
        raise InputError(f"{path}: {len(twins)} text(s) occur more than once ({pairs}): "
                         "keep one copy of each review.")
    return table.reset_index(drop=True)


def _visible(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


def _read_review_folder(folder: Path) -> pd.DataFrame:
    others = [p.name for p in _visible(folder) if p.is_dir() and p.name not in LABELS]
    if others:
        raise InputError(f"{folder}: subfolders must be named pos and neg, found {', '.join(others)}: "
                         "move those reviews into pos/ or neg/.")
    labelled = [folder / label for label in LABELS if (folder / label).exists()]
    not_folders = [p.name for p in labelled if not p.is_dir()]
    if not_folders:
        raise InputError(f"{folder}: {', '.join(not_folders)} must be folders of .txt files, not files.")
    entries = {label: _visible(folder / label) for label in LABELS if (folder / label).is_dir()}
    nested = [f"{label}/{p.name}/" for label, found in entries.items() for p in found if p.is_dir()]
    if nested:
        raise InputError(f"{folder}: folders inside pos/ or neg/ are not read ({', '.join(nested[:SHOWN])}): "
                         "move their .txt files up into pos/ or neg/ itself, or remove those folders.")
    files = [(label, p) for label, found in entries.items() for p in found
             if p.suffix.lower() == REVIEW_SUFFIX]
    rows = [(f"{label}/{file.name}", label, _read_utf8(_read_bytes(file), file)) for label, file in files]
    if not rows:
        raise InputError(f"{folder} holds no reviews: put one review per .txt file into "
                         f"{folder / 'pos'} and {folder / 'neg'}.")
    return pd.DataFrame(rows, columns=["doc_id", "label", "text"])


def _read_bytes(file: Path) -> bytes:
    if file.is_symlink() and not file.exists():
        raise InputError(f"{file} is a broken link (to {os.readlink(file)}): remove it, or copy the "
                         "review itself there.")
    try:
        return file.read_bytes()
    except OSError as err:
        raise InputError(f"{file} cannot be read ({err.strerror}): check it is a readable file.") from None


def _read_review_csv(file: Path) -> pd.DataFrame:
    if file.suffix.lower() != ".csv":
        raise InputError(f"{file} is neither a folder nor a .csv file.")
    table, lines = read_text_csv_lines(file)
    missing = {"text", "label"} - set(table.columns)
    if missing:
        raise InputError(f"{file} needs the columns text and label (missing: {', '.join(sorted(missing))}).")
    if table.empty:
        raise InputError(f"{file} holds no reviews: add rows of text,label.")
    labels = table.label.str.strip().str.lower()
    _refuse_rows(file, lines, ~labels.isin(LABELS), table.label, "labels must be pos or neg")
    if "id" not in table.columns:
        return pd.DataFrame({"doc_id": [f"row{line}" for line in lines], "label": labels, "text": table.text})
    ids = table["id"].str.strip()
    unusable = (ids == "") | ids.duplicated(keep=False)
    _refuse_rows(file, lines, unusable, ids, "ids must be unique and non-empty")
    return pd.DataFrame({"doc_id": ids, "label": labels, "text": table.text})


def _refuse_rows(file: Path, lines: list[int], bad: pd.Series, values: pd.Series, rule: str) -> None:
    """An InputError naming the first lines where ``bad`` holds, with their values."""
    where = bad.to_numpy().nonzero()[0]
    if len(where):
        examples = ", ".join(f"line {lines[i]}: {values.iloc[i]!r}" for i in where[:SHOWN])
        raise InputError(f"{file}: {rule} ({len(where)} are not; {examples}).")


def read_text_csv(file: Path) -> pd.DataFrame:
    """Read a UTF-8 CSV file with every cell as a string (empty cells as "").

    The first non-blank line is the header; blank lines are skipped; a row with fewer
    cells than the header is filled with "", trailing empty cells beyond it are dropped.

    Raises
    ------
    InputError
        (a ``KitError``) The file is not UTF-8 (named, with the byte), or not a readable CSV:
        no header, repeated column names, or a row with more cells than the header (the
        line is named).
    """
    return read_text_csv_lines(file)[0]


def read_text_csv_lines(file: Path) -> tuple[pd.DataFrame, list[int]]:
    """The table of ``read_text_csv`` and, for each row, the line of the file it starts on.

    Lines count from 1 and include blank lines and the line breaks inside quoted cells, so a
    message can name the line a spreadsheet or an editor shows.
    """
    text = _read_utf8(_read_bytes(file), file)
    reader = csv.reader(io.StringIO(text, newline=""))
    header, rows, lines = None, [], []
    try:
        start = 1
        for record in reader:
            if any(cell.strip() for cell in record):
                if header is None:
                    header = _csv_header(file, record)
                else:
                    rows.append(_csv_row(file, record, len(header), start))
                    lines.append(start)
            start = reader.line_num + 1
    except csv.Error as err:
        raise InputError(f"{file} is not a readable CSV (line {reader.line_num}: {err}).") from None
    if header is None:
        raise InputError(f"{file} is empty: its first line must name the columns (e.g. text,label).")
    return pd.DataFrame(rows, columns=header, dtype=object).astype(str), lines


def _csv_header(file: Path, record: list[str]) -> list[str]:
    header = [name.strip() for name in record]
    while header and header[-1] == "":
        header.pop()
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise InputError(f"{file}: the header names column(s) {', '.join(map(repr, repeated))} more "
                         "than once: give each column one name.")
    return header


def _csv_row(file: Path, record: list[str], width: int, line: int) -> list[str]:
    if any(cell.strip() for cell in record[width:]):
        raise InputError(f"{file}: line {line} has {len(record)} cells but the header {width}: put "
                         'a text holding commas in double quotes ("Great, truly great").')
    return record[:width] + [""] * (width - len(record))


def _read_utf8(raw: bytes, file: Path) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(f"{file} is not UTF-8 text (byte {err.start}): "
                         "save it as UTF-8 and retry.") from None


def load_deployment(folder: str | Path | None = None) -> pd.DataFrame | None:
    """Your own reviews in ``data/deployment/`` (see its README), or None if you added none.

    The folder may hold ``pos/`` and ``neg/`` subfolders of ``.txt`` files, or one ``.csv``
    file (``text,label``); see ``load_reviews``.
    """
    folder = Path(folder) if folder is not None else settings.data_dir() / "deployment"
    if any((folder / label).is_dir() for label in LABELS):
        return load_reviews(folder)
    tables = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if len(tables) > 1:
        raise InputError(f"{folder} holds several CSV files ({', '.join(t.name for t in tables)}): keep one.")
    return load_reviews(tables[0]) if tables else None


def seen_in_training(reviews: pd.DataFrame) -> pd.Series:
    """Which reviews some system was trained on: the 2,000 reviews or IMDB's 100,000.

    Texts are compared lower-cased with their whitespace collapsed
    (``data.normalized_text``), so a review pasted from IMDB or from the 2,000 is found.

    Parameters
    ----------
    reviews : DataFrame
        With a ``text`` column, e.g. from ``load_deployment``.

    Returns
    -------
    Series of bool
        Indexed like ``reviews``: True where the text is in a training corpus.
    """
    if not isinstance(reviews, pd.DataFrame) or "text" not in reviews.columns:
        raise InputError("seen_in_training needs a DataFrame with a text column, "
                         "e.g. from load_deployment().")
    corpora = [data.load_movie_reviews().text, *(data.load_imdb(split).text for split in data.IMDB_SPLITS)]
    seen = {data.normalized_text(text) for corpus in corpora for text in corpus}
    return reviews.text.map(lambda text: data.normalized_text(text) in seen)
