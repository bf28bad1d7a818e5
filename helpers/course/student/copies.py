"""Which notebooks in the workspace are the student's copies of a released notebook.

A copy keeps the released name, or carries what the lab, a browser or a file manager adds to
a second copy's name (``COPY_SUFFIX``), or has another name but holds the release's exercise
cells (a renamed copy keeps their ids). ``kit check``, its progress table and ``kit work``
share this one rule. Notebooks are read as plain JSON: the progress table must answer at once,
and nbformat's schema validator alone takes a second to import.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

#: What the lab, a browser or a file manager adds to a second copy's name: "01_naive_bayes (1)",
#: "01_naive_bayes-Copy1", "01_naive_bayes copy".
COPY_SUFFIX = re.compile(r"(?: ?\(\d+\)|-Copy\d+| copy(?: \d+)?)$", re.IGNORECASE)


def copies_of(released: Path, work: Path) -> list[Path]:
    """The student's copies of ``released`` in ``work``, newest first: its own name, a name given
    to a second copy (``COPY_SUFFIX``), or any other name whose notebook holds the release's
    exercise cells."""
    return copies_by_release([released], work)[released]


def copies_by_release(releases: list[Path], work: Path) -> dict[Path, list[Path]]:
    """``copies_of`` for every release at once, each notebook in ``work`` read at most once."""
    notebooks = sorted(Path(work).glob("*.ipynb"))
    cell_ids = functools.cache(lambda path: {cell.get("id") for cell in _cells(path)})
    found = {}
    for released in releases:
        exercise_ids = {cell.get("id") for cell in _cells(released) if "exercise" in _kit(cell)} - {None}
        mine = [path for path in notebooks if COPY_SUFFIX.sub("", path.stem) == released.stem
                or (exercise_ids and exercise_ids & cell_ids(path))]
        found[released] = sorted(mine, key=lambda path: path.stat().st_mtime, reverse=True)
    return found


def _cells(path: Path) -> list[dict]:
    """A notebook's cells as JSON objects; none when it cannot be read as a notebook."""
    try:
        cells = json.loads(Path(path).read_text(encoding="utf-8")).get("cells")
    except (OSError, ValueError, AttributeError):  # any unreadable file is no copy of ours
        return []
    return [cell for cell in cells if isinstance(cell, dict)] if isinstance(cells, list) else []


def _kit(cell: dict) -> dict:
    metadata = cell.get("metadata")
    found = metadata.get("kit") if isinstance(metadata, dict) else None
    return found if isinstance(found, dict) else {}
