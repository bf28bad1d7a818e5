"""The kit's processes go without the optional module jsonschema spends seconds importing, and
set the reference BLAS kernels before numpy loads; importing the course library changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import nbformat
import pytest

from helpers import settings
from helpers.course import config, startup
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


#: Every module of the course library (the ``kit`` command and ``helpers.course`` are its tooling).
LIBRARY = sorted(f"helpers.{path.stem}" for path in (REPO_ROOT / "helpers").glob("*.py")
                 if path.stem not in {"__init__", "cli"})
#: The libraries it imports, imported first: what they set is their own (scikit-learn sets
#: ``KMP_INIT_AT_FORK``).
LIBRARIES_USED = ("numpy", "scipy", "sklearn", "pandas", "gensim", "nltk", "matplotlib", "joblib", "tqdm",
                  "threadpoolctl")
#: Before the entry point: note the BLAS kernels chosen when numpy is first imported.
SPY_ON_NUMPY = """\
import json, os, sys
chosen = {}
class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            chosen.setdefault("numpy", os.environ.get("OPENBLAS_CORETYPE"))
sys.meta_path.insert(0, Spy())
"""
#: After it: what was chosen when numpy loaded.
SAY_CHOSEN = "import numpy; print(json.dumps(chosen['numpy']))"


def _run(code: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, cwd=REPO_ROOT,
                          timeout=300, env=env)
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


def _grade_with_hidden_lines(tmp_path, monkeypatch, code: str, printed: str, job: Job) -> None:
    """Grade the fixture with ``code`` added to its hidden checks and ``printed`` to their
    expected output: both exercises must pass, so the grader's process printed ``printed``."""
    monkeypatch.setenv("KIT_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    solution = nbformat.read(FIXTURE, as_version=4)
    [hidden] = [cell for cell in solution.cells if cells.is_hidden(cell)]
    end = "### END HIDDEN CHECKS"
    hidden.source = hidden.source.replace(end, f"import sys\n{code}\n{end}")
    hidden.outputs[0].text += printed + "\n"
    reference = release.release_notebook(solution, FIXTURE.name, hidden=True)
    (tmp_path / "work").mkdir()
    run, verdicts = grading.grade_notebook(solution, reference, solution, tmp_path / "work", 60, job)
    assert run.problem is Problem.NONE, run.problem_line
    assert [(v.exercise, v.passed) for v in verdicts] == [("0.1", True), ("0.2", True)], verdicts


@pytest.mark.kernel
@pytest.mark.sandbox
def test_the_sandboxed_grader_runs_its_hidden_checks_without_them(tmp_path, monkeypatch):
    # A hidden check runs in the grader's own process: it can say what that process imported.
    if bubblewrap.bwrap() is None:
        pytest.skip("no bubblewrap: apt-get install bubblewrap")
    _grade_with_hidden_lines(tmp_path, monkeypatch, SAY_SKIPPED, repr(["None"] * len(SKIPPED_MODULES)),
                             Job(limits=Limits()))


#: In the grader's process (a hidden check runs there): which installed pytest plugins it imported
#: beyond nbval, and whether pytest rewrites asserts in it.
SAY_PLUGINS = ("from importlib.metadata import entry_points\n"
               "plugins = {entry.module for entry in entry_points(group='pytest11')} - {'nbval.plugin'}\n"
               "print(sorted(name for name in plugins if name in sys.modules),"
               " any(type(hook).__name__ == 'AssertionRewritingHook' for hook in sys.meta_path))")


@pytest.mark.kernel
@pytest.mark.parametrize("sandboxed", [pytest.param(True, marks=pytest.mark.sandbox), False],
                         ids=["sandboxed", "unsandboxed"])
def test_the_grader_s_pytest_loads_only_the_plugins_it_names_and_rewrites_no_asserts(tmp_path, monkeypatch,
                                                                                     sandboxed):
    """Sandboxed (``kit grade``) or not (``kit check``): a plugin the user installed does not run
    in the grader, and pytest does not rewrite every installed plugin's modules in each run."""
    if sandboxed and bubblewrap.bwrap() is None:
        pytest.skip("no bubblewrap: apt-get install bubblewrap")
    assert {entry.module for entry in metadata.entry_points(group="pytest11")} - {"nbval.plugin"}, \
        "no other plugin installed: nothing to leave out"
    _grade_with_hidden_lines(tmp_path, monkeypatch, SAY_PLUGINS, "[] False",
                             Job(limits=Limits() if sandboxed else None))


def test_skipped_while_goes_without_a_module_in_the_block_only(monkeypatch):
    monkeypatch.setattr(startup, "SKIPPED_MODULES", ("colorsys",))
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    with startup.skipped_while():
        with pytest.raises(ModuleNotFoundError):
            import colorsys  # noqa: F401
    import colorsys  # noqa: F401, F811

    assert sys.modules["colorsys"] is not None
    monkeypatch.setitem(sys.modules, "colorsys", None)  # skipped before the block: still skipped after
    with startup.skipped_while():
        pass
    assert sys.modules["colorsys"] is None


def test_skipped_while_gives_a_module_back_when_the_block_raises(monkeypatch):
    # the kernel's helpers may fail to import: the student's own import must still work after
    monkeypatch.setattr(startup, "SKIPPED_MODULES", ("colorsys",))
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    with pytest.raises(ImportError, match="a helper failed"), startup.skipped_while():
        raise ImportError("a helper failed")
    import colorsys  # noqa: F401

    assert sys.modules["colorsys"] is not None


def _without_chosen_kernels() -> dict[str, str]:
    """This process's environment without a choice of BLAS kernels (pytest's plugin made one)."""
    return {name: value for name, value in settings.environment().items() if name != "OPENBLAS_CORETYPE"}


def test_importing_the_course_library_changes_nothing_in_the_process():
    """No environment variable (the BLAS kernels, the hash seed) and no IPython hook: those are
    the kit's processes' own choices."""
    script = ("import json, os\n"
              f"for name in {LIBRARIES_USED!r}:\n"
              "    __import__(name)\n"
              "from IPython.core.interactiveshell import InteractiveShell\n"
              "shell = InteractiveShell.instance()\n"
              "before = dict(os.environ)\n"
              f"for name in ['helpers', *{LIBRARY!r}]:\n"
              "    __import__(name)\n"
              "changed = sorted(n for n in {*before, *os.environ} if before.get(n) != os.environ.get(n))\n"
              "print(json.dumps([changed, [kind.__name__ for kind in shell.custom_exceptions]]))")
    assert len(LIBRARY) > 20
    assert _run(script, _without_chosen_kernels()) == "[[], []]"


@pytest.mark.parametrize("entry", ["import helpers.course.engine.nbval_plugin",
                                   "import helpers.cli; helpers.cli.main(['info'])"])
def test_the_kit_s_processes_choose_the_reference_blas_kernels_before_numpy_loads(entry):
    """The kit command (``kit info`` loads numpy to name its BLAS) and the grader's plugin
    (pytest imports it first): where the CPU runs the reference kernels and none were chosen,
    numpy loads with them chosen."""
    reference = settings.REFERENCE_BLAS_FLAGS <= settings.cpu_flags()
    expected = settings.REFERENCE_BLAS_CORE if reference else None
    assert json.loads(_run(f"{SPY_ON_NUMPY}{entry}\n{SAY_CHOSEN}", _without_chosen_kernels())) == expected


def test_the_kernels_the_kit_starts_get_the_reference_blas_kernels_unless_others_were_chosen(monkeypatch):
    """What a process that is not the kit's own (a benchmark's, a script's) passes on to the
    kernels it starts through the kit (``kit run``'s runner, the grader's jobs)."""
    monkeypatch.setattr(settings, "cpu_flags", lambda *_: settings.REFERENCE_BLAS_FLAGS)
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    assert config.reference_environ({})["OPENBLAS_CORETYPE"] == settings.REFERENCE_BLAS_CORE
    assert config.reference_environ({"OPENBLAS_CORETYPE": "Prescott"})["OPENBLAS_CORETYPE"] == "Prescott"
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Zen")  # this process's choice is not that of ``base``
    assert config.reference_environ({})["OPENBLAS_CORETYPE"] == settings.REFERENCE_BLAS_CORE
    monkeypatch.delenv("OPENBLAS_CORETYPE")
    config.apply_reference_env()
    chosen = (os.environ["OPENBLAS_CORETYPE"], os.environ["PYTHONHASHSEED"])
    assert chosen == (settings.REFERENCE_BLAS_CORE, "0")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Sandybridge")
    config.apply_reference_env()
    assert os.environ["OPENBLAS_CORETYPE"] == "Sandybridge"
