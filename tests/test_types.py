"""The course library and its tooling pass the type checker (mypy, configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers.settings import REPO_ROOT

pytestmark = pytest.mark.slow  # about a minute: mypy reads numpy's and the standard library's stubs


def test_helpers_pass_mypy(tmp_path):
    found = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
                           cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert found.returncode == 0, found.stdout[-6000:] + found.stderr[-2000:]
    assert "Success: no issues found" in found.stdout
