"""What the kit writes for a spreadsheet, and reads back from one.

Every CSV file an instructor opens (``grades.csv``, ``gradebook.csv``, the answer sheets, the
LMS exports, the bake-off's tables) holds text a student wrote; a spreadsheet runs a cell that
starts like a formula ("CSV injection"). ``spreadsheet_csv`` writes every text cell so that it
shows and never runs; ``read_table`` reads a table the instructor keeps (``overrides.csv``, the
roster, the marks) back as the text it stands for, refusing a row that an unquoted comma shifted.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.course.safe_text import printable
from helpers.errors import KitError

#: A spreadsheet evaluates a cell that starts with one of these as a formula ("CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: What makes such a cell plain text in every spreadsheet: a leading apostrophe.
TEXT_MARK = "'"
#: Texts the kit marks: those a spreadsheet would run, and those that start with the mark
#: already, so that reading back removes only the kit's own.
_MARKED_STARTS = (*FORMULA_STARTS, TEXT_MARK)


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
