"""What the kit's own processes (``kit``, the grader's pytest) do first, before they import
nbformat or numpy: go without a slow optional module, and use the reference BLAS kernels.

Importing the course library changes nothing in a process (``helpers``); these are the kit's
processes' own choices, made here once.

jsonschema, which nbformat imports to validate notebooks, imports ``rfc3987_syntax`` when it is
installed (``jupyter-events`` asks for ``jsonschema[format-nongpl]``, which installs it), and that
module builds about 35 Earley parsers at import: about 2 s of every process that reads a
notebook (python-jsonschema/jsonschema#1428), measured here as 1.6–2.2 s of the 3 s the grader's
plugin took to import. It only checks the "iri" and "iri-reference" formats, which no schema the
kit validates (nbformat's) uses; without it jsonschema leaves those formats unchecked.

The kit's kernel is the student's process: it goes without the module only while it imports its
own helpers (``skipped_while``), so a student's own ``import rfc3987_syntax`` still works.
jsonschema, imported in the block, keeps what it found then: in that kernel its format checker
leaves "iri" and "iri-reference" unchecked, as in the kit's other processes.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from helpers import settings

#: Optional modules the kit's processes go without (see the module's docstring).
SKIPPED_MODULES = ("rfc3987_syntax",)


def skip_slow_imports() -> None:
    """Have ``SKIPPED_MODULES`` fail to import in this process (``import`` raises
    ``ModuleNotFoundError``, which jsonschema expects of an optional module). A module already
    imported stays as it is; call this before the first ``import nbformat``."""
    for name in SKIPPED_MODULES:
        if name not in sys.modules:
            sys.modules[name] = None  # type: ignore[assignment]  # the import system's "not importable"


@contextlib.contextmanager
def skipped_while() -> Iterator[None]:
    """Go without ``SKIPPED_MODULES`` inside the block only: a module the block found
    importable is importable again after it (a module imported meanwhile, such as jsonschema,
    keeps what it did without them)."""
    missing = [name for name in SKIPPED_MODULES if name not in sys.modules]
    skip_slow_imports()
    try:
        yield
    finally:
        for name in missing:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


def use_reference_blas() -> None:
    """Have OpenBLAS use the reference outputs' kernels in this process and every process it
    starts, where the CPU runs them and no kernels were chosen (``settings.reference_blas``).
    OpenBLAS reads the choice once, when numpy loads it: call this before the first
    ``import numpy``."""
    settings.set_environment(settings.reference_blas())
