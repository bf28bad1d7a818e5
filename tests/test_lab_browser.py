"""Run All in the lab a student really opens: `kit lab`, driven in headless Chromium (issue #42).

The kit's kernel must show an exercise not done yet as one line in the lab itself, not only
under nbclient: JupyterLab starts the kernel from the kernelspec `kit lab` puts first, and
renders what that kernel sends. A student's first Run All of `work/01` must reach the end and
show, under each check of an unfinished exercise, the one line the README promises, and under
each cell that answers a prediction only the folded "Show the result" line (JupyterLab sends
the cell's metadata with its code, and the kit's kernel folds the output).

Needs Chromium (Debian's `chromium`, which `.ci/run` installs) and Playwright (a dev
dependency). Without them the test is skipped, except in CI, where it fails.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from helpers import exercises
from helpers.course import config
from helpers.course.notebook.cells import REVEAL_KEY
from helpers.course.student import reveal, unsaved

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

NOTEBOOK = "01_naive_bayes.ipynb"
LAB_START_SECONDS = 300  # bounds a hang only: a loaded machine starts JupyterLab slowly
KERNEL_READY_MS = 300_000
RUN_ALL_MS = 900_000  # 01 runs in about 40 s on an idle machine; this bounds a hang only
# As root (no sandbox), on a machine with no internet (no background connections).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
NOTEBOOK_PANEL = "window.jupyterapp.shell.currentWidget"
KERNEL_IDLE = (f"() => {{ const panel = {NOTEBOOK_PANEL}; const kernel = panel && panel.sessionContext"
               " && panel.sessionContext.session && panel.sessionContext.session.kernel;"
               " return Boolean(kernel) && kernel.status === 'idle'; }")
# Run All is over when the kernel has answered every cell it was sent: a reply (ok, error or
# aborted: a kernel that stops on an error still answers each cell it skips) and the idle
# status that follows each cell's outputs. Whether Run All reached the end is the test's to
# say. Neither the cells' state nor the kernel's status can tell: at a cell's first error
# JupyterLab marks every cell not yet run "idle" though the kernel still has them queued, and
# the kernel is idle for a moment between two cells.
COUNT_ANSWERS = (f"() => {{ const kernel = {NOTEBOOK_PANEL}.sessionContext.session.kernel;"
                 " const replied = new Set(), idle = new Set();"
                 " window.kitAnswered = () => [...replied].filter(id => idle.has(id)).length;"
                 " kernel.anyMessage.connect((_, args) => {"
                 " const msg = args.msg, parent = msg.parent_header || {};"
                 " if (args.direction !== 'recv' || parent.msg_type !== 'execute_request') return;"
                 " if (msg.header.msg_type === 'execute_reply') replied.add(parent.msg_id);"
                 " if (msg.header.msg_type === 'status' && msg.content.execution_state === 'idle')"
                 " idle.add(parent.msg_id); }); }")
RUN_ALL_OVER = "(sent) => window.kitAnswered() >= sent"
CELLS = f"() => [...{NOTEBOOK_PANEL}.content.model.cells].map(c => c.toJSON())"
SCROLL_TO = (f"async (index) => {{ const notebook = {NOTEBOOK_PANEL}.content;"
             " notebook.activeCellIndex = index; await notebook.scrollToItem(index); }")
# What the page shows under a cell's input, once rendered (a busy machine renders late).
SHOWN = f"(index) => {NOTEBOOK_PANEL}.content.widgets[index].outputArea.node.innerText.trim()"
# Rendered: a view for each output of the cell's model, and its text or a plot (which has
# none), unless all it holds are progress bars on stderr (tqdm clears them: blank text).
RENDERED = (f"(index) => {{ const cell = {NOTEBOOK_PANEL}.content.widgets[index];"
            " const area = cell.outputArea, outputs = cell.model.outputs.toJSON();"
            " if (area.widgets.length !== outputs.length) return false;"
            " const progress = outputs.every(o => o.output_type === 'stream' && o.name === 'stderr');"
            " return progress || area.node.innerText.trim() !== ''"
            " || area.node.querySelector('img') !== null; }")


def _chromium() -> str:
    """Chromium's path, else a skip (a failure in CI, which installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        found = None
    if found is None:
        message = "needs Chromium (apt-get install chromium) and Playwright (pip install -e '.[dev]')"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {message}")
        pytest.skip(message)
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_lab(url: str, lab: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + LAB_START_SECONDS
    while time.monotonic() < deadline and lab.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=10):
                return
        except OSError:  # not listening yet, or a slow first answer
            time.sleep(1)
    pytest.fail(f"JupyterLab did not answer:\n{log.read_text()[-2000:]}")


@pytest.fixture
def lab(tmp_path, corpora):
    """`kit lab` on a new workspace (tmp_path/work), with the app reachable from the page's
    scripts; and Chromium's path (checked first: no lab is started without a browser)."""
    chromium = _chromium()
    port, token = _free_port(), "kit-browser-test"
    env = {**os.environ, "KIT_WORK_DIR": str(tmp_path / "work"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "HOME": str(tmp_path / "home")}
    log = tmp_path / "lab.log"
    with log.open("w") as output:
        server = subprocess.Popen([sys.executable, "-m", "helpers.cli", "lab", "--no-browser",
                                   "--port", str(port), "--allow-root", f"--IdentityProvider.token={token}",
                                   "--LabApp.expose_app_in_browser=True"],
                                  env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for_lab(f"http://127.0.0.1:{port}/api/status?token={token}", server, log)
        yield f"http://127.0.0.1:{port}", token, chromium, log
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()


def _run_all_in_browser(base: str, token: str, chromium: str, log: Path,
                        notebook: str) -> tuple[list[dict], dict[int, str]]:
    """Open ``notebook`` in the lab, Run All from the Run menu; the cells after it, and what
    the page shows under each check cell (by index)."""
    from playwright.sync_api import sync_playwright

    released = nbformat.read(config.NOTEBOOKS_DIR / notebook, as_version=4)
    code_cells = sum(cell.cell_type == "code" and bool(cell.source.strip()) for cell in released.cells)
    checks = [i for i, cell in enumerate(released.cells)
              if cell.metadata.get("kit", {}).get("checks") or cell.metadata.get("kit", {}).get(REVEAL_KEY)]
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{base}/lab/tree/work/{notebook}?token={token}")
            page.wait_for_function(KERNEL_IDLE, timeout=KERNEL_READY_MS, polling=500)
            page.evaluate(COUNT_ANSWERS)
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_text("Run All Cells", exact=True).click()
            page.wait_for_function(RUN_ALL_OVER, arg=code_cells, timeout=RUN_ALL_MS, polling=1000)
            cells = page.evaluate(CELLS)
            shown = {}
            for index in (i for i in checks if cells[i]["outputs"]):
                page.evaluate(SCROLL_TO, index)
                page.wait_for_function(RENDERED, arg=index, timeout=KERNEL_READY_MS, polling=200)
                shown[index] = page.evaluate(SHOWN, index)
        finally:
            browser.close()
    return cells, shown


def _text(output: dict) -> str:
    text = output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text


def _progress(output: dict) -> bool:
    """A progress bar (stderr), which the fold lets through: a cold cache shows one."""
    return output["output_type"] == "stream" and output["name"] == "stderr"


def _fold(output: dict) -> bool:
    html = output.get("data", {}).get("text/html", "")
    return output["output_type"] == "display_data" and "".join(html).startswith("<details>")


def _why_run_all_stopped(cells: list[dict], log: Path) -> str:
    """The cells Run All did not reach, the errors it showed and the end of the lab's log."""
    code = [(i, cell) for i, cell in enumerate(cells) if cell["cell_type"] == "code"]
    not_run = [i for i, cell in code if not cell["execution_count"]]
    errors = [(i, output.get("ename"), output.get("evalue"))
              for i, cell in code for output in cell["outputs"] if output["output_type"] == "error"]
    return (f"Run All stopped before the end: cells {not_run} did not run; errors shown: {errors};"
            f" the lab's log ends:\n{log.read_text(errors='replace')[-3000:]}")


def test_run_all_in_the_lab_shows_each_unfinished_exercise_as_one_line(lab):
    cells, shown = _run_all_in_browser(*lab, NOTEBOOK)
    code = [cell for cell in cells if cell["cell_type"] == "code"]
    assert all(cell["execution_count"] for cell in code), _why_run_all_stopped(cells, lab[-1])
    kit = {index: cells[index]["metadata"]["kit"] for index in shown}
    stubs = {exercises.not_done(kit[index]["checks"]) for index in shown if "checks" in kit[index]}
    errors = [output for cell in code for output in cell["outputs"] if output["output_type"] == "error"]
    assert errors, "a fresh copy has exercises not done yet"
    for output in errors:  # each a stub's one line (or a name it left undefined), never a traceback
        [line] = output["traceback"]
        assert line in stubs or exercises.STOPPED_ON.search(line), output
    stopped = {index for index in shown if any(o["output_type"] == "error" for o in cells[index]["outputs"])}
    for index in stopped:  # a check, or a cell after a prediction that needs an exercise
        expected = exercises.not_done(kit[index]["checks"]) if "checks" in kit[index] else None
        assert shown[index] == expected or (expected is None and shown[index] in stubs), shown[index]
    folded = shown.keys() - stopped
    assert folded and all(REVEAL_KEY in kit[index] for index in folded), "each check waits for its exercise"
    folds = 0
    for index in folded:  # Run All ran the answer to a prediction: folded, progress bars aside
        outputs = cells[index]["outputs"]
        assert all(_progress(output) or _fold(output) for output in outputs), outputs
        for output in filter(_fold, outputs):
            folds += 1
            summary = reveal.SUMMARY.format(answer=kit[index][REVEAL_KEY])
            hidden = _text(output).splitlines()[0]
            assert summary in shown[index] and hidden not in shown[index], shown[index]
    assert folds, "Run All of 01 shows the answer to a prediction folded"
    work = lab[-1].parent / "work"  # the kernel JupyterLab started recorded what it ran there
    ran = unsaved.read_ran(work).get(NOTEBOOK, {})
    assert {cell["id"] for cell in code} <= ran.keys() and unsaved.unsaved_note(work / NOTEBOOK) == ""
    printed = "".join(str(output) for cell in code for output in cell["outputs"])
    assert "Traceback" not in printed and "exercises.py" not in printed
