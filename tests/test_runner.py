"""`kit run`: executed copies go elsewhere, with time and peak memory per notebook."""

from __future__ import annotations

from pathlib import Path

import nbformat

from helpers.course import runner

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
    from helpers.course.release import release_notebook

    stub = tmp_path / "00_stub.ipynb"
    nbformat.write(release_notebook(nbformat.read(FIXTURE, as_version=4)), stub)
    row = runner.run_notebook(stub, tmp_path / "out")
    assert row["status"].startswith("error") and "exercise 0.1" in row["status"]
