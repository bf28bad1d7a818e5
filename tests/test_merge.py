"""Where a submission holds each exercise (``merge.locate``), shared by kit check and grading."""

from __future__ import annotations

from pathlib import Path

import nbformat

from helpers.course.classroom import record
from helpers.course.engine.verdict import Status, Verdict
from helpers.course.engine.wording import describe
from helpers.course.notebook import merge, release

FIXTURE = Path(__file__).parent / "fixtures" / "solutions" / "00_fixture.ipynb"
RETYPED = "def add(a, b):\n    return b + a"


def _released() -> nbformat.NotebookNode:
    return release.release_notebook(nbformat.read(FIXTURE, as_version=4))


def test_an_exercise_is_in_its_cell_even_moved_and_edited():
    reference = _released()
    moved = nbformat.from_dict(reference)
    moved.cells.append(moved.cells.pop(1))
    moved.cells[-1].source = RETYPED
    where = merge.locate(reference, moved)
    assert where["0.1"] == merge.Location("0.1", "00-001", ("add",)) and where["0.1"].note == ""


def test_a_retyped_exercise_is_found_by_its_function_and_runs_once_in_its_place():
    reference = _released()
    retyped = nbformat.from_dict(reference)
    del retyped.cells[1]
    retyped.cells.insert(3, nbformat.v4.new_code_cell("x = 1", id="mine-1"))
    retyped.cells.insert(4, nbformat.v4.new_code_cell(RETYPED, id="mine-2"))
    where = merge.locate(reference, retyped)["0.1"]
    assert (where.cell_id, where.by_function) == ("mine-2", True)
    assert "checked in your own cell that defines add" in where.note
    graded = merge.graded_notebook(reference, retyped)
    sources = [cell.source for cell in graded.cells]
    assert sources.count(RETYPED) == 1 and graded.cells[1].source == RETYPED  # in the exercise's place
    assert "x = 1" in sources  # the student's other cell stays


def test_cells_that_do_not_parse_define_nothing_and_stop_no_search():
    reference = _released()
    theirs = nbformat.from_dict(reference)
    del theirs.cells[1]
    for number, source in enumerate(["x = '\ud800'", "-" * 100_000 + "1", "a" + ".b" * 200_000, RETYPED]):
        theirs.cells.append(nbformat.v4.new_code_cell(source, id=f"mine-{number}"))
    assert merge.locate(reference, theirs)["0.1"].cell_id == "mine-3"


def test_a_deleted_exercise_is_named_and_its_stub_runs():
    reference = _released()
    deleted = nbformat.from_dict(reference)
    del deleted.cells[1]
    where = merge.locate(reference, deleted)["0.1"]
    assert where.cell_id is None and "no cell of yours defines add" in where.note
    assert merge.graded_notebook(reference, deleted).cells[1].source == reference.cells[1].source


def test_a_verdict_s_note_is_shown_and_kept_in_its_record():
    verdict = Verdict("0.1", Status.PASSED, note="its exercise cell is not in your notebook")
    assert describe(verdict) == "✓ 0.1\n    its exercise cell is not in your notebook"
    entry = verdict.record()
    assert Verdict.from_record(entry).note == verdict.note
    record._check_exercise("exercise 0.1", entry)
