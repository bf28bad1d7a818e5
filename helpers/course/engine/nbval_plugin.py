"""A pytest plugin that sets up nbval the way the kit's reference outputs need.

Loaded with ``-p helpers.course.engine.nbval_plugin`` (``pyproject.toml`` for the tests and the
students' self-check; ``kit grade`` passes it too), so all three check outputs the same way.

- nbval's options come from ``config.NBVAL_OPTIONS`` (lax mode, this environment's kernel, the
  sanitizer file, the cell timeout): ``pyproject.toml`` names only this plugin.

- ``PYTHONHASHSEED=0`` for every kernel nbval starts (kernels inherit this process's
  environment), so set iteration order and gensim's hashing match the reference run.
- stderr and HTML are not compared (``compare.NOT_COMPARED``): a new library warning or a
  pandas styling change must not fail a checked cell; the plain-text output is what is checked.
- A checked cell tagged ``raises-exception`` (the released notebooks tag every cell from the
  first exercise on, so Run All goes on) that raises fails with that error, not a diff.
- Checked outputs are compared by ``helpers.course.notebook.compare``: numbers within the cell's
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
- A hidden check (``notebook.cells.is_hidden``) never reaches the kernel: this process runs it
  (``hidden.run``), and the check's calls of the student's functions go to the kernel one
  request at a time (``KernelChannel``), whose answers come back as plain data. Its printed
  lines are compared with the reference like any checked cell's; what the student's code
  raised fails the cell as the error it is. What it hands the grader (``hidden.record``)
  goes into the cell's report (``CellResult.recorded``) when the cell passes.
- ``--kit-progress-fd N`` writes one byte to file descriptor N as each cell finishes, for
  ``kit check NN``'s progress bar.
- ``--kit-report PATH`` writes how each cell ended, as data (``verdict.CellResult``: the
  exception, the output difference, the traceback), to PATH as one JSON line per cell as it
  ends: the grading engine decides from it and parses no text, and a run stopped by time,
  memory or a signal keeps the cells it finished.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import time
from queue import Empty
from typing import Any

from helpers.course.startup import skip_slow_imports, use_reference_blas

skip_slow_imports()  # before nbval imports nbformat: pytest imports this plugin first (-p)
use_reference_blas()  # before nbval and the kit import numpy

import nbval.kernel
import pytest
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager, RunningKernel
from nbval.plugin import IPyNbCell, NbCellError, coalesce_streams

from helpers.course import config
from helpers.course.config import apply_reference_env
from helpers.course.engine import callee, hidden
from helpers.course.engine.verdict import CellResult, Ending, printable
from helpers.course.notebook import compare, environment
from helpers.course.notebook.cells import is_graded_hidden
from helpers.exercises import STOPPED_ON, STUB_MESSAGE

#: The heading of nbval's options in ``pytest --help`` (nbval's own).
NBVAL_GROUP = "Jupyter Notebook validation"
#: Seconds between checks that the kernel is still alive while a cell runs.
ALIVE_POLL = 1.0
#: Messages that carry what a cell shows; their size counts towards ``--kit-output-mb``.
OUTPUT_MESSAGES = ("stream", "display_data", "execute_result", "error", "update_display_data")
KERNEL_DIED = "the kernel died"
PR_SET_DUMPABLE = 4
#: Where each finished cell is announced (``--kit-progress-fd``), under "fd".
_progress: dict[str, int] = {}
#: Where each cell's ending is written as it ends (``--kit-report``), under "file".
_report: dict[str, Any] = {}
#: Seconds a student's function has to answer an interrupt (a hidden check out of time).
INTERRUPT_GRACE = 5.0
#: What nbval says when a cell raised, and when its outputs differ.
_RAISED, _DIFFERS = "Cell execution caused an exception", "Cell outputs differ"
#: A frame of an IPython traceback in the notebook's code, and the line it points at.
_FRAME = re.compile(r"^Cell In\[\d+\], line (?P<line>\d+)(?:, in (?P<function>[\w.<>]+))?")
_ARROW = re.compile(r"^-+> *\d+ ?(?P<code>.*)$")


#: nbval's options that make one choice (aliases, or choices that exclude each other): one
#: given on the command line leaves the others of its group out of what the plugin adds.
SAME_CHOICE = ({"--nbval", "--nbval-lax"}, {"--nbval-current-env", "--current-env", "--nbval-kernel-name"},
               {"--nbval-sanitize-with", "--sanitize-with"}, {"--nbval-cell-timeout"})


def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> None:
    """Give pytest nbval's options as ``config.NBVAL_OPTIONS`` sets them, where ``args`` does
    not make the same choice itself (``kit grade`` sets its own cell timeout; ``--nbval`` is
    strict mode instead of lax)."""
    given = {arg.split("=")[0] for arg in args}
    args[:0] = [option for option in config.NBVAL_OPTIONS
                if not given & next(g for g in SAME_CHOICE if option.split("=")[0] in g)]


def pytest_addoption(parser: pytest.Parser) -> None:
    # this plugin is loaded before nbval's, so it names the group nbval's options join
    group = parser.getgroup("nbval", NBVAL_GROUP)
    group.addoption(
        "--kit-output-mb", type=float, default=None, metavar="MB",
        help="stop a notebook that shows more than MB megabytes of output in all")
    group.addoption(
        "--kit-grading", action="store_true",
        help="grading a student: delete each notebook once collected, and keep this process "
        "out of the kernel's reach (its reference outputs, hidden checks and report)")
    group.addoption(
        "--kit-progress-fd", type=int, default=None, metavar="N",
        help="write one byte to file descriptor N as each cell finishes (a progress bar's feed)")
    group.addoption(
        "--kit-report", default=None, metavar="PATH",
        help="write how each cell ended to PATH, one JSON line per cell as it ends")


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
    _start_kit_kernel()
    if config.getoption("kit_progress_fd") is not None:
        _progress["fd"] = config.getoption("kit_progress_fd")
    if config.getoption("kit_report") is not None:
        _report["file"] = open(config.getoption("kit_report"), "w", encoding="utf-8")  # noqa: SIM115


def _start_kit_kernel() -> None:
    """Have nbval start the kit's kernel (``config.KIT_KERNEL``) for this environment's Python."""
    original = NbvalKernelspecManager.get_kernel_spec

    def kit_spec(manager: NbvalKernelspecManager, kernel_name: str) -> Any:
        spec = original(manager, kernel_name)
        if kernel_name == CURRENT_ENV_KERNEL_NAME:
            spec.argv = config.kit_kernel_argv()
        return spec

    nbval.kernel.NbvalKernelspecManager.get_kernel_spec = kit_spec


def pytest_runtest_logfinish(nodeid: str, location: tuple) -> None:
    if "fd" in _progress:
        try:
            os.write(_progress["fd"], b".")
        except OSError:  # the reader went away: progress is only ever a courtesy
            _progress.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = yield
    if isinstance(item, KitCell) and (report.when == "call" or not report.passed) and "file" in _report:
        # one line per ending, flushed at once: a later line for the same cell (a failed
        # teardown) replaces the earlier one when read
        _report["file"].write(json.dumps(_ending(item, report, call).to_json()) + "\n")
        _report["file"].flush()
    return report


def _ending(cell: KitCell, report: pytest.TestReport, call: pytest.CallInfo) -> CellResult:
    if report.passed:
        return CellResult(cell.cell_num, Ending.PASSED, recorded=getattr(cell, "kit_recorded", ""))
    if report.skipped:  # nbval marks the cells after a timeout as expected to fail
        why = "an earlier cell timed out" if hasattr(report, "wasxfail") else "the cell is marked NBVAL_SKIP"
        return CellResult(cell.cell_num, Ending.STOPPED, f"not run: {why}")
    failure = call.excinfo
    said = f"{failure.typename}: {failure.value}" if failure is not None else "the cell failed"
    return getattr(cell, "kit_result", None) or CellResult(cell.cell_num, Ending.STOPPED, said)


def pytest_unconfigure(config: pytest.Config) -> None:
    if "file" in _report:
        _report.pop("file").close()


def pytest_itemcollected(item: pytest.Item) -> None:
    if type(item) is IPyNbCell:
        item.__class__ = KitCell


def _stopped_by_nbval(kernel: RunningKernel) -> bool:
    """Whether nbval stopped the kernel itself (it deletes ``km`` when a cell that timed out
    would not be interrupted)."""
    return not hasattr(kernel, "km")


def _alive(kernel: RunningKernel) -> bool:
    """nbval's ``is_alive``, False (not an AttributeError) once nbval stopped the kernel."""
    return not _stopped_by_nbval(kernel) and RunningKernel.is_alive(kernel)


def _exit_code(kernel: RunningKernel) -> str:
    """`` (exit code N)`` for a kernel process that ended, else ``""``."""
    process = getattr(getattr(getattr(kernel, "km", None), "provisioner", None), "process", None)
    code = process.poll() if process is not None else None
    return f" (exit code {code})" if code is not None else ""


def _raised(outputs: list) -> str | None:
    """``"Name: value"`` of the first error among a cell's outputs, or None."""
    error = next((o for o in outputs if o.get("output_type") == "error"), None)
    return f"{error['ename']}: {error['evalue']}" if error else None


class KitCell(IPyNbCell):
    """nbval's cell item, with the kit's comparison of outputs and its guards on the kernel."""

    test_outputs: list[dict[str, Any]] | None  # None (nbval) until the cell ran
    kit_difference: compare.Difference | None
    kit_environments: tuple[str, ...]
    kit_recorded: str

    def runtest(self) -> None:
        try:
            self._run()
        except NbCellError as err:
            self.kit_result = self._failure(err)
            raise
        except Exception as err:  # nbval's own checks on the kernel (RuntimeError)
            said = "the kernel died" if "Kernel dead" in str(err) else \
                f"{type(err).__name__}: {err}".splitlines()[0]
            self.kit_result = CellResult(self.cell_num, Ending.STOPPED, said)
            raise

    def _failure(self, err: NbCellError) -> CellResult:
        """How a cell that nbval failed ended: raised, differs, or stopped (and why)."""
        said = str(err)
        if said == _DIFFERS:
            return CellResult(self.cell_num, Ending.DIFFERS, difference=self.kit_difference,
                              environments=self.kit_environments)
        outputs = getattr(self, "test_outputs", None) or []  # None until the cell ran
        error = next((o for o in outputs if o.get("output_type") == "error"), None)
        traceback = printable("\n".join(error["traceback"])).strip() if error else ""
        if said != _RAISED or error is None:  # a timeout, a dead kernel, an output limit, not run
            headline = (said.splitlines() or [""])[0]
            return CellResult(self.cell_num, Ending.STOPPED, headline, traceback=traceback)
        return _raised_result(self.cell_num, error["ename"], error["evalue"], traceback)

    def _run(self) -> None:
        notebook = self.parent
        stopped = getattr(notebook, "kit_stopped", None)
        if stopped:
            raise NbCellError(self.cell_num, f"not run: {stopped}", self.cell.source)
        kernel = notebook.kernel
        if kernel is not None:  # nbval's own calls (its teardown too) see a stopped kernel as dead
            kernel.is_alive = lambda: _alive(kernel)
        if kernel is not None and kernel.is_alive():
            kernel.await_reply = lambda msg_id, timeout=None: self._await_reply(msg_id, timeout)
            notebook.get_kernel_message = self._counted_message
        try:
            self._run_hidden() if is_graded_hidden(self.cell) else super().runtest()
        except BaseException:
            if kernel is not None and not _stopped_by_nbval(kernel) and not kernel.is_alive() \
                    and not getattr(notebook, "kit_stopped", None):
                notebook.kit_stopped = f"{KERNEL_DIED} in an earlier cell"
                raise NbCellError(self.cell_num, f"{KERNEL_DIED}{_exit_code(kernel)}",
                                  self.cell.source) from None
            raise

    def repr_failure(self, excinfo: pytest.ExceptionInfo, style: Any = None) -> str:
        """nbval's report of a failed cell, without a hidden check's source (the run's output
        may reach a record's problem line)."""
        if is_graded_hidden(self.cell) and isinstance(excinfo.value, NbCellError):
            return f"Cell {self.cell_num} (a hidden check): {excinfo.value}"
        return super().repr_failure(excinfo)

    def _run_hidden(self) -> None:
        """Run a hidden check here, its calls answered by the kernel, and compare what it printed."""
        kernel = self.parent.kernel
        if not kernel.is_alive():
            raise RuntimeError("Kernel dead on test start")
        channel = KernelChannel(self, self.config.option.nbval_cell_timeout)
        self.test_outputs = []
        recorded: list[str] = []
        try:
            printed = hidden.run(self.cell.source, channel, recorded)
        except hidden.StudentError as err:
            self._raise_error(err.name, err.value, err.where)
        except NbCellError:
            raise
        except Exception as err:  # the check could not use the answer (a wrong shape, a missing key)
            self._raise_error(type(err).__name__, f"the check could not use the answer: {err}"[:2000], "")
        self.test_outputs = [{"output_type": "stream", "name": "stdout", "text": printed}] if printed else []
        self.kit_recorded = recorded[-1] if recorded else ""
        if self.options["check"] and not self.compare_outputs(self.test_outputs,
                                                             coalesce_streams(self.cell.outputs)):
            raise NbCellError(self.cell_num, _DIFFERS, self.cell.source)

    def _raise_error(self, name: str, value: str, where: str) -> None:
        """Fail the cell with an error of the student's code, as a kernel would show it."""
        lines = where.splitlines()
        if not any(line.startswith(f"{name}:") for line in lines):
            lines.append(f"{name}: {value}")
        self.test_outputs = [{"output_type": "error", "ename": name, "evalue": value, "traceback": lines}]
        raise NbCellError(self.cell_num, _RAISED, self.cell.source)

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

    def compare_outputs(self, test: list, ref: list, skip_compare: tuple[str, ...] | None = None) -> bool:
        skip = skip_compare or compare.NOT_COMPARED
        self.kit_environments = ()
        raised = _raised(test)
        if raised and not _raised(ref):  # a raises-exception cell that was not meant to raise
            self.kit_difference = compare.Difference(0, "", "", f"the cell raised {raised.splitlines()[0]}")
        else:
            self.kit_difference = compare.compare_outputs(
                compare.grouped(ref, self.sanitize, skip), compare.grouped(test, self.sanitize, skip),
                compare.tolerance_of(self.cell))
            if self.kit_difference is None:
                return True
            # BLAS kernels can move numbers only; other library versions can change words too
            reference = self.parent.nb.metadata.get("kit", {}).get("reference_env")
            self.kit_environments = environment.mismatch_lines(reference, blas=self.kit_difference.in_numbers)
        self.comparison_traceback = [str(self.kit_difference), *self.kit_environments]
        return False


class KernelChannel:
    """A hidden check's way to the kernel: one request per call of the student's code.

    Each call is sent as an execution of ``callee.answer`` (kept out of the history) and its
    answer read from the display message it publishes; the student's own output meanwhile
    counts towards the notebook's output cap. The calls of a cell share the cell's timeout:
    past it the kernel is interrupted and the cell fails as timed out (as nbval fails a cell),
    and a kernel that dies fails it at once.
    """

    def __init__(self, cell: KitCell, timeout: float) -> None:
        self.cell, self.timeout = cell, timeout
        self.deadline = time.monotonic() + timeout
        self.interrupted_at: float | None = None

    def __call__(self, request: callee.Request) -> str:
        notebook = self.cell.parent
        code = f"__import__('helpers.course.engine.callee', fromlist=['answer']).answer({request.pack()!r})"
        msg_id = notebook.kernel.kc.execute(code, store_history=False, allow_stdin=False)
        answer = None
        while True:
            self._still_running()  # every time round: output flowing must not hold off the deadline
            try:
                message = notebook.get_kernel_message(timeout=ALIVE_POLL)
            except Empty:
                continue
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            content = message["content"]
            if message["msg_type"] == "display_data" and callee.ANSWER_TYPE in content.get("data", {}):
                answer = content["data"][callee.ANSWER_TYPE]
            elif message["msg_type"] == "status" and content.get("execution_state") == "idle":
                break
        if self.interrupted_at is not None:
            raise self._timed_out("")
        return answer if isinstance(answer, str) else hidden.no_answer(request.name)

    def _still_running(self) -> None:
        """Fail the cell if the kernel died, or ran out of time and ignored the interrupt."""
        kernel, cell = self.cell.parent.kernel, self.cell
        now = time.monotonic()
        if not kernel.is_alive():
            cell.parent.kit_stopped = f"{KERNEL_DIED} in an earlier cell"
            raise NbCellError(cell.cell_num, f"{KERNEL_DIED}{_exit_code(kernel)}", cell.cell.source)
        if self.interrupted_at is None and now >= self.deadline:
            kernel.interrupt()
            cell.parent.timed_out = True
            self.interrupted_at = now
        elif self.interrupted_at is not None and now >= self.interrupted_at + INTERRUPT_GRACE:
            kernel.stop()
            raise self._timed_out(" Failed to interrupt kernel, so failing without traceback.")

    def _timed_out(self, more: str) -> NbCellError:
        return NbCellError(self.cell.cell_num, f"Timeout of {self.timeout:g} seconds exceeded executing "
                           f"cell.{more}", self.cell.cell.source)


def _raised_result(number: int, name: str, value: str, traceback: str) -> CellResult:
    """A cell that raised ``name: value``: its line as the notebook showed it, where in the
    notebook's code, and the exercise an unfinished stub (or a name it left undefined) names."""
    shown = [line.strip() for line in traceback.splitlines() if line.strip()]
    message = next((line for line in reversed(shown) if line == name or line.startswith(f"{name}:")),
                   f"{name}: {value}".splitlines()[0])
    stub = STUB_MESSAGE.fullmatch(value) if name == "NotImplementedError" else None
    waits = STOPPED_ON.search(message) if name == "NameError" else None
    return CellResult(number, Ending.RAISED, message, where="" if stub else _last_frame(shown),
                      stub=stub["exercise"] if stub else "", waits_for=waits["exercise"] if waits else "",
                      traceback=traceback)


def _last_frame(lines: list[str]) -> str:
    """Where in the notebook's cells the error was raised: ``in f, line 3: return c / 0``."""
    frames = [i for i, line in enumerate(lines) if _FRAME.match(line)]
    if not frames:
        return ""
    found = _FRAME.match(lines[frames[-1]])
    assert found is not None  # frames holds only the lines _FRAME matches
    code = next((m["code"].strip() for line in lines[frames[-1] + 1:] if (m := _ARROW.match(line))), "")
    place = (f"in {found['function']}, " if found["function"] else "") + f"line {found['line']}"
    return f"{place}: {code[:120]}" if code else place
