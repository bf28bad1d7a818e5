"""Write a solution notebook's reference outputs: run it, keep its sources, record the environment.

``kit references [NN ...]`` is how an instructor refreshes the outputs that checks compare
against. Each notebook runs in a fresh kernel (``kit run``'s way, into a temporary folder);
only when it ran to the end are its outputs and execution counts copied into the solution
notebook, matched by cell id, and ``kit.reference_env`` set to the BLAS kernels and library
versions of this run (``helpers.course.notebook.environment``). Sources and cell metadata are never
touched, and a notebook edited while it ran is left alone.

Hidden checks (``cells.is_hidden``) are left out of the run: they run in the grader, never in a
kernel, where they would call ``student.NAME`` with no grader to answer and overwrite the
notebook's own names. They keep their stored outputs, which the nbval run compares with what
the grader's run of them prints.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from helpers.course.config import SOLUTIONS_DIR, notebooks_in
from helpers.course.notebook import environment, runner
from helpers.course.notebook.cells import is_hidden
from helpers.course.notebook.release import render
from helpers.errors import KitError
from helpers.files import atomic_write


def with_outputs(solution: NotebookNode, executed: NotebookNode, env: dict[str, str]) -> NotebookNode:
    """Return ``solution`` with the outputs of ``executed`` (same cells by id) and ``env`` recorded.

    Hidden checks, which ``executed`` lacks, keep their outputs; execution counts number the
    code cells in order, as one run of the whole notebook would.

    Raises
    ------
    KitError
        If the two notebooks do not have the same cells with the same sources.
    """
    updated = nbformat.from_dict(solution)
    ran = {cell.get("id"): cell for cell in executed.cells}
    count = 0
    for cell in updated.cells:
        hidden = is_hidden(cell)
        other = ran.get(cell.get("id"))
        if not hidden and (other is None or other.source != cell.source):
            raise KitError(f"cell {cell.get('id')} differs from the executed copy; run again.")
        if cell.cell_type != "code":
            continue
        count += 1
        if not hidden:
            assert other is not None  # a cell not hidden is in the executed copy (checked above)
            cell.outputs = other.outputs
        cell.execution_count = count
        for output in cell.outputs:
            if "execution_count" in output:
                output["execution_count"] = count
    updated.metadata.setdefault("kit", {})["reference_env"] = env
    return updated


def write_references(numbers: list[str] | None = None, solutions_dir: Path = SOLUTIONS_DIR,
                     timeout: float | None = None) -> list[Path]:
    """Re-run solution notebooks and store their outputs as the reference.

    Parameters
    ----------
    numbers : list of str, optional
        Only these notebooks (default: all).
    solutions_dir : Path
        The instructor's solution notebooks.
    timeout : float, optional
        Seconds allowed per cell (default: no limit).

    Returns
    -------
    list of Path
        The notebooks whose references were written.

    Raises
    ------
    KitError
        If a notebook fails to run to the end or was edited while it ran (it is left as it was).
    """
    paths = notebooks_in(solutions_dir, numbers)
    if not paths:
        raise KitError(f"No solution notebooks {numbers or ''} in {solutions_dir}.")
    env = environment.current()
    written = []
    for path in paths:
        before = path.read_text(encoding="utf-8")
        solution = nbformat.reads(before, as_version=4)
        with tempfile.TemporaryDirectory(prefix="kit-references-") as tmp:
            # the copy runs in the solution's folder, as the notebook itself would
            copy = Path(tmp) / path.name
            nbformat.write(solution, copy)  # its hidden checks stay out of the kernel (runner)
            result = runner.run_notebook(copy, Path(tmp) / "out", timeout, workdir=path.parent)
            if result["status"] != "ok":
                raise KitError(f"{path.name}: {result['status']}; its references are unchanged.")
            executed = nbformat.read(result["output"], as_version=4)
        if path.read_text(encoding="utf-8") != before:
            raise KitError(f"{path.name} was edited while it ran; its references are unchanged.")
        updated = with_outputs(solution, executed, env)
        # mypy cannot infer a lambda with a default argument (python/mypy#15459)
        atomic_write(path, lambda tmp, nb=updated: tmp.write_text(render(nb), encoding="utf-8"))  # type: ignore[misc]
        written.append(path)
    return written
