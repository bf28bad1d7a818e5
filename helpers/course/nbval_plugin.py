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
- ``--kit-grading`` deletes the notebook once collected and makes this process
  non-dumpable (grading runs a notebook holding reference outputs and hidden checks, and
  writes the report through a pipe: student code must reach none of them).
- A kernel that dies fails its cell within seconds ("the kernel died"), not after the cell
  timeout; ``--kit-output-mb`` caps what a notebook may print in all (grading passes it):
  past it the kernel is stopped and the cell fails. Every later cell then says why it did
  not run.
- ``--kit-progress-fd N`` writes one byte to file descriptor N as each cell finishes, for
  ``kit check NN``'s progress bar.
"""

from __future__ import annotations

import ctypes
import json
import os
import time
from collections import defaultdict
from queue import Empty
from typing import Any

import pytest
from nbval.kernel import RunningKernel
from nbval.plugin import IPyNbCell, NbCellError, transform_streams_for_comparison

from helpers.course import compare, environment
from helpers.course.config import apply_reference_env

NOT_COMPARED = ("stderr", "text/html")
#: Seconds between checks that the kernel is still alive while a cell runs.
ALIVE_POLL = 1.0
#: Messages that carry what a cell shows; their size counts towards ``--kit-output-mb``.
OUTPUT_MESSAGES = ("stream", "display_data", "execute_result", "error", "update_display_data")
KERNEL_DIED = "the kernel died"
PR_SET_DUMPABLE = 4
#: Where each finished cell is announced (``--kit-progress-fd``), under "fd".
_progress: dict[str, int] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("nbval").addoption(
        "--kit-output-mb", type=float, default=None, metavar="MB",
        help="stop a notebook that shows more than MB megabytes of output in all")
    parser.getgroup("nbval").addoption(
        "--kit-grading", action="store_true",
        help="grading a student: delete each notebook once collected, and keep this process "
        "out of the kernel's reach (its reference outputs, hidden checks and report)")
    parser.getgroup("nbval").addoption(
        "--kit-progress-fd", type=int, default=None, metavar="N",
        help="write one byte to file descriptor N as each cell finishes (a progress bar's feed)")


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.getoption("kit_grading"):
        for path in {item.path for item in session.items if isinstance(item, IPyNbCell)}:
            path.unlink(missing_ok=True)
        _not_dumpable()


def _not_dumpable() -> None:
    """Bar processes of the same user (the kernel and anything it starts) from this one's
    memory and open files (``/proc/PID/mem``, ``/proc/PID/fd``): PR_SET_DUMPABLE = 0."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def pytest_configure(config: pytest.Config) -> None:
    apply_reference_env()
    if config.getoption("kit_progress_fd") is not None:
        _progress["fd"] = config.getoption("kit_progress_fd")


def pytest_runtest_logfinish(nodeid: str, location: tuple) -> None:
    if "fd" in _progress:
        try:
            os.write(_progress["fd"], b".")
        except OSError:  # the reader went away: progress is only ever a courtesy
            _progress.clear()


def pytest_collectstart(collector: pytest.Collector) -> None:
    if hasattr(collector, "skip_compare"):  # nbval's notebook collector
        collector.skip_compare = (*collector.skip_compare, *NOT_COMPARED)


def pytest_itemcollected(item: pytest.Item) -> None:
    if type(item) is IPyNbCell:
        item.__class__ = KitCell


def _exit_code(kernel: RunningKernel) -> str:
    """`` (exit code N)`` for a kernel process that ended, else ``""``."""
    process = getattr(getattr(kernel.km, "provisioner", None), "process", None)
    code = process.poll() if process is not None else None
    return f" (exit code {code})" if code is not None else ""


def _raised(outputs: list) -> str | None:
    """``"Name: value"`` of the first error among a cell's outputs, or None."""
    error = next((o for o in outputs if o.get("output_type") == "error"), None)
    return f"{error['ename']}: {error['evalue']}" if error else None


class KitCell(IPyNbCell):
    """nbval's cell item, with the kit's comparison of outputs and its guards on the kernel."""

    def runtest(self) -> None:
        notebook = self.parent
        stopped = getattr(notebook, "kit_stopped", None)
        if stopped:
            raise NbCellError(self.cell_num, f"not run: {stopped}", self.cell.source)
        kernel = notebook.kernel
        if kernel is not None and kernel.is_alive():
            kernel.await_reply = lambda msg_id, timeout=None: self._await_reply(msg_id, timeout)
            notebook.get_kernel_message = self._counted_message
        try:
            super().runtest()
        except BaseException:
            if kernel is not None and not kernel.is_alive() and not getattr(notebook, "kit_stopped", None):
                notebook.kit_stopped = f"{KERNEL_DIED} in an earlier cell"
                raise NbCellError(self.cell_num, f"{KERNEL_DIED}{_exit_code(kernel)}",
                                  self.cell.source) from None
            raise

    def _await_reply(self, msg_id: str, timeout: float | None) -> None:
        """nbval's wait for the cell's reply, checking every ALIVE_POLL s that the kernel lives."""
        kernel = self.parent.kernel
        deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
        while True:
            try:
                return RunningKernel.await_reply(kernel, msg_id, timeout=min(ALIVE_POLL, max(
                    0.0, deadline - time.monotonic())))
            except Empty:
                if not kernel.is_alive():
                    self.parent.kit_stopped = f"{KERNEL_DIED} in an earlier cell"
                    raise NbCellError(self.cell_num, f"{KERNEL_DIED}{_exit_code(kernel)}",
                                      self.cell.source) from None
                if time.monotonic() >= deadline:
                    raise

    def _counted_message(self, timeout: float | None = None, stream: str = "iopub") -> dict:
        """nbval's next kernel message, adding its size to the notebook's output total."""
        notebook = self.parent
        message = notebook.kernel.get_message(stream, timeout=timeout)
        cap = self.config.getoption("kit_output_mb")
        if cap is not None and message.get("msg_type") in OUTPUT_MESSAGES:
            notebook.kit_output = getattr(notebook, "kit_output", 0) + len(json.dumps(message["content"]))
            if notebook.kit_output > cap * 2**20:
                notebook.kernel.stop()
                notebook.kit_stopped = f"the notebook showed more than {cap:g} MB of output"
                raise NbCellError(self.cell_num, f"output limit: this cell took the notebook's output past "
                                  f"{cap:g} MB", self.cell.source)
        return message

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
