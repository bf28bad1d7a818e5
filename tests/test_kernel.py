"""The kit's kernel: a student's own helpers.py beside the notebook never hides the kit."""

from __future__ import annotations

import os
import re

import nbformat
import pytest
from lab_kernel import KERNEL_START_SECONDS, kernel_client, lab_kernel

from helpers import exercises
from helpers.cli import lab_environment
from helpers.course.startup import SKIPPED_MODULES
from helpers.course.student import kernel
from helpers.settings import REPO_ROOT


def test_shadowing_names_the_student_s_files_and_never_the_kit(tmp_path):
    assert kernel.shadowing(tmp_path) == []
    (tmp_path / "helpers.py").write_text("")
    (tmp_path / "helpers").mkdir()
    assert kernel.shadowing(tmp_path) == [tmp_path / "helpers.py", tmp_path / "helpers"]
    assert kernel.shadowing(REPO_ROOT) == []
    assert "my_helpers.py" in kernel.shadowing_notice(tmp_path / "helpers.py")


def test_lab_environment_puts_the_kit_first_and_keeps_the_user_s_paths():
    env = lab_environment({"JUPYTER_PATH": "/theirs"})
    assert env["JUPYTER_PATH"] == os.pathsep.join([str(kernel.KERNEL_DATA_DIR), "/theirs"])
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep)[0].endswith("jupyter_config")
    assert (kernel.KERNEL_DATA_DIR / "kernels" / "python3" / "kernel.json").is_file()


def _run(client, code: str) -> dict[str, str]:
    printed = {"stdout": "", "stderr": ""}

    def keep(message):
        if message["msg_type"] == "stream":
            printed[message["content"]["name"]] += message["content"]["text"]
        elif message["msg_type"] == "error":
            printed["stderr"] += "\n".join(message["content"]["traceback"])

    client.execute_interactive(code, output_hook=keep, timeout=KERNEL_START_SECONDS)
    return printed


@pytest.mark.kernel
def test_the_lab_s_kernel_imports_the_kit_before_a_student_s_helpers_py(tmp_path, monkeypatch):
    (tmp_path / "helpers.py").write_text("print('the student s file')\n")
    (tmp_path / "mine.py").write_text("ANSWER = 42\n")
    with lab_kernel(tmp_path, monkeypatch) as client:
        first = _run(client, "import helpers, mine\nprint(helpers.__file__, mine.ANSWER)")
        second = _run(client, "print('again')")
    assert first["stdout"].strip() == f"{REPO_ROOT / 'helpers' / '__init__.py'} 42", first
    assert kernel.shadowing_notice(tmp_path / "helpers.py") in first["stderr"]
    assert second == {"stdout": "again\n", "stderr": ""}, "the notice comes once"


@pytest.mark.kernel
def test_in_the_lab_s_kernel_an_unfinished_exercise_is_one_line(tmp_path, monkeypatch):
    with lab_kernel(tmp_path, monkeypatch) as client:
        stub = _run(client, "def nb_fit():\n    raise NotImplementedError('exercise 1.1')\n"
                            "model = nb_fit()")
        waiting = _run(client, "print(model)")
        typo = _run(client, "print(modle)")
    assert stub["stderr"] == "NotImplementedError: exercise 1.1 not done yet"
    assert waiting["stderr"].startswith("NameError: name 'model' is not defined: the cell that "
                                        "defines it stopped on exercise 1.1")
    assert "Traceback" in typo["stderr"] or "---" in typo["stderr"]  # any other error as usual


@pytest.mark.kernel
def test_without_the_kit_s_kernel_the_student_s_file_would_win(tmp_path):
    """What the kit's kernel prevents (so the test above can fail)."""
    (tmp_path / "helpers.py").write_text("WHO = 'student'\n")
    with kernel_client(tmp_path) as client:
        shown = _run(client, "import helpers\nprint(getattr(helpers, 'WHO', 'kit'))")
    assert shown["stdout"].strip() == "student"


@pytest.mark.kernel
def test_a_name_a_cell_above_defines_says_to_run_the_cells_above(tmp_path, monkeypatch):
    """After a restart, a cell that uses X_train says which cell defines it, in one line; a name
    no cell defines keeps Python's own traceback."""
    notebook = tmp_path / "01_naive_bayes.ipynb"
    code, text = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell
    cells = [code("import numpy as np"), text("X_train = 0"), code("X_train = np.ones(3)"),
             code("print(len(X_train))")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook)
    with lab_kernel(tmp_path, monkeypatch, notebook) as client:
        restarted = _run(client, "print(len(X_train))")
        typo = _run(client, "print(len(X_tarin))")
        own_slip = _run(client, "X_train = X_train + 1")
        in_a_function = _run(client, "def missing():\n    return X_train\nmissing()")
    assert restarted["stderr"] == ("NameError: name 'X_train' is not defined: the cell above that starts "
                                   "`X_train = np.ones(3)` defines it; run the cells above first (a "
                                   "restarted kernel has forgotten them)")
    assert "Traceback" in typo["stderr"] or "Cell In[" in typo["stderr"], typo
    assert "cell above" not in typo["stderr"] and "cell above" not in own_slip["stderr"], own_slip
    shown = re.sub(r"\x1b\[[0-9;]*m", "", in_a_function["stderr"])  # without the colours
    assert "cell above" not in shown and "return X_train" in shown, shown


def test_the_cell_that_defines_a_name_is_found_above_the_running_one_in_the_saved_notebook(tmp_path):
    notebook = tmp_path / "mine.ipynb"
    code = nbformat.v4.new_code_cell
    cells = [code("a, (b, c) = 1, (2, 3)"), code("def f():\n    d = 1"), code("print(c, f, e)"),
             code("e = 5")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook)
    running = "print(c, f, e)"
    assert exercises.defined_in_notebook("c", notebook, running) == "a, (b, c) = 1, (2, 3)"
    assert exercises.defined_in_notebook("f", notebook, running) == "def f():"
    assert exercises.defined_in_notebook("d", notebook, running) is None  # local to f
    assert exercises.defined_in_notebook("e", notebook, running) is None  # defined below: no hint
    assert exercises.defined_in_notebook("c", notebook, "print(c)  # not saved yet") is None
    assert exercises.defined_in_notebook("c", notebook, "c = c + 1") is None
    assert exercises.defined_in_notebook("c", tmp_path / "missing.ipynb", running) is None


@pytest.mark.kernel
def test_the_kit_s_kernel_starts_without_the_slow_modules_and_the_student_may_import_them(tmp_path,
                                                                                          monkeypatch):
    """The kernel's own helpers read notebooks (nbformat, which imports jsonschema) without
    ``SKIPPED_MODULES`` (about 2 s of every kernel's start); the student's code may import them."""
    with lab_kernel(tmp_path, monkeypatch) as client:
        started = _run(client, f"import sys\nnames = {SKIPPED_MODULES!r}\n"
                               "print('jsonschema' in sys.modules,"
                               " [sys.modules.get(n, 'absent') for n in names])")
        imported = _run(client, f"import importlib\nnames = {SKIPPED_MODULES!r}\n"
                                "print([importlib.import_module(n).__name__ for n in names])")
    assert started["stdout"].strip() == f"True {['absent'] * len(SKIPPED_MODULES)}", started
    assert imported["stdout"].strip() == str(list(SKIPPED_MODULES)), imported
