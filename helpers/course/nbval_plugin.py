"""A pytest plugin that sets up nbval the way the kit's reference outputs need.

Loaded with ``-p helpers.course.nbval_plugin`` (``pyproject.toml`` for the tests and the
students' self-check; ``kit grade`` passes it too), so all three check outputs the same way.

- ``PYTHONHASHSEED=0`` for every kernel nbval starts (kernels inherit this process's
  environment), so set iteration order and gensim's hashing match the reference run.
- stderr and HTML are not compared: a new library warning or a pandas styling change must
  not fail a checked cell; the plain-text output is what is checked.
- A checked cell tagged ``raises-exception`` (the released notebooks tag every cell from the
  first exercise on, so Run All goes on) that raises fails with that error, not a diff.
- Checked outputs are compared by ``helpers.course.compare``: numbers within the cell's
  declared tolerance, everything else exactly. A failure says which line differs, what was
  expected and what was printed, and names the reference's BLAS kernels and versions when
  they differ from this run's.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from nbval.plugin import IPyNbCell, transform_streams_for_comparison

from helpers.course import compare, environment
from helpers.course.config import apply_reference_env

NOT_COMPARED = ("stderr", "text/html")


def pytest_configure(config: pytest.Config) -> None:
    apply_reference_env()


def pytest_collectstart(collector: pytest.Collector) -> None:
    if hasattr(collector, "skip_compare"):  # nbval's notebook collector
        collector.skip_compare = (*collector.skip_compare, *NOT_COMPARED)


def pytest_itemcollected(item: pytest.Item) -> None:
    if type(item) is IPyNbCell:
        item.__class__ = KitCell


def _raised(outputs: list) -> str | None:
    """``"Name: value"`` of the first error among a cell's outputs, or None."""
    error = next((o for o in outputs if o.get("output_type") == "error"), None)
    return f"{error['ename']}: {error['evalue']}" if error else None


class KitCell(IPyNbCell):
    """nbval's cell item, with the kit's comparison of outputs."""

    def _grouped(self, outputs: list, skip: tuple[str, ...]) -> dict[str, list[Any]]:
        grouped: dict[str, list[Any]] = defaultdict(list)
        for output in transform_streams_for_comparison(outputs):
            for key, value in output.items():
                if key in skip:
                    continue
                if key == "data":
                    for kind, content in value.items():
                        if kind not in skip:
                            grouped[kind].append(self.sanitize(content))
                else:
                    grouped[key].append(self.sanitize(value))
        return dict(grouped)

    def compare_outputs(self, test: list, ref: list, skip_compare: tuple[str, ...] | None = None) -> bool:
        skip = skip_compare or self.parent.skip_compare
        self.comparison_traceback = []
        raised = _raised(test)
        if raised and not _raised(ref):  # a raises-exception cell that was not meant to raise
            self.comparison_traceback.append(f"the cell raised {raised}")
            return False
        problem = compare.compare_outputs(self._grouped(ref, skip), self._grouped(test, skip),
                                          compare.tolerance_of(self.cell))
        if problem is None:
            return True
        self.comparison_traceback.append(problem)
        note = environment.mismatch_note(self.parent.nb.metadata.get("kit", {}).get("reference_env"))
        if note:
            self.comparison_traceback.append(note)
        return False
