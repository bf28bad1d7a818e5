"""`kit release --student-repo DIR`: the students' copy of the kit, without answers (issues #34, #53)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import markdown_docs
import nbformat
import pytest
from conftest import without_pytest_options

from helpers import owned, settings
from helpers.cli import INSTRUCTOR_COMMANDS
from helpers.course.config import COURSE_FILE, NOTEBOOKS_DIR, SOLUTIONS_DIR, notebooks_in
from helpers.course.notebook import cells, student_copy
from helpers.errors import KitError
from helpers.settings import REPO_ROOT, data_dir

INSTRUCTORS_ONLY = ("solutions", "tests", "benchmarks", ".ci", "runs", "backups", "data/cache", "docs")
CHECK_SECONDS = 600
BINDER_REPO = "my-course/sentiment-2027"
#: What a student copy cannot run: `kit` commands that need solutions/ (they say so), and the tests.
REFUSED_IN_A_COPY = set(INSTRUCTOR_COMMANDS)
#: The instructors' code, which a copy does not hold (the engine `kit check` runs on stays).
INSTRUCTORS_CODE = ("helpers/course/classroom/", "helpers/course/notebook/references.py",
                    "helpers/course/notebook/student_copy.py", "helpers/course/course_file.py")
#: Words of the instructors' comments that no set-up file of the copy may hold.
INSTRUCTORS_WORDS = ("tests/", "test_project", "kit references", "test command", "pip freeze", "solutions")
#: The programs the student README's commands may call.
STUDENT_PROGRAMS = {"python3", "pip", "kit", "git", "cd", "."}


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("copy") / "student"
    student_copy.write_student_copy(target, binder_repo=BINDER_REPO)
    return target


def _files(folder: Path) -> list[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())


def test_the_copy_holds_the_kit_and_no_instructors_folder(copy):
    files = {p.as_posix() for p in _files(copy)}
    assert {"README.md", "pyproject.toml", "constraints.txt", "start", "postBuild", "environment.yml",
            "nbval_sanitize.cfg",
            ".gitignore", "helpers/cli.py", "helpers/course/student/kernel.py", "notebooks/RELEASED.sha256",
            "helpers/RELEASED.sha256", "helpers/course/engine/grading.py",
            "helpers/course/student/jupyter_config/jupyter_server_config.json"} <= files
    assert not [name for name in files for folder in INSTRUCTORS_ONLY if name.startswith(f"{folder}/")]
    course = [name for name in files if name.startswith("course/") and not name.endswith(owned.LEDGER)]
    assert course == ["course/course.toml"]  # no briefs, no rubric
    assert not [name for name in files if name.startswith(INSTRUCTORS_CODE)]
    assert not [name for name in files if "__pycache__" in name or name.endswith(".pyc")]
    for notebook in notebooks_in(NOTEBOOKS_DIR):
        assert (copy / "notebooks" / notebook.name).read_bytes() == notebook.read_bytes()
    assert os.access(copy / "start", os.X_OK) and os.access(copy / "postBuild", os.X_OK)


def test_the_copy_s_readme_is_the_students_one_with_their_repository(copy):
    readme = (copy / "README.md").read_text(encoding="utf-8")
    assert readme == student_copy.student_readme(BINDER_REPO)
    assert not (copy / student_copy.STUDENT_README).exists()
    assert "pytest" not in readme and "For instructors" not in readme and "docs/" not in readme
    assert f"https://mybinder.org/v2/gh/{BINDER_REPO}/main?labpath=work%2F00_" in readme
    assert f"git clone https://github.com/{BINDER_REPO}.git && cd sentiment-2027" in readme
    assert "cd sentiment-2027 && . .venv/bin/activate && kit lab" in readme
    assert student_copy.REPO_PLACEHOLDER not in readme and "NAME" not in readme


def test_the_copy_s_readme_runs_only_what_a_student_copy_has(copy):
    from helpers.cli import build_parser

    readme = (copy / "README.md").read_text(encoding="utf-8")
    usable = markdown_docs.parser_commands(build_parser()) - REFUSED_IN_A_COPY
    blocks = markdown_docs.bash_blocks(readme)
    assert sum("pip install" in block for block in blocks) == 1  # the one install-and-run command
    for block in blocks:
        for words in markdown_docs.commands(block):
            assert words[0] in STUDENT_PROGRAMS, f"the student README runs {words[0]}: {block}"
            if words[0] == "kit":
                assert words[1] in usable, f"`kit {words[1]}` does not work in a student copy"
    named = markdown_docs.kit_commands(readme)
    assert {"fetch", "lab", "check", "work"} <= named and not named - usable, named - usable
    for path, _ in markdown_docs.relative_links(readme):
        assert not path or (copy / path).is_file(), f"the student README links to {path}, not in the copy"


def _course_file(folder: Path, repository: str | None) -> Path:
    """A course file like the repository's, naming ``repository`` (None: no such key)."""
    text = COURSE_FILE.read_text(encoding="utf-8")
    key = f"{student_copy.REPOSITORY_KEY} = "
    kept = [line for line in text.splitlines(keepends=True) if not line.startswith(key)]
    if repository is not None:
        at = kept.index("[course]\n") + 1
        kept.insert(at, f"{key}{repository!r}\n".replace("'", '"'))
    path = folder / "course.toml"
    path.write_text("".join(kept), encoding="utf-8")
    return path


def test_the_students_repository_comes_from_the_course_file_or_nothing_is_written(tmp_path):
    target = tmp_path / "student"
    for unset in (None, f"{student_copy.UNSET}: e.g. my-course/sentiment-2027", ""):
        with pytest.raises(KitError, match=r"\[course\] student_repository is not set.*nothing was written"):
            student_copy.write_student_copy(target, course_file=_course_file(tmp_path, unset))
    with pytest.raises(KitError, match="nowhere.toml is missing.*nothing was written"):
        student_copy.write_student_copy(target, course_file=tmp_path / "nowhere.toml")
    for wrong in ("sentiment", "https://github.com/a/b", "a/b/c", "a/b.git", "-a/b"):
        with pytest.raises(KitError, match="not a GitHub repository's owner/name"):
            student_copy.write_student_copy(target, binder_repo=wrong)
        with pytest.raises(KitError, match=r"student_repository: .* not a GitHub repository's owner/name"):
            student_copy.write_student_copy(target, course_file=_course_file(tmp_path, wrong))
    assert not target.exists()
    assert student_copy.students_repository(course_file=_course_file(tmp_path, BINDER_REPO)) == BINDER_REPO
    assert student_copy.students_repository("a/b", _course_file(tmp_path, BINDER_REPO)) == "a/b"  # wins
    student_copy.write_student_copy(target, course_file=_course_file(tmp_path, BINDER_REPO))
    readme = (target / "README.md").read_text(encoding="utf-8")
    assert f"git clone https://github.com/{BINDER_REPO}.git && cd sentiment-2027" in readme
    assert student_copy.REPO_PLACEHOLDER not in readme and "cd NAME" not in readme


def test_the_copy_s_course_file_gives_the_course_s_name_and_significance_level_and_nothing_else(copy):
    text = (copy / "course" / "course.toml").read_text(encoding="utf-8")
    assert text == student_copy.student_course_file()
    course = tomllib.loads(COURSE_FILE.read_text(encoding="utf-8"))
    assert tomllib.loads(text) == {"course": {"name": course["course"]["name"]},
                                   "evaluation": {"alpha": course["evaluation"]["alpha"]}}
    level = subprocess.run([sys.executable, "-c", "from helpers import settings; print(settings.alpha())"],
                           cwd=copy, env={**os.environ, "PYTHONPATH": str(copy)},
                           capture_output=True, text=True, check=True)
    assert float(level.stdout) == settings.alpha() == course["evaluation"]["alpha"]  # the course's


def test_a_course_file_without_a_valid_significance_level_writes_no_copy(tmp_path):
    target = tmp_path / "student"
    course = _course_file(tmp_path, BINDER_REPO)
    text = course.read_text(encoding="utf-8")
    for broken, message in ((text.replace("alpha = 0.05", "alpha = 0.5"), "is 0.5: it must be a number"),
                            (text.replace("alpha = 0.05", ""), r"\[evaluation\] alpha is not set")):
        assert broken != text
        course.write_text(broken, encoding="utf-8")
        with pytest.raises(KitError, match=f"{message}.*Nothing was written"):
            student_copy.write_student_copy(target, course_file=course)
    assert not target.exists()


def test_the_course_file_names_the_students_repository_or_says_it_is_to_be_set():
    value = tomllib.loads(COURSE_FILE.read_text(encoding="utf-8"))["course"][student_copy.REPOSITORY_KEY]
    assert value.startswith(student_copy.UNSET) or student_copy.repository_problem(value) is None


def test_no_file_of_the_copy_gives_answers_away(copy):
    hidden = student_copy.secrets()
    assert hidden  # the solutions have answers to look for
    for relative in _files(copy):
        data = (copy / relative).read_bytes()
        assert not student_copy.leaks(relative.name, data, hidden), relative
        if relative.suffix == ".ipynb":
            text = data.decode()
            assert "=== BEGIN ANSWER ===" not in text and "BEGIN HIDDEN CHECKS" not in text
            assert "### BEGIN SOLUTION" not in text


def test_every_solution_notebook_would_be_refused():
    hidden = student_copy.secrets()
    for solution in notebooks_in(SOLUTIONS_DIR):
        nb = nbformat.read(solution, as_version=4)
        if cells.exercises(nb, solution.name):
            assert student_copy.leaks(solution.name, solution.read_bytes(), hidden), solution.name


def test_a_model_answer_quoted_in_a_module_is_a_leak():
    answer = next(piece for piece in student_copy.secrets() if " " in piece and "\n" not in piece)
    module = f'"""Notes.\n\n{answer}\n"""\n'.encode()
    assert student_copy.leaks("notes.py", module, [answer])
    assert not student_copy.leaks("notes.py", b'"""Notes."""\n', [answer])


def test_solution_code_reindented_in_a_module_is_a_leak():
    code = "def f(x):\n    total = sum(value * value for value in x)\n    return total / len(x)\n"
    hidden = {student_copy._code_lines(code)}
    assert student_copy.leaks("mod.py", ("class A:\n" + code.replace("\n", "\n    ")).encode(), hidden)
    assert student_copy.leaks("x.py", b"### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n", set())


def test_a_leaking_file_stops_the_copy_before_it_writes(tmp_path):
    repo = tmp_path / "repo"
    (repo / "helpers").mkdir(parents=True)
    (repo / student_copy.STUDENT_README).write_text("kit\n")
    answer = max(student_copy.secrets(), key=len)
    (repo / "helpers" / "notes.py").write_text(f'"""{answer}"""\n')
    (repo / "course").mkdir()
    _course_file(repo / "course", BINDER_REPO)
    target = tmp_path / "student"
    with pytest.raises(KitError, match=r"helpers/notes.py would give answers away.*nothing was written"):
        student_copy.write_student_copy(target, repo=repo, binder_repo=BINDER_REPO)
    assert not target.exists()


def test_writing_again_keeps_what_the_user_changed(tmp_path):
    target = tmp_path / "student"
    first = student_copy.write_student_copy(target, binder_repo=BINDER_REPO)
    assert student_copy.write_student_copy(target, binder_repo=BINDER_REPO) == first  # its own, replaced
    (target / "README.md").unlink()
    (target / "pyproject.toml").write_text("mine\n")
    with pytest.raises(KitError, match="pyproject.toml was changed since the kit wrote it.*nothing was"):
        student_copy.write_student_copy(target, binder_repo=BINDER_REPO)
    assert (target / "pyproject.toml").read_text() == "mine\n" and not (target / "README.md").exists()
    assert owned.changed_since_written(target / "pyproject.toml")


def test_writing_again_removes_what_an_older_copy_wrote_and_this_one_does_not_hold(tmp_path):
    """A students' repository first written by a kit that copied class grading: the next copy
    takes it out, so the copy's library is as its manifest says (issue #53)."""
    from helpers.course.student import integrity

    target = tmp_path / "student"
    student_copy.write_student_copy(target, binder_repo=BINDER_REPO)
    classroom = target / "helpers" / "course" / "classroom"
    old = owned.write_owned(classroom / "gradebook.py", "# an older kit's class grading\n")
    edited = owned.write_owned(classroom / "feedback.py", "# an older kit's\n")
    edited.write_text("# changed since\n")
    student_copy.write_student_copy(target, binder_repo=BINDER_REPO)
    assert not old.exists() and edited.read_text() == "# changed since\n"  # the user's change is kept
    assert [c.name for c in integrity.changes(target / "helpers")] == ["course/classroom/feedback.py"]
    edited.unlink()
    student_copy.write_student_copy(target, binder_repo=BINDER_REPO)
    assert not classroom.exists() and integrity.changes(target / "helpers") == []


@pytest.mark.parametrize("where", [".", "notebooks", "work/student", ".."])
def test_the_copy_must_lie_outside_the_repository(where):
    with pytest.raises(KitError, match="outside the repository"):
        student_copy.write_student_copy(REPO_ROOT / where, binder_repo=BINDER_REPO)


def test_a_folder_holding_solutions_is_refused(tmp_path):
    (tmp_path / "solutions").mkdir()
    with pytest.raises(KitError, match="holds a solutions/ folder"):
        student_copy.write_student_copy(tmp_path, binder_repo=BINDER_REPO)
    assert not (tmp_path / "helpers").exists()


def test_instructors_commands_say_this_is_a_student_copy(tmp_path):
    with pytest.raises(KitError, match="this is a student copy.*instructors run it in the course repository"):
        student_copy.require_course_repository("grade", tmp_path / "solutions")
    student_copy.require_course_repository("grade")  # the course repository has its solutions
    assert student_copy.is_student_copy(tmp_path) and not student_copy.is_student_copy(REPO_ROOT)


def _kit(copy: Path, work: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy), "KIT_DATA_DIR": str(data_dir()), "KIT_WORK_DIR": str(work)}
    return subprocess.run([sys.executable, "-m", "helpers.cli", *args], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=CHECK_SECONDS)


def test_the_copy_runs_on_its_own(copy, tmp_path):
    work = tmp_path / "work"
    where = _kit(copy, work, "info")  # any command: the copy's own kit answers, rooted in the copy
    assert where.returncode == 0, where.stderr
    located = subprocess.run([sys.executable, "-c", "import helpers.settings as s; print(s.REPO_ROOT)"],
                             cwd=copy, env={**os.environ, "PYTHONPATH": str(copy)},
                             capture_output=True, text=True, check=True)
    assert Path(located.stdout.strip()) == copy.resolve()
    seeded = _kit(copy, work, "work")
    assert seeded.returncode == 0, seeded.stderr
    assert {p.name for p in notebooks_in(work)} == {p.name for p in notebooks_in(copy / "notebooks")}
    for command in INSTRUCTOR_COMMANDS:
        refused = _kit(copy, work, command, *(["submissions", "--jobs", "2"] if command == "grade" else []))
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        assert "this is a student copy" in refused.stderr
        assert "instructors run it in the course repository" in refused.stderr


@pytest.mark.data
@pytest.mark.kernel
@pytest.mark.slow
def test_a_solved_exercise_passes_its_check_in_the_copy(copy, tmp_path):
    work = tmp_path / "work"
    assert _kit(copy, work, "work").returncode == 0
    name = notebooks_in(work, ["01"])[0].name
    solution = nbformat.read(SOLUTIONS_DIR / name, as_version=4)
    solved = {cells.exercise_id(cell): cell.source for cell in solution.cells}
    mine = nbformat.read(work / name, as_version=4)
    for cell in mine.cells:
        if cells.exercise_id(cell) == "1.1":
            cell.source = solved["1.1"]
    nbformat.write(mine, work / name)
    checked = _kit(copy, work, "check", "01", "--timeout", str(CHECK_SECONDS))
    assert "1/3 exercises pass the visible checks" in checked.stdout, checked.stdout + checked.stderr
    assert "1.2  not done yet" in checked.stdout
    assert checked.returncode == 1 and "2 of 3 exercises do not pass yet" in checked.stderr


def test_kit_release_student_repo(tmp_path, capsys):
    from helpers.cli import main

    target = tmp_path / "student"
    assert main(["release", "--student-repo", str(target), "--force"]) == 1
    assert "takes neither --check nor --force" in capsys.readouterr().err and not target.exists()
    assert main(["release", "--binder-repo", BINDER_REPO]) == 1
    assert "--binder-repo goes with --student-repo" in capsys.readouterr().err
    value = tomllib.loads(COURSE_FILE.read_text(encoding="utf-8"))["course"][student_copy.REPOSITORY_KEY]
    if value.startswith(student_copy.UNSET):  # the kit as shipped: the course sets it
        assert main(["release", "--student-repo", str(target)]) == 1
        assert "student_repository is not set" in capsys.readouterr().err and not target.exists()
    assert main(["release", "--student-repo", str(target), "--binder-repo", BINDER_REPO]) == 0
    out = capsys.readouterr().out
    assert f"files in {target}" in out and f"the students' repository, {BINDER_REPO}," in out
    assert (target / "helpers" / "cli.py").is_file() and not (target / "solutions").exists()
    assert BINDER_REPO in (target / "README.md").read_text(encoding="utf-8")


# --- The copy is the students' (issue #53) ------------------------------------------------------

def test_the_copy_s_set_up_files_hold_no_instructors_comments_or_settings(copy):
    pyproject = (copy / "pyproject.toml").read_text(encoding="utf-8")
    settings = tomllib.loads(pyproject)
    assert not {"pytest", "ruff", "mypy"} & set(settings.get("tool", {}))
    assert "optional-dependencies" not in settings["project"]
    ours = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert settings["project"]["dependencies"] == ours["project"]["dependencies"]
    assert settings["project"]["scripts"] == ours["project"]["scripts"]
    assert not re.search(r"^\s*#", pyproject, re.MULTILINE)
    for package in settings["tool"]["setuptools"]["packages"]:  # each one the copy holds
        assert (copy / Path(*package.split(".")) / "__init__.py").is_file(), package
    for name in ("pyproject.toml", "environment.yml", "constraints.txt"):
        text = (copy / name).read_text(encoding="utf-8")
        assert not [word for word in INSTRUCTORS_WORDS if word in text], name
        comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
        assert comments == student_copy.STUDENT_HEADERS.get(name, "").splitlines(), name
    pins = [line for line in (REPO_ROOT / "constraints.txt").read_text().splitlines() if "==" in line]
    assert [line for line in (copy / "constraints.txt").read_text().splitlines() if "==" in line] == pins


def test_pytest_in_the_copy_collects_nothing_of_the_instructors(copy):
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    collected = subprocess.run(command, cwd=copy, env={**without_pytest_options(), "PYTHONPATH": str(copy)},
                               capture_output=True,
                               text=True, timeout=CHECK_SECONDS)
    assert collected.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, collected.stdout + collected.stderr
    assert "no tests collected" in collected.stdout and ".ipynb" not in collected.stdout


def test_kit_help_in_the_copy_lists_only_the_students_commands(copy, tmp_path):
    from helpers.cli import build_parser

    shown = _kit(copy, tmp_path / "work", "--help")
    assert shown.returncode == 0, shown.stderr
    listed = set(re.search(r"\{([a-z,-]+)\}", shown.stdout)[1].split(","))
    assert listed == markdown_docs.parser_commands(build_parser()) - REFUSED_IN_A_COPY
    assert {"check", "lab", "work", "fetch", "info"} <= listed
    described = re.findall(r"^ {4}([a-z-]+) ", shown.stdout, re.MULTILINE)
    assert set(described) == listed and "solutions" not in shown.stdout and "grade" not in shown.stdout
    run = _kit(copy, tmp_path / "work", "run", "--help")
    assert run.returncode == 0 and "--solutions" not in run.stdout


def test_every_module_of_the_copy_imports_there(copy):
    """Nothing the copy holds needs the instructors' code it leaves out (class grading, above all)."""
    script = ("import importlib, pkgutil, helpers\n"
              "names = [m.name for m in pkgutil.walk_packages(helpers.__path__, 'helpers.')]\n"
              "for name in names: importlib.import_module(name)\n"
              "print(len(names), helpers.__file__)")
    imported = subprocess.run([sys.executable, "-c", script], cwd=copy, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(copy)}, timeout=CHECK_SECONDS)
    assert imported.returncode == 0, imported.stderr
    assert Path(imported.stdout.split()[-1]).parent == (copy / "helpers").resolve()
