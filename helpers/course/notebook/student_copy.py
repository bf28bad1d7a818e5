"""``kit release --student-repo DIR``: the students' copy of the kit, without the answers.

The course repository holds what students must not read: ``solutions/`` (model answers,
solution code, hidden checks), the tests and benchmarks (which quote them), the CI set-up.
A student copy holds the kit's code (``helpers/``, less the instructors' own:
``INSTRUCTORS_CODE``, class grading among it) with its manifest (``helpers/RELEASED.sha256``,
which ``integrity`` checks), the released ``notebooks/``, the files that install and start it
(``STUDENT_FILES``; ``pyproject.toml``, ``environment.yml`` and ``constraints.txt`` without the
instructors' comments, test and lint settings: ``student_version``) and, as its ``README.md``,
the students' README (``STUDENT_README``, with the students' repository put into its Binder
badge, ``git clone`` and ``cd`` commands: ``student_readme``), the part of the course file the
kit reads (``STUDENT_COURSE_FILE``: the course's name and significance level, ``student_course_file``),
and nothing else. That
repository comes from ``course/course.toml`` (``[course] student_repository``,
``students_repository``); without it nothing is written. Before anything is written, every
file is scanned (``leaks``): none may hold a solution, hidden-check or answer block, nor the
text of any model answer, solution or hidden check of ``solutions/``.

Files are written with ``helpers.owned.write_owned``, so writing into ``DIR`` again replaces
only the files an earlier copy wrote and nobody changed since; any other file in the way
stops the copy before it writes anything.

In a student copy (no ``solutions/``) ``kit --help`` lists only the students' commands, and
the instructors' commands say they are for instructors (``require_course_repository`` where
the course repository lacks its solutions) instead of failing on the missing folder.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import nbformat

from helpers import owned
from helpers.course.config import NOTEBOOKS_DIR, SOLUTIONS_DIR, notebooks_in
from helpers.course.config import is_student_copy as is_student_copy  # its old home: kept importable
from helpers.course.course_file import REPOSITORY_KEY, REPOSITORY_TABLE, UNSET, repository_problem
from helpers.course.notebook import cells, release
from helpers.errors import KitError
from helpers.settings import ALPHA_KEY, COURSE_FILE, EVALUATION_TABLE, REPO_ROOT, alpha, read_course_file

#: The folders a student copy holds, whole (less ``SKIPPED`` and ``INSTRUCTORS_CODE``).
STUDENT_FOLDERS = ("helpers", "notebooks")
#: The kit's code only instructors run, never copied: class grading (``kit grade``), writing
#: reference outputs (``kit references``) and writing this copy. ``kit check``'s engine
#: (``helpers/course/engine/``) stays.
INSTRUCTORS_CODE = ("helpers/course/classroom", "helpers/course/notebook/references.py",
                    "helpers/course/notebook/student_copy.py", "helpers/course/course_file.py")
#: The library's manifest in the copy (``integrity``).
LIBRARY_MANIFEST = Path("helpers") / release.MANIFEST
#: The single files it holds, where the repository has them.
STUDENT_FILES = ("LICENSE", "pyproject.toml", "constraints.txt", "environment.yml", "start",
                 "postBuild", "nbval_sanitize.cfg", ".gitignore", "data/README.md",
                 "data/deployment/README.md")
#: The copy's course file: what the kit reads of the course's ``course/course.toml`` there, the
#: course's name and its [evaluation] table (the significance level the notebooks test at,
#: ``settings.alpha``); deadlines, weights and the rest stay with the instructors.
STUDENT_COURSE_FILE = COURSE_FILE.relative_to(REPO_ROOT)
STUDENT_COURSE_HEADER = ("# The course's settings the kit reads, written by `kit release --student-repo`\n"
                         "# from the course's own course/course.toml: the notebooks test at [evaluation]\n"
                         "# alpha. Grading uses the course's file, whatever this copy holds.\n\n")
#: The repository's README for the student copy, written there as ``README.md``.
STUDENT_README = "STUDENT_README.md"
_README = Path("README.md")
#: What ``STUDENT_README`` says where the students' GitHub repository goes (``owner/name``) ...
REPO_PLACEHOLDER = "OWNER/NAME"
#: ... and where the folder its clone makes goes (``name``).
FOLDER_PLACEHOLDER = "cd NAME"
#: The settings of ``pyproject.toml`` that are the instructors' (tests, lint, types, benchmarks),
#: left out of the copy's: ``pytest`` there must collect nothing of the instructors'.
INSTRUCTORS_SETTINGS = (("project", "optional-dependencies"), ("tool", "pytest"), ("tool", "ruff"),
                        ("tool", "mypy"))
#: The first lines of the copy's set-up files, in place of the instructors' comments.
STUDENT_HEADERS = {
    "environment.yml": "# Binder builds the image's Python from this file; postBuild then installs the kit\n"
                       "# and every package it needs once, at the versions of constraints.txt.\n",
    "constraints.txt": "# The exact versions of every package the kit was verified with; the README's\n"
                       "# `pip install -c constraints.txt -e .` installs them.\n",
}
#: The longest list ``toml_text`` writes on one line.
TOML_LIST_CHARS = 100
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
#: Never copied: caches, editor leftovers, the kit's own ledgers.
SKIPPED = ("__pycache__", "*.pyc", "*.pyo", ".ipynb_checkpoints", ".DS_Store", "*~", owned.LEDGER)
#: A solution, hidden check or answer shorter than this (normalised) is too common to be a
#: sign of a leak (``return counts``); longer ones are searched for in every copied file.
MIN_SECRET_CHARS = 40
_BLOCKS = {"a solution block": cells.SOLUTION_BLOCK, "a hidden-checks block": cells.HIDDEN_BLOCK}
_ANSWER_BODY = re.compile(r"=== BEGIN ANSWER ===(?P<body>.*?)=== END ANSWER ===", re.DOTALL)
_CODE_BODY = re.compile(r"^[ \t]*### BEGIN (?:SOLUTION|HIDDEN CHECKS)[^\n]*\n(?P<body>.*?)"
                        r"^[ \t]*### END (?:SOLUTION|HIDDEN CHECKS)", re.MULTILINE | re.DOTALL)
_REFUSE_HINT = "Move it away, or choose another folder for the student copy."


def require_course_repository(command: str, solutions_dir: Path = SOLUTIONS_DIR) -> None:
    """Stop an instructors' command run in a student copy, with a message that says so.

    Parameters
    ----------
    command : str
        The ``kit`` sub-command, for the message (``"release"``).
    solutions_dir : Path
        Where the course repository keeps its solutions.

    Raises
    ------
    KitError
        If ``solutions_dir`` is not a folder.
    """
    if not Path(solutions_dir).is_dir():
        raise KitError(f"this is a student copy ({solutions_dir} does not exist); `kit {command}` is "
                       "for instructors: instructors run it in the course repository.")


def student_files(repo: Path = REPO_ROOT) -> list[Path]:
    """The files of ``repo`` that go into a student copy, relative to ``repo``, sorted."""
    repo = Path(repo)
    found = [Path(name) for name in STUDENT_FILES if (repo / name).is_file()]
    for folder in STUDENT_FOLDERS:
        for path in (repo / folder).rglob("*"):
            relative = path.relative_to(repo)
            if path.is_file() and not any(_skipped(part) for part in relative.parts) \
                    and not _instructors_code(relative):
                found.append(relative)
    return sorted(found)


def _skipped(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in SKIPPED)


def _instructors_code(relative: Path) -> bool:
    return any(relative == Path(code) or relative.is_relative_to(code) for code in INSTRUCTORS_CODE)


def _package_shipped(package: str) -> bool:
    """Whether a package of ``pyproject.toml`` (``helpers.course.classroom``) is in the copy."""
    return not _instructors_code(Path(*package.split(".")))


def toml_text(table: Mapping[str, Any], name: tuple[str, ...] = ()) -> str:
    """``table`` written as TOML: its values first, then each sub-table under its own header.

    Only what ``pyproject.toml`` holds is supported: strings, numbers, booleans, lists of them,
    and tables.

    Raises
    ------
    TypeError
        For any other value (a date, a list of tables).
    """
    values = [(key, value) for key, value in table.items() if not isinstance(value, dict)]
    tables = [(key, value) for key, value in table.items() if isinstance(value, dict)]
    text = ""
    if values or (name and not tables):
        header = f"[{'.'.join(_toml_key(part) for part in name)}]\n" if name else ""
        text = header + "".join(f"{_toml_key(key)} = {_toml_value(value)}\n" for key, value in values) + "\n"
    return text + "".join(toml_text(value, (*name, key)) for key, value in tables)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):  # JSON's escapes are TOML's basic string's
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list) and not any(isinstance(item, dict) for item in value):
        items = [_toml_value(item) for item in value]
        line = f"[{', '.join(items)}]"
        return line if len(line) <= TOML_LIST_CHARS else "[\n" + "".join(f"    {i},\n" for i in items) + "]"
    raise TypeError(f"toml_text cannot write {type(value).__name__} values")


def student_pyproject(text: str) -> str:
    """The copy's ``pyproject.toml``: the course repository's without its comments, the
    instructors' settings (``INSTRUCTORS_SETTINGS``: no test paths, so ``pytest`` in the copy
    collects nothing of theirs) and the packages the copy does not hold."""
    data = tomllib.loads(text)
    for table, key in INSTRUCTORS_SETTINGS:
        data.get(table, {}).pop(key, None)
    setuptools = data.get("tool", {}).get("setuptools", {})
    if "packages" in setuptools:
        setuptools["packages"] = [name for name in setuptools["packages"] if _package_shipped(name)]
    if "package-data" in setuptools:
        setuptools["package-data"] = {name: files for name, files in setuptools["package-data"].items()
                                      if _package_shipped(name)}
    return toml_text({name: table for name, table in data.items() if table}).rstrip("\n") + "\n"


def _with_student_header(name: str) -> Callable[[str], str]:
    def rewrite(text: str) -> str:
        kept = [line for line in text.splitlines(keepends=True) if not line.lstrip().startswith("#")]
        return STUDENT_HEADERS[name] + "".join(kept)
    return rewrite


#: The set-up files the copy holds in a version of its own, each from the course repository's.
STUDENT_VERSIONS: dict[str, Callable[[str], str]] = {
    "pyproject.toml": student_pyproject,
    **{name: _with_student_header(name) for name in STUDENT_HEADERS},
}


def student_version(relative: Path, data: bytes) -> bytes:
    """What the copy holds for the course repository's file ``relative`` (its content
    ``data``): the same bytes, or for a set-up file its students' version (``STUDENT_VERSIONS``)."""
    rewrite = STUDENT_VERSIONS.get(relative.as_posix())
    return rewrite(data.decode("utf-8")).encode("utf-8") if rewrite else data


def _code_lines(text: str) -> str:
    """Code without indentation and blank lines, so a copy re-indented elsewhere still matches."""
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def _words(text: str) -> str:
    return " ".join(text.split())


def secrets(solutions_dir: Path = SOLUTIONS_DIR) -> set[str]:
    """The solution code, hidden checks and model answers of ``solutions_dir``, normalised.

    Code is kept as its non-blank lines, stripped (``_code_lines``); answers as their words
    (``_words``). Pieces shorter than ``MIN_SECRET_CHARS`` are left out.
    """
    found: set[str] = set()
    for path in notebooks_in(solutions_dir):
        for cell in nbformat.read(path, as_version=4).cells:
            found.update(_code_lines(m["body"]) for m in _CODE_BODY.finditer(cell.source))
            found.update(_words(m["body"]) for m in _ANSWER_BODY.finditer(cell.source))
    return {piece for piece in found if len(piece) >= MIN_SECRET_CHARS}


def _texts(name: str, data: bytes) -> list[str]:
    """The texts of a file to scan: a notebook's cell sources, or the file's own text."""
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".ipynb"):
        try:
            cells = json.loads(text).get("cells", [])
            return ["".join(cell.get("source", "")) for cell in cells]
        except (ValueError, AttributeError, TypeError):
            return [text]
    return [text]


def leaks(name: str, data: bytes, hidden: Iterable[str]) -> list[str]:
    """What in one file would give answers away; empty when nothing does.

    Parameters
    ----------
    name : str
        The file's name (a notebook's cells are scanned one by one).
    data : bytes
        Its content.
    hidden : iterable of str
        The normalised solutions, hidden checks and answers (``secrets``).

    Returns
    -------
    list of str
        One phrase per problem: a solution or hidden-checks block (its markers at the start
        of a line), an answer block in a notebook, or the text of a solution, hidden check or
        model answer.
    """
    found = []
    for text in _texts(name, data):
        found += [what for what, block in _BLOCKS.items() if block.search(text)]
        if name.endswith(".ipynb") and cells.ANSWER_BLOCK.search(text):
            found.append("a model answer block")
        code, words = _code_lines(text), _words(text)
        if any(piece in code or piece in words for piece in hidden):
            found.append("the text of a solution, hidden check or model answer")
    return sorted(set(found))


def _check_target(target: Path, repo: Path) -> Path:
    """``target`` resolved, unless it is, holds or lies in the repository, or is not a folder."""
    resolved = Path(target).expanduser().resolve()
    if resolved.is_relative_to(repo) or repo.is_relative_to(resolved):
        raise KitError(f"{target} is the course repository {repo}, lies in it or holds it; a student "
                       "copy needs a folder of its own, outside the repository.")
    if resolved.exists() and not resolved.is_dir():
        raise KitError(f"{target} is a file, not a folder.")
    if (resolved / SOLUTIONS_DIR.name).exists():
        raise KitError(f"{resolved} holds a {SOLUTIONS_DIR.name}/ folder; a student copy must not. "
                       f"{_REFUSE_HINT}")
    return resolved


def scan(contents: Mapping[Path, bytes], hidden: Iterable[str]) -> None:
    """Refuse a student copy in which any file gives answers away.

    Raises
    ------
    KitError
        Naming the first such file and what it holds.
    """
    hidden = list(hidden)
    for relative, data in contents.items():
        problems = leaks(relative.name, data, hidden)
        if problems:
            raise KitError(f"{relative} would give answers away in the student copy ({'; '.join(problems)}); "
                           "nothing was written.")


def students_repository(given: str | None = None, course_file: Path | None = None) -> str:
    """The students' GitHub repository (``owner/name``) the copy is published as.

    Parameters
    ----------
    given : str, optional
        ``--binder-repo``: it wins over the course file.
    course_file : Path, optional
        The course's settings (default ``course/course.toml`` of the repository), whose
        ``[course] student_repository`` names it.

    Raises
    ------
    KitError
        If neither names it (the course file missing, or its value still ``TO BE SET``), or
        what names it is not ``owner/name``. Nothing is written then.
    """
    if given is not None:
        where, value = "--binder-repo", given
    else:
        course_file = Path(course_file) if course_file is not None else REPO_ROOT / "course" / "course.toml"
        where = f"{course_file}'s [{REPOSITORY_TABLE}] {REPOSITORY_KEY}"
        value = _course_table(course_file).get(REPOSITORY_KEY, "")
        if value == "" or (isinstance(value, str) and value.startswith(UNSET)):
            raise KitError(f"{where} is not set: write there the students' GitHub repository "
                           "(owner/name) you will publish the copy as, which its README names for the "
                           "Binder badge, `git clone` and `cd` (or pass --binder-repo OWNER/NAME); "
                           "nothing was written.")
    problem = repository_problem(value)
    if problem:
        raise KitError(f"{where}: {problem}; nothing was written.")
    return value


def _course_table(course_file: Path) -> dict:
    """The ``[course]`` table of the course file (``settings.read_course_file``)."""
    holds = (f"its [{REPOSITORY_TABLE}] {REPOSITORY_KEY} names the students' repository (or pass "
             "--binder-repo OWNER/NAME); nothing was written")
    table = read_course_file(course_file, holds=holds).get(REPOSITORY_TABLE, {})
    return table if isinstance(table, dict) else {}


def student_readme(repository: str, repo: Path = REPO_ROOT) -> str:
    """The student copy's README: ``STUDENT_README`` with the students' repository filled in.

    Parameters
    ----------
    repository : str
        The students' GitHub repository, ``owner/name`` (``students_repository``): it replaces
        ``REPO_PLACEHOLDER`` (the Binder badge and the ``git clone`` URL) and ``name`` the
        folder the clone makes (``cd NAME``).
    repo : Path
        The course repository, which holds ``STUDENT_README``.

    Raises
    ------
    KitError
        If ``STUDENT_README`` is missing or ``repository`` is not ``owner/name``.
    """
    path = Path(repo) / STUDENT_README
    if not path.is_file():
        raise KitError(f"{path} is missing: it is the README of the student copy; nothing was written.")
    problem = repository_problem(repository)
    if problem:
        raise KitError(f"{problem}; nothing was written.")
    text = path.read_text(encoding="utf-8")
    name = repository.split("/")[1]
    return text.replace(REPO_PLACEHOLDER, repository).replace(FOLDER_PLACEHOLDER, f"cd {name}")


def student_course_file(course_file: Path = COURSE_FILE) -> str:
    """The copy's ``course/course.toml`` (``STUDENT_COURSE_FILE``): the course file's ``[course]
    name`` and its significance level (``[evaluation] alpha``, ``settings.alpha``), which the
    copy's notebooks test at, so that the course file stays their one source.

    Raises
    ------
    KitError
        If the course file is missing or does not parse, has no course name, or no valid
        ``[evaluation] alpha``. Nothing is written then.
    """
    try:
        level = alpha(course_file)
    except KitError as err:
        raise KitError(f"{err} Nothing was written.") from None
    name = _course_table(Path(course_file)).get("name")
    if not isinstance(name, str) or not name.strip():
        raise KitError(f"{course_file}'s [{REPOSITORY_TABLE}] name is {name!r}: the course's name, as "
                       "students should see it; nothing was written.")
    return STUDENT_COURSE_HEADER + toml_text({REPOSITORY_TABLE: {"name": name},
                                              EVALUATION_TABLE: {ALPHA_KEY: level}}).rstrip("\n") + "\n"


def write_student_copy(target: Path, repo: Path = REPO_ROOT, solutions_dir: Path = SOLUTIONS_DIR,
                       notebooks_dir: Path = NOTEBOOKS_DIR, binder_repo: str | None = None,
                       course_file: Path | None = None) -> list[Path]:
    """Write the student copy of the kit into ``target``.

    Parameters
    ----------
    target : Path
        The folder to write (created if missing); outside the repository.
    repo : Path
        The course repository.
    solutions_dir, notebooks_dir : Path
        Its solutions, and the released notebooks, which must be in sync with them.
    binder_repo : str, optional
        The students' GitHub repository (``owner/name``) for the README's Binder badge,
        ``git clone`` and ``cd`` commands (``student_readme``); default the course file's.
    course_file : Path, optional
        The course's settings (default ``repo``'s ``course/course.toml``), which name the
        students' repository (``students_repository``) and give what the copy's own course
        file holds (``student_course_file``).

    Returns
    -------
    list of Path
        The files of the copy, in ``target``. Files an earlier copy wrote there that this one
        does not hold are deleted, unless changed since.

    Raises
    ------
    KitError
        If ``target`` is (in) the repository, holds ``solutions/``, or holds a file in the way
        that the kit did not write or that changed since; if ``STUDENT_README`` is missing; if
        no students' repository is named, or not as ``owner/name``; if the course file gives
        no course name or significance level (``student_course_file``); if ``notebooks/`` is out
        of date; if any file would give answers away. Nothing is written then.
    """
    repo = Path(repo).resolve()
    require_course_repository("release --student-repo", solutions_dir)
    folder = _check_target(target, repo)
    course_file = Path(course_file) if course_file is not None else repo / STUDENT_COURSE_FILE
    repository = students_repository(binder_repo, course_file)
    readme = student_readme(repository, repo)
    course = student_course_file(course_file)
    stale = release.release(solutions_dir, notebooks_dir, check=True)
    if stale:
        raise KitError(f"{', '.join(p.name for p in stale)} out of date in {notebooks_dir}; run "
                       "`kit release` first.")
    sources = {relative: repo / relative for relative in student_files(repo)}
    sources[_README] = repo / STUDENT_README
    contents = {relative: readme.encode("utf-8") if relative == _README
                else student_version(relative, source.read_bytes())
                for relative, source in sorted(sources.items())}
    contents[STUDENT_COURSE_FILE] = course.encode("utf-8")
    contents[LIBRARY_MANIFEST] = library_manifest(contents).encode("utf-8")
    scan(contents, secrets(solutions_dir))
    owned.refuse_changed((folder / relative for relative in contents), _REFUSE_HINT)
    written = []
    for relative, data in contents.items():
        path = owned.write_owned(folder / relative, data, refuse=_REFUSE_HINT)
        if relative in sources:
            _copy_mode(sources[relative], path)
        written.append(path)
    for path in _stale(folder, contents):
        owned.remove_owned(path)
    return written


def _stale(folder: Path, contents: Mapping[Path, bytes]) -> list[Path]:
    """The files an earlier copy wrote into ``folder`` that this one does not hold: the
    instructors' code an older kit copied, a module since removed. Left there, a module would
    be one the library's manifest does not know (``integrity``), and ``kit check`` would refuse."""
    return [path for ledger in sorted(folder.rglob(owned.LEDGER)) for path in owned.written_in(ledger.parent)
            if path.relative_to(folder) not in contents]


def library_manifest(contents: Mapping[Path, bytes]) -> str:
    """The manifest of the library the copy holds (``release.manifest``): every file of
    ``contents`` in ``helpers/``, by its path there."""
    library = LIBRARY_MANIFEST.parent
    return release.manifest({relative.relative_to(library).as_posix(): data
                               for relative, data in contents.items()
                               if relative.is_relative_to(library) and relative != LIBRARY_MANIFEST})


def _copy_mode(source: Path, path: Path) -> None:
    """Keep the executable bits (``start``, ``postBuild``) of the original."""
    mode = stat.S_IMODE(os.stat(source).st_mode) & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if mode:
        os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) | mode)
