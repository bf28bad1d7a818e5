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

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import nbformat
from tqdm import tqdm

from helpers import settings
from helpers.course import config
from helpers.course.engine import sandbox
from helpers.course.engine.limits import UNSANDBOXED, Job
from helpers.course.engine.verdict import CellResult, Ending, Problem
from helpers.course.notebook.cells import is_graded_hidden

#: pytest's exit statuses when it ran every test (0: all passed, 1: some failed).
PYTEST_FINISHED = (0, 1)
#: The graded notebook's name in a sandboxed job's folder.
NOTEBOOK_FILE = "graded.ipynb"
#: Seconds a whole run may take beyond its cells' timeouts (starting the kernel, nbval).
RUN_OVERHEAD = 60


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
    notebook = nbformat.read(path, as_version=4)
    n_code = sum(c.cell_type == "code" for c in notebook.cells)
    guarded = ["--kit-guard"] if has_hidden_checks(notebook) else []
    total = min(job.budget or float("inf"), timeout * (n_code + 2) + RUN_OVERHEAD)
    # a cell may not outlast the whole run: nbval then stops it and says so in that cell
    timeout = min(timeout, max(1.0, total - RUN_OVERHEAD))
    limits = job.limits
    if limits is not None:
        # -P: the job's folder, which student code can write, is not on pytest's import path;
        # no plugin is loaded unless named (a module planted there could not run in pytest)
        command = [sys.executable, "-P", "-m", "pytest", NOTEBOOK_FILE, "-c", "pytest.ini",
                   "--rootdir", ".", "-p", "nbval", *_nbval_options(timeout),
                   f"--kit-report={sandbox.REPORT}", f"--kit-output-mb={limits.output_mb}", "--kit-grading",
                   *guarded]
        files = {NOTEBOOK_FILE: Path(path).read_bytes(), "pytest.ini": b"[pytest]\n"}
        outcome = sandbox.run(command, files, limits, total, settings.data_dir(), job.slot,
                              env={**config.REFERENCE_ENV, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
        return _run(read_report(outcome.report), outcome, total)
    report = Path(tempfile.mkdtemp(prefix="kit-report-")) / "report.json"  # not in the kernel's folder
    ini = path.parent / "pytest.ini"
    ini.write_text("[pytest]\n")
    command = [sys.executable, "-m", "pytest", str(path), "-c", str(ini), "--rootdir", str(path.parent),
               *_nbval_options(timeout), f"--kit-report={report}", *guarded]
    try:
        finished = _ran_within(command, path.parent, total, n_code if progress else 0, progress)
        results = read_report(report.read_bytes() if report.is_file() else b"")
    finally:
        shutil.rmtree(report.parent, ignore_errors=True)
    if not finished:
        return NotebookRun(results, Problem.OUT_OF_TIME, out_of_time(total))
    return _run(results, None, total)


def has_hidden_checks(notebook: nbformat.NotebookNode) -> bool:
    """Whether a notebook holds hidden checks (then it runs guarded: ``guard``)."""
    return any(is_graded_hidden(cell) for cell in notebook.cells)


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


def _ran_within(command: list[str], cwd: Path, total: float, cells: int, name: str) -> bool:
    """Run ``command`` (pytest on one notebook); False if it ran out of ``total`` seconds.

    With ``cells`` > 0, a tqdm bar counts them as the plugin reports each one finished.
    """
    read_end, write_end = os.pipe()
    if cells:
        command = [*command, f"--kit-progress-fd={write_end}"]
    with subprocess.Popen(command, cwd=cwd, env=config.reference_environ(), stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          pass_fds=(write_end,)) as process:
        os.close(write_end)
        with os.fdopen(read_end, "rb") as finished, \
                tqdm(total=cells, desc=name, unit="cell", disable=not cells or not on_terminal(),
                     file=sys.stderr) as bar:
            reader = threading.Thread(target=_count, args=(finished, bar), daemon=True)
            reader.start()
            try:
                process.wait(timeout=total)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                return False
            reader.join()
    return True


def on_terminal() -> bool:
    """Whether stderr is a terminal: a progress bar redrawn into a file or a pipe is noise."""
    return sys.stderr.isatty()


def _count(finished, bar) -> None:
    while chunk := finished.read1(64):
        bar.update(len(chunk))


def _nbval_options(timeout: float) -> list[str]:
    # the plugin adds the rest of config.NBVAL_OPTIONS
    return ["-p", "no:cacheprovider", "-p", config.PLUGIN, f"--nbval-cell-timeout={timeout}", "-q"]


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
