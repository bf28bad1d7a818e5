"""Work run in the lab but not saved: the kit's kernel records what JupyterLab runs, and
``kit check`` says when the file it reads is older than what the lab ran (issue K29).

The kernel is the real one ``kit lab`` starts, given what jupyter_server gives a kernel it
starts for a notebook (``JPY_SESSION_NAME``) and sent what JupyterLab sends (the cell's id in
the request's metadata).
"""

from __future__ import annotations

import os
import time

import nbformat
import pytest
from lab_kernel import KERNEL_START_SECONDS, lab_kernel, send_as_the_lab
from test_check import _all_pass_in, _seeded

from helpers.cli import main
from helpers.course.notebook import cells
from helpers.course.student import unsaved

NOTEBOOK = "01_naive_bayes.ipynb"


def _run_in_lab(work, notebook, runs: list[tuple[str, str]], monkeypatch) -> None:
    """Run each (cell id, code) in the kit's kernel started for ``notebook``, as the lab would."""
    with lab_kernel(work, monkeypatch, notebook) as client:
        for cell_id, code in runs:
            sent = send_as_the_lab(client, code, {"cellId": cell_id})
            reply = client.get_shell_msg(timeout=KERNEL_START_SECONDS)
            while reply["parent_header"].get("msg_id") != sent:  # not a
                reply = client.get_shell_msg(timeout=KERNEL_START_SECONDS)  # late kernel_info reply
            assert reply["content"]["status"] == "ok", reply["content"]


def _exercise_cell(copy, exercise: str) -> nbformat.NotebookNode:
    found = nbformat.read(copy, as_version=4).cells
    return next(cell for cell in found if cells.exercise_id(cell) == exercise)


@pytest.mark.kernel
@pytest.mark.slow
def test_kit_check_names_an_exercise_the_lab_ran_but_the_file_does_not_hold(tmp_path, monkeypatch, capsys):
    work = _seeded(tmp_path, monkeypatch)
    copy = work / NOTEBOOK
    stub = _exercise_cell(copy, "1.1")
    edited = stub.source + "\n# edited in the lab, not saved"
    before = time.time()
    first = next(cell for cell in nbformat.read(copy, as_version=4).cells if cell.cell_type == "code")
    _run_in_lab(work, copy, [(stub.id, edited), (first.id, first.source)], monkeypatch)

    ran = unsaved.read_ran(work)[NOTEBOOK]
    assert ran[stub.id]["sha256"] == unsaved.source_hash(edited) and ran[stub.id]["at"] >= before
    os.utime(copy, (before - 10, before - 10))  # the file was saved before the runs
    assert unsaved.unsaved_cells(copy) == [("1.1", stub.id)]  # the first cell ran as saved
    note = unsaved.unsaved_note(copy)
    assert "exercise 1.1" in note and "Ctrl-S" in note

    _all_pass_in(monkeypatch)
    main(["check", "01"])
    assert f"{NOTEBOOK}: {note}." in capsys.readouterr().out

    nb = nbformat.read(copy, as_version=4)  # the student saves: the file holds what ran
    next(cell for cell in nb.cells if cell.id == stub.id).source = edited
    nbformat.write(nb, copy)
    assert unsaved.unsaved_note(copy) == ""
    main(["check", "01"])
    assert "Ctrl-S" not in capsys.readouterr().out


def test_a_cell_run_after_the_save_and_never_saved_counts_and_a_garbled_record_is_no_hint(tmp_path):
    copy = tmp_path / NOTEBOOK
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("a = 1", id="kept")])
    nbformat.write(nb, copy)
    saved = copy.stat().st_mtime
    unsaved.record_run(copy, "kept", "a = 1", at=saved + 5)  # ran as saved
    unsaved.record_run(copy, "new", "b = 2", at=saved + 5)  # a cell the file lacks
    unsaved.record_run(copy, "old", "c = 3", at=saved - 5)  # run, then deleted and saved
    assert unsaved.unsaved_cells(copy) == [(None, "new")]
    assert "1 cell(s)" in unsaved.unsaved_note(copy)
    (tmp_path / unsaved.RAN_FILE).write_text("{not json")
    assert unsaved.unsaved_note(copy) == ""


@pytest.mark.kernel
def test_a_kernel_for_a_notebook_outside_the_workspace_records_nothing(tmp_path, monkeypatch):
    work = _seeded(tmp_path, monkeypatch)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _run_in_lab(elsewhere, elsewhere / NOTEBOOK, [("c1", "x = 1")], monkeypatch)
    assert not (elsewhere / unsaved.RAN_FILE).exists() and not (work / unsaved.RAN_FILE).exists()
