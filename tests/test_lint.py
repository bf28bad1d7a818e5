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


@pytest.mark.parametrize("module, banned", [("helpers/storage.py", True), ("helpers/course/config.py", True),
                                            ("helpers/settings.py", False), ("tests/conftest.py", False)])
def test_only_the_settings_module_of_the_library_may_read_or_set_the_environment(module, banned):
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed: pip install -e '.[dev]'")
    source = "import os\n\nos.environ.get('KIT_DATA_DIR')\nos.getenv('HOME')\n"
    result = subprocess.run([ruff, "check", "--select", "TID251", "--stdin-filename", module, "-"],
                            input=source, cwd=REPO_ROOT, capture_output=True, text=True)
    assert (result.returncode != 0) == banned, result.stdout
    assert result.stdout.count("TID251") == (2 if banned else 0), result.stdout
