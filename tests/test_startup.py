"""The kit's processes go without the optional module jsonschema spends seconds importing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from helpers.course.engine import bubblewrap, grading
from helpers.course.engine.limits import Job, Limits
from helpers.course.engine.verdict import Problem
from helpers.course.notebook import cells, release
from helpers.course.startup import SKIPPED_MODULES
from helpers.settings import REPO_ROOT

NOTEBOOK = REPO_ROOT / "solutions" / "01_naive_bayes.ipynb"
#: After the entry point, read and validate a notebook; say what became of the skipped modules.
SAY_SKIPPED = f"print([repr(sys.modules.get(name, 'absent')) for name in {SKIPPED_MODULES!r}])"
READ_AND_SAY = (f"import nbformat, sys; nbformat.validate(nbformat.read({str(NOTEBOOK)!r}, as_version=4)); "
                f"{SAY_SKIPPED}")
FIXTURE = Path(__file__).parent / "fixtures" / "solutions" / "00_fixture.ipynb"


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


@pytest.mark.kernel
@pytest.mark.sandbox
def test_the_sandboxed_grader_runs_its_hidden_checks_without_them(tmp_path, monkeypatch):
    # A hidden check runs in the grader's own process: it can say what that process imported.
    if bubblewrap.bwrap() is None:
        pytest.skip("no bubblewrap: apt-get install bubblewrap")
    monkeypatch.setenv("KIT_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    solution = nbformat.read(FIXTURE, as_version=4)
    [hidden] = [cell for cell in solution.cells if cells.is_hidden(cell)]
    end = "### END HIDDEN CHECKS"
    hidden.source = hidden.source.replace(end, f"import sys\n{SAY_SKIPPED}\n{end}")
    hidden.outputs[0].text += repr(["None"] * len(SKIPPED_MODULES)) + "\n"
    reference = release.release_notebook(solution, FIXTURE.name, hidden=True)
    (tmp_path / "work").mkdir()
    run, verdicts = grading.grade_notebook(solution, reference, solution, tmp_path / "work", 60,
                                           Job(limits=Limits()))
    assert run.problem is Problem.NONE, run.problem_line
    assert [(v.exercise, v.passed) for v in verdicts] == [("0.1", True), ("0.2", True)], verdicts
