"""ruff runs over the library, the tooling, the tests, the benchmarks and the notebooks."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from helpers.settings import REPO_ROOT

LINTED = ["helpers", "tests", "benchmarks", "solutions", "notebooks"]


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed: pip install -e '.[dev]'")
    result = subprocess.run([ruff, "check", *LINTED], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
