"""kit references: outputs refreshed from a real run, sources kept, the environment recorded."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from helpers.course.notebook import environment, references, runner
from helpers.errors import KitError

FIXTURE = Path(__file__).parent / "fixtures" / "solutions" / "00_fixture.ipynb"


@pytest.fixture
def solutions(tmp_path: Path) -> Path:
    folder = tmp_path / "solutions"
    folder.mkdir()
    shutil.copy(FIXTURE, folder)
    return folder


@pytest.mark.kernel
def test_references_come_from_a_run_and_name_its_environment(solutions):
    path = solutions / FIXTURE.name
    before = nbformat.read(path, as_version=4)
    for cell in before.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    nbformat.write(before, path)
    assert references.write_references(solutions_dir=solutions) == [path]
    after = nbformat.read(path, as_version=4)
    assert [c.source for c in after.cells] == [c.source for c in before.cells]
    assert [c.metadata for c in after.cells] == [c.metadata for c in before.cells]
    assert any(c.get("outputs") for c in after.cells)
    assert after.metadata.kit.reference_env == environment.current()


@pytest.mark.kernel
def test_a_notebook_edited_while_it_ran_is_left_alone(solutions, monkeypatch):
    path = solutions / FIXTURE.name
    real_run = runner.run_notebook

    def run_and_edit(*args, **kwargs):
        result = real_run(*args, **kwargs)
        path.write_text(path.read_text() + " ")
        return result

    monkeypatch.setattr(runner, "run_notebook", run_and_edit)
    with pytest.raises(KitError, match="edited while it ran"):
        references.write_references(solutions_dir=solutions)
    assert "reference_env" not in nbformat.read(path, as_version=4).metadata.get("kit", {})


def test_outputs_are_only_taken_from_the_same_cells():
    solution = nbformat.read(FIXTURE, as_version=4)
    executed = nbformat.from_dict(solution)
    executed.cells[1].source += "\n# changed"
    with pytest.raises(KitError, match="differs from the executed copy"):
        references.with_outputs(solution, executed, {})


@pytest.mark.kernel
def test_a_failing_notebook_keeps_its_references(solutions):
    path = solutions / FIXTURE.name
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("raise ValueError('broken')"))
    nbformat.write(nb, path)
    before = path.read_bytes()
    with pytest.raises(KitError, match="references are unchanged"):
        references.write_references(solutions_dir=solutions)
    assert path.read_bytes() == before


@pytest.mark.kernel
def test_hidden_checks_stay_out_of_the_kernel_and_keep_their_outputs(solutions):
    path = solutions / FIXTURE.name
    nb = nbformat.read(path, as_version=4)
    hidden = next(c for c in nb.cells if c.get("id") == "00-002-hidden")
    # in a kernel this raises (no grader answers student.*): the run would fail if it got there
    end = "### END HIDDEN CHECKS"
    hidden.source = hidden.source.replace(end, "raise SystemExit('ran in the kernel')\n" + end)
    stored = [nbformat.v4.new_output("stream", name="stdout", text="stored\n")]
    hidden.outputs = stored
    for cell in nb.cells:
        if cell.cell_type == "code" and cell is not hidden:
            cell.outputs = []
    nbformat.write(nb, path)
    references.write_references(solutions_dir=solutions)
    after = {c.id: c for c in nbformat.read(path, as_version=4).cells}
    assert after["00-002-hidden"].outputs == stored
    assert after["00-002"].outputs[0].text == "5\n"
    counts = [c.execution_count for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))
