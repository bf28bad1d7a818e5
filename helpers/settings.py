"""Where the kit keeps its data, where it fetches from, and which profile it runs: the one
module that reads (and sets) the process environment.

Every setting is read from the environment when it is needed, so a notebook, the ``kit``
command and the tests all agree:

- ``KIT_DATA_DIR``: the data folder (default: ``data/`` beside ``helpers/`` in the repo).
- ``KIT_DATA_SOURCE``: a local folder holding the downloaded files (``aclImdb_v1.tar.gz``,
  ``nltk_data/corpora/<corpus>.zip``) that replaces the network
  when fetching (default: none, download from the official URLs).
- ``KIT_WORK_DIR``: the student's workspace, where ``kit lab`` keeps their working copies
  of the notebooks (default: ``work/`` in the repo).
- ``KIT_PROFILE``: ``quick`` (one worker, bit for bit: what the checked notebook outputs
  come from) or ``full`` (more epochs, all cores). Default: ``quick``. (``reference``, its
  old name, still works, with a warning.)

The kit's processes tell each other a few things through the variables they inherit:
``KIT_STRICT_CACHE`` (a grading preparation's notebooks: a cache that cannot be stored is an
error, ``strict_caches``), ``JPY_SESSION_NAME`` (the notebook a lab kernel was started for,
``lab_session``) and ``PYTHONHASHSEED`` (``hash_seed``). No other module of the kit reads or
sets ``os.environ`` (ruff's banned-api rule, ``pyproject.toml``): they ask here.

One setting is the course's, not the machine's: the significance level every notebook tests
at, ``alpha()``, read from ``course/course.toml`` (``[evaluation] alpha``).

"Reference" has one meaning in the kit: the outputs a run is checked against, and what
writes them (``kit references``, the reference environment and BLAS kernels).
"""

from __future__ import annotations

import math
import os
import threading
import tomllib
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from helpers.errors import InputError, KitError

REPO_ROOT = Path(__file__).resolve().parent.parent
PROFILES = ("quick", "full")
DEFAULT_PROFILE = "quick"
#: Old profile names, each with the name it now has.
RENAMED_PROFILES = {"reference": "quick"}


def data_dir() -> Path:
    """Return the kit's data folder (``KIT_DATA_DIR`` or ``<repo>/data``).

    Returns
    -------
    Path
        An absolute path; the folder may not exist yet.
    """
    configured = os.environ.get("KIT_DATA_DIR")
    return Path(configured).expanduser().resolve() if configured else REPO_ROOT / "data"


#: Folders of the kit a workspace must not be (its notebooks would be edited, or mixed in).
KIT_FOLDERS = ("notebooks", "solutions", "helpers", "tests")


def work_dir() -> Path:
    """Return the student's workspace (``KIT_WORK_DIR`` or ``<repo>/work``); may not exist yet.

    Raises
    ------
    KitError
        If ``KIT_WORK_DIR`` is the repository itself or one of the kit's own folders.
    """
    configured = os.environ.get("KIT_WORK_DIR")
    if not configured:
        return REPO_ROOT / "work"
    work = Path(configured).expanduser().resolve()
    if work == REPO_ROOT or any(work.is_relative_to(REPO_ROOT / name) for name in KIT_FOLDERS):
        raise KitError(f"KIT_WORK_DIR={configured} is the kit's own folder {work}; a workspace "
                       "must be a folder of its own, such as the default work/.")
    return work


def data_source() -> Path | None:
    """Return the local data source folder from ``KIT_DATA_SOURCE``, or None for the network."""
    configured = os.environ.get("KIT_DATA_SOURCE")
    return Path(configured).expanduser().resolve() if configured else None


def profile(name: str | None = None) -> str:
    """Return the run profile: ``name`` if given, else ``KIT_PROFILE``, else ``quick``.

    An old name (``RENAMED_PROFILES``: ``reference``) gives its new one, with a
    ``FutureWarning`` saying so.

    Raises
    ------
    KitError
        If the profile is not one of ``quick`` or ``full`` (an ``InputError``).
    """
    chosen = name or os.environ.get("KIT_PROFILE") or DEFAULT_PROFILE
    if chosen in RENAMED_PROFILES:
        warnings.warn(f"The {chosen!r} profile is now called {RENAMED_PROFILES[chosen]!r}: set "
                      f"KIT_PROFILE={RENAMED_PROFILES[chosen]} (the old name will stop working).",
                      FutureWarning, stacklevel=2)
        chosen = RENAMED_PROFILES[chosen]
    if chosen not in PROFILES:
        raise InputError(f"Unknown profile {chosen!r}: set KIT_PROFILE to one of {PROFILES}.")
    return chosen


#: The course's settings. In a student copy ``kit release --student-repo`` writes there the part
#: the kit reads ([course] name, [evaluation]); the grading sandbox shows it read-only.
COURSE_FILE = REPO_ROOT / "course" / "course.toml"
#: Where the course file gives the significance level: ``[evaluation] alpha``.
EVALUATION_TABLE, ALPHA_KEY = "evaluation", "alpha"
#: The open interval a significance level must lie in: above 0, and below 0.5 (a two-sided test
#: at 0.5 or more would reject H0 for most samples drawn under it).
ALPHA_LIMITS = (0.0, 0.5)


def read_course_file(path: Path | None = None, holds: str = "it holds the course's settings") -> dict:
    """The course file (default ``COURSE_FILE``), parsed: the kit's one reader of it.

    Parameters
    ----------
    path : Path, optional
        The course file to read.
    holds : str
        What the file holds for the caller, said when it cannot be read.

    Raises
    ------
    KitError
        If it is missing or is not TOML; the message names the file and ``holds``.
    """
    path = COURSE_FILE if path is None else Path(path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KitError(f"{path} is missing: {holds} (restore it, e.g. "
                       "`git checkout -- course/course.toml`).") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise KitError(f"{path} cannot be read as TOML ({err}); {holds}.") from None


def alpha(course_file: Path | None = None) -> float:
    """The course's significance level α, which every notebook's tests use.

    One value for the whole course, ``[evaluation] alpha`` in ``course/course.toml``, read
    when asked (a changed file counts at the next call). A notebook tests at it
    (``p < alpha()`` rejects H0) and its 1 − α confidence; changing it changes the notebooks'
    verdicts, so their reference outputs are written again (``kit references``).

    Parameters
    ----------
    course_file : Path, optional
        The course file to read (default ``COURSE_FILE``).

    Returns
    -------
    float
        A number in (0, 0.5).

    Raises
    ------
    KitError
        If the file is missing or does not parse, or it has no ``[evaluation] alpha``, or that
        is not a number in (0, 0.5); the message names the file and what it must hold.
    """
    path = COURSE_FILE if course_file is None else Path(course_file)
    where = f"{path}'s [{EVALUATION_TABLE}] {ALPHA_KEY}"
    settings = read_course_file(path, holds=f"its [{EVALUATION_TABLE}] {ALPHA_KEY} is the course's "
                                            "significance level, which the notebooks test at")
    table = settings.get(EVALUATION_TABLE)
    value = table.get(ALPHA_KEY) if isinstance(table, dict) else None
    if value is None:
        raise KitError(f"{where} is not set: write the course's significance level there, e.g. "
                       f"[{EVALUATION_TABLE}] {ALPHA_KEY} = 0.05.")
    problem = alpha_problem(value)
    if problem:
        raise KitError(f"{where} {problem}")
    return float(value)


def alpha_problem(value: object) -> str | None:
    """Why ``value`` is not a significance level (a number in ``ALPHA_LIMITS``, both excluded),
    as the end of a sentence naming it; None when it is one."""
    low, high = ALPHA_LIMITS
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) \
            and low < value < high:
        return None
    return (f"is {value!r}: it must be a number between {low:g} and {high:g} (both excluded), the "
            "level below which a p-value rejects H0, e.g. 0.05.")


#: OpenBLAS picks its kernels by CPU. The reference outputs were written with its Haswell
#: kernels (AVX2 and FMA); an AVX-512 CPU's own (SkylakeX) train measurably different
#: Doc2Vec models, so where the CPU can run the reference kernels the kit uses them.
REFERENCE_BLAS_CORE = "Haswell"
REFERENCE_BLAS_FLAGS = frozenset({"avx2", "fma"})
#: Where Linux lists the CPU's features.
CPUINFO = Path("/proc/cpuinfo")


def reference_blas(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{"OPENBLAS_CORETYPE": "Haswell"}`` where the CPU runs those kernels and no kernels
    were chosen (``OPENBLAS_CORETYPE`` set in ``environ``, default this process's
    environment, e.g. to try others), else ``{}``.

    It must be in the environment before numpy loads OpenBLAS: the kit's processes apply it
    first (``helpers.course.startup.use_reference_blas``; Binder's ``start`` likewise), and
    every kernel the kit starts inherits it.
    """
    chosen = (os.environ if environ is None else environ).get("OPENBLAS_CORETYPE")
    if chosen or not REFERENCE_BLAS_FLAGS <= cpu_flags():
        return {}
    return {"OPENBLAS_CORETYPE": REFERENCE_BLAS_CORE}


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The CPU's feature flags, from the first ``flags`` line of ``cpuinfo`` (Linux's
    ``/proc/cpuinfo``); empty where there is none (another system, another architecture)."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return frozenset()
    line = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return frozenset(line.partition(":")[2].split())


# --- The process environment -----------------------------------------------------------------

#: Set (to anything) when a cache that cannot be stored must be an error, not a warning.
STRICT_CACHE_ENV = "KIT_STRICT_CACHE"
#: What jupyter_server tells a kernel it starts for a notebook: that notebook's path.
LAB_SESSION_ENV = "JPY_SESSION_NAME"
#: Python's hash seed, which gensim's initial vectors depend on.
HASH_SEED_ENV = "PYTHONHASHSEED"


def strict_caches() -> bool:
    """Whether a cache that cannot be stored is an error here (``STRICT_CACHE_ENV`` set)."""
    return bool(os.environ.get(STRICT_CACHE_ENV))


def lab_session() -> str | None:
    """The notebook path jupyter_server gave this kernel (``LAB_SESSION_ENV``), or None."""
    return os.environ.get(LAB_SESSION_ENV) or None


def hash_seed() -> str | None:
    """This process's ``PYTHONHASHSEED`` as set in its environment, or None where it is unset."""
    return os.environ.get(HASH_SEED_ENV)


def environment(names: Iterable[str] | None = None) -> dict[str, str]:
    """A copy of this process's environment: every variable, or only those of ``names`` set."""
    if names is None:
        return dict(os.environ)
    return {name: os.environ[name] for name in names if name in os.environ}


def set_environment(values: Mapping[str, str], unset: Iterable[str] = ()) -> None:
    """Set ``values`` and remove ``unset`` in this process's environment, which every process
    it starts afterwards (a kernel, a sandboxed job) inherits."""
    for name in unset:
        os.environ.pop(name, None)
    os.environ.update(values)


@contextmanager
def environment_kept() -> Iterator[None]:
    """Put this process's environment back as it was on entry, whatever the block set (e.g.
    Dask's nannies, which set their workers' variables here before each spawn)."""
    before = dict(os.environ)
    try:
        yield
    finally:
        for name in set(os.environ) - set(before):
            del os.environ[name]
        os.environ.update(before)


class _Holders:
    """The blocks in this process (threads) that hold a variable set, and what it was before."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.before: str | None = None


_STRICT_HOLDERS = _Holders()


@contextmanager
def strict_caches_set() -> Iterator[None]:
    """Set ``STRICT_CACHE_ENV`` for the processes started meanwhile, until the last of the
    blocks running at once in this process ends; then put back what was there."""
    held = _STRICT_HOLDERS
    with held.lock:
        if held.count == 0:
            held.before = os.environ.get(STRICT_CACHE_ENV)
            set_environment({STRICT_CACHE_ENV: "1"})
        held.count += 1
    try:
        yield
    finally:
        with held.lock:
            held.count -= 1
            if held.count == 0:
                set_environment({} if held.before is None else {STRICT_CACHE_ENV: held.before},
                                unset=[STRICT_CACHE_ENV])
