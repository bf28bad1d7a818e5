"""`kit release --student-repo DIR`: the students' copy of the kit, without answers (issue #34)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import markdown_docs
import nbformat
import pytest

from helpers import owned
from helpers.course.config import NOTEBOOKS_DIR, SOLUTIONS_DIR, notebooks_in
from helpers.course.notebook import cells
from helpers.course.student import student_copy
from helpers.errors import KitError
from helpers.settings import REPO_ROOT, data_dir

INSTRUCTORS_ONLY = ("solutions", "tests", "benchmarks", ".ci", "runs", "backups", "data/cache", "docs",
                    "course")
CHECK_SECONDS = 600
BINDER_REPO = "my-course/sentiment-2027"
#: What a student copy cannot run: `kit` commands that need solutions/ (they say so), and the tests.
REFUSED_IN_A_COPY = {"release", "grade", "references"}
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
            "helpers/course/student/jupyter_config/jupyter_server_config.json"} <= files
    assert not [name for name in files for folder in INSTRUCTORS_ONLY if name.startswith(f"{folder}/")]
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


def test_without_a_binder_repository_the_placeholder_stays_and_a_wrong_one_is_refused(tmp_path):
    readme = student_copy.student_readme()
    assert readme == (REPO_ROOT / student_copy.STUDENT_README).read_text(encoding="utf-8")
    assert f"mybinder.org/v2/gh/{student_copy.REPO_PLACEHOLDER}/" in readme
    for wrong in ("sentiment", "https://github.com/a/b", "a/b/c", "a/b.git", "-a/b"):
        with pytest.raises(KitError, match="not a GitHub repository's owner/name"):
            student_copy.write_student_copy(tmp_path / "student", binder_repo=wrong)
    assert not (tmp_path / "student").exists()


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
    target = tmp_path / "student"
    with pytest.raises(KitError, match=r"helpers/notes.py would give answers away.*nothing was written"):
        student_copy.write_student_copy(target, repo=repo)
    assert not target.exists()


def test_writing_again_keeps_what_the_user_changed(tmp_path):
    target = tmp_path / "student"
    first = student_copy.write_student_copy(target)
    assert student_copy.write_student_copy(target) == first  # the kit's own files are replaced
    (target / "README.md").unlink()
    (target / "pyproject.toml").write_text("mine\n")
    with pytest.raises(KitError, match="pyproject.toml was changed since the kit wrote it.*nothing was"):
        student_copy.write_student_copy(target)
    assert (target / "pyproject.toml").read_text() == "mine\n" and not (target / "README.md").exists()
    assert owned.changed_since_written(target / "pyproject.toml")


@pytest.mark.parametrize("where", [".", "notebooks", "work/student", ".."])
def test_the_copy_must_lie_outside_the_repository(where):
    with pytest.raises(KitError, match="outside the repository"):
        student_copy.write_student_copy(REPO_ROOT / where)


def test_a_folder_holding_solutions_is_refused(tmp_path):
    (tmp_path / "solutions").mkdir()
    with pytest.raises(KitError, match="holds a solutions/ folder"):
        student_copy.write_student_copy(tmp_path)
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
    for command in ("release", "grade"):
        refused = _kit(copy, work, command, *(["submissions"] if command == "grade" else []))
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        assert "this is a student copy" in refused.stderr
        assert "instructors run it in the course repository" in refused.stderr


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
    assert main(["release", "--student-repo", str(target)]) == 0
    out = capsys.readouterr().out
    assert f"files in {target}" in out and "pass --binder-repo OWNER/NAME" in out
    assert (target / "helpers" / "cli.py").is_file() and not (target / "solutions").exists()
    assert student_copy.REPO_PLACEHOLDER in (target / "README.md").read_text(encoding="utf-8")
    assert main(["release", "--student-repo", str(target), "--binder-repo", BINDER_REPO]) == 0
    assert "--binder-repo" not in capsys.readouterr().out  # the kit's own README is replaced
    assert BINDER_REPO in (target / "README.md").read_text(encoding="utf-8")
