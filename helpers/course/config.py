"""The course tooling's paths and run policy, in one place.

Every tool that runs a notebook (the README's test command, ``kit grade``, ``kit run``,
``kit lab``, the self-check) takes its folders, its notebook pattern, its nbval arguments
and the reference environment from here, so they cannot drift apart.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from helpers import settings
from helpers.errors import KitError
from helpers.settings import COURSE_FILE as COURSE_FILE  # the course's settings: defined with alpha()
from helpers.settings import LAB_SESSION_ENV, REPO_ROOT

SOLUTIONS_DIR = REPO_ROOT / "solutions"
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
#: Jupyter server settings for ``kit lab`` and Binder: the file browser hides the released
#: notebooks and the server refuses the solutions (``lab_contents``), so students open their
#: copies in ``work/``.
LAB_CONFIG_DIR = Path(__file__).parent / "student" / "jupyter_config"
RUNS_DIR = REPO_ROOT / "runs"
#: Where ``kit release --force`` keeps copies of the notebooks it overwrote.
BACKUPS_DIR = REPO_ROOT / "backups"
SANITIZE_FILE = REPO_ROOT / "nbval_sanitize.cfg"
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"

#: The environment every kernel that produces or checks reference outputs runs with:
#: gensim seeds its initial vectors with Python's ``hash``, so the hash seed is fixed.
REFERENCE_ENV = {"PYTHONHASHSEED": "0"}

#: The kernel every notebook the kit runs starts in, as this Python starts it (the argv after
#: the interpreter): the students' own, ``helpers.course.student.kernel`` (the kit imported
#: before the working folder is on the path; the one-line display of unfinished exercises),
#: which ``kit lab`` and Binder start.
KIT_KERNEL = ("-P", "-m", "helpers.course.student.kernel", "-f", "{connection_file}")


def kit_kernel_argv() -> list[str]:
    """A kernel spec's ``argv`` that starts ``KIT_KERNEL`` with this environment's Python."""
    return [sys.executable, *KIT_KERNEL]

#: Seconds one cell may run before nbval (tests, grading) gives up on it.
CELL_TIMEOUT = 1200

#: Notebooks ``kit grade`` runs at once (each kernel may use every core itself).
GRADE_JOBS = 2
#: Seconds one bake-off entry's whole run may take, by default (``kit bakeoff --budget``).
BAKEOFF_BUDGET = 3600

#: The kit's nbval plugin: ``pyproject.toml`` names it for pytest, ``kit grade`` passes it.
PLUGIN = "helpers.course.engine.nbval_plugin"
#: How nbval checks a notebook, for pytest and ``kit grade`` alike: the plugin adds each of
#: these that a pytest command line does not give itself (``nbval_plugin``).
NBVAL_OPTIONS = ("--nbval-lax", "--nbval-current-env", f"--nbval-sanitize-with={SANITIZE_FILE}",
                 f"--nbval-cell-timeout={CELL_TIMEOUT}")


def notebooks_in(folder: Path, numbers: list[str] | None = None) -> list[Path]:
    """Return the numbered notebooks (``NN_topic.ipynb``) in ``folder``, sorted.

    Parameters
    ----------
    folder : Path
        Where to look.
    numbers : list of str, optional
        Keep only these notebook numbers (``"1"`` and ``"01"`` both mean ``01_*``).

    Returns
    -------
    list of Path
        Possibly empty.
    """
    found = sorted(Path(folder).glob(NOTEBOOK_GLOB))
    if numbers:
        wanted = {str(n).zfill(2) for n in numbers}
        found = [p for p in found if p.name[:2] in wanted]
    return found


def is_student_copy(root: Path = REPO_ROOT) -> bool:
    """Whether ``root`` is a student copy (``kit release --student-repo``): the kit without
    ``solutions/``. Cheap, so that ``kit --help`` can ask it."""
    return not (Path(root) / SOLUTIONS_DIR.name).is_dir()


def reference_environ(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return ``base`` (default ``os.environ``) with the reference environment applied (the
    reference BLAS kernels too, unless ``base`` chose others), and without the lab's notebook
    (``LAB_SESSION_ENV``: a check run from a lab cell is no lab session of that notebook)."""
    base = settings.environment() if base is None else base
    found = {**settings.reference_blas(base), **base, **REFERENCE_ENV}
    found.pop(LAB_SESSION_ENV, None)
    return found


def apply_reference_env() -> None:
    """Set the reference environment in this process, so kernels it starts inherit it (the
    reference BLAS kernels too, unless others were chosen), and not the lab's notebook
    (``LAB_SESSION_ENV``)."""
    settings.set_environment({**settings.reference_blas(), **REFERENCE_ENV}, unset=[LAB_SESSION_ENV])


def backup_path(folder: Path, original: Path, stamp: str) -> Path:
    """Where a copy of ``original`` taken at ``stamp`` goes in ``folder`` (created if missing).

    Raises
    ------
    KitError
        If that name is taken: an earlier copy is never overwritten.
    """
    backup = folder / f"{original.stem}.{stamp}{original.suffix}"
    if backup.exists():
        raise KitError(f"{backup} exists already; wait a second and try again.")
    folder.mkdir(parents=True, exist_ok=True)
    return backup
