"""Releasing solutions as student notebooks, and proving that nbval grading can fail."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from helpers.course.config import SOLUTIONS_DIR
from helpers.course.notebook import cells, release
from helpers.errors import KitError

FIXTURES = Path(__file__).parent / "fixtures" / "solutions"


@pytest.fixture
def fixture_solution() -> nbformat.NotebookNode:
    return nbformat.read(FIXTURES / "00_fixture.ipynb", as_version=4)


def test_stub_source_keeps_signature_and_docstring():
    source = 'def f(x):\n    """Doc."""\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n'
    assert release.stub_source(source, "1.2") == (
        'def f(x):\n    """Doc."""\n    # YOUR CODE HERE\n'
        '    raise NotImplementedError("exercise 1.2")')
    assert "# YOUR CODE HERE (exercise 1.2: 2.5 points, graded by its checks)\n" in release.stub_source(
        source, "1.2", 2.5)


def test_release_stubs_exercises_and_keeps_only_checked_outputs(fixture_solution):
    student = release.release_notebook(fixture_solution)
    code = [c for c in student.cells if c.cell_type == "code"]
    assert 'raise NotImplementedError("exercise 0.1")' in code[0].source
    assert "return a + b" not in code[0].source
    assert code[1].outputs[0].text == "5\n" and code[1].execution_count == 2
    assert code[4].outputs == [] and code[4].execution_count is None  # unchecked cell
    assert "YOUR ANSWER HERE" in student.cells[-1].source
    assert "weighted centre" not in student.cells[-1].source
    assert fixture_solution.cells[1].source.count("BEGIN SOLUTION") == 1  # input untouched


def test_exercises_group_each_exercise_with_its_checks(fixture_solution):
    found = cells.exercises(fixture_solution)
    assert [(e.id, e.cell_ids) for e in found] == [
        ("0.1", ("00-001", "00-002", "00-002-hidden")), ("0.2", ("00-003", "00-004"))]


def test_release_removes_hidden_checks_and_grading_keeps_them(fixture_solution):
    released = release.release_notebook(fixture_solution)
    graded = release.release_notebook(fixture_solution, hidden=True)
    assert "00-002-hidden" not in [c.id for c in released.cells]
    assert not any("HIDDEN" in c.source for c in released.cells)
    kept = next(c for c in graded.cells if c.id == "00-002-hidden")
    assert kept.outputs[0].text == "a negative number and a fraction add up: True\n"


def _mutate(solution, position, **metadata):
    changed = nbformat.from_dict(solution)
    changed.cells[position].metadata["kit"] = metadata
    return changed


@pytest.mark.parametrize("position, metadata, message", [
    (2, {}, "exercise 0.1 .*no check of its own"),  # its only visible check no longer names it
    (2, {"checks": "0.2"}, "checks exercise 0.2 but does not stand between"),
    (6, {"checks": "0.2"}, "must start with # NBVAL_CHECK_OUTPUT"),
])
def test_release_refuses_an_exercise_without_its_own_check(fixture_solution, position, metadata, message):
    with pytest.raises(KitError, match=message):
        release.release_notebook(_mutate(fixture_solution, position, **metadata), "00_fixture")


def test_release_refuses_a_repeated_exercise_and_an_unattached_hidden_check(fixture_solution):
    twice = nbformat.from_dict(fixture_solution)
    twice.cells[4].metadata["kit"]["exercise"] = "0.1"
    with pytest.raises(KitError, match="exercise 0.1 appears twice"):
        release.release_notebook(twice, "00_fixture")
    unattached = nbformat.from_dict(fixture_solution)
    del unattached.cells[3].metadata["kit"]
    with pytest.raises(KitError, match="that names its exercise"):
        release.release_notebook(unattached, "00_fixture")


def test_release_keeps_the_reference_names_private(fixture_solution):
    assert fixture_solution.cells[1].metadata["kit"]["reference"] == ["operator"]
    for hidden in (False, True):
        released = release.release_notebook(fixture_solution, hidden=hidden)
        assert "reference" not in released.cells[1].metadata["kit"]


def test_release_refuses_hidden_markers_beside_visible_code(fixture_solution):
    broken = nbformat.from_dict(fixture_solution)
    broken.cells[3].source += "\nprint(1)"
    with pytest.raises(KitError, match="hidden checks must fill"):
        release.release_notebook(broken, "00_fixture")


def test_a_graded_notebook_takes_markers_a_student_typed_for_their_own_code(fixture_solution):
    hidden = fixture_solution.cells[3]
    typed = nbformat.from_dict(fixture_solution).cells[3]
    typed.source += "\nprint(1)"
    assert cells.is_hidden(hidden) and cells.is_graded_hidden(hidden)
    assert not cells.is_graded_hidden(typed) and not cells.is_graded_hidden(fixture_solution.cells[1])


def test_release_is_byte_stable_and_check_detects_drift(tmp_path):
    out = tmp_path / "notebooks"
    assert release.release(FIXTURES, out) == [out / "00_fixture.ipynb"]
    first = (out / "00_fixture.ipynb").read_bytes()
    assert release.release(FIXTURES, out) == []
    assert (out / "00_fixture.ipynb").read_bytes() == first
    (out / "00_fixture.ipynb").write_text("{}")
    assert release.release(FIXTURES, out, check=True) == [out / "00_fixture.ipynb"]
    assert (out / "00_fixture.ipynb").read_text() == "{}"  # --check writes nothing


def test_release_never_overwrites_a_hand_edited_notebook_without_force(tmp_path):
    out, backups = tmp_path / "notebooks", tmp_path / "backups"
    release.release(FIXTURES, out, backups_dir=backups)
    assert release.read_manifest(out).keys() == {"00_fixture.ipynb"}
    (out / "00_fixture.ipynb").write_text("{} my notes")
    with pytest.raises(KitError, match="changed since `kit release` wrote them"):
        release.release(FIXTURES, out, backups_dir=backups)
    assert (out / "00_fixture.ipynb").read_text() == "{} my notes" and not backups.exists()
    assert release.release(FIXTURES, out, force=True, backups_dir=backups) == [out / "00_fixture.ipynb"]
    assert [p.read_text() for p in backups.iterdir()] == ["{} my notes"]
    assert release.release(FIXTURES, out, check=True) == []


def test_release_refuses_a_notebook_it_did_not_write_or_saved_in_another_encoding(tmp_path):
    out = tmp_path / "notebooks"
    out.mkdir()
    mine = out / "00_fixture.ipynb"
    mine.write_text("{} a notebook of my own\n")  # no manifest: the release never wrote it
    with pytest.raises(KitError, match=r"^00_fixture.ipynb in .* changed since `kit release` wrote them "
                       r"\(or it did not write them\); nothing was written\. .*--force"):
        release.release(FIXTURES, out, backups_dir=tmp_path / "backups")
    assert mine.read_text() == "{} a notebook of my own\n"
    mine.unlink()
    release.release(FIXTURES, out, backups_dir=tmp_path / "backups")
    latin = mine.read_text(encoding="utf-8").replace('"nbformat"', '"nbformat", "note": "café"')
    mine.write_bytes(latin.encode("latin-1"))  # an editor that saved it in another encoding
    assert release.release(FIXTURES, out, check=True) == [mine]
    with pytest.raises(KitError, match="00_fixture.ipynb in .* changed since"):
        release.release(FIXTURES, out, backups_dir=tmp_path / "backups")
    assert mine.read_bytes() == latin.encode("latin-1")


def test_release_replaces_its_own_notebook_checked_out_with_crlf(tmp_path):
    solutions, out = tmp_path / "solutions", tmp_path / "notebooks"
    solutions.mkdir()
    shutil.copy(FIXTURES / "00_fixture.ipynb", solutions)
    release.release(solutions, out)
    notebook = out / "00_fixture.ipynb"
    notebook.write_bytes(notebook.read_bytes().replace(b"\n", b"\r\n"))  # git on Windows
    assert release.release(solutions, out) == []
    solution = nbformat.read(solutions / "00_fixture.ipynb", as_version=4)
    solution.cells[0].source += "\n\nA new sentence."
    nbformat.write(solution, solutions / "00_fixture.ipynb")
    assert release.release(solutions, out) == [notebook]
    assert "A new sentence." in notebook.read_text()


def test_release_check_wants_the_manifest(tmp_path):
    out = tmp_path / "notebooks"
    release.release(FIXTURES, out)
    (out / release.MANIFEST).unlink()
    assert release.release(FIXTURES, out, check=True) == [out / release.MANIFEST]
    assert release.release(FIXTURES, out) == [] and (out / release.MANIFEST).is_file()


def test_solution_block_without_exercise_id_is_refused(fixture_solution):
    del fixture_solution.cells[1].metadata["kit"]
    with pytest.raises(KitError, match="no exercise id"):
        release.release_notebook(fixture_solution, "00_fixture.ipynb")


def test_repo_notebooks_are_in_sync_with_solutions():
    """CI's check that nobody hand-edited notebooks/ or forgot `kit release`."""
    if not list(SOLUTIONS_DIR.glob("[0-9][0-9]_*.ipynb")):
        pytest.skip("no solution notebooks yet")
    stale = release.release(check=True)
    assert stale == [], f"run `kit release`: {[p.name for p in stale]} out of date"


def test_every_marked_cell_of_the_released_notebooks_says_its_points():
    """A student sees what is marked, and how much, in the notebook itself."""
    for path in sorted(SOLUTIONS_DIR.glob("[0-9][0-9]_*.ipynb")):
        solution = nbformat.read(path, as_version=4)
        points = cells.points_of(solution)
        released = {cell.id: cell for cell in release.release_notebook(solution, path.name).cells}
        for ex in cells.exercises(solution):
            worth = f"{points[ex.id]:g} point" + ("" if points[ex.id] == 1 else "s")
            assert f"(exercise {ex.id}: {worth}, graded by its checks)" in released[ex.cell_ids[0]].source
        for cell in cells.answer_cells(solution, path.name):
            worth = cells.answer_points(cell)
            note = f"*Written answer: {worth:g} point" + ("" if worth == 1 else "s") + ", marked by hand.*"
            assert note in released[cell.id].source, (path.name, cell.id)


def test_every_notebook_with_an_exercise_plots_the_student_s_results_against_the_kit_s():
    """Each has a figure cell (kit.figure "yours") that draws a plot in the solution and keeps
    no output in the release; tests/test_run_all.py shows that the student's unfinished work
    stops it."""
    for path in sorted(SOLUTIONS_DIR.glob("[0-9][0-9]_*.ipynb")):
        solution = nbformat.read(path, as_version=4)
        if not cells.exercises(solution):
            continue
        figures = [cell for cell in solution.cells if cells.is_own_results_figure(cell)]
        assert figures, f"{path.name}: no figure of the student's own results"
        first_exercise = cells.exercises(solution)[0].cell_ids[0]
        order = [cell.id for cell in solution.cells]
        for cell in figures:
            assert order.index(cell.id) > order.index(first_exercise), (path.name, cell.id)
            assert any("image/png" in output.get("data", {}) for output in cell.outputs), (path.name, cell.id)
        released = {cell.id: cell for cell in release.release_notebook(solution, path.name).cells}
        assert all(cells.is_own_results_figure(released[cell.id]) and not released[cell.id].outputs
                   for cell in figures), path.name


def test_a_notebook_that_speaks_of_reference_outputs_says_they_are_in_the_release_not_the_copy(tmp_path):
    """The student's copy starts blank (no output under any check): text that speaks of the
    reference outputs names the released notebook that holds them."""
    from helpers.course.student import workspace

    workspace.seed(tmp_path / "work")
    speaking = 0
    for path in sorted((tmp_path / "work").glob("[0-9][0-9]_*.ipynb")):
        copy = nbformat.read(path, as_version=4)
        assert not any(cell.get("outputs") for cell in copy.cells), f"{path.name}: a copy with outputs"
        for cell in copy.cells:
            if cell.cell_type == "markdown" and "reference output" in " ".join(cell.source.split()):
                speaking += 1
                assert f"`notebooks/{path.name}`" in cell.source, (path.name, cell.id)
    assert speaking, "01's introduction speaks of the reference outputs"


def _nbval(path: Path) -> subprocess.CompletedProcess:
    (path.parent / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(path), "-c", str(path.parent / "pytest.ini"),
         "-p", "helpers.course.engine.nbval_plugin", "-q",
         "-p", "no:cacheprovider"],
        capture_output=True, text=True, cwd=path.parent)


@pytest.mark.kernel
@pytest.mark.slow
def test_shipped_stubs_fail_nbval_and_filled_in_stubs_pass(tmp_path, fixture_solution):
    student = release.release_notebook(fixture_solution)
    shipped = tmp_path / "shipped" / "00_fixture.ipynb"
    shipped.parent.mkdir()
    nbformat.write(student, shipped)
    result = _nbval(shipped)
    assert result.returncode == 1
    assert "2 failed" in result.stdout and "NotImplementedError" in result.stdout

    solved = {cells.exercise_id(c): c.source for c in fixture_solution.cells if cells.exercise_id(c)}
    for cell in student.cells:
        if cells.exercise_id(cell):
            cell.source = solved[cells.exercise_id(cell)]
    filled = tmp_path / "filled" / "00_fixture.ipynb"
    filled.parent.mkdir()
    nbformat.write(student, filled)
    result = _nbval(filled)
    assert result.returncode == 0, result.stdout
    assert "5 passed" in result.stdout


@pytest.mark.kernel
@pytest.mark.slow
def test_wrong_answer_fails_on_the_reference_output(tmp_path, fixture_solution):
    student = release.release_notebook(fixture_solution)
    student.cells[1].source = "def add(a, b):\n    return a - b"
    student.cells[3].source = fixture_solution.cells[4].source
    path = tmp_path / "00_fixture.ipynb"
    nbformat.write(student, path)
    result = _nbval(path)
    assert result.returncode == 1 and "1 failed, 4 passed" in result.stdout
    assert "Cell 1" in result.stdout and "outputs differ" in result.stdout


def test_fixture_folder_is_copyable(tmp_path):
    # Guard for the grading tests: the fixture has exactly one solution notebook.
    shutil.copytree(FIXTURES, tmp_path / "s")
    assert [p.name for p in (tmp_path / "s").glob("*.ipynb")] == ["00_fixture.ipynb"]


def test_checked_cells_store_only_stable_text_outputs():
    """A progress bar or warning in a checked cell would make its reference output flaky."""
    for path in sorted(SOLUTIONS_DIR.glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code" or not cells.is_checked(cell):
                continue
            for output in cell.outputs:
                assert output.output_type in ("stream", "execute_result"), (path.name, cell.id)
                assert output.get("name", "stdout") == "stdout", (path.name, cell.id)


def test_release_keeps_tolerances_and_the_reference_environment(fixture_solution):
    solution = nbformat.from_dict(fixture_solution)
    solution.metadata["kit"] = {"reference_env": "openblas 0.3.30 Haswell (2 threads)"}
    solution.cells[2].metadata["kit"]["tolerance"] = 3  # the first checked cell
    student = release.release_notebook(solution)
    assert student.metadata["kit"] == {"reference_env": "openblas 0.3.30 Haswell (2 threads)"}
    # and its points (the fixture's 0.1 gives partial credit per check)
    assert student.cells[2].metadata["kit"] == {"checks": "0.1", "points": 0.25, "tolerance": 3}


@pytest.mark.parametrize(("position", "tolerance", "message"), [
    (1, 3, "only a # NBVAL_CHECK_OUTPUT cell can declare a tolerance"),  # an exercise cell
    (2, 0.5, "whole number of last-digit units"),
    (2, -1, "whole number of last-digit units"),
])
def test_release_refuses_a_misplaced_or_invalid_tolerance(fixture_solution, position, tolerance, message):
    solution = nbformat.from_dict(fixture_solution)
    solution.cells[position].metadata.setdefault("kit", {})["tolerance"] = tolerance
    with pytest.raises(KitError, match=message):
        release.release_notebook(solution, "00_fixture")


def test_release_lets_run_all_go_on_from_the_first_exercise_and_grading_does_not(fixture_solution):
    released = release.release_notebook(fixture_solution)
    first = next(i for i, cell in enumerate(released.cells) if cells.exercise_id(cell))
    tagged = [release.RUN_ON_TAG in cell.metadata.get("tags", []) for cell in released.cells]
    code = [cell.cell_type == "code" for cell in released.cells]
    assert tagged == [is_code and i >= first for i, is_code in enumerate(code)]
    graded = release.release_notebook(fixture_solution, hidden=True)
    assert not any(release.RUN_ON_TAG in cell.metadata.get("tags", []) for cell in graded.cells)
    release.without_run_on(released)
    assert not any(release.RUN_ON_TAG in cell.metadata.get("tags", []) for cell in released.cells)


def test_removing_the_tag_survives_what_a_student_may_write(fixture_solution):
    nb = release.release_notebook(fixture_solution)
    odd = [["raises-exception", "raises-exception", "mine"], "raises-exception", "no-raises-exception"]
    for cell, tags in zip(nb.cells[1:], odd, strict=False):
        cell.metadata["tags"] = tags
    release.without_run_on(nb)
    assert [cell.metadata.get("tags") for cell in nb.cells[1:4]] == [["mine"], None, None]
