"""`kit run`: executed copies go elsewhere, with time and peak memory per notebook."""

from __future__ import annotations

from pathlib import Path

import nbformat
import psutil
import pytest

from helpers.course.notebook import runner

pytestmark = pytest.mark.kernel

FIXTURE = Path(__file__).parent / "fixtures" / "solutions" / "00_fixture.ipynb"


def test_run_notebook_writes_an_executed_copy_and_measures(tmp_path):
    before = FIXTURE.read_bytes()
    row = runner.run_notebook(FIXTURE, tmp_path / "out")
    assert row["status"] == "ok"
    assert row["peak_mb"] > 10  # a live ipykernel is tens of MB
    assert row["seconds"] > 0
    executed = nbformat.read(tmp_path / "out" / FIXTURE.name, as_version=4)
    assert executed.cells[2].outputs[0].text == "5\n"
    assert FIXTURE.read_bytes() == before


def test_run_notebook_reports_the_failing_cell(tmp_path):
    from helpers.course.notebook.release import release_notebook

    stub = tmp_path / "00_stub.ipynb"
    nbformat.write(release_notebook(nbformat.read(FIXTURE, as_version=4)), stub)
    row = runner.run_notebook(stub, tmp_path / "out")
    assert row["status"].startswith("error") and "exercise 0.1" in row["status"]


def test_run_notebook_never_overwrites_a_file_in_the_out_folder(tmp_path, capsys):
    out = tmp_path / "out"
    first = runner.run_notebook(FIXTURE, out)["output"]
    assert runner.run_notebook(FIXTURE, out)["output"] == first  # the kit's own copy: replaced
    mine = Path(first)
    mine.write_text('{"my": "notebook"}\n')
    capsys.readouterr()
    row = runner.run_notebook(FIXTURE, out)
    written = Path(row["output"])
    assert written != mine and written.parent == out and written.name.startswith("00_fixture.")
    assert mine.read_text() == '{"my": "notebook"}\n'
    assert nbformat.read(written, as_version=4).cells[2].outputs[0].text == "5\n"
    assert (f"{mine} was changed since the kit wrote it (or the kit did not write it), so it is kept "
            f"as it is; the executed copy written to {written} instead\n") in capsys.readouterr().out


def test_a_solution_s_hidden_checks_never_run_in_its_kernel(tmp_path):
    # a hidden check that rebinds a name of the notebook's (04's `mine`) must not break the
    # cells after it: it runs in the grader, not here
    from nbformat.v4 import new_code_cell, new_notebook

    hidden = ("# NBVAL_CHECK_OUTPUT\n### BEGIN HIDDEN CHECKS\nmine = 'the grader\\'s'\nprint(mine)\n"
              "### END HIDDEN CHECKS")
    nb = new_notebook(cells=[new_code_cell("mine = 'the student\\'s'"),
                             new_code_cell(hidden, metadata={"kit": {"checks": "0.1"}}),
                             new_code_cell("print(mine)")])
    path = tmp_path / "00_hidden.ipynb"
    nbformat.write(nb, path)
    row = runner.run_notebook(path, tmp_path / "out")
    executed = nbformat.read(row["output"], as_version=4)
    assert row["status"] == "ok"
    assert [cell.source for cell in executed.cells] == ["mine = 'the student\\'s'", "print(mine)"]
    assert executed.cells[1].outputs[0].text == "the student's\n"


def _kit_kernels() -> set[int]:
    found = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if "helpers.course.student.kernel" in " ".join(child.cmdline()):
                found.add(child.pid)
        except psutil.Error:  # it ended meanwhile
            continue
    return found


def test_the_kit_s_kernel_runs_the_notebook_and_is_shut_down_after_it(tmp_path):
    """The kernel ``kit lab`` starts (an unfinished exercise is one line there), owned by the
    run: none is left behind."""
    from nbformat.v4 import new_code_cell, new_notebook

    before = _kit_kernels()
    path = tmp_path / "00_which.ipynb"
    cells = [new_code_cell("import sys\nprint(sys.argv[0].endswith('helpers/course/student/kernel.py'))"),
             new_code_cell("raise NotImplementedError('exercise 0.1')")]
    nbformat.write(new_notebook(cells=cells), path)
    row = runner.run_notebook(path, tmp_path / "out")
    executed = nbformat.read(row["output"], as_version=4)
    assert executed.cells[0].outputs[0].text == "True\n"
    assert executed.cells[1].outputs[0].traceback == ["NotImplementedError: exercise 0.1 not done yet"]
    assert _kit_kernels() <= before
