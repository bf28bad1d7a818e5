"""Your own labelled reviews: a folder of ``pos/`` and ``neg/`` text files, or a CSV.

``load_deployment`` reads what you put into ``data/deployment/`` (see its README) for the
deployment test of notebook 05; ``read_text_csv`` is the kit's reader for the UTF-8 CSV
files you write (reviews, the annotation sheet).
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from helpers import settings
from helpers.errors import KitError
from helpers.text import HTML_BREAK

LABELS = ("neg", "pos")


def load_reviews(path: str | Path) -> pd.DataFrame:
    """Load labelled reviews you collected: a folder with ``pos/`` and ``neg/``, or a CSV.

    A folder holds one review per ``.txt`` file (UTF-8) in subfolders named ``pos`` and
    ``neg``; a CSV (UTF-8) has a ``text`` and a ``label`` column (``pos``/``neg``, any case)
    and optionally an ``id`` column. Nothing is modified.

    Parameters
    ----------
    path : str or Path
        The folder or the ``.csv`` file.

    Returns
    -------
    DataFrame
        Columns ``doc_id`` (``pos/<file name>`` for a folder; the ``id`` column or ``row<N>``,
        N the CSV line number, for a CSV), ``label`` and ``text`` (whitespace collapsed).

    Raises
    ------
    KitError
        The path does not exist; the folder has no reviews, or subfolders or a CSV have
        labels other than pos/neg; a file is not UTF-8 (named); a review is empty; two
        reviews have the same text (both named).
    """
    path = Path(path)
    if not path.exists():
        raise KitError(f"{path} does not exist: give a folder with pos/ and neg/ of .txt files, "
                       "or a .csv file with text,label columns.")
    table = _read_review_folder(path) if path.is_dir() else _read_review_csv(path)
    table["text"] = [" ".join(HTML_BREAK.sub(" ", t).split()) for t in table.text]
    empty = table.doc_id[table.text == ""].tolist()
    if empty:
        raise KitError(f"{path}: empty review(s) {', '.join(empty[:5])}: write some text or remove them.")
    twins = table[table.text.duplicated(keep=False)].groupby("text").doc_id.apply(list)
    if len(twins):
        pairs = "; ".join(" = ".join(ids) for ids in twins.iloc[:3])
        raise KitError(f"{path}: {len(twins)} text(s) occur more than once ({pairs}): "
                       "keep one copy of each review.")
    return table.reset_index(drop=True)


def _read_review_folder(folder: Path) -> pd.DataFrame:
    others = sorted(p.name for p in folder.iterdir()
                    if p.is_dir() and p.name not in LABELS and not p.name.startswith("."))
    if others:
        raise KitError(f"{folder}: subfolders must be named pos and neg, found {', '.join(others)}: "
                       "move those reviews into pos/ or neg/.")
    rows = []
    for label in LABELS:
        for file in sorted((folder / label).glob("*.txt")):
            rows.append((f"{label}/{file.name}", label, _read_utf8(file.read_bytes(), file)))
    if not rows:
        raise KitError(f"{folder} holds no reviews: put one review per .txt file into "
                       f"{folder / 'pos'} and {folder / 'neg'}.")
    return pd.DataFrame(rows, columns=["doc_id", "label", "text"])


def _read_review_csv(file: Path) -> pd.DataFrame:
    if file.suffix.lower() != ".csv":
        raise KitError(f"{file} is neither a folder nor a .csv file.")
    table = read_text_csv(file)
    missing = {"text", "label"} - set(table.columns)
    if missing:
        raise KitError(f"{file} needs the columns text and label (missing: {', '.join(sorted(missing))}).")
    if table.empty:
        raise KitError(f"{file} holds no reviews: add rows of text,label.")
    labels = table.label.str.strip().str.lower()
    bad = table.index[~labels.isin(LABELS)]
    if len(bad):
        examples = ", ".join(f"line {i + 2}: {table.label[i]!r}" for i in bad[:5])
        raise KitError(f"{file}: labels must be pos or neg ({len(bad)} are not; {examples}).")
    ids = table["id"] if "id" in table.columns else [f"row{i + 2}" for i in table.index]
    return pd.DataFrame({"doc_id": ids, "label": labels, "text": table.text})


def read_text_csv(file: Path) -> pd.DataFrame:
    """Read a UTF-8 CSV file with every cell as a string (empty cells as "").

    Raises
    ------
    KitError
        The file is not UTF-8 (named, with the byte), or not a readable CSV.
    """
    text = _read_utf8(file.read_bytes(), file)
    try:
        return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise KitError(f"{file} is not a readable CSV ({err}).") from None


def _read_utf8(raw: bytes, file: Path) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise KitError(f"{file} is not UTF-8 text (byte {err.start}): save it as UTF-8 and retry.") from None


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
        raise KitError(f"{folder} holds several CSV files ({', '.join(t.name for t in tables)}): keep one.")
    return load_reviews(tables[0]) if tables else None
