"""Run a graded notebook under nbval in its own process, and read how each cell ended.

nbval runs the notebook (``--nbval-lax``, a fresh kernel, a per-cell timeout) with the kit's
plugin, which writes each cell's ``verdict.CellResult`` as a JSON line as soon as the cell
ends (``--kit-report``): a run stopped by time, memory or a signal keeps the cells it
finished, and says what stopped it (``NotebookRun.problem`` and ``problem_line``). When
grading a class the run is sandboxed (``sandbox``): the notebook is copied into the job's
private folder and deleted once nbval has read it, and the report comes back through a pipe,
so student code can neither read the hidden checks nor forge the report.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import psutil
from tqdm import tqdm

from helpers import settings
from helpers.course import config, stops
from helpers.course.engine import sandbox
from helpers.course.engine.limits import UNSANDBOXED, Job
from helpers.course.engine.verdict import CellResult, Ending, Problem
from helpers.errors import KitError

#: pytest's exit statuses when it ran every test (0: all passed, 1: some failed).
PYTEST_FINISHED = (0, 1)
#: The environment variables of pytest (PYTEST_ADDOPTS, PYTEST_PLUGINS...), left out of the run's.
PYTEST_VARIABLES = "PYTEST_"
#: The grader's pytest loads only the plugins its command names (``_pytest_options``): none a user
#: installed (pytest-cov, hypothesis's) runs in it, sandboxed or not.
ONLY_NAMED_PLUGINS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
#: The graded notebook's name in a sandboxed job's folder.
NOTEBOOK_FILE = "graded.ipynb"
#: Seconds a whole run may take beyond its cells' timeouts (starting the kernel, nbval).
RUN_OVERHEAD = 60
#: Seconds to wait for the processes of a stopped run to be gone before its folders are removed.
STOP_WAIT = 10
#: Seconds between two looks at whether they are gone.
STOP_POLL = 0.05


@dataclass
class NotebookRun:
    """What running a graded notebook under nbval gave.

    ``results`` maps nbval's cell number to how that cell ended (cells missing did not run);
    ``problem`` is what stopped the whole run (``Problem.NONE``: nothing did) and
    ``problem_line`` says so in words; ``outcome`` is the sandbox's account (None when the
    notebook ran without one).
    """

    results: dict[int, CellResult]
    problem: Problem = Problem.NONE
    problem_line: str = ""
    outcome: sandbox.Outcome | None = None


class RunInterrupted(stops.Interrupted):
    """Ctrl-C or SIGTERM stopped an unsandboxed run: its processes are gone; ``results`` holds
    the cells it finished, by nbval's cell number."""

    def __init__(self, status: int, results: dict[int, CellResult]) -> None:
        super().__init__(status)
        self.results = results


def _run(results: dict[int, CellResult], outcome: sandbox.Outcome | None, total: float) -> NotebookRun:
    return NotebookRun(results, *_run_problem(results, outcome, total), outcome)


def run_notebook(path: Path, timeout: float, job: Job = UNSANDBOXED, progress: str = "") -> NotebookRun:
    """Run nbval on one notebook in a fresh process, in a sandbox when ``job.limits`` are given.

    Parameters
    ----------
    path : Path
        The graded notebook.
    timeout : float
        Seconds one cell may run.
    job : Job
        Its sandbox's limits (None: no sandbox) and slot, and the seconds the whole run may
        take (``job.budget``; default: every cell its ``timeout``).
    progress : str
        Without a sandbox, show a bar on stderr, labelled so, counting the cells as they finish.
    """
    if job.limits is None and (job.hidden_data or job.listed_data):
        raise KitError("A run that must not see some of the data folder needs the sandbox (Job.limits).")
    notebook = nbformat.read(path, as_version=4)
    n_code = sum(c.cell_type == "code" for c in notebook.cells)
    total = min(job.budget or float("inf"), timeout * (n_code + 2) + RUN_OVERHEAD)
    # a cell may not outlast the whole run: nbval then stops it and says so in that cell
    timeout = min(timeout, max(1.0, total - RUN_OVERHEAD))
    limits = job.limits
    if limits is not None:
        # -P: the job's folder, which student code can write, is not on pytest's import path;
        # no plugin is loaded unless named (a module planted there could not run in pytest).
        # The kit's plugin comes first (it imports nbval itself, see startup), so nbval is
        # imported before pytest could rewrite its asserts: there are none to rewrite.
        command = [sys.executable, "-P", *_pytest_options(NOTEBOOK_FILE, "pytest.ini", ".", timeout),
                   f"--kit-report={sandbox.REPORT}", f"--kit-output-mb={limits.output_mb}", "--kit-grading"]
        files = {NOTEBOOK_FILE: Path(path).read_bytes(), "pytest.ini": b"[pytest]\n"}
        outcome = sandbox.run(command, files, limits, total, settings.data_dir(), job.slot,
                              env={**config.REFERENCE_ENV, **ONLY_NAMED_PLUGINS},
                              hidden_data=job.hidden_data, listed_data=job.listed_data)
        return _run(read_report(outcome.report), outcome, total)
    report = Path(tempfile.mkdtemp(prefix="kit-report-")) / "report.json"  # not in the kernel's folder
    scratch = Path(tempfile.mkdtemp(prefix="kit-report-tmp-"))  # its TMPDIR: what a killed kernel leaves
    ini = path.parent / "pytest.ini"
    ini.write_text("[pytest]\n")
    command = [sys.executable, *_pytest_options(str(path), str(ini), str(path.parent), timeout),
               f"--kit-report={report}"]
    try:
        finished = _ran_within(command, path.parent, total, n_code if progress else 0, progress, scratch)
        results = read_report(report.read_bytes() if report.is_file() else b"")
    except KeyboardInterrupt as stop:  # _ran_within stopped every process of the run
        raise RunInterrupted(stops.exit_status(stop),
                             read_report(report.read_bytes() if report.is_file() else b"")) from None
    finally:
        for folder in (report.parent, scratch):
            shutil.rmtree(folder, ignore_errors=True)
    if not finished:
        return NotebookRun(results, Problem.OUT_OF_TIME, out_of_time(total))
    return _run(results, None, total)


def out_of_time(total: float) -> str:
    """What stopped a run that took all of its ``total`` seconds."""
    return f"grading stopped: the notebook ran out of time ({total:.0f} s in all)"


def read_report(report: bytes) -> dict[int, CellResult]:
    """The plugin's report (``--kit-report``: one JSON line per cell ending) as ``{cell
    number: CellResult}``. A later line for a cell may only turn its pass into a failure (a
    teardown that failed; a second failure keeps the first); a line that is not a result (cut
    short when the run was killed), or that would turn a cell into a pass again, ends the
    reading."""
    results: dict[int, CellResult] = {}
    for line in report.splitlines():
        try:
            cell = CellResult.from_json(json.loads(line))
        except (ValueError, TypeError, KeyError, AttributeError):
            break
        earlier = results.get(cell.number)
        if earlier is not None and cell.ending is Ending.PASSED:
            break
        if earlier is None or earlier.ending is Ending.PASSED:
            results[cell.number] = cell
    return results


def _ran_within(command: list[str], cwd: Path, total: float, cells: int, name: str,
                scratch: Path | None = None) -> bool:
    """Run ``command`` (pytest on one notebook); False if it ran out of ``total`` seconds.

    With ``cells`` > 0, a tqdm bar counts them as the plugin reports each one finished.
    ``scratch`` is its temporary folder (``TMPDIR``; default the system's).
    pytest starts in a session of its own, so a terminal's Ctrl-C (sent to its foreground
    process group) reaches this process only, which then stops the run whole (``stop_tree``:
    pytest, its kernel, the kernel's workers) and raises the ``KeyboardInterrupt`` (or
    ``stops.Terminated``) on; so does running out of time.
    """
    read_end, write_end = os.pipe()
    if cells:
        command = [*command, f"--kit-progress-fd={write_end}"]
    env = {name: value for name, value in config.reference_environ().items()
           if not name.startswith(PYTEST_VARIABLES)}  # a user's or an outer run's options are not for it
    env.update(ONLY_NAMED_PLUGINS)
    env.update({"TMPDIR": str(scratch)} if scratch else {})
    with subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          pass_fds=(write_end,), start_new_session=True) as process:
        try:
            os.close(write_end)
            with os.fdopen(read_end, "rb") as finished, \
                    tqdm(total=cells, desc=name, unit="cell", disable=not cells or not on_terminal(),
                         file=sys.stderr) as bar:
                reader = threading.Thread(target=_count, args=(finished, bar), daemon=True)
                reader.start()
                try:
                    process.wait(timeout=total)
                except subprocess.TimeoutExpired:
                    stop_tree(process.pid)
                    return False
                except BaseException:  # here: closing the pipe waits for its reader, which waits for pytest
                    stop_tree(process.pid)
                    raise
                reader.join()
        except BaseException:
            stop_tree(process.pid)
            raise
    return True


def stop_tree(pid: int) -> None:
    """Kill process ``pid``, every process below it and the rest of their process groups,
    and wait (``STOP_WAIT`` seconds at most) until they are gone.

    The tree is taken before anything is killed (an orphan's parent is no longer its own);
    jupyter_client starts each kernel in a session of its own, where its workers (loky's)
    stay when the kernel is gone: its group is killed too. Ctrl-C and SIGTERM wait until the
    end: a second one cannot leave half the tree running.
    """
    with _stops_held():
        tree = _tree(pid)
        found = {_group(process) for process in tree} - {_group(psutil.Process())}
        groups = {group for group in found if group is not None}
        for process in tree:
            with contextlib.suppress(psutil.Error):
                process.kill()
        for group in groups:
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGKILL)
        deadline = time.monotonic() + STOP_WAIT
        while any(map(_alive, tree)) and time.monotonic() < deadline:
            time.sleep(STOP_POLL)


@contextlib.contextmanager
def _stops_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back in the block; they arrive when it ends (where the
    platform can hold signals back: not Windows)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _alive(process: psutil.Process) -> bool:
    """Whether ``process`` still runs: a zombie does not (an orphan's may wait long for its
    reaper, or for ever where the first process reaps none, as in some containers)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _group(process: psutil.Process) -> int | None:
    """The process group of ``process``; None when it is gone, or the platform has none."""
    try:
        return os.getpgid(process.pid)
    except (OSError, AttributeError):
        return None


def on_terminal() -> bool:
    """Whether stderr is a terminal: a progress bar redrawn into a file or a pipe is noise."""
    return sys.stderr.isatty()


def _count(finished, bar) -> None:
    while chunk := finished.read1(64):
        bar.update(len(chunk))


def _pytest_options(notebook: str, ini: str, rootdir: str, timeout: float) -> list[str]:
    """``-m pytest`` on ``notebook`` with the kit's plugin first and nbval, and no other plugin
    (with ``ONLY_NAMED_PLUGINS`` in the environment), its asserts not rewritten: there are none
    to rewrite, and where Python writes no bytecode (``PYTHONDONTWRITEBYTECODE``) pytest rewrote
    every module of every installed plugin again in each run, about 4 s of a 2-cell notebook's
    10 s. The kit's plugin adds the rest of ``config.NBVAL_OPTIONS``."""
    return ["-m", "pytest", notebook, "-c", ini, "--rootdir", rootdir, "--assert=plain",
            "-p", "no:cacheprovider", "-p", config.PLUGIN, f"--nbval-cell-timeout={timeout}", "-q",
            "-p", "nbval"]


def _run_problem(results: dict[int, CellResult], outcome: sandbox.Outcome | None,
                 total: float) -> tuple[Problem, str]:
    """What stopped a whole run and one line saying so; ``(Problem.NONE, "")`` when nbval
    reported every cell it ran."""
    if outcome is not None and outcome.timed_out:
        return Problem.OUT_OF_TIME, out_of_time(total)
    if outcome is not None and outcome.stopped_for:
        return Problem.OVER_LIMIT, f"grading stopped: {outcome.stopped_for}"
    if outcome is not None and outcome.returncode not in PYTEST_FINISHED:
        last = [line for line in outcome.output.splitlines() if line.strip()][-1:] or [""]
        return Problem.RUN_FAILED, (f"grading stopped: the run ended with status {outcome.returncode}: "
                                    f"{last[0][:200]}")
    if not results:
        return Problem.NOT_STARTED, "grading stopped before any cell ran"
    return Problem.NONE, ""
