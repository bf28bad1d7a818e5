"""In CI a skipped test is a failed one (tests/conftest.py): the run cannot look green while a
test did not run for want of data, a sandbox or a browser."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import failed_if_skipped_in_ci, without_pytest_options

from helpers.settings import REPO_ROOT


def _report(outcome: str, **extra) -> pytest.TestReport:
    report = pytest.TestReport(nodeid="tests/test_x.py::test_x", location=("tests/test_x.py", 1, "test_x"),
                               keywords={}, outcome=outcome, when="setup",
                               longrepr=("tests/test_x.py", 1, "Skipped: no data: run `kit fetch`"))
    for name, value in extra.items():
        setattr(report, name, value)
    return report


def test_a_skip_fails_in_ci_and_says_why(monkeypatch):
    monkeypatch.setenv("CI", "true")
    report = failed_if_skipped_in_ci(_report("skipped"))
    assert report.failed and "every test must run: Skipped: no data" in report.longrepr


def test_outside_ci_a_skip_stays_a_skip_and_an_expected_failure_is_left_alone(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert failed_if_skipped_in_ci(_report("skipped")).skipped
    monkeypatch.setenv("CI", "true")
    assert failed_if_skipped_in_ci(_report("skipped", wasxfail="known")).skipped
    assert failed_if_skipped_in_ci(_report("passed")).passed


# --- A test that starts a kernel or a sandbox job without its mark fails ------------------------

GUARDED = """\
import subprocess, sys
import pytest

KERNEL = [sys.executable, "-m", "ipykernel_launcher", "--help"]  # a real kernel's start, which only answers


def test_unmarked():
    subprocess.run(KERNEL, capture_output=True, check=True)


@pytest.mark.kernel
def test_marked():
    subprocess.run(KERNEL, capture_output=True, check=True)


def test_other():
    subprocess.run(["true"], check=True)
"""
#: The suite's own hooks, in a pytest of the test's own.
HOOKS = """\
import importlib.util

spec = importlib.util.spec_from_file_location("kit_conftest", {conftest!r})
kit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kit)
pytest_runtest_setup, pytest_runtest_makereport = kit.pytest_runtest_setup, kit.pytest_runtest_makereport
"""


def test_a_test_that_starts_a_kernel_without_its_mark_fails(tmp_path):
    (tmp_path / "conftest.py").write_text(HOOKS.format(conftest=str(REPO_ROOT / "tests" / "conftest.py")))
    (tmp_path / "test_guarded.py").write_text(GUARDED)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    kernel: starts a kernel\n")
    env = {name: value for name, value in without_pytest_options().items() if name != "CI"}
    found = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", str(tmp_path)],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    results = {line.split("::")[-1].split()[0]: line.split()[0] for line in found.stdout.splitlines()
               if "test_guarded.py::" in line and line.split()[0] in ("PASSED", "ERROR", "FAILED")}
    expected = {"test_unmarked": "ERROR", "test_marked": "PASSED", "test_other": "PASSED"}
    assert results == expected, found.stdout
    assert "started without the mark 'kernel': " in found.stdout and "ipykernel_launcher" in found.stdout


# --- Markers: the quick run leaves out what is slow, and nothing else --------------------------

#: Modules whose every test is slow (the cold practical, a browser, mypy): none in the quick run.
SLOW_MODULES = ("test_run_all.py", "test_lab_browser.py", "test_plots.py",
                "test_cheats.py", "test_types.py")
#: Seconds a collection of the whole suite may take (it reads every notebook).
COLLECT_SECONDS = 600


def _collected(*args: str) -> list[str]:
    found = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                            *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=COLLECT_SECONDS,
                           env=without_pytest_options())
    assert found.returncode == 0, found.stdout[-2000:] + found.stderr[-2000:]
    return [line for line in found.stdout.splitlines() if "::" in line]


@pytest.fixture(scope="module")
def everything() -> list[str]:
    return _collected()


@pytest.fixture(scope="module")
def notebooks(everything) -> set[str]:
    """The solution notebooks' items (there must be some, or the tests below prove nothing)."""
    found = {item for item in everything if ".ipynb::" in item}
    assert found
    return found


@pytest.mark.slow
def test_the_quick_run_leaves_out_the_notebooks_and_the_slow_modules_and_keeps_the_rest(everything,
                                                                                        notebooks):
    quick = _collected("-m", "not slow")
    assert set(quick) < set(everything)
    left_out = set(everything) - set(quick)
    assert not [item for item in quick if item.endswith(".ipynb") or ".ipynb::" in item]
    assert not [item for item in quick if item.split("::")[0].endswith(SLOW_MODULES)]
    assert notebooks <= left_out
    assert len(quick) > len(everything) / 2, "most tests should run in the quick run"


@pytest.mark.slow
def test_the_tests_that_use_the_data_sets_and_the_notebooks_are_marked_data(notebooks):
    with_data = set(_collected("-m", "data"))
    assert "tests/test_data.py" in {item.split("::")[0] for item in with_data}
    assert notebooks <= with_data
    # a module that never uses the data sets' fixtures is not marked
    assert not [item for item in with_data if item.startswith("tests/test_validation.py")]
