"""Verdicts as data: the plugin's cell results, the one decision, and how readers render it."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from helpers.course.engine import nbval_run
from helpers.course.engine.nbval_plugin import _raised_result
from helpers.course.engine.verdict import (
    EXERCISE_CELL,
    HIDDEN_CODE,
    CellResult,
    Ending,
    Status,
    Verdict,
    decide,
    differs_line,
)
from helpers.course.engine.wording import describe
from helpers.course.notebook.cells import Exercise, is_hidden
from helpers.course.notebook.compare import Difference

HIDDEN = "# NBVAL_CHECK_OUTPUT\n### BEGIN HIDDEN CHECKS\nprint(1)\n### END HIDDEN CHECKS"


def _code(source: str, cell_id: str, **kit) -> object:
    cell = new_code_cell(source, metadata={"kit": kit} if kit else {})
    cell.id = cell_id
    return cell


def notebook():
    """Exercises 1.1-1.3, each its cell and a visible check (code cells 0-5); 1.3 also has a
    hidden check (cell 6); then a cell the student added (cell 7)."""
    cells = []
    for n in (1, 2, 3):
        cells += [new_markdown_cell(f"## Exercise 1.{n}"),
                  _code(f"def f{n}(): ...", f"ex{n}", exercise=f"1.{n}"),
                  new_markdown_cell(f"### Check 1.{n}"),
                  _code(f"# NBVAL_CHECK_OUTPUT\nprint(f{n}())", f"check{n}", checks=f"1.{n}")]
    cells += [_code(HIDDEN, "hidden3", checks="1.3"), _code("x = 1 / 0", "mine")]
    return new_notebook(cells=cells)


def passed(*numbers: int) -> dict[int, CellResult]:
    return {n: CellResult(n, Ending.PASSED) for n in numbers}


def raised(number: int, message: str, **fields) -> dict[int, CellResult]:
    return {number: CellResult(number, Ending.RAISED, message, **fields)}


STUB_11 = "NotImplementedError: exercise 1.1 not done yet"
BLOCKED_BY_11 = "blocked by 1.1 (not done yet)"


def by_exercise(results, **kwargs) -> dict[str, Verdict]:
    return {v.exercise: v for v in decide(notebook(), results, **kwargs)}


def test_every_exercise_passes_when_every_cell_does():
    verdicts = by_exercise(passed(*range(8)), points={"1.2": 2.0}, flags={"1.3": ["reads a file"]})
    assert [v.status for v in verdicts.values()] == [Status.PASSED] * 3
    assert verdicts["1.1"].title == "Exercise 1.1" and verdicts["1.2"].points == 2.0
    assert verdicts["1.3"].flags == ("reads a file",)
    assert verdicts["1.3"].record()["flags"] == ["reads a file"]


def test_its_own_stub_is_not_done_and_another_s_blocks():
    verdicts = by_exercise({**raised(0, STUB_11, stub="1.1"), **passed(1, 2),
                            **raised(3, STUB_11, stub="1.1"), **passed(4, 5, 6)})
    assert (verdicts["1.1"].status, verdicts["1.1"].reason) == (Status.NOT_DONE, STUB_11)
    assert (verdicts["1.2"].status, verdicts["1.2"].reason) == (Status.BLOCKED, BLOCKED_BY_11)
    assert verdicts["1.2"].record()["check"] == ""  # nothing of a blocked exercise is explained


def test_a_stub_of_exercise_1_1_is_not_exercise_1_10s():
    """Statuses come from the exercise ids, not from a prefix of a message."""
    verdicts = by_exercise({**raised(0, "NotImplementedError: exercise 1.10 not done yet", stub="1.10"),
                            **passed(*range(1, 8))})
    verdict = verdicts["1.1"]
    assert (verdict.status, verdict.reason) == (Status.BLOCKED, "blocked by 1.10 (not done yet)")


@pytest.mark.parametrize("waits_for, stubs, expected", [
    # a name no stub left undefined (a typo) is the student's error, stubs before it or not
    ("", ("1.1", "1.2"), (Status.FAILED, "NameError: name 'model' is not defined")),
    ("1.1", ("1.1", "1.2"), (Status.BLOCKED, BLOCKED_BY_11)),  # the kernel said which
    ("", (), (Status.FAILED, "NameError: name 'model' is not defined")),
])
def test_a_name_a_stopped_cell_did_not_define_is_put_down_to_its_stub(waits_for, stubs, expected):
    stopped = {0: "1.1", 2: "1.2"}
    results = passed(*range(8))
    for number, exercise in stopped.items():
        if exercise in stubs:
            results |= raised(number, f"NotImplementedError: exercise {exercise} not done yet", stub=exercise)
    results |= raised(5, "NameError: name 'model' is not defined", waits_for=waits_for)
    verdict = by_exercise(results)["1.3"]
    assert (verdict.status, verdict.reason) == expected


def test_a_name_missing_after_its_own_stub_is_not_done():
    results = passed(*range(8)) | raised(5, "NameError: name 'model' is not defined", waits_for="1.3")
    verdict = by_exercise(results)["1.3"]
    assert (verdict.status, verdict.reason) == (Status.NOT_DONE, STUB_11.replace("1.1", "1.3"))


def test_a_failure_says_where_and_keeps_the_student_s_traceback():
    results = passed(*range(8)) | raised(1, "ZeroDivisionError: division by zero",
                                         where="in f1, line 3: 1 / 0",
                                         traceback="\n".join(f"line {n}" for n in range(60)))
    verdict = by_exercise(results)["1.1"]
    assert verdict.status is Status.FAILED and verdict.position == 1 and verdict.where == "Check 1.1"
    assert verdict.reason == "ZeroDivisionError: division by zero (in f1, line 3: 1 / 0)"
    assert verdict.traceback.splitlines() == [f"line {n}" for n in range(20, 60)]  # the last 40
    record = verdict.record()
    assert (record["status"], record["passed"], record["check"]) == ("failed", False, "Check 1.1")
    exercise_cell = by_exercise(passed(*range(8)) | raised(0, "ValueError: no"))["1.1"]
    assert exercise_cell.position == 0 and exercise_cell.record()["check"] == EXERCISE_CELL


def test_an_output_difference_shows_both_lines_and_both_environments():
    difference = Difference(1, "p = 0.1824", "p = 0.19", "0.19 where 0.1824 was expected (allowed ± 0.0003)",
                            "stdout")
    environments = ("reference outputs written with: openblas Haswell (1 threads)",
                    "this run uses:                  openblas Prescott (1 threads)")
    results = passed(*range(8)) | {3: CellResult(3, Ending.DIFFERS, difference=difference,
                                                 environments=environments)}
    verdict = by_exercise(results)["1.2"]
    assert verdict.reason == (
        "output differs from the reference: stdout, line 1: 0.19 where 0.1824 was expected "
        "(allowed ± 0.0003); expected (reference): p = 0.1824; got (your output):    p = 0.19 "
        "[reference outputs written with: openblas Haswell (1 threads); "
        "this run uses:                  openblas Prescott (1 threads)]")
    assert (verdict.expected, verdict.got) == ("p = 0.1824", "p = 0.19")
    assert describe(verdict) == (
        "✗ 1.2  Check 1.2\n"
        "    output differs from the reference: stdout, line 1: 0.19 where 0.1824 was expected "
        "(allowed ± 0.0003)\n"
        "    expected (reference): p = 0.1824\n    got (your output):    p = 0.19\n"
        f"    ({'; '.join(environments)})")
    missing = Difference(0, "", "", "expected output of kind text/plain is missing")
    assert differs_line(missing) == \
        "output differs from the reference: expected output of kind text/plain is missing"


@pytest.mark.parametrize("result, reason", [
    (CellResult(6, Ending.DIFFERS, difference=Difference(1, "1", "2", "2 where 1 was expected", "stdout")),
     "output differs from the reference (a hidden check)"),
    (CellResult(6, Ending.RAISED, "KeyError: 'secret_answer'", where="line 3: print(secret['x'])",
                traceback="KeyError: 'secret_answer'"), "KeyError in a hidden check"),
])
def test_nothing_of_a_hidden_check_is_shown(result, reason):
    verdict = by_exercise(passed(*range(8)) | {6: result})["1.3"]
    assert verdict.hidden and verdict.reason == reason
    assert (verdict.expected, verdict.got, verdict.traceback, verdict.difference) == ("", "", "", None)
    assert "secret" not in describe(verdict)


def test_a_hidden_check_s_stated_intent_is_all_that_is_shown_of_it():
    nb = notebook()
    nb.cells[-2].source = nb.cells[-2].source.replace(
        "### BEGIN HIDDEN CHECKS\n",
        "### BEGIN HIDDEN CHECKS\n# Intent: unbalanced classes\n# secret: 0.1824\n")
    differs = CellResult(6, Ending.DIFFERS, difference=Difference(1, "0.1824", "2", "why", "stdout"))
    [*_, verdict] = decide(nb, passed(*range(8)) | {6: differs})
    assert verdict.reason == "output differs from the reference (a hidden check: unbalanced classes)"
    raised = CellResult(6, Ending.RAISED, "KeyError: 'secret'", traceback="KeyError: 'secret'")
    [*_, verdict] = decide(nb, passed(*range(8)) | {6: raised})
    assert verdict.reason == "KeyError in a hidden check (unbalanced classes)"
    assert "secret" not in describe(verdict) and "0.1824" not in describe(verdict)


SECRET_CHECK = '_mine = nb_fit(_X, _y, alpha=0.5)'


@pytest.mark.parametrize("leak", [
    f"ValueError: {SECRET_CHECK}",  # the line raised as it is
    "ValueError: " + repr(f"# Intent: x\n{SECRET_CHECK}\nprint(_mine)"),  # the cell, repr'd into one line
    "ValueError: " + " ".join(SECRET_CHECK.replace("=", " = ").split()),  # re-spaced
])
def test_no_line_of_a_hidden_check_reaches_the_feedback_through_student_output(leak):
    # student code can read the hidden cell that calls it, then raise or print it later
    nb = notebook()
    nb.cells[-2].source = nb.cells[-2].source.replace("print(1)", f"{SECRET_CHECK}\nprint(_mine)")
    traceback = f"Traceback (most recent call last):\n  Cell In[3], line 1\n{leak}"
    raised_it = decide(nb, passed(*range(8)) | raised(2, leak, traceback=traceback))[1]
    printed_it = decide(nb, passed(*range(8)) | {3: CellResult(3, Ending.DIFFERS, difference=Difference(
        1, "1", leak, f"'{leak}' where '1' was expected", "stdout"))})[1]
    for verdict in (raised_it, printed_it):
        shown = json.dumps(verdict.record()) + describe(verdict)
        assert "nb_fit" not in shown and HIDDEN_CODE in shown, shown
    if leak.endswith(SECRET_CHECK):  # the line found as it is: the rest of the error stays
        assert raised_it.reason == f"ValueError: {HIDDEN_CODE}"


def test_every_hidden_check_of_the_course_states_its_intent():
    from helpers.course.config import SOLUTIONS_DIR, notebooks_in
    from helpers.course.notebook.cells import hidden_intent

    hidden = [(path.name, cell) for path in notebooks_in(SOLUTIONS_DIR)
              for cell in nbformat.read(path, as_version=4).cells if is_hidden(cell)]
    assert len(hidden) >= 20
    assert not [(name, cell.id) for name, cell in hidden if not hidden_intent(cell.source)]


def test_flags_reach_the_exercise_s_verdict_whether_or_not_it_passed():
    verdicts = by_exercise(passed(*range(8)), flags={"1.3": ["reads a file"]})
    assert verdicts["1.3"].passed and verdicts["1.3"].flags == ("reads a file",)
    assert verdicts["1.2"].flags == ()


def test_an_added_cell_that_raised_first_is_named():
    results = passed(*range(7)) | raised(7, "ZeroDivisionError: division by zero")
    assert by_exercise(results, added={"mine"})["1.3"].passed  # it ran after every check
    nb = notebook()
    nb.cells.insert(1, nb.cells.pop())  # now code cell 0, before 1.1's cells
    results = raised(0, "ZeroDivisionError: division by zero") | passed(1, 3, 4, 5, 6, 7) | raised(
        2, "NameError: name 'x' is not defined")
    [first, *_] = decide(nb, results, added={"mine"})
    assert first.reason == ("NameError: name 'x' is not defined (earlier, your added cell 'x = 1 / 0' raised "
                            "ZeroDivisionError: division by zero)")


def test_a_run_that_reported_nothing_fails_every_exercise_with_its_problem():
    verdicts = decide(notebook(), {}, "grading stopped: the notebook ran out of time (600 s)")
    assert {(v.status, v.reason, v.position, v.stopped) for v in verdicts} == {
        (Status.FAILED, "grading stopped: the notebook ran out of time (600 s)", None, True)}
    unreported = by_exercise(passed(0, 1, 2))["1.2"]
    assert (unreported.status, unreported.reason, unreported.position) == (Status.FAILED, "not run", 1)
    assert unreported.stopped  # a cell that never ran is a stop, not the student's error


def test_only_a_stop_is_a_stopped_verdict():
    timed_out = {3: CellResult(3, Ending.STOPPED, "Timeout of 30 seconds exceeded")}
    assert by_exercise(passed(*range(8)) | timed_out)["1.2"].stopped
    own_error = by_exercise(passed(*range(8)) | raised(3, "TimeoutError: mine"))["1.2"]
    assert own_error.status is Status.FAILED and not own_error.stopped
    assert not any(v.stopped for v in decide(notebook(), passed(*range(8))))


def test_a_stopped_run_keeps_the_exercises_that_ended_before_it():
    stopped = "grading stopped: it used more than 6144 MB of memory in all"
    verdicts = decide(notebook(), passed(0, 1, 2), stopped)  # 1.2's check (cell 3) never ended
    assert [(v.exercise, v.status, v.reason, v.stopped) for v in verdicts] == [
        ("1.1", Status.PASSED, "", False), ("1.2", Status.FAILED, stopped, True),
        ("1.3", Status.FAILED, "not run: grading stopped in 1.2", True)]
    after_the_last = decide(notebook(), passed(*range(7)), stopped)  # a fork bomb in the added cell
    assert all(v.passed for v in after_the_last)


def _two_checks() -> object:
    """notebook() with a second visible check of 1.2 (cell 4; 1.3's cells move up one)."""
    nb = notebook()
    at = next(i for i, cell in enumerate(nb.cells) if cell.get("id") == "check2") + 1
    nb.cells.insert(at, _code("# NBVAL_CHECK_OUTPUT\nprint(f2() or 2)", "check2b", checks="1.2"))
    return nb


@pytest.mark.parametrize(("results", "status", "partial"), [
    (passed(0, 1, 2, 4), Status.FAILED, 1.0),      # its first check failed, its second passed
    (passed(0, 1, 2, 3), Status.FAILED, 2.0),      # its first check passed, its second failed
    (passed(0, 1, 3, 4), Status.FAILED, 0.0),      # its own cell did not run: nothing
    (passed(0, 1, 2, 3, 4), Status.PASSED, 0.0),   # passed: all its points, no partial
    ({**passed(1, 3, 4), **raised(0, STUB_11, stub="1.1"), **raised(2, STUB_11, stub="1.1")},
     Status.BLOCKED, 0.0),                         # blocked by 1.1, still a stub: nothing
    ({**passed(0, 1, 3, 4), **raised(2, STUB_11, stub="1.1")}, Status.FAILED, 0.0),  # 1.1 passed: 1.2 raised
])
def test_checks_that_declare_points_give_partial_credit_when_the_exercise_cell_ran(results, status, partial):
    nb = _two_checks()
    decided = decide(nb, results, points={"1.2": 3.0}, check_points={"check2": 2.0, "check2b": 1.0})
    verdict = {v.exercise: v for v in decided}["1.2"]
    assert (verdict.status, verdict.partial) == (status, partial)
    assert verdict.earned == (3.0 if status is Status.PASSED else partial)
    back = Verdict.from_record(json.loads(json.dumps(verdict.record())))
    assert (back.partial, back.earned) == (verdict.partial, verdict.earned)
    # what the instructor awards replaces it; without declared points nothing is partial
    assert replace(verdict, awarded=0.5).earned == 0.5
    assert {v.exercise: v for v in decide(nb, results)}["1.2"].partial == 0.0


def test_a_stop_keeps_the_points_of_the_checks_that_passed_before_it():
    stopped = "grading stopped: it used more than 6144 MB of memory in all"
    decided = decide(_two_checks(), passed(0, 1, 2, 3), stopped, check_points={"check2": 2.0, "check2b": 1.0})
    verdict = {v.exercise: v for v in decided}["1.2"]  # its second check never ended
    assert (verdict.status, verdict.reason, verdict.earned) == (Status.FAILED, stopped, 2.0)


def test_a_record_reads_back_as_the_same_verdict():
    verdict = by_exercise(passed(*range(8)) | raised(3, "ValueError: x", where="line 1: f2()"),
                          flags={"1.2": ["a", "b"]})["1.2"]
    back = Verdict.from_record(json.loads(json.dumps(verdict.record())))
    assert back == verdict
    assert (back.status, back.flags) == (Status.FAILED, ("a", "b"))
    assert back.reason == "ValueError: x (line 1: f2())"


def test_the_plugin_reads_an_exception_where_the_notebook_raised_it():
    traceback = ("ZeroDivisionError        Traceback (most recent call last)\n"
                 "Cell In[1], line 2\n      1 # NBVAL_CHECK_OUTPUT\n----> 2 print(add(2, 3))\n\n"
                 "Cell In[1], line 3, in add(a, b)\n      1 def add(a, b):\n      2     c = a + b\n"
                 "----> 3     return c / 0\n\nZeroDivisionError: division by zero")
    result = _raised_result(4, "ZeroDivisionError", "division by zero", traceback)
    assert result.error() == "ZeroDivisionError: division by zero (in add, line 3: return c / 0)"
    stub = _raised_result(4, "NotImplementedError", "exercise 0.1", STUB_11.replace("1.1", "0.1"))
    assert (stub.error(), stub.stub, stub.where) == (STUB_11.replace("1.1", "0.1"), "0.1", "")
    told = ("NameError: name 'model' is not defined: the cell that defines it stopped on exercise 1.1, "
            "not done yet when it ran; run that cell again once it is done")
    waiting = _raised_result(5, "NameError", "name 'model' is not defined", told)
    assert (waiting.exception, waiting.waits_for, waiting.message) == ("NameError", "1.1", told)
    own = _raised_result(5, "NotImplementedError", "exercise 0.1 is hard",
                         "NotImplementedError: exercise 0.1 is hard")
    assert own.stub == ""  # a student's own NotImplementedError is no stub


def test_a_report_is_read_as_data_line_by_line_until_a_line_is_not_a_result():
    result = CellResult(3, Ending.DIFFERS, difference=Difference(2, "a", "b", "why", "stdout"),
                        environments=("x", "y"))
    lines = [json.dumps(r.to_json()).encode() for r in (CellResult(3, Ending.PASSED), result,
                                                         CellResult(4, Ending.PASSED))]
    report = b"\n".join(lines) + b"\n"
    assert nbval_run.read_report(report) == {3: result, 4: CellResult(4, Ending.PASSED)}
    assert nbval_run.read_report(report[:-9]) == {3: result}  # killed while writing cell 4
    forged = report + json.dumps(CellResult(3, Ending.PASSED).to_json()).encode() + b"\n"
    assert nbval_run.read_report(forged)[3] == result  # a failure is never turned into a pass
    for junk in (b"", b"<testsuites/>", b'{"number": 1, "ending": "won"}', b"[]", b'{"cells": []}'):
        assert nbval_run.read_report(junk) == {}


def test_control_characters_from_student_output_never_reach_a_verdict():
    hostile = "\x1b[31mp = 0.19\x1b[0m\x07\x1b]0;title\x07"
    difference = Difference(1, "p = 0.1824", hostile, "'p' where ...", "stdout")
    results = passed(*range(8)) | {1: CellResult(1, Ending.DIFFERS, difference=difference)} | raised(
        3, "ValueError: \x1b[1mbold\x1b[0m\x00", traceback="\x1b[0;31mValueError\x1b[0m: bold")
    verdicts = by_exercise(results)
    for verdict in (verdicts["1.1"], verdicts["1.2"]):
        shown = [verdict.reason, verdict.expected, verdict.got, verdict.traceback, describe(verdict)]
        assert not [text for text in shown if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text)], shown
    assert verdicts["1.1"].got.startswith("p = 0.19") and verdicts["1.2"].reason == "ValueError: bold"


def test_repeated_exercises_keep_their_own_titles():
    nb = notebook()
    nb.cells[0].source, nb.cells[4].source = "## First", "## Second"
    again = [Exercise("1.1", ("ex1", "check1")), Exercise("1.1", ("ex2", "check2"))]
    assert [v.title for v in decide(nb, passed(*range(8)), items=again)] == ["First", "Second"]


def test_the_libraries_are_named_only_when_they_differ_from_the_reference(monkeypatch):
    from helpers.course.notebook import environment

    here = {"blas": "openblas Prescott (1 threads)", "numpy": "2.4.6"}
    monkeypatch.setattr(environment, "current", lambda: here)
    assert environment.mismatch_lines(None) == environment.mismatch_lines(here) == ()
    written, run = environment.mismatch_lines({**here, "blas": "openblas Haswell (1 threads)"})
    assert written.startswith(environment.REFERENCE_LABEL) and "Haswell" in written
    assert run.startswith(environment.RUN_LABEL) and "Prescott" in run
    assert written.index("openblas") == run.index("openblas")  # the labels are aligned


def test_a_student_s_traceback_names_files_not_the_grader_s_folders():
    import sysconfig

    from helpers.settings import REPO_ROOT

    numpy_file = f"{sysconfig.get_paths()['purelib']}/numpy/_core/fromnumeric.py"
    traceback = (f"File {numpy_file}:57, in _wrapfunc\nFile {REPO_ROOT}/helpers/naive_bayes.py:12\n"
                 "ValueError: shapes (3,) and (4,) not aligned")
    verdict = by_exercise(passed(*range(8)) | raised(3, "ValueError: shapes", traceback=traceback))["1.2"]
    assert "File <site-packages>/numpy/_core/fromnumeric.py:57" in verdict.traceback
    assert "File <kit>/helpers/naive_bayes.py:12" in verdict.traceback
    assert str(REPO_ROOT) not in verdict.traceback
    assert sysconfig.get_paths()["purelib"] not in verdict.traceback
