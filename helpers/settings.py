"""Where the kit keeps its data, where it fetches from, and which profile it runs.

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

"Reference" has one meaning in the kit: the outputs a run is checked against, and what
writes them (``kit references``, the reference environment and BLAS kernels).
"""

from __future__ import annotations

import os
import warnings
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


#: OpenBLAS picks its kernels by CPU. The reference outputs were written with its Haswell
#: kernels (AVX2 and FMA); an AVX-512 CPU's own (SkylakeX) train measurably different
#: Doc2Vec models, so where the CPU can run the reference kernels the kit uses them.
REFERENCE_BLAS_CORE = "Haswell"
REFERENCE_BLAS_FLAGS = frozenset({"avx2", "fma"})
#: Where Linux lists the CPU's features.
CPUINFO = Path("/proc/cpuinfo")


def reference_blas() -> dict[str, str]:
    """``{"OPENBLAS_CORETYPE": "Haswell"}`` where the CPU runs those kernels and no kernels
    were chosen (``OPENBLAS_CORETYPE`` set, e.g. to try others), else ``{}``.

    It must be in the environment before numpy loads OpenBLAS: ``import helpers`` applies
    it, and every kernel the kit starts inherits it.
    """
    if os.environ.get("OPENBLAS_CORETYPE") or not REFERENCE_BLAS_FLAGS <= cpu_flags():
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

