"""Shared fixtures (the offline data source, a data folder with every corpus verified), the rule
that a skip in CI is a failure, and the markers every test gets by rule (``add_markers``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import psutil
import pytest

from helpers import fetch, settings

REPO = settings.REPO_ROOT


def _source() -> Path | None:
    configured = settings.data_source()
    candidate = configured or REPO.parent / "shared" / "data"
    if (candidate / "aclImdb_v1.tar.gz").is_file():
        return candidate
    # A user who fetched from the internet has no offline copy, but a verified data folder
    # holds the same archives in the same layout, so it serves as the source.
    if all(fetch.is_verified(name) for name in fetch.DATASETS):
        return settings.data_dir()
    return None


@pytest.fixture(scope="session")
def source() -> Path:
    """The data to fetch from: KIT_DATA_SOURCE, else ../shared/data, else the verified data/."""
    found = _source()
    if found is None:
        pytest.skip("no data: run `kit fetch` (or set KIT_DATA_SOURCE to an offline copy)")
    return found


@pytest.fixture(scope="session")
def corpora(source: Path) -> Path:
    """The kit's data folder with every data set fetched and verified (done once per run)."""
    fetch.fetch(source=source, progress=False)
    return settings.data_dir()


def marked_processes(variable: str, mark: str) -> list[psutil.Process]:
    """The running processes (not zombies, not this one) whose environment holds
    ``variable=mark``: what a test's subprocesses, which inherit it, left running (an orphan is
    re-parented to init, so it is not among the test's children)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(variable) == mark and process.status() != psutil.STATUS_ZOMBIE \
                    and process.pid != os.getpid():
                found.append(process)
        except psutil.Error:
            continue
    return found


def without_pytest_options() -> dict[str, str]:
    """This process's environment without the PYTEST_ variables: for a pytest started by a
    test, which the outer run's options (PYTEST_ADDOPTS, the current test's name) are not for."""
    return {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}


@pytest.fixture
def empty_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point KIT_DATA_DIR at a new empty folder for one test."""
    folder = tmp_path / "data"
    monkeypatch.setenv("KIT_DATA_DIR", str(folder))
    return folder


# --- In CI every test runs: a skip there is a failure -------------------------------------------
#
# CI installs everything the suite needs (the data, bubblewrap, Chromium), so a test that skips
# there (no data, no sandbox, no browser, a parameter list left empty) is a test that did not run
# while the run looks green.


def failed_if_skipped_in_ci(report: pytest.TestReport) -> pytest.TestReport:
    """``report`` turned into a failure when it is a skip and ``CI`` is set; else unchanged."""
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {reason}"
    return report


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = failed_if_skipped_in_ci(outcome.get_result())
    if call.when == "teardown":
        failed_if_unmarked(item, report)


# --- A test starts only what its marks say --------------------------------------------------------
#
# `pytest -m "not kernel"` (or "not sandbox") must leave out every test that starts one: each
# process this one starts is seen (Python's audit event "subprocess.Popen"), named by what it
# is, and a test that started a kernel or a sandbox job without the mark fails. Only what this
# process starts is seen: a `kit` command run as a subprocess starts its kernels out of sight
# (and may refuse before it starts any), so such tests are marked by reading them.

#: Modules that are a kernel when run with -m.
KERNEL_MODULES = frozenset({"ipykernel_launcher", "helpers.course.student.kernel"})
#: The processes the current test has started, by the mark they call for.
_started: dict[str, list[str]] = {}


def started_needs(argv: list[str]) -> str | None:
    """The mark a test needs to start ``argv``: ``sandbox`` for a grading job (the sandbox's
    ``taskset`` wrapper), ``kernel`` for a kernel or nbval on a notebook (a pytest given one);
    None for anything else."""
    names = [os.path.basename(str(arg)) for arg in argv]
    if names[:1] == ["taskset"]:
        return "sandbox"
    module = names[names.index("-m") + 1] if "-m" in names[:-1] else None
    if module in KERNEL_MODULES or (module == "pytest" and any(name.endswith(".ipynb") for name in names)):
        return "kernel"
    return None


def _audit(event: str, args: tuple) -> None:
    if event == "subprocess.Popen":
        argv = [args[0]] if isinstance(args[1], str | bytes) else list(args[1] or [args[0]])
        needed = started_needs([os.fsdecode(arg) if isinstance(arg, bytes) else str(arg) for arg in argv])
        if needed is not None:
            _started.setdefault(needed, []).append(" ".join(map(str, argv))[:200])


sys.addaudithook(_audit)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _started.clear()


def failed_if_unmarked(item: pytest.Item, report: pytest.TestReport) -> None:
    """Fail ``report`` (a teardown's) if ``item`` started a kernel or a sandbox job, in its
    setup, call or teardown, without the mark that says so."""
    missing = {mark: started for mark, started in _started.items() if item.get_closest_marker(mark) is None}
    if missing and not report.failed:
        report.outcome = "failed"
        report.longrepr = "; ".join(f"started without the mark {mark!r}: {started[0]}"
                                    for mark, started in missing.items())


# --- The cold practical's costliest caches, beside the suite's first part ------------------------
#
# tests/warm_up.py computes them in the background from the session start, when a test that reads
# them is selected and there are data (fetched and verified first, through the corpora fixture);
# what is still running at the end is stopped.

#: The modules whose slow tests read the caches tests/warm_up.py computes (the solutions' nbval
#: too); their quick tests read none.
WARM_UP_READERS = frozenset({"test_mistakes.py", "test_run_all.py"})


#: The modules that run two kernels at a time, run after every other test module (in this order)
#: and before the solutions' nbval: the tests that run one at a time then run while the
#: warm-up still keeps the other core busy, not at the end when nothing else runs (in a CI
#: simulation, 2026-11-30, about 4.5 minutes of them followed these two modules).
SIDE_BY_SIDE = ("test_mistakes.py", "test_run_all.py")


def _phase(item: pytest.Item) -> int:
    """0 for a test module's item, then SIDE_BY_SIDE's, then a solution notebook's cell."""
    if item.path.suffix == ".ipynb":
        return len(SIDE_BY_SIDE) + 1
    return SIDE_BY_SIDE.index(item.path.name) + 1 if item.path.name in SIDE_BY_SIDE else 0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        add_markers(item)
    items.sort(key=_phase)  # stable: each module's items stay together, in their order


# --- Markers (registered in pyproject.toml) -------------------------------------------------------
#
# Test modules mark what they start (kernel, sandbox, browser) and what is slow; two rules hold
# for every test and are applied here, so that no module can forget them.

#: Fixtures that fetch and verify the data sets: a test that uses one needs the data.
DATA_FIXTURES = frozenset({"source", "corpora"})
#: What running a solution notebook under nbval takes (its cells read the data and train models).
NOTEBOOK_MARKERS = ("data", "kernel", "slow")


def add_markers(item: pytest.Item) -> None:
    """Mark ``item`` ``data`` when it uses the data sets' fixtures, and a solution notebook's
    cell with ``NOTEBOOK_MARKERS``."""
    wanted = list(NOTEBOOK_MARKERS) if item.path.suffix == ".ipynb" else []
    if DATA_FIXTURES & set(getattr(item, "fixturenames", ())):
        wanted.append("data")
    for name in wanted:
        if item.get_closest_marker(name) is None:
            item.add_marker(name)


@pytest.fixture(scope="session", autouse=True)
def warm_up(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The background computation of tests/warm_up.py, or None when no test that reads its
    caches is selected or there are no data (their tests say why)."""
    readers = any((item.path.name in WARM_UP_READERS and item.get_closest_marker("slow") is not None)
                  or item.path.suffix == ".ipynb" for item in request.session.items)
    if not readers or _source() is None:
        yield None
        return
    try:
        request.getfixturevalue("corpora")  # fetched and verified once, for every test
    except (Exception, pytest.skip.Exception):  # pytest keeps it: each test that needs the data says it
        yield None
        return
    from warm_up import start

    run = start(tmp_path_factory.mktemp("warm-up"))
    yield run
    run.stop()
