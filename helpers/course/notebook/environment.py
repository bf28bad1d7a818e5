"""Which floating-point kernels and library versions a run uses, to say where a reference came from.

Reference outputs are written on one machine; a check that fails elsewhere names both
environments ("reference written with X, you run Y") so a student or grader can tell a
wrong answer from a machine that computes differently. The record lives in a solution
notebook's metadata under ``kit.reference_env`` and is copied into the released notebook.
"""

from __future__ import annotations

import importlib
import platform
from importlib import metadata

from threadpoolctl import threadpool_info

VERSIONED = ("numpy", "scipy", "gensim", "scikit-learn")
#: Loaded before their BLAS libraries are listed (numpy's, and scipy's, which gensim calls); only
#: then, so that a process that never describes itself (the grader's, whose checks all pass) does
#: not pay for scipy.linalg.
BLAS_USERS = ("numpy", "scipy.linalg")
REFERENCE_LABEL = "reference outputs written with:"
RUN_LABEL = "this run uses:"


def current() -> dict[str, str]:
    """Describe this process's BLAS kernels and numeric library versions.

    Kernels a notebook starts inherit this process's environment variables
    (``OPENBLAS_CORETYPE``, ``OPENBLAS_NUM_THREADS``), so they pick the same kernels.

    Returns
    -------
    dict
        ``{"blas": "...", "python": "3.11.7", "numpy": "2.4.6", ...}``; plain strings, so
        the record can sit in notebook metadata.
    """
    for name in BLAS_USERS:
        importlib.import_module(name)
    blas = sorted({f"{lib.get('internal_api')} {lib.get('version')} "
                   f"{lib.get('architecture')} ({lib.get('num_threads')} threads)"
                   for lib in threadpool_info() if lib.get("user_api") == "blas"})
    record = {"blas": "; ".join(blas) or "unknown", "python": platform.python_version()}
    for name in VERSIONED:
        try:
            record[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            record[name] = "not installed"
    return record


def describe(record: dict[str, str]) -> str:
    """One line naming a recorded environment (BLAS kernels first, then versions)."""
    versions = ", ".join(f"{k} {v}" for k, v in record.items() if k != "blas")
    return "; ".join(part for part in (record.get("blas", "unknown BLAS"), versions) if part)


def mismatch_lines(reference: dict[str, str] | None, blas: bool = True) -> tuple[str, ...]:
    """"reference outputs written with: X" and "this run uses: Y", when this run differs from
    ``reference``.

    Parameters
    ----------
    reference : dict or None
        The notebook's ``kit.reference_env`` record (None when it has none).
    blas : bool
        Whether other BLAS kernels count as a difference (they move numbers only; a difference
        in words is worth naming only for other library versions).

    Returns
    -------
    tuple of str
        The two lines, labels aligned; empty when the environments agree or the reference
        has no record.
    """
    if not reference:
        return ()
    here = current()
    if all(here.get(k) == v for k, v in reference.items() if blas or k != "blas"):
        return ()
    width = max(len(REFERENCE_LABEL), len(RUN_LABEL))
    return f"{REFERENCE_LABEL:<{width}} {describe(reference)}", f"{RUN_LABEL:<{width}} {describe(here)}"
