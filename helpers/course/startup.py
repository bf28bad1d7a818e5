"""What the kit's own processes (``kit``, the grader's pytest) do before they import nbformat.

jsonschema, which nbformat imports to validate notebooks, imports ``rfc3987_syntax`` when it is
installed (``jupyter-events`` asks for ``jsonschema[format-nongpl]``, which installs it), and that
module builds about 35 Earley parsers at import: about 2 s of every process that reads a
notebook (python-jsonschema/jsonschema#1428), measured here as 1.6–2.2 s of the 3 s the grader's
plugin took to import. It only checks the "iri" and "iri-reference" formats, which no schema the
kit validates (nbformat's) uses; without it jsonschema leaves those formats unchecked.
"""

from __future__ import annotations

import sys

#: Optional modules the kit's processes go without (see the module's docstring).
SKIPPED_MODULES = ("rfc3987_syntax",)


def skip_slow_imports() -> None:
    """Have ``SKIPPED_MODULES`` fail to import in this process (``import`` raises
    ``ModuleNotFoundError``, which jsonschema expects of an optional module). A module already
    imported stays as it is; call this before the first ``import nbformat``."""
    for name in SKIPPED_MODULES:
        if name not in sys.modules:
            sys.modules[name] = None  # type: ignore[assignment]  # the import system's "not importable"
