"""Execute the practical's notebooks headless, timing each and measuring its peak memory.

``kit run`` is the main job for a headless run: it executes notebooks in order, writes the
executed copies to a separate folder (the user's notebooks are never overwritten) and
reports wall time and peak memory (what the kernel and its children hold, each page once,
sampled every 0.2 s: ``helpers.course.memory``) per notebook. In a folder given with
``--out``, a file of the same name that the kit did not write (or that changed since) is
kept, and the executed copy goes beside it under a stamped name (``helpers.owned``).
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from tqdm import tqdm

from helpers.course import config, memory
from helpers.course.config import NOTEBOOKS_DIR, RUNS_DIR, SOLUTIONS_DIR, apply_reference_env, notebooks_in
from helpers.course.notebook.cells import without_hidden
from helpers.errors import KitError
from helpers.owned import where_written, write_owned


def select(which: str = "notebooks", numbers: list[str] | None = None) -> list[Path]:
    """Return the notebooks to run: ``which`` is ``notebooks`` or ``solutions``, filtered by NN."""
    folder = {"notebooks": NOTEBOOKS_DIR, "solutions": SOLUTIONS_DIR}[which]
    found = notebooks_in(folder, numbers)
    if not found:
        raise KitError(f"No notebooks {numbers or ''} in {folder}.")
    return found


class KitKernelManager(AsyncKernelManager):
    """Starts the kit's kernel (``config.KIT_KERNEL``, what ``kit lab`` and Binder start) for
    this environment's Python in place of ``python3``: ``NotebookClient(nb,
    kernel_manager_class=KitKernelManager, kernel_name="python3")``, which then owns the kernel
    and shuts it down at the end (a manager passed as ``km`` is left running)."""

    @property
    def kernel_spec(self) -> Any:
        spec = super().kernel_spec
        if spec is not None:  # None until a kernel is named (``kernel_name``)
            spec.argv = config.kit_kernel_argv()
        return spec


def run_notebook(path: Path, out_dir: Path, timeout: float | None = None,
                 workdir: Path | None = None) -> dict:
    """Execute one notebook in a fresh kit kernel (``KitKernelManager``); save the executed copy to
    ``out_dir``.

    A solution's hidden checks are left out (``cells.without_hidden``): they run in the grader.
    The kernel runs in ``workdir`` (default: the notebook's own folder) with
    ``PYTHONHASHSEED=0``. A file of the same name in ``out_dir`` that is not the kit's unchanged
    own is kept: the copy goes beside it, under a stamped name, and one line says so.

    Returns
    -------
    dict
        ``notebook``, ``status`` (``ok``; the error that stopped it; or, when it ran to the end
        past cells that raised, how many did and the first error), ``seconds``, ``peak_mb``,
        ``output`` (where the executed copy went).
    """
    nb = without_hidden(nbformat.read(path, as_version=4))
    n_code = sum(c.cell_type == "code" for c in nb.cells)
    apply_reference_env()
    bar = tqdm(total=n_code, desc=path.name, unit="cell", leave=False)
    client = NotebookClient(nb, kernel_manager_class=KitKernelManager, kernel_name="python3", timeout=timeout,
                            resources={"metadata": {"path": str(workdir or path.parent)}},
                            on_cell_executed=lambda **_: bar.update())
    status = "ok"
    start = time.perf_counter()
    with memory.PeakSampler(memory.children()) as sampler:
        try:
            client.execute()
            status = _shown_errors(nb) or status  # cells tagged raises-exception let it go on
        except CellExecutionError as err:
            status = f"error: {str(err).strip().splitlines()[-1][:120]}"
        except (CellTimeoutError, DeadKernelError) as err:
            status = f"stopped: {type(err).__name__}"
    seconds = time.perf_counter() - start
    bar.close()
    intended = out_dir / path.name
    output = write_owned(intended, lambda tmp: nbformat.write(nb, tmp))
    if output != intended:
        tqdm.write(where_written("the executed copy", intended, output))
    return {"notebook": path.name, "status": status, "seconds": round(seconds, 1),
            "peak_mb": round(sampler.peak_bytes / 2**20), "output": str(output)}


def _shown_errors(nb: nbformat.NotebookNode) -> str | None:
    """``error: N cells raised, the first: Name: value`` for a notebook that ran to its end."""
    errors = [output for cell in nb.cells if cell.cell_type == "code"
              for output in cell.outputs if output.output_type == "error"]
    if not errors:
        return None
    return f"error: {len(errors)} cells raised, the first: {errors[0].ename}: {errors[0].evalue}"[:160]


def run(which: str = "notebooks", numbers: list[str] | None = None,
        out_dir: Path | None = None, timeout: float | None = None) -> pd.DataFrame:
    """Execute notebooks in order; return a table of status, wall time and peak memory.

    Parameters
    ----------
    which : {"notebooks", "solutions"}
        The student notebooks (stubs raise ``NotImplementedError`` until filled in) or the
        instructor's solutions.
    numbers : list of str, optional
        Only these notebook numbers (``["01", "03"]``).
    out_dir : Path, optional
        Where executed copies go (default: ``runs/<timestamp>/``; never the source folder).
    timeout : float, optional
        Seconds allowed per cell (default: no limit).
    """
    paths = select(which, numbers)
    out_dir = out_dir or RUNS_DIR / datetime.now().strftime("%Y%m%d-%H%M%S")
    if out_dir.resolve() in {p.parent.resolve() for p in paths}:
        raise KitError("The output folder must differ from the notebooks' own folder.")
    rows = [run_notebook(p, out_dir, timeout) for p in tqdm(paths, desc="notebooks", unit="nb")]
    return pd.DataFrame(rows)
