"""The student's progress table: ``kit check``'s answer, from the verdicts its checks saved.

``kit check`` alone runs nothing. Per notebook of the workspace it shows the verdicts that
notebook's last check saved (``CHECKED_FILE``, written by ``check.remember``), the
exercises' points, which written answers hold an answer and what each is worth (they are
marked by hand), and what changed since that check: the copy, its release, the kit's code or
the profile (``fingerprint``). It answers in well under a second: it reads notebooks as
plain JSON, and imports neither nbformat (whose schema validator alone takes a second to
import) nor pandas.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from helpers import settings
from helpers.course import config
from helpers.course.notebook.answer_text import written_answer
from helpers.course.student.copies import copies_by_release
from helpers.course.student.kernel import KIT_PACKAGE
from helpers.errors import InputError
from helpers.files import atomic_write

#: Where ``kit check`` keeps each working copy's last verdicts (in the workspace).
CHECKED_FILE = ".kit-checked.json"
#: The verdicts' statuses, in the order and words of ``verdict.Status``.
STATUSES = ("passed", "not done", "blocked", "failed")
#: What an exercise or a written answer is worth when its cell says nothing
#: (``verdict.DEFAULT_POINTS``, ``cells.ANSWER_POINTS``).
DEFAULT_POINTS = 1.0
#: What a check's fingerprint records, each with the words for a change in it.
CHANGES = {"copy": "your copy", "release": "its release in notebooks/", "kit": "the kit's code",
           "profile": "the profile (KIT_PROFILE)"}
#: The table's columns, after the notebook's name.
COLUMNS = ("exercises", *STATUSES, "not checked", "points", "answered", "verdicts")

# What the last column says of a notebook's verdicts.
NOT_YET = "none yet"
SAVED = "saved, nothing changed since"
THIS_RUN = "this run"
KEPT = "saved, unchanged: not run again"
STOPPED = "this run, stopped before the end"
SKIPPED = "not run: you chose not to"
OLDER = "saved by an older kit: what changed since is unknown"


@dataclass(frozen=True)
class Answer:
    """A written question of a notebook: its id (``N.a``), its points, and whether the
    student's copy holds an answer to it."""

    question: str
    points: float
    answered: bool


@dataclass(frozen=True)
class Progress:
    """One notebook's line of the progress table.

    ``exercises`` maps each exercise of the release to its points; ``verdicts`` holds the
    records (``Verdict.record``) of the exercises decided, by a check saved or just run (empty
    when there are none); ``answers`` the written questions; ``state`` says where the
    verdicts come from, or what changed since they were saved.
    """

    notebook: str
    exercises: Mapping[str, float]
    verdicts: Sequence[Mapping[str, Any]]
    answers: Sequence[Answer]
    state: str

    def count(self, status: str) -> int:
        """How many of its exercises have a verdict of ``status``."""
        return sum(record.get("status") == status for record in self.verdicts)

    @property
    def unchecked(self) -> int:
        """How many of its exercises have no verdict."""
        decided = {record.get("exercise") for record in self.verdicts}
        return sum(exercise not in decided for exercise in self.exercises)

    @property
    def earned(self) -> float:
        """The points of the exercises that passed."""
        passed = (record.get("exercise") for record in self.verdicts if record.get("status") == "passed")
        return sum(self.exercises.get(exercise, 0.0) if exercise is not None else 0.0 for exercise in passed)


def read_notebook(path: Path) -> dict[str, Any]:
    """A notebook file as JSON, each cell's source one string.

    Raises
    ------
    OSError, ValueError (InputError)
        If it cannot be read, or is not a notebook's JSON.
    """
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise InputError(f"{path} is not a notebook")
    for cell in notebook["cells"]:
        if isinstance(cell, dict) and isinstance(cell.get("source"), list):
            cell["source"] = "".join(map(str, cell["source"]))
    return notebook


def _kit(cell: Any) -> dict[str, Any]:
    """A cell's ``kit`` metadata; empty when missing or malformed."""
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    found = metadata.get("kit") if isinstance(metadata, dict) else None
    return found if isinstance(found, dict) else {}


def _points(cell: Any) -> float:
    value = _kit(cell).get("points", DEFAULT_POINTS)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else DEFAULT_POINTS


def released_exercises(released: Mapping[str, Any]) -> dict[str, float]:
    """A released notebook's exercises, in order, each with its points."""
    found: dict[str, float] = {}
    for cell in released["cells"]:
        exercise = _kit(cell).get("exercise")
        if isinstance(exercise, str) and cell.get("cell_type") == "code":
            found.setdefault(exercise, _points(cell))
    return found


def _questions(notebook: Mapping[str, Any]) -> dict[str, Any]:
    """A notebook's written-answer cells by question id, the first of each id."""
    found: dict[str, Any] = {}
    for cell in notebook["cells"]:
        question = _kit(cell).get("answer")
        if isinstance(question, str) and cell.get("cell_type") == "markdown":
            found.setdefault(question, cell)
    return found


def written_answers(copy: Mapping[str, Any] | None, released: Mapping[str, Any]) -> list[Answer]:
    """The released notebook's written questions, each with whether ``copy`` answers it
    (None: an unreadable copy, which answers none)."""
    mine = _questions(copy) if copy is not None else {}
    return [Answer(question, _points(cell), question in mine and bool(written_answer(mine[question]["source"],
                                                                                      cell["source"])))
            for question, cell in _questions(released).items()]


@functools.cache
def kit_code() -> str:
    """A digest of the kit's own code (``helpers``), which a check's verdicts depend on."""
    digest = hashlib.sha256()
    for path in sorted(KIT_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(KIT_PACKAGE).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def fingerprint(copy: Path, reference: Path) -> dict[str, str]:
    """What a check records of what its verdicts came from, to say later what changed
    since (``CHANGES``); cheap enough to take on every ``kit check``."""
    return {"copy": _sha256(copy), "release": _sha256(reference), "kit": kit_code(),
            "profile": settings.profile()}


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def changed(saved: Mapping[str, Any], now: Mapping[str, str]) -> list[str]:
    """What changed since a saved check, in words (``CHANGES``); every part of it when the
    check recorded no fingerprint (an older kit's)."""
    return [words for part, words in CHANGES.items() if saved.get(part) != now[part]]


def read_checked(workspace: Path) -> dict[str, Any]:
    """The workspace's record of saved checks (``CHECKED_FILE``); empty when it is missing or
    not a JSON object."""
    try:
        kept = json.loads((Path(workspace) / CHECKED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


def write_checked(copy: Path, entry: Mapping[str, Any]) -> None:
    """Save one copy's check (``entry``) in its workspace's ``CHECKED_FILE``, the time with it."""
    kept = read_checked(Path(copy).parent)
    kept[Path(copy).name] = {**entry, "checked": datetime.now().isoformat(timespec="seconds")}
    atomic_write(Path(copy).parent / CHECKED_FILE,
                 lambda tmp: tmp.write_text(json.dumps(kept, indent=1), encoding="utf-8"))


def saved_verdicts(entry: Any) -> list[dict[str, Any]]:
    """The verdict records of a saved check; empty when it holds none in a readable form."""
    records = entry.get("verdicts") if isinstance(entry, dict) else None
    if not isinstance(records, list) or not all(isinstance(record, dict) for record in records):
        return []
    return records


def saved_state(entry: Any, now: Mapping[str, str]) -> str:
    """The last column for a saved check: when it ran, and what changed since."""
    records = saved_verdicts(entry)
    if not records:
        return NOT_YET
    if not all(part in entry for part in CHANGES):
        return OLDER
    when = str(entry.get("checked", ""))[:16].replace("T", " ")
    differ = changed(entry, now)
    return (f"saved {when}".rstrip() + ("; changed since: " + ", ".join(differ) if differ else
                                        ", nothing changed since"))


def row(copy: Path, reference: Path, verdicts: Iterable[Mapping[str, Any]], state: str) -> Progress:
    """One notebook's line: its release's exercises and questions, ``copy``'s answers, and
    ``verdicts`` (records), said to be ``state``."""
    released = read_notebook(reference)
    try:
        mine: dict[str, Any] | None = read_notebook(copy)
    except (OSError, ValueError):
        mine = None
    return Progress(Path(copy).name, released_exercises(released), list(verdicts),
                    written_answers(mine, released), state)


def saved_row(copy: Path, reference: Path, kept: Mapping[str, Any]) -> Progress:
    """One notebook's line from its saved check in ``kept`` (``read_checked``)."""
    entry = kept.get(Path(copy).name)
    return row(copy, reference, saved_verdicts(entry), saved_state(entry, fingerprint(copy, reference)))


def workspace_copies(work: Path | None = None, notebooks: Path | None = None) -> dict[Path, list[Path]]:
    """Each released notebook the workspace holds a copy of, with its copies, newest first
    (``copies.copies_by_release``: each notebook of the workspace read once)."""
    work = work or settings.work_dir()
    notebooks = notebooks or config.NOTEBOOKS_DIR
    found = copies_by_release(config.notebooks_in(notebooks), work) if work.is_dir() else {}
    return {released: mine for released, mine in found.items() if mine}


def workspace_progress(work: Path | None = None, notebooks: Path | None = None,
                       copies: Mapping[Path, Sequence[Path]] | None = None) -> list[Progress]:
    """The table's lines, one per released notebook with exercises or written questions that the
    workspace holds a copy of, from the saved checks: nothing runs. Where the workspace holds
    several copies of a notebook (a second copy, a renamed one), the line is the newest copy's,
    the one ``kit check`` checks. ``copies``: ``workspace_copies``'s answer, if already known."""
    work = work or settings.work_dir()
    copies = workspace_copies(work, notebooks) if copies is None else copies
    kept = read_checked(work)
    rows = [saved_row(mine[0], released, kept) for released, mine in copies.items()]
    return [line for line in rows if line.exercises or line.answers]


def copies_lines(copies: Mapping[Path, Sequence[Path]]) -> list[str]:
    """One line per released notebook in ``copies`` (``workspace_copies``) that the workspace
    holds under another name, or more than once: which copy the table shows."""
    lines = []
    for released, found in copies.items():
        if len(found) > 1 or found[0].name != released.name:
            others = (f" (also in {found[0].parent.name}/: {', '.join(p.name for p in found[1:])})"
                      if found[1:] else "")
            lines.append(f"  {released.name}: the table shows {found[0].name}, the newest copy{others}")
    return lines


def _number(value: float) -> str:
    return f"{value:g}"


def _cells(row: Progress) -> list[str]:
    counts = [str(row.count(status)) if row.verdicts else "-" for status in STATUSES]
    answered = sum(answer.answered for answer in row.answers)
    return [row.notebook, str(len(row.exercises)), *counts, str(row.unchecked),
            f"{_number(row.earned)}/{_number(sum(row.exercises.values()))}",
            f"{answered}/{len(row.answers)}", row.state]


def table(rows: Sequence[Progress]) -> str:
    """The progress table as text: one line per notebook; counts and points right-aligned,
    names and the last column left-aligned."""
    lines = [["notebook", *COLUMNS], *(_cells(row) for row in rows)]
    widths = [max(len(line[k]) for line in lines) for k in range(len(lines[0]))]
    last = len(widths) - 1

    def aligned(line: list[str]) -> str:
        return "  ".join(text.ljust(width) if k in (0, last) else text.rjust(width)
                         for k, (text, width) in enumerate(zip(line, widths, strict=True))).rstrip()

    return "\n".join(aligned(line) for line in lines)


def unanswered_lines(rows: Sequence[Progress]) -> list[str]:
    """One line per notebook with written questions not answered yet, each with its points."""
    return [f"  {row.notebook}: " + ", ".join(f"{a.question} ({_number(a.points)})" for a in missing)
            for row in rows if (missing := [a for a in row.answers if not a.answered])]


def report(rows: Sequence[Progress], copies: Sequence[str] = ()) -> str:
    """The table, what its columns mean, the ``copies`` lines (``copies_lines``) and the written
    questions not answered yet."""
    lines = [table(rows), "", "points: of the exercises that pass the visible checks; answered: written "
             "answers given (marked by hand)."]
    missing = unanswered_lines(rows)
    if copies:
        lines += ["Notebooks under another name or held more than once (hand in yours under the released "
                  "name):", *copies]
    if missing:
        lines += ["Written questions not answered yet (points in brackets):", *missing]
    elif any(row.answers for row in rows):
        lines.append("Every written question has an answer.")
    return "\n".join(lines)
