"""The kit's library as released: a student copy's ``helpers/RELEASED.sha256``, and what differs.

``kit release --student-repo`` writes into the copy, beside the library it copies, a manifest
of ``helpers/`` (``manifest``; ``sha256sum -c RELEASED.sha256`` in ``helpers/`` reads it), as
``kit release`` records ``notebooks/RELEASED.sha256``. Where it exists, ``changes`` names each
file of the library that differs from it: changed, missing, or a module added. ``kit check``
then refuses to run (``require_intact``), as it refuses an edited ``notebooks/``: its verdicts
would be those of the changed library, not of the one grading uses (smoothing taken out of
``helpers/naive_bayes.py`` passes a wrong ``nb_fit``). ``kit lab`` and ``kit info`` say so
(``notice``, ``summary``) and go on. Each names the files and how to restore them.

The course repository has no such manifest: instructors change ``helpers/`` on purpose, and
nothing compares it there. Everywhere, a module of the library that does not compile is named
with its ``SyntaxError``: every notebook's first cell imports the library, and its error would
otherwise surface only as a ``NameError`` in the cells after it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from helpers.course.notebook.release import MANIFEST, content_digest
from helpers.course.student.kernel import KIT_PACKAGE
from helpers.errors import KitError

#: Folders in the library that are never part of it: caches and editor leftovers.
IGNORED_FOLDERS = ("__pycache__", ".ipynb_checkpoints")

CHANGED = "changed since the release"
MISSING = "missing"
ADDED = "not the kit's (added since the release)"
BROKEN = "does not compile"
#: What ``kit check`` adds when it refuses.
REFUSED = ("`kit check` runs once the library is as released: until then its verdicts would be the "
           "changed library's, not those of the library grading uses.")
REFUSED_BROKEN = "`kit check` runs once it compiles."


@dataclass(frozen=True)
class Change:
    """One file of the library that is not as released (or, without a manifest, does not compile).

    Parameters
    ----------
    name : str
        Its path in the library, ``/``-separated (``text.py``, ``course/config.py``).
    state : str
        ``CHANGED``, ``MISSING``, ``ADDED`` or ``BROKEN``.
    error : str
        Its error when it does not compile (``SyntaxError at line 12: invalid syntax``).
    """

    name: str
    state: str
    error: str = ""


def read_manifest(package: Path = KIT_PACKAGE) -> dict[str, str] | None:
    """The library's manifest as ``{name: sha256}``; None where there is none (the course
    repository)."""
    path = Path(package) / MANIFEST
    if not path.is_file():
        return None
    pairs = (line.split("  ", 1) for line in path.read_text(encoding="utf-8").splitlines() if "  " in line)
    return {name: digest for digest, name in pairs}


def _modules(package: Path) -> Iterator[Path]:
    for path in sorted(Path(package).rglob("*.py")):
        if not set(path.relative_to(package).parts) & set(IGNORED_FOLDERS):
            yield path


def compile_error(path: Path) -> str:
    """``SyntaxError at line 12: invalid syntax`` for a module that does not compile, else ""."""
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except SyntaxError as err:
        return f"{type(err).__name__} at line {err.lineno}: {err.msg}"
    except ValueError as err:  # a NUL byte in the source
        return f"{type(err).__name__}: {err}"
    return ""


def changes(package: Path = KIT_PACKAGE) -> list[Change]:
    """The files of the library that are not as released, with the error of each that does
    not compile; without a manifest (the course repository), the modules that do not compile.

    Parameters
    ----------
    package : Path
        The library's folder (``helpers/``).
    """
    package = Path(package)
    released = read_manifest(package)
    if released is None:
        return [Change(path.relative_to(package).as_posix(), BROKEN, error)
                for path in _modules(package) if (error := compile_error(path))]
    found = []
    for name, digest in sorted(released.items()):
        path = package / name
        if not path.is_file():
            found.append(Change(name, MISSING))
        elif content_digest(path.read_bytes()) != digest:
            found.append(Change(name, CHANGED, compile_error(path) if path.suffix == ".py" else ""))
    found += [Change(name, ADDED, compile_error(path)) for path in _modules(package)
              if (name := path.relative_to(package).as_posix()) not in released]
    return found


def _shown(change: Change, package: Path) -> str:
    error = f" ({change.error})" if change.error else ""
    return f"{package.name}/{change.name} {change.state}{error}"


def _them(paths: Sequence[str]) -> str:
    return "it" if len(paths) == 1 else "them"


def restore_hint(found: Sequence[Change], package: Path = KIT_PACKAGE) -> str:
    """How to put the library back as released: ``git checkout`` in a clone, else the files
    again from the course's repository; a module added is deleted.

    Parameters
    ----------
    found : sequence of Change
        What ``changes`` found.
    package : Path
        The library's folder (its parent is the clone, if it is one).
    """
    package = Path(package)
    restored = [f"{package.name}/{c.name}" for c in found if c.state != ADDED]
    added = [f"{package.name}/{c.name}" for c in found if c.state == ADDED]
    if all(c.state == BROKEN for c in found):  # the course repository: changed on purpose
        return f"Fix {_them(restored)}, or undo the change with `git checkout -- {' '.join(restored)}`."
    hints = []
    if restored and (package.parent / ".git").exists():
        hints.append(f"`git checkout -- {' '.join(restored)}` restores {_them(restored)}.")
    elif restored:
        hints.append(f"Take {' '.join(restored)} again from your course's repository (the one your "
                     f"README's `git clone` command names: download {_them(restored)}, or the whole "
                     f"repository again) and put {_them(restored)} in place.")
    if added:
        hints.append(f"Delete {' '.join(added)}: a module of your own belongs beside your notebooks "
                     "in work/.")
    return " ".join([*hints, "Your work in work/ is not touched."])


def describe(found: Sequence[Change], package: Path = KIT_PACKAGE) -> str:
    """What is wrong with the library and how to restore it, in a few sentences."""
    package = Path(package)
    shown = "; ".join(_shown(change, package) for change in found)
    if all(change.state == BROKEN for change in found):
        head = f"the kit's library does not compile, and every notebook imports it: {shown}."
    else:
        head = f"the kit's library is not as released ({package.name}/{MANIFEST}): {shown}."
    return f"{head} {restore_hint(found, package)}"


def notice(package: Path = KIT_PACKAGE) -> str | None:
    """``describe`` for the library as it is; None when it is as released (and compiles)."""
    found = changes(package)
    return describe(found, package) if found else None


def summary(package: Path = KIT_PACKAGE) -> str:
    """One line on the library for ``kit info``: as released, or not (and why, how to restore)."""
    found = changes(package)
    if found:
        return describe(found, package)
    released = read_manifest(package)
    if released is None:
        return "compiles (the course repository's: not compared with a release)"
    return f"as released ({len(released)} files, {package.name}/{MANIFEST})"


def require_intact(package: Path = KIT_PACKAGE) -> None:
    """Refuse to check a notebook while the library is not as released, or does not compile.

    Raises
    ------
    KitError
        Naming each file, what is wrong with it and how to restore it.
    """
    found = changes(package)
    if found:
        last = REFUSED_BROKEN if all(change.state == BROKEN for change in found) else REFUSED
        raise KitError(f"{describe(found, package)} {last}")
