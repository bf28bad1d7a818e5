"""`kit check`: a stub, a correct answer and a wrong one, as the student reads them."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from helpers.cli import main
from helpers.course import config
from helpers.course.engine import nbval_run
from helpers.course.engine.verdict import Status, Verdict, describe
from helpers.course.notebook import release
from helpers.course.notebook.cells import exercise_id
from helpers.course.notebook.compare import Difference
from helpers.course.student import check, workspace
from helpers.errors import KitError

FIXTURE = Path(__file__).parent / "fixtures" / "solutions" / "00_fixture.ipynb"


def test_check_says_per_exercise_what_passes(tmp_path):
    solution = nbformat.read(FIXTURE, as_version=4)
    released = tmp_path / "notebooks" / FIXTURE.name
    released.parent.mkdir()
    nbformat.write(release.release_notebook(solution), released)
    answers = {"stub": release.release_notebook(solution), "correct": solution}
    wrong = nbformat.from_dict(answers["stub"])
    wrong.cells[1].source = "def add(a, b):\n    return a - b"
    answers["wrong"] = wrong
    lines = {}
    for name, nb in answers.items():
        copy = tmp_path / name / FIXTURE.name
        copy.parent.mkdir()
        nbformat.write(nb, copy)
        lines[name] = [describe(verdict) for verdict in check.check_notebook(copy, released, timeout=120)]
    assert lines["correct"] == ["✓ 0.1", "✓ 0.2"]
    assert lines["stub"] == ["✗ 0.1  not done yet", "✗ 0.2  not done yet"]
    assert lines["wrong"][0] == (
        "✗ 0.1  Fixture practical\n"
        "    output differs from the reference: stdout, line 1: -1 where 5 was expected "
        "(must match exactly)\n"
        "    expected (reference): 5\n"
        "    got (your output):    -1")
    assert lines["wrong"][1] == "✗ 0.2  not done yet"


def test_check_names_what_is_missing(tmp_path, capsys):
    with pytest.raises(KitError, match="No notebook '07' in your workspace"):
        check.working_copy("07", tmp_path)
    with pytest.raises(KitError, match="not one of the released notebooks"):
        check.released_for(tmp_path / "99_mine.ipynb")
    (tmp_path / "broken.ipynb").write_text("{not json")
    with pytest.raises(KitError, match="not a readable notebook"):
        check.check_notebook(tmp_path / "broken.ipynb", FIXTURE)
    assert main(["check", str(tmp_path / "absent.ipynb")]) == 1
    assert "not one of the released notebooks" in capsys.readouterr().err


def test_an_error_shows_where_it_was_raised_and_the_table_counts_each_kind(tmp_path):
    solution = nbformat.read(FIXTURE, as_version=4)
    notebooks = _released(solution, tmp_path)
    raising = release.release_notebook(solution)
    raising.cells[1].source = "def add(a, b):\n    total = a + b\n    return total / 0"
    work = tmp_path / "work"
    work.mkdir()
    nbformat.write(raising, work / FIXTURE.name)
    nbformat.write(solution, work / "mine.ipynb")  # no release of that name: not checked
    found = check.check_workspace(config.notebooks_in(work) + [work / "mine.ipynb"], timeout=120,
                                  notebooks=notebooks)
    assert list(found) == [FIXTURE.name]
    assert describe(found[FIXTURE.name][0]) == (
        "✗ 0.1  Fixture practical\n    ZeroDivisionError: division by zero "
        "(in add, line 3: return total / 0)")
    table = check.progress(found)
    assert table.loc[FIXTURE.name].to_dict() == {
        "exercises": 2, "passed": 0, "not done": 1, "blocked": 0, "failed": 1}
    assert list(table.columns) == ["exercises", "passed", "not done", "blocked", "failed"]


def test_kit_check_on_a_catalogued_mistake_in_a_course_notebook(tmp_path, monkeypatch, capsys, corpora):
    from test_mistakes import MISTAKES

    work = tmp_path / "work"
    workspace.seed(work)
    copy = work / "03_significance.ipynb"
    nb = nbformat.read(copy, as_version=4)
    solved = {exercise_id(c): c.source for c in
              nbformat.read(config.SOLUTIONS_DIR / copy.name, as_version=4).cells}
    mistake = MISTAKES["3.1"]["the Monte Carlo formula (s + 1) / (R + 1) for the exact test"]
    for cell in nb.cells:
        if exercise_id(cell) == "3.1":
            cell.source = mistake
        elif exercise_id(cell) == "3.2":
            cell.source = solved["3.2"]
    nbformat.write(nb, copy)
    monkeypatch.setenv("KIT_WORK_DIR", str(work))
    monkeypatch.setattr(nbval_run, "on_terminal", lambda: True)  # the bar is for a terminal only
    assert main(["check", "03"]) == 1, "an exercise that does not pass is a failing exit status"
    said = capsys.readouterr()
    cells = sum(cell.cell_type == "code" for cell in nb.cells)
    assert "kit: 1 of 2 exercises do not pass yet." in said.err
    assert f"{cells}/{cells}" in said.err, f"no progress bar over the {cells} cells:\n{said.err[-500:]}"
    assert said.out.startswith("03_significance.ipynb: running it in a fresh kernel")
    shown = said.out.splitlines(keepends=True)[1:]
    # on a machine whose libraries differ from the reference's, a line names both: not this test's
    assert "".join(line for line in shown if not line.lstrip().startswith("(reference outputs")) == \
        CATALOGUED_MISTAKE_03


def test_the_libraries_that_wrote_the_reference_stand_on_a_line_of_their_own():
    verdict = Verdict("1.1", Status.FAILED, "(the one line)", where="Title", position=1,
                      difference=Difference(1, "1", "2", "2 where 1 was expected", "stdout"),
                      environments=("reference outputs written with: openblas Haswell",
                                    "this run uses: openblas Prescott"))
    assert describe(verdict) == (
        "✗ 1.1  Title\n    output differs from the reference: stdout, line 1: 2 where 1 was expected\n"
        "    expected (reference): 1\n    got (your output):    2\n"
        "    (reference outputs written with: openblas Haswell; this run uses: openblas Prescott)")


CATALOGUED_MISTAKE_03 = """\
03_significance.ipynb: 1/2 exercises pass the visible checks (grading also runs hidden ones)
  ✗ 3.1  The lecture's worked example
      output differs from the reference: stdout, line 2: 0.04615 where 0.03125 was expected \
(must match exactly)
      expected (reference): 2 of 64 swap patterns are at least as extreme: p = 2/64 = 0.03125
      got (your output):    2 of 64 swap patterns are at least as extreme: p = 2/64 = 0.04615
  ✓ 3.2
"""


def _released(solution: nbformat.NotebookNode, tmp_path: Path) -> Path:
    """The release of ``solution`` in a ``notebooks`` folder of its own."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir(exist_ok=True)
    nbformat.write(release.release_notebook(solution), notebooks / FIXTURE.name)
    return notebooks


def _kernels() -> tuple[dict, dict]:
    """The names of a kernel where exercise 0.1 is right, and of one where it is wrong."""
    right, wrong = {}, {}
    exec("def add(a, b):\n    return a + b", right)
    exec("def add(a, b):\n    return a - b", wrong)
    return right, wrong


def test_check_in_a_notebook_runs_one_exercise_s_checks_on_the_live_names(tmp_path, capsys):
    solution = nbformat.read(FIXTURE, as_version=4)
    notebooks = _released(solution, tmp_path)
    right, wrong = _kernels()
    stub = {}
    exec(release.stub_source(solution.cells[1].source, "0.1"), stub)

    assert check.check("0.1", right, notebooks) is None  # nothing for a notebook to show as Out[...]
    assert capsys.readouterr().out == "✓ 0.1\n"
    check.check("0.1", wrong, notebooks)
    assert capsys.readouterr().out == (
        "✗ 0.1  Fixture practical\n    output differs from the reference: stdout, line 1: -1 where 5 was "
        "expected (must match exactly)\n    expected (reference): 5\n    got (your output):    -1\n")
    check.check("0.1", stub, notebooks)
    assert capsys.readouterr().out == "✗ 0.1  not done yet\n"
    with pytest.raises(KitError, match="Exercise 0.9 is not in 00_fixture.ipynb, whose exercises are 0.1"):
        check.check("0.9", right, notebooks)
    with pytest.raises(KitError, match=r"No released notebook has exercise 'x'.*notebook's number \(00\)"):
        check.check("x", right, notebooks)
    with pytest.raises(KitError, match="as a string"):
        check.check(0.1, right, notebooks)
    with pytest.raises(KitError, match=r"Exercise 0.1 is in 00_fixture.ipynb and defines add, which is "
                       r"not defined here: run check\("):
        check.check("0.1", {}, notebooks)  # another notebook's kernel, or the exercise cell not run


def test_check_in_a_notebook_compares_a_last_line_s_value_as_grading_does(tmp_path, capsys):
    """A check cell whose last line is an expression shows its value (text/plain): the live
    check compares it, as grading does, and does not pass a wrong value for printing nothing."""
    solution = nbformat.read(FIXTURE, as_version=4)
    check_cell = solution.cells[2]
    check_cell.source = "# NBVAL_CHECK_OUTPUT\nadd(2, 3)"
    check_cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "5"}, execution_count=1)]
    notebooks = _released(solution, tmp_path)
    right, wrong = _kernels()
    assert check.check_exercise("0.1", right, notebooks).passed
    assert not check.check_exercise("0.1", wrong, notebooks).passed
    check.check("0.1", wrong, notebooks)
    said = capsys.readouterr().out
    assert "output differs from the reference: text/plain, line 1: -1 where 5 was expected" in said
    check_cell.source, check_cell.outputs = "# NBVAL_CHECK_OUTPUT\nadd(2, 3);", []  # ";" shows nothing
    _released(solution, tmp_path)
    assert check.check_exercise("0.1", right, notebooks).passed


def test_ctrl_c_in_kit_check_shows_what_was_checked_says_interrupted_and_exits_130(tmp_path, monkeypatch,
                                                                                   capsys):
    work = tmp_path / "work"
    workspace.seed(work)
    monkeypatch.setenv("KIT_WORK_DIR", str(work))
    done = [Verdict("1.1", Status.PASSED), Verdict("1.2", Status.NOT_DONE)]

    def interrupted(copies, timeout, report, found):
        found["01_naive_bayes.ipynb"] = done
        raise KeyboardInterrupt

    monkeypatch.setattr(check, "check_workspace", interrupted)
    assert main(["check"]) == 130
    said = capsys.readouterr()
    assert said.err.endswith("kit: interrupted\n") and "Traceback" not in said.err
    assert "01_naive_bayes.ipynb" in said.out and "not done" in said.out
    monkeypatch.setattr(check, "check_notebook", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    assert main(["check", "01"]) == 130
    assert capsys.readouterr().err.endswith("kit: interrupted\n")


def test_kit_check_names_what_it_was_given_and_what_it_could_have_been(tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    workspace.seed(work)
    monkeypatch.setenv("KIT_WORK_DIR", str(work))
    assert main(["check", "1.2"]) == 1
    assert "1.2 is an exercise: `kit check 01` checks its notebook" in capsys.readouterr().err
    for wrong in ("42", "foo"):
        assert main(["check", wrong]) == 1
        said = capsys.readouterr().err
        assert f"No notebook '{wrong}' in your workspace" in said and "its notebooks are 00, 01," in said
    assert main(["check", "00"]) == 0
    assert capsys.readouterr().out == "00_data.ipynb has no exercises to check.\n"


def test_an_edited_release_is_named_not_taken_for_a_newer_one(tmp_path, monkeypatch, capsys):
    notebooks = tmp_path / "notebooks"
    shutil.copytree(config.NOTEBOOKS_DIR, notebooks)
    work = tmp_path / "work"
    workspace.seed(work, notebooks)
    edited = notebooks / "03_significance.ipynb"
    nb = nbformat.read(edited, as_version=4)
    nb.cells[0].source += "\n\nmy notes"  # the student worked in notebooks/ by mistake
    nbformat.write(nb, edited)
    states = workspace.seed(work, notebooks)
    said = states[edited.name]
    assert "was edited since the release" in said and "newer release" not in said
    with pytest.raises(KitError, match=r"03_significance.ipynb was edited since the release .*git checkout"):
        check.released_for(work / edited.name, notebooks)
    assert check.released_for(work / "01_naive_bayes.ipynb", notebooks) == notebooks / "01_naive_bayes.ipynb"


def test_kit_check_alone_reuses_the_verdicts_of_an_unchanged_copy(tmp_path, monkeypatch, capsys):
    solution = nbformat.read(FIXTURE, as_version=4)
    notebooks = _released(solution, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    stub = release.release_notebook(solution)
    nbformat.write(stub, work / FIXTURE.name)
    first = check.check_workspace(config.notebooks_in(work), timeout=120, notebooks=notebooks, report=True)
    capsys.readouterr()

    def no_run(*args, **kwargs):
        raise AssertionError("an unchanged copy was run again")

    monkeypatch.setattr(check, "check_notebook", no_run)
    again = check.check_workspace(config.notebooks_in(work), timeout=120, notebooks=notebooks, report=True)
    assert [v.status for v in again[FIXTURE.name]] == [v.status for v in first[FIXTURE.name]]
    assert "(unchanged since its last check)" in capsys.readouterr().out
    stub.cells[1].source = "def add(a, b):\n    return a + b"  # the student works on: run again
    nbformat.write(stub, work / FIXTURE.name)
    with pytest.raises(AssertionError, match="run again"):
        check.check_workspace(config.notebooks_in(work), timeout=120, notebooks=notebooks)
    copy, reference = work / FIXTURE.name, notebooks / FIXTURE.name
    key = check.check_key(copy, reference, 120)
    assert check.check_key(copy, reference, 60) != key  # another timeout
    monkeypatch.setenv("KIT_PROFILE", "full" if check.settings.profile() != "full" else "quick")
    assert check.check_key(copy, reference, 120) != key  # another profile
    timed_out = Verdict("0.1", Status.FAILED, "Timeout of 120 seconds exceeded", stopped=True)
    check.remember(copy, key, [timed_out])
    assert check.remembered(copy, key) is None  # a run that stopped is not kept
    raised = [Verdict("0.1", Status.FAILED, "TimeoutError: my own", position=0)]  # the student's error
    check.remember(copy, key, raised)
    assert [v.reason for v in check.remembered(copy, key)] == ["TimeoutError: my own"]
    (work / check.CHECKED_FILE).write_text('{"00_fixture.ipynb": ["garbled"]}')
    assert check.remembered(copy, key) is None
