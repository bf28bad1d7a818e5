"""No input of one student stops the class (K27, item 3).

A class graded as a hostile one would be: a lone surrogate in a written answer, a notebook
file and a student folder whose names are not UTF-8, an added cell whose id holds terminal
escape codes, hidden-check markers typed into a failing exercise cell, an exercise cell that
kills the grading process, a stub's error raised by code whose exercise passed, code the kit
cannot write, and the kit raising on one notebook. Every other student is graded, every
file and every line ``kit grade`` writes is printable, and a second ``kit grade`` with
nothing new runs nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from helpers import cli
from helpers.cli import main
from helpers.course.classroom import classgrade, feedback, gradebook, layout
from helpers.course.classroom.record import Record
from helpers.course.engine import grading, sandbox
from helpers.course.engine.limits import Outcome
from helpers.course.engine.nbval_run import NotebookRun
from helpers.course.engine.verdict import CellResult, Ending, Problem, Status, decide
from helpers.course.notebook import release
from helpers.course.notebook.cells import HIDDEN_BEGIN, HIDDEN_END, exercise_id
from helpers.course.safe_text import REPLACEMENT, printable

FIXTURES = Path(__file__).parent / "fixtures" / "solutions"
NAME = "00_fixture.ipynb"
NOTEBOOK = "00_fixture"
LIMITS = sandbox.Limits(disk_mb=64, memory_mb=1200)
CELL_SECONDS = 30
#: What no file the kit writes, and no line it prints, may hold: control characters (tabs and
#: line breaks aside), escape codes (their ESC or 8-bit CSI), surrogates, reordering marks.
HOSTILE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
ESCAPE_ID = "\x1b[2J\x1b[H"
SURROGATE = "\ud800"
BAD_FILE = os.fsencode(NOTEBOOK) + b"\xff.ipynb"
BAD_FOLDER = b"odd\xff"
KILLER = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
#: Raised by code whose exercise (0.1) is not the one it names (0.2).
NAMES_0_2 = "def add(a, b):\n    raise NotImplementedError('exercise 0.2')\n"
UNWRITABLE = f"def add(a, b):\n    return a + b  # {SURROGATE}\n"
MARKED = f"# {HIDDEN_BEGIN} (typed by the student)\ndef add(a, b):\n    return a + b\nprint(undefined)\n"


# --------------------------------------------------------------------------- the boundary


@pytest.mark.parametrize(("text", "shown"), [
    ("plain text, é, ✓, 学, 😀", "plain text, é, ✓, 学, 😀"),
    ("keeps\ttabs\nand lines\n", "keeps\ttabs\nand lines\n"),
    (f"lone {SURROGATE} surrogate", f"lone {REPLACEMENT} surrogate"),
    ("\udcff from a file name", f"{REPLACEMENT} from a file name"),  # os.fsdecode's undecodable byte
    (b"bytes \xff\xfe not UTF-8", f"bytes {REPLACEMENT}{REPLACEMENT} not UTF-8"),
    (b"caf\xc3\xa9", "café"),
    (f"{ESCAPE_ID}All exercises passed", "All exercises passed"),
    ("\x1b[31mred\x1b[0m \x1b[?25l", "red "),
    ("\x1b]0;a new title\x07kept", "kept"),  # OSC ended by a bell
    ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC ended by ST
    ("\x9b2Jeight-bit CSI", "eight-bit CSI"),
    ("C1 \x85\x9c\x9f controls", "C1  controls"),
    ("over\rwritten", "overwritten"),
    ("bell\x07 backspace\x08 null\x00 delete\x7f", "bell backspace null delete"),
    ("a lone ESC\x1b", "a lone ESC"),
    ("\u202eevil\u202c \u2066isolate\u2069", "evil isolate"),
])
def test_printable_makes_any_text_safe_to_write(text, shown):
    assert printable(text) == shown
    assert not HOSTILE.search(printable(text))
    printable(text).encode("utf-8")  # no surrogate left to raise


def test_a_student_folder_or_record_name_must_be_printable_as_it_is():
    assert layout.is_plain_name("alice") and layout.is_plain_name("José García")
    for odd in (os.fsdecode(BAD_FOLDER), f"bob{ESCAPE_ID}", "carol\r", "dave\u202e", "a\\b"):
        assert not layout.is_plain_name(odd)


def test_a_record_is_stored_and_read_back_printable():
    record = Record("alice", NOTEBOOK, os.fsdecode(BAD_FILE), "0" * 64, "2026-11-26T12:00:00+00:00",
                    note=f"graded {ESCAPE_ID}", problem=Problem.NOT_MERGED,
                    problem_line=f"could not be graded ({SURROGATE})")
    stored = json.loads(json.dumps(record.to_json()))
    assert stored["file"] == f"{NOTEBOOK}{REPLACEMENT}.ipynb" and stored["note"] == "graded "
    assert record.as_stored().problem_line == f"could not be graded ({REPLACEMENT})"
    raw = {**stored, "note": f"\x1b[2J{SURROGATE}"}  # a record another kit wrote, or edited
    assert Record.from_json(raw).note == REPLACEMENT


def test_kit_grade_s_lines_are_printable(capsys):
    task = classgrade.Task(f"eve{ESCAPE_ID}", NOTEBOOK, "subs", "sols", 1.0)
    record = Record("eve", NOTEBOOK, NAME, "0" * 64, "2026-11-26T12:00:00+00:00",
                    problem=Problem.RUN_FAILED, problem_line=f"stopped \x1b]0;owned\x07{SURROGATE}\r")
    cli._graded_line()(task, record)
    printed = capsys.readouterr().out
    assert printed == f"eve {NOTEBOOK}: 0/0 (stopped {REPLACEMENT})\n"


# --------------------------------------------------------------------------- the decision


def _code(source: str, cell_id: str, **kit) -> nbformat.NotebookNode:
    cell = new_code_cell(source, metadata={"kit": kit} if kit else {})
    cell.id = cell_id
    return cell


def _two_exercises(first: str = "def f(): ...") -> nbformat.NotebookNode:
    """Exercises 1.1 and 1.2, each its cell and a visible check: code cells 0-3."""
    return new_notebook(cells=[
        new_markdown_cell("## Exercise 1.1"), _code(first, "ex1", exercise="1.1"),
        _code("# NBVAL_CHECK_OUTPUT\nprint(f())", "check1", checks="1.1"),
        new_markdown_cell("## Exercise 1.2"), _code("def g(): ...", "ex2", exercise="1.2"),
        _code("# NBVAL_CHECK_OUTPUT\nprint(g())", "check2", checks="1.2")])


def _passed(*numbers: int) -> dict[int, CellResult]:
    return {number: CellResult(number, Ending.PASSED) for number in numbers}


STUB_12 = "NotImplementedError: exercise 1.2 not done yet"


def test_blocked_by_an_exercise_only_while_it_has_not_passed():
    raised = {1: CellResult(1, Ending.RAISED, STUB_12, stub="1.2", traceback="in f\nraise ...")}
    after_a_pass = {v.exercise: v for v in decide(_two_exercises(), _passed(0, 2, 3) | raised)}
    assert after_a_pass["1.2"].passed
    failed = after_a_pass["1.1"]
    assert failed.status is Status.FAILED and failed.position == 1
    assert failed.reason == f"{STUB_12} (raised by your code: exercise 1.2 passed)"
    assert failed.traceback == "in f\nraise ..."  # a failure is explained, a block is not
    stub_12 = {2: CellResult(2, Ending.RAISED, STUB_12, stub="1.2")}
    still_a_stub = {v.exercise: v for v in decide(_two_exercises(), _passed(0, 3) | raised | stub_12)}
    assert (still_a_stub["1.1"].status, still_a_stub["1.1"].reason) == (Status.BLOCKED,
                                                                        "blocked by 1.2 (not done yet)")
    assert still_a_stub["1.2"].status is Status.NOT_DONE


def test_a_name_left_undefined_by_an_exercise_that_passed_does_not_block():
    missing = {1: CellResult(1, Ending.RAISED, "NameError: name 'g' is not defined", waits_for="1.2")}
    verdict = decide(_two_exercises(), _passed(0, 2, 3) | missing)[0]
    assert verdict.status is Status.FAILED and "exercise 1.2 passed" in verdict.reason


def test_hidden_check_markers_typed_in_a_failing_exercise_cell_are_the_student_s_code():
    typed = _two_exercises(f"# {HIDDEN_BEGIN}\ndef f(): ...\nraise ValueError('mine')\n# {HIDDEN_END}?")
    raised = {0: CellResult(0, Ending.RAISED, "ValueError: mine", where="line 3: raise ValueError('mine')")}
    first, second = decide(typed, raised | _passed(1, 2, 3))
    assert first.status is Status.FAILED and not first.hidden
    assert first.reason == "ValueError: mine (line 3: raise ValueError('mine'))"
    assert second.passed


@pytest.mark.parametrize("problem", list(Problem))
def test_only_the_grader_s_own_failure_is_graded_again(problem):
    assert problem.regrade is (problem is Problem.NOT_STARTED)


def _outcome(returncode: int) -> Outcome:
    return Outcome(returncode=returncode, seconds=1.0, cpu_seconds=1.0, peak_memory_mb=1.0,
                   timed_out=False, output="", report=b"")


@pytest.mark.parametrize(("results", "returncode", "whose"), [
    ({}, -9, Problem.RUN_FAILED),                 # killed by its code before any cell reported
    ({}, 128 + 9, Problem.RUN_FAILED),            # the same, as bubblewrap reports it
    (_passed(0), 4, Problem.RUN_FAILED),          # pytest died after the notebook's code ran
    ({}, 4, Problem.NOT_STARTED),                 # pytest could not run the notebook at all
    ({}, 2, Problem.RUN_FAILED),                  # interrupted: its code sent SIGINT to pytest
])
def test_a_run_that_died_is_the_submission_s_once_its_code_ran_or_killed_it(results, returncode, whose):
    run = NotebookRun(results, Problem.RUN_FAILED, "grading stopped", _outcome(returncode))
    assert classgrade._whose(run) is whose


# --------------------------------------------------------------------------- a hostile class


def _answered(solution: nbformat.NotebookNode, stub: nbformat.NotebookNode,
              **sources: str) -> nbformat.NotebookNode:
    """The released stub with the solution's exercise cells, or the ``sources`` given by
    exercise (``ex_0_1="..."``)."""
    notebook = nbformat.from_dict(stub)
    solved = {exercise_id(cell): cell.source for cell in solution.cells if exercise_id(cell)}
    for cell in notebook.cells:
        exercise = exercise_id(cell)
        if exercise:
            cell.source = sources.get(f"ex_{exercise.replace('.', '_')}", solved[exercise])
    return notebook


def _hand_in(subs: Path, student: str | bytes, notebook: nbformat.NotebookNode,
             name: str | bytes = NAME) -> None:
    """Write a notebook as JSON with every non-ASCII character escaped (``\\ud800`` too, as
    a JSON file may hold it), under names that may be any bytes."""
    folder = os.path.join(os.fsencode(subs), os.fsencode(student))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, os.fsencode(name)), "w", encoding="ascii") as out:
        json.dump(notebook, out, ensure_ascii=True)


def _hostile_class(subs: Path, solution: nbformat.NotebookNode) -> None:
    stub = release.release_notebook(solution)
    _hand_in(subs, "correct", _answered(solution, stub))
    answered = _answered(solution, stub)
    for cell in answered.cells:
        if cell.cell_type == "markdown" and release.ANSWER_PLACEHOLDER in cell.source:
            cell.source = cell.source.replace(release.ANSWER_PLACEHOLDER, f"a lone {SURROGATE} half")
    _hand_in(subs, "surrogate", answered)
    _hand_in(subs, "badname", _answered(solution, stub), BAD_FILE)
    _hand_in(subs, BAD_FOLDER, _answered(solution, stub))
    escaped = _answered(solution, stub)
    added = new_code_cell("import numpy as np\nnp.allclose = lambda *a, **k: True")
    added.id = ESCAPE_ID
    escaped.cells.insert(2, added)
    _hand_in(subs, "escaper", escaped)
    _hand_in(subs, "marker", _answered(solution, stub, ex_0_1=MARKED))
    _hand_in(subs, "killer", _answered(solution, stub, ex_0_2=KILLER))
    _hand_in(subs, "names", _answered(solution, stub, ex_0_1=NAMES_0_2))
    _hand_in(subs, "blocked", _answered(solution, stub, ex_0_1=NAMES_0_2, ex_0_2=_exercise(stub, "0.2")))
    _hand_in(subs, "unwritable", _answered(solution, stub, ex_0_1=UNWRITABLE))
    crasher = _answered(solution, stub)
    crasher.metadata["crash_the_kit"] = True
    _hand_in(subs, "crasher", crasher)
    _hand_in(subs, "unrendered", _answered(solution, stub))


def _exercise(notebook: nbformat.NotebookNode, exercise: str) -> str:
    return next(cell.source for cell in notebook.cells if exercise_id(cell) == exercise)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, classgrade.ClassGrading, str, Path]:
    subs, solutions = tmp_path_factory.mktemp("submissions"), tmp_path_factory.mktemp("solutions")
    solution = nbformat.read(FIXTURES / NAME, as_version=4)
    nbformat.write(solution, solutions / NAME)
    _hostile_class(subs, solution)
    grade_notebook, render_markdown = grading.grade_notebook, feedback.render_markdown

    def crashing(solution, reference, submission, *args, **kwargs):
        if submission.metadata.get("crash_the_kit"):
            raise RuntimeError("the kit's own bug, met on this notebook only")
        return grade_notebook(solution, reference, submission, *args, **kwargs)

    def unrendered(record, *args, **kwargs):
        if record.student == "unrendered" and record.problem is Problem.NONE:
            raise ValueError("a record this kit cannot render")
        return render_markdown(record, *args, **kwargs)

    told = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KIT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
        patch.setattr(grading, "grade_notebook", crashing)
        patch.setattr(feedback, "render_markdown", unrendered)
        with contextlib.redirect_stderr(told):
            graded = classgrade.grade(subs, solutions, jobs=2, timeout=CELL_SECONDS, limits=LIMITS)
        yield subs, graded, told.getvalue(), solutions


def _record(subs: Path, student: str) -> Record:
    record = gradebook.read_record(subs, student, NOTEBOOK)
    assert record is not None, f"{student} has no record"
    return record


def _statuses(record: Record) -> list[Status]:
    return [verdict.status for verdict in record.exercises]


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_every_student_but_the_odd_folder_is_graded(hostile):
    subs, graded, told, _ = hostile
    students = {"correct", "surrogate", "badname", "escaper", "marker", "killer", "names", "blocked",
                "unwritable", "crasher", "unrendered"}
    assert {record.student for record in graded.graded} == students
    assert {record.student for record in graded.records} == students
    assert repr(os.fsdecode(BAD_FOLDER)) in told and "rename it" in told
    assert classgrade.odd_folders(subs) == [line for line in told.splitlines() if "is not graded" in line]
    assert _statuses(_record(subs, "correct")) == [Status.PASSED, Status.PASSED]


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_lone_surrogate_answer_is_written_replaced(hostile):
    subs, graded, _, _ = hostile
    assert _statuses(_record(subs, "surrogate")) == [Status.PASSED, Status.PASSED]
    assert [notebook for notebook, _ in graded.sheets] == [NOTEBOOK]
    sheet = layout.sheet_path(subs, NOTEBOOK).read_text(encoding="utf-8")
    page = layout.sheet_path(subs, NOTEBOOK, ".html").read_text(encoding="utf-8")
    assert f"a lone {REPLACEMENT} half" in sheet and f"a lone {REPLACEMENT} half" in page


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_file_name_that_is_not_utf8_is_graded_and_named_printable(hostile):
    record = _record(hostile[0], "badname")
    assert record.file == f"{NOTEBOOK}{REPLACEMENT}.ipynb" and REPLACEMENT in record.note
    assert _statuses(record) == [Status.PASSED, Status.PASSED]


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_typed_hidden_check_markers_fail_only_their_own_exercise(hostile):
    record = _record(hostile[0], "marker")
    assert record.problem is Problem.NONE
    assert _statuses(record) == [Status.FAILED, Status.PASSED]
    assert "NameError" in record.exercises[0].reason


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_killed_run_keeps_what_passed_before_it_and_is_final(hostile):
    record = _record(hostile[0], "killer")
    assert record.problem is not Problem.NONE and not record.problem.regrade
    assert _statuses(record) == [Status.PASSED, Status.FAILED] and record.exercises[1].stopped


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_stub_s_error_naming_an_exercise_that_passed_fails_instead_of_blocking(hostile):
    subs = hostile[0]
    names = _record(subs, "names")
    assert _statuses(names) == [Status.FAILED, Status.PASSED]
    assert "exercise 0.2 passed" in names.exercises[0].reason
    assert _statuses(_record(subs, "blocked")) == [Status.BLOCKED, Status.NOT_DONE]


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize(("student", "error"), [
    ("unwritable", "UnicodeEncodeError"),  # code no UTF-8 file (nor kernel) can take
    ("crasher", "RuntimeError: the kit's own bug"),  # the kit raised while grading it
    ("unrendered", "ValueError: a record this kit cannot render"),  # and while writing its record
])
def test_a_notebook_the_kit_raised_on_gets_a_record_that_says_so(hostile, student, error):
    record = _record(hostile[0], student)
    assert record.problem is Problem.NOT_MERGED and not record.problem.regrade
    assert record.problem_line.startswith(f"{classgrade.NOT_GRADED} ({error}")
    assert record.file == NAME and record.submission_sha256 is not None
    assert all(path.is_file() for path in layout.feedback_paths(hostile[0], student, NOTEBOOK))


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_an_escape_coded_cell_id_is_flagged_printable(hostile):
    record = _record(hostile[0], "escaper")
    flags = "; ".join(flag for verdict in record.exercises for flag in verdict.flags)
    assert flags and not HOSTILE.search(flags)


def _texts(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in (key, *_texts(item))]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return []


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_no_file_the_kit_writes_holds_anything_unprintable(hostile):
    subs = hostile[0]
    assert main(["grade", str(subs), "--summary"]) == 0
    assert main(["grade", str(subs), "--feedback-only"]) == 0
    written = [layout.grades_path(subs), layout.summary_path(subs), layout.sheet_path(subs, NOTEBOOK),
               layout.sheet_path(subs, NOTEBOOK, ".html"),
               *(path for path in layout.feedback_root(subs).rglob("*") if path.suffix in (".md", ".html"))]
    assert len(written) == 4 + 2 * 11
    for path in written:
        text = path.read_bytes().decode("utf-8")  # strictly: no surrogate could have been written
        assert not HOSTILE.search(text), path
    for path in layout.records_root(subs).rglob("*.json"):
        texts = _texts(json.loads(path.read_text(encoding="utf-8")))
        assert not [text for text in texts if HOSTILE.search(text)], path


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_nothing_kit_grade_prints_carries_an_escape_code(hostile, capsys):
    assert main(["grade", str(hostile[0]), "--summary"]) == 0
    printed = capsys.readouterr()
    assert "flagged for review" in printed.out and "escaper" in printed.out
    assert not HOSTILE.search(printed.out + printed.err)


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_second_kit_grade_with_nothing_new_runs_nothing(hostile):
    subs, first, _, solutions = hostile
    before = {record.student: record.graded_at for record in gradebook.read_records(subs)}
    with contextlib.redirect_stderr(io.StringIO()):
        again = classgrade.grade(subs, solutions, jobs=2, timeout=CELL_SECONDS, limits=LIMITS)
    assert again.graded == []
    assert {record.student: record.graded_at for record in gradebook.read_records(subs)} == before
    assert again.table.equals(first.table)
