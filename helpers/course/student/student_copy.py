"""``kit release --student-repo DIR``: the students' copy of the kit, without the answers.

The course repository holds what students must not read: ``solutions/`` (model answers,
solution code, hidden checks), the tests and benchmarks (which quote them), the CI set-up.
A student copy holds the kit's code (``helpers/``), the released ``notebooks/``, the files
that install and start it (``STUDENT_FILES``) and, as its ``README.md``, the students' README
(``STUDENT_README``, with the students' repository put into its Binder badge and ``git clone``
command: ``student_readme``), and nothing else. Before anything is written,
every file is scanned (``leaks``): none may hold a solution, hidden-check or answer block,
nor the text of any model answer, solution or hidden check of ``solutions/``.

Files are written with ``helpers.owned.write_owned``, so writing into ``DIR`` again replaces
only the files an earlier copy wrote and nobody changed since; any other file in the way
stops the copy before it writes anything.

In a student copy (no ``solutions/``) the instructors' commands say so
(``require_course_repository``) instead of failing on the missing folder.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

import nbformat

from helpers import owned
from helpers.course.config import NOTEBOOKS_DIR, SOLUTIONS_DIR, notebooks_in
from helpers.course.notebook import cells, release
from helpers.errors import KitError
from helpers.settings import REPO_ROOT

#: The folders a student copy holds, whole (less ``SKIPPED``).
STUDENT_FOLDERS = ("helpers", "notebooks")
#: The single files it holds, where the repository has them.
STUDENT_FILES = ("LICENSE", "pyproject.toml", "constraints.txt", "environment.yml", "start",
                 "postBuild", "nbval_sanitize.cfg", ".gitignore", "data/README.md",
                 "data/deployment/README.md")
#: The repository's README for the student copy, written there as ``README.md``.
STUDENT_README = "STUDENT_README.md"
_README = Path("README.md")
#: What ``STUDENT_README`` says where the students' GitHub repository goes (``owner/name``) ...
REPO_PLACEHOLDER = "OWNER/NAME"
#: ... and where the folder its clone makes goes (``name``).
FOLDER_PLACEHOLDER = "cd NAME"
_GITHUB_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
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


def is_student_copy(root: Path = REPO_ROOT) -> bool:
    """Whether ``root`` is a student copy: the kit without ``solutions/``."""
    return not (Path(root) / SOLUTIONS_DIR.name).is_dir()


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
            if path.is_file() and not any(_skipped(part) for part in relative.parts):
                found.append(relative)
    return sorted(found)


def _skipped(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in SKIPPED)


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
    found = set()
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


def student_readme(binder_repo: str | None = None, repo: Path = REPO_ROOT) -> str:
    """The student copy's README: ``STUDENT_README`` with the students' repository filled in.

    Parameters
    ----------
    binder_repo : str, optional
        The students' GitHub repository, ``owner/name``: it replaces ``REPO_PLACEHOLDER`` (the
        Binder badge and the ``git clone`` URL) and ``name`` the folder the clone makes. None
        leaves the placeholders for the instructor to fill in.
    repo : Path
        The course repository, which holds ``STUDENT_README``.

    Raises
    ------
    KitError
        If ``STUDENT_README`` is missing or ``binder_repo`` is not ``owner/name``.
    """
    path = Path(repo) / STUDENT_README
    if not path.is_file():
        raise KitError(f"{path} is missing: it is the README of the student copy; nothing was written.")
    text = path.read_text(encoding="utf-8")
    if binder_repo is None:
        return text
    if not _GITHUB_REPO.fullmatch(binder_repo) or binder_repo.endswith(".git"):
        raise KitError(f"--binder-repo {binder_repo!r} is not a GitHub repository's owner/name "
                       "(e.g. my-course/sentiment-practical); nothing was written.")
    name = binder_repo.split("/")[1]
    return text.replace(REPO_PLACEHOLDER, binder_repo).replace(FOLDER_PLACEHOLDER, f"cd {name}")


def write_student_copy(target: Path, repo: Path = REPO_ROOT, solutions_dir: Path = SOLUTIONS_DIR,
                       notebooks_dir: Path = NOTEBOOKS_DIR, binder_repo: str | None = None) -> list[Path]:
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
        The students' GitHub repository (``owner/name``) for the README's Binder badge and
        ``git clone`` command (``student_readme``); None leaves ``REPO_PLACEHOLDER`` there.

    Returns
    -------
    list of Path
        The files of the copy, in ``target``.

    Raises
    ------
    KitError
        If ``target`` is (in) the repository, holds ``solutions/``, or holds a file in the way
        that the kit did not write or that changed since; if ``STUDENT_README`` is missing or
        ``binder_repo`` is not ``owner/name``; if ``notebooks/`` is out of date; if any file
        would give answers away. Nothing is written then.
    """
    repo = Path(repo).resolve()
    require_course_repository("release --student-repo", solutions_dir)
    folder = _check_target(target, repo)
    readme = student_readme(binder_repo, repo)
    stale = release.release(solutions_dir, notebooks_dir, check=True)
    if stale:
        raise KitError(f"{', '.join(p.name for p in stale)} out of date in {notebooks_dir}; run "
                       "`kit release` first.")
    sources = {relative: repo / relative for relative in student_files(repo)}
    sources[_README] = repo / STUDENT_README
    contents = {relative: readme.encode("utf-8") if relative == _README else source.read_bytes()
                for relative, source in sorted(sources.items())}
    scan(contents, secrets(solutions_dir))
    owned.refuse_changed((folder / relative for relative in contents), _REFUSE_HINT)
    written = []
    for relative, data in contents.items():
        path = owned.write_owned(folder / relative, data, refuse=_REFUSE_HINT)
        _copy_mode(sources[relative], path)
        written.append(path)
    return written


def _copy_mode(source: Path, path: Path) -> None:
    """Keep the executable bits (``start``, ``postBuild``) of the original."""
    mode = stat.S_IMODE(os.stat(source).st_mode) & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if mode:
        os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) | mode)
