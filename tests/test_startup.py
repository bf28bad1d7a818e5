"""The kit's processes go without the optional module jsonschema spends seconds importing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers.course.startup import SKIPPED_MODULES
from helpers.settings import REPO_ROOT

NOTEBOOK = REPO_ROOT / "solutions" / "01_naive_bayes.ipynb"
#: After the entry point, read and validate a notebook; say what became of the skipped modules.
READ_AND_SAY = (f"import nbformat, sys; nbformat.validate(nbformat.read({str(NOTEBOOK)!r}, as_version=4)); "
                f"print([repr(sys.modules.get(name, 'absent')) for name in {SKIPPED_MODULES!r}])")


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, cwd=REPO_ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_without_the_kit_s_entry_points_nbformat_imports_the_skipped_modules():
    # asked in a process of its own: this one (pytest loads the plugin) already goes without them
    found = f"[u.find_spec(name) is not None for name in {SKIPPED_MODULES!r}]"
    installed = _run(f"import importlib.util as u; print({found})")
    assert installed == repr([True] * len(SKIPPED_MODULES)), "not installed: SKIPPED_MODULES may drop them"
    printed = _run(READ_AND_SAY)
    assert "None" not in printed and "absent" not in printed


@pytest.mark.parametrize("entry", ["import helpers.course.engine.nbval_plugin",
                                   "import helpers.cli; helpers.cli.main(['release', '--check'])"])
def test_the_grader_s_plugin_and_the_kit_command_read_notebooks_without_them(entry):
    assert _run(f"{entry}; {READ_AND_SAY}") == repr(["None"] * len(SKIPPED_MODULES))
