"""In CI a skipped test is a failed one (tests/conftest.py): the run cannot look green while a
test did not run for want of data, a sandbox or a browser."""

from __future__ import annotations

import pytest
from conftest import failed_if_skipped_in_ci


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
