"""The kit's library as released (issue #53): a student copy's helpers/RELEASED.sha256, and what
`kit check`, `kit lab`, `kit info` and grading say when the library was changed."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.course.notebook import release, student_copy
from helpers.course.student import integrity
from helpers.course.student.kernel import KIT_PACKAGE
from helpers.errors import KitError
from helpers.settings import data_dir

BINDER_REPO = "my-course/sentiment-2027"
#: Seconds a command in the copy may take (the grading run stops at the first cell's import).
RUN_SECONDS = 600
#: The line the broken copy's helpers/text.py gets, and where.
STRAY, STRAY_LINE = "this line is not Python\n", 12
BROKEN = f"SyntaxError in the kit's library (helpers/text.py, line {STRAY_LINE}: invalid syntax)"
GRADE_SCRIPT = """
import sys, tempfile
from pathlib import Path
import nbformat
from helpers.course.engine import grading
from helpers.course.engine.wording import describe
from helpers.course.notebook.cells import exercises
from helpers.course.notebook.merge import graded_notebook

released = nbformat.read(sys.argv[1], as_version=4)
with tempfile.TemporaryDirectory() as folder:
    _, verdicts = grading.grade(graded_notebook(released, released), Path(folder), float(sys.argv[2]),
                                items=exercises(released))
print("\\n".join(describe(verdict) for verdict in verdicts))
"""


def _library(folder: Path, files: dict[str, str]) -> Path:
    """A library folder holding ``files`` and their manifest."""
    package = folder / "helpers"
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    data = {name: text.encode() for name, text in files.items()}
    (package / integrity.MANIFEST).write_text(release.manifest(data))
    return package


FILES = {"__init__.py": "", "text.py": "def f():\n    return 1\n", "course/config.py": "X = 1\n",
         "course/student/jupyter_config/server.json": "{}\n"}


def test_a_library_as_released_has_no_changes_whatever_its_line_endings_and_caches(tmp_path):
    package = _library(tmp_path, FILES)
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "text.cpython-311.pyc").write_bytes(b"\0")
    (package / "__pycache__" / "stray.py").write_text("not python at all")
    (package / "text.py").write_bytes(FILES["text.py"].replace("\n", "\r\n").encode())  # a Windows checkout
    assert integrity.changes(package) == []
    assert integrity.notice(package) is None
    integrity.require_intact(package)
    assert integrity.summary(package) == f"as released (4 files, helpers/{integrity.MANIFEST})"


def test_the_manifest_is_sha256sums(tmp_path):
    package = _library(tmp_path, FILES)
    line = next(line for line in (package / integrity.MANIFEST).read_text().splitlines()
                if line.endswith("  text.py"))
    assert line == f"{hashlib.sha256(FILES['text.py'].encode()).hexdigest()}  text.py"
    assert subprocess.run(["sha256sum", "--quiet", "-c", integrity.MANIFEST], cwd=package).returncode == 0


def test_a_changed_missing_or_added_file_is_named_with_its_syntax_error(tmp_path):
    package = _library(tmp_path, FILES)
    (package / "text.py").write_text("def f():\n    return 1\nthis line is not Python\n")
    (package / "course" / "config.py").unlink()
    (package / "course" / "mine.py").write_text("Y = 2\n")
    found = integrity.changes(package)
    assert found == [integrity.Change("course/config.py", integrity.MISSING),
                     integrity.Change("text.py", integrity.CHANGED, "SyntaxError at line 3: invalid syntax"),
                     integrity.Change("course/mine.py", integrity.ADDED)]
    text = integrity.notice(package)
    assert "helpers/text.py changed since the release (SyntaxError at line 3: invalid syntax)" in text
    assert "helpers/course/config.py missing" in text and "helpers/course/mine.py not the kit's" in text
    assert "Take helpers/course/config.py helpers/text.py again from your course's repository" in text
    assert "Delete helpers/course/mine.py" in text and "Your work in work/ is not touched." in text
    with pytest.raises(KitError, match="`kit check` runs once the library is as released"):
        integrity.require_intact(package)
    assert integrity.summary(package) == text


def test_in_a_clone_git_restores_the_library(tmp_path):
    package = _library(tmp_path, FILES)
    (tmp_path / ".git").mkdir()
    (package / "text.py").write_text("def f():\n    return 2\n")
    assert "`git checkout -- helpers/text.py` restores it." in integrity.notice(package)


def test_without_a_manifest_only_what_does_not_compile_is_named(tmp_path):
    """The course repository: instructors change helpers/ on purpose, and only a module that
    does not compile stops `kit check`."""
    package = _library(tmp_path, FILES)
    (package / integrity.MANIFEST).unlink()
    (package / "text.py").write_text("def f():\n    return 2\n")  # changed: nobody compares it
    assert integrity.changes(package) == []
    assert "course repository" in integrity.summary(package)
    (package / "course" / "config.py").write_text("X = (1\n")
    [found] = integrity.changes(package)
    assert (found.name, found.state) == ("course/config.py", integrity.BROKEN)
    with pytest.raises(KitError, match=r"does not compile.*helpers/course/config.py does not compile "
                                       r"\(SyntaxError at line 1: .*Fix it, or undo the change with "
                                       r"`git checkout -- helpers/course/config.py`.*once it compiles"):
        integrity.require_intact(package)


def test_the_course_repository_s_library_is_not_compared_and_compiles():
    assert integrity.read_manifest(KIT_PACKAGE) is None
    assert integrity.changes() == []


# --- A student copy ---------------------------------------------------------------------------

def _kit(copy: Path, work: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy), "KIT_DATA_DIR": str(data_dir()), "KIT_WORK_DIR": str(work),
           "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-m", "helpers.cli", *args], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=RUN_SECONDS)


@pytest.fixture(scope="module")
def broken_copy(tmp_path_factory) -> Path:
    """A student copy whose helpers/text.py got a stray line after the release."""
    copy = tmp_path_factory.mktemp("broken") / "student"
    student_copy.write_student_copy(copy, binder_repo=BINDER_REPO)
    text = copy / "helpers" / "text.py"
    lines = text.read_text(encoding="utf-8").splitlines(keepends=True)
    text.write_text("".join([*lines[:STRAY_LINE - 1], STRAY, *lines[STRAY_LINE - 1:]]), encoding="utf-8")
    return copy


def test_the_copy_s_library_is_as_released(tmp_path):
    copy = tmp_path / "student"
    student_copy.write_student_copy(copy, binder_repo=BINDER_REPO)
    manifest = integrity.read_manifest(copy / "helpers")
    assert "text.py" in manifest and "course/student/jupyter_config/jupyter_server_config.json" in manifest
    assert not [name for name in manifest if name.startswith("course/classroom/")]
    assert integrity.changes(copy / "helpers") == []
    shown = _kit(copy, tmp_path / "work", "info")
    assert shown.returncode == 0, shown.stderr
    assert f"library       as released ({len(manifest)} files, helpers/RELEASED.sha256)" in shown.stdout


def test_kit_check_refuses_a_changed_library_and_names_its_syntax_error(broken_copy, tmp_path):
    work = tmp_path / "work"
    assert _kit(broken_copy, work, "work").returncode == 0
    checked = _kit(broken_copy, work, "check", "01")
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    assert (f"helpers/text.py changed since the release (SyntaxError at line {STRAY_LINE}: invalid syntax)"
            in checked.stderr)
    assert "Take helpers/text.py again from your course's repository" in checked.stderr
    assert "`kit check` runs once the library is as released" in checked.stderr
    assert "NameError" not in checked.stdout + checked.stderr


def test_check_in_the_notebook_refuses_a_changed_library_too(broken_copy):
    """check("N.M") runs the visible checks on the live kernel: on a library changed since the
    release (a smoothing removed, say) a wrong answer could pass, so it refuses as kit check does."""
    code = ("from helpers.course.student.check import check\n"
            "try:\n    check('1.1', {})\nexcept Exception as error:\n    print(type(error).__name__, error)")
    env = {**os.environ, "PYTHONPATH": str(broken_copy), "PYTHONHASHSEED": "0"}
    said = subprocess.run([sys.executable, "-c", code], cwd=broken_copy, env=env, capture_output=True,
                          text=True, timeout=RUN_SECONDS)
    assert said.stdout.startswith("KitError ") and "helpers/text.py changed since the release" in said.stdout


@pytest.mark.slow
def test_kit_info_and_kit_lab_say_what_changed_and_go_on(broken_copy, tmp_path):
    work = tmp_path / "work"
    shown = _kit(broken_copy, work, "info")
    assert shown.returncode == 0, shown.stderr
    assert "library       the kit's library is not as released" in shown.stdout
    assert f"helpers/text.py changed since the release (SyntaxError at line {STRAY_LINE}" in shown.stdout
    lab = _kit(broken_copy, work, "lab", "--version")  # jupyter lab --version: the lab's own answer
    assert lab.returncode == 0, lab.stderr
    said, version = lab.stdout.strip().splitlines()[-2:]
    assert said.startswith("kit: the kit's library is not as released") and "helpers/text.py" in said
    assert version[0].isdigit()


@pytest.mark.kernel
@pytest.mark.slow
def test_grading_names_the_library_s_syntax_error_not_a_missing_name(broken_copy):
    """Notebook 01's first cell imports helpers.text: each exercise's check then misses a name
    that cell (or one after it) was to define, and says which error of the library stopped it."""
    env = {**os.environ, "PYTHONPATH": str(broken_copy), "KIT_DATA_DIR": str(data_dir()),
           "PYTHONHASHSEED": "0"}
    graded = subprocess.run([sys.executable, "-c", GRADE_SCRIPT, "notebooks/01_naive_bayes.ipynb", "120"],
                            cwd=broken_copy, env=env, capture_output=True, text=True, timeout=RUN_SECONDS)
    assert graded.returncode == 0, graded.stderr
    failures = [line.strip() for line in graded.stdout.splitlines() if line.startswith("    ")]
    assert len(failures) == 3, graded.stdout
    for line in failures:
        assert line.startswith("NameError: name ") and line.endswith(
            f"is not defined: the cell that defines it stopped on {BROKEN}"), line
