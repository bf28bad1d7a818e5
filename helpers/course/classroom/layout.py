"""Where everything of a graded class lives in its submissions folder: the one owner of the layout.

::

    SUBMISSIONS_DIR/
        <student>/<notebook>.ipynb                      what each student handed in
        feedback/<student>/<notebook>.html, .md         their feedback (``feedback``)
        grades.csv                                      one row per student, notebook, exercise
        gradebook.csv                                   the class table (``summaries``)
        answers_<notebook>.csv, .html                   written answers to mark (``answers``)
        overrides.csv                                   the instructor's corrections (``overrides``)
        roster.csv                                      folder -> student id, name, email (``exports``)
        gradebook_canvas.csv, gradebook_moodle.csv      the class table for an LMS (``exports``)
        bakeoff.csv, bakeoff_pairs.csv, .html, .png     the bake-off's leaderboard (``bakeoff``)
        bakeoff_entries.json                            each scored entry, saved (``bakeoff``)
        .kit-grading/records/<student>/<notebook>.json  grading records (``gradebook``)

Every name taken from a student or a notebook must be a plain file name (``is_plain_name``),
so no path built here leaves the submissions folder, and every table and file can hold it as
it is.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers.course.safe_text import printable
from helpers.errors import KitError

RECORDS_DIR = ".kit-grading"
RECORDS_SUBDIR = "records"
FEEDBACK_DIR = "feedback"
GRADES_FILE = "grades.csv"
SUMMARY_FILE = "gradebook.csv"
SHEET_PREFIX = "answers_"
OVERRIDES_FILE = "overrides.csv"
ROSTER_FILE = "roster.csv"
#: The class table in each LMS's import format (``exports``), by LMS.
EXPORT_FILES = {"canvas": "gradebook_canvas.csv", "moodle": "gradebook_moodle.csv"}
_PLAIN_NAME = re.compile(r"[^./\\][^/\\]*")


def is_plain_name(name: str) -> bool:
    """True for a name usable as one file name (no folder separators, not hidden, not ``..``)
    that is printable text as it is (``printable``: valid UTF-8, no control or escape
    characters), so it can be written into every table and file as it is."""
    return bool(_PLAIN_NAME.fullmatch(name)) and name != ".." and printable(name) == name


def check_name(where: str, key: str, name: str) -> None:
    """Raise ``KitError`` unless ``name`` (a record's ``key``) is a plain file name."""
    if not is_plain_name(name):
        raise KitError(f"{where}: '{key}' must be a plain file name, not {name!r}.")


def is_student_folder(path: Path) -> bool:
    """True for a folder that may be a student's: not hidden, and not the kit's ``feedback/``."""
    return path.is_dir() and not path.name.startswith(".") and path.name != FEEDBACK_DIR


def student_folders(submissions_dir: Path) -> list[Path]:
    """The student folders of ``submissions_dir`` whose names are plain (``is_plain_name``),
    sorted: the ones ``kit grade`` grades and ``kit bakeoff`` scores."""
    return sorted(path for path in Path(submissions_dir).iterdir()
                  if is_student_folder(path) and is_plain_name(path.name))


def records_root(submissions_dir: Path) -> Path:
    """The folder of every grading record (one sub-folder per student)."""
    return Path(submissions_dir) / RECORDS_DIR / RECORDS_SUBDIR


def record_path(submissions_dir: Path, student: str, notebook: str) -> Path:
    """Where the record of ``student``'s ``notebook`` (``NN_topic``, no suffix) is kept."""
    check_name("grading record", "student", student)
    check_name("grading record", "notebook", notebook)
    return records_root(submissions_dir) / student / f"{notebook}.json"


def feedback_paths(submissions_dir: Path, student: str, notebook: str) -> tuple[Path, Path]:
    """Where the HTML and the Markdown feedback on ``student``'s ``notebook`` go."""
    check_name("feedback", "student", student)
    check_name("feedback", "notebook", notebook)
    folder = Path(submissions_dir) / FEEDBACK_DIR / student
    return folder / f"{notebook}.html", folder / f"{notebook}.md"


def feedback_root(submissions_dir: Path) -> Path:
    """The folder of every student's feedback."""
    return Path(submissions_dir) / FEEDBACK_DIR


def grades_path(submissions_dir: Path) -> Path:
    """``grades.csv``: one row per student, notebook and exercise."""
    return Path(submissions_dir) / GRADES_FILE


def summary_path(submissions_dir: Path) -> Path:
    """``gradebook.csv``: the class table."""
    return Path(submissions_dir) / SUMMARY_FILE


def sheet_path(submissions_dir: Path, notebook: str, suffix: str = ".csv") -> Path:
    """Where the answer sheet of ``notebook`` (``NN_topic``) goes: ``answers_NN_topic.csv``."""
    check_name("answer sheet", "notebook", notebook)
    return Path(submissions_dir) / f"{SHEET_PREFIX}{notebook}{suffix}"


def sheet_paths(submissions_dir: Path) -> list[Path]:
    """Every answer sheet (CSV) in the folder, stamped copies beside marked ones included."""
    return sorted(path for path in Path(submissions_dir).glob(f"{SHEET_PREFIX}*.csv")
                  if not path.name.startswith("."))


def overrides_path(submissions_dir: Path) -> Path:
    """The instructor's corrections to graded exercises (``overrides.read_overrides``)."""
    return Path(submissions_dir) / OVERRIDES_FILE


def roster_path(submissions_dir: Path) -> Path:
    """The class roster the instructor keeps: folder -> student id, name, email (``exports``)."""
    return Path(submissions_dir) / ROSTER_FILE


def export_path(submissions_dir: Path, lms: str) -> Path:
    """Where the class table in ``lms``'s import format goes (``EXPORT_FILES``)."""
    return Path(submissions_dir) / EXPORT_FILES[lms]
