"""Grading records, grades.csv, the class table and files the kit never overwrites once edited."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pytest

from helpers import owned
from helpers.course.classroom import gradebook, layout, spreadsheet, summaries
from helpers.course.classroom.gradebook import GRADES_COLUMNS
from helpers.course.classroom.record import RECORD_VERSION, Record
from helpers.course.engine.verdict import Problem, Status, Verdict
from helpers.errors import KitError

SOLUTION_SHA = "5" * 64
ERRORS = {"passed": "", "failed": "AssertionError: the check failed",
          "blocked": "blocked by 1.1 (not done yet)", "not done": "exercise 1.1 not done yet"}


def make_exercise(exercise: str = "1.1", status: str = "passed", points: float = 1.0,
                  error: str | None = None, flags: str = "", check: str = "", **changes) -> dict:
    """One exercise of a record, as the grading engine writes it (``Verdict.record``); ``check``
    is the heading of its failing check (its first)."""
    verdict = Verdict(exercise, Status(status), reason=ERRORS[status] if error is None else error,
                      title=f"Exercise {exercise}", points=points, flags=(flags,) if flags else (),
                      where=check, position=1 if check else None)
    return {**verdict.record(), **changes}


def record_json(student: str = "alice", notebook: str = "01_naive_bayes",
                exercises: list[dict] | None = None, **changes) -> dict:
    """A grading record of one student's notebook as it is stored (``record.RECORD_KEYS``)."""
    record = {
        "version": RECORD_VERSION, "student": student, "notebook": notebook, "file": f"{notebook}.ipynb",
        "note": "", "submission_sha256": "a" * 64, "solution_sha256": SOLUTION_SHA,
        "graded_at": "2026-11-23T14:50:00+00:00", "sandbox": "subprocess", "seconds": 41.2,
        "cpu_seconds": 60.3, "peak_memory_mb": 812.5, "problem": "none", "problem_line": "",
        "exercises": exercises if exercises is not None else [make_exercise()],
    }
    return {**record, **changes}


def make_record(student: str = "alice", notebook: str = "01_naive_bayes",
                exercises: list[dict] | None = None, **changes) -> Record:
    """``record_json``'s record, read."""
    return Record.from_json(record_json(student, notebook, exercises, **changes))


def missing_notebook(student: str, notebook: str, ids: list[str]) -> Record:
    """The record of a notebook the student did not hand in."""
    exercises = [make_exercise(i, "failed", error="notebook missing") for i in ids]
    return make_record(student, notebook, exercises, file=None, submission_sha256=None, seconds=None,
                       cpu_seconds=None, peak_memory_mb=None, problem="missing",
                       problem_line="notebook missing")


def class_records() -> list[Record]:
    """alice handed in 01 and 02; bob handed in 01 only (01 is worth 4 points, 02 is worth 1)."""
    return [
        make_record("alice", "01_naive_bayes", [
            make_exercise("1.1", "passed"), make_exercise("1.2", "failed", 2.0),
            make_exercise("1.10", "passed", 0.5, flags="reads the reference outputs")]),
        make_record("alice", "02_logistic", [make_exercise("2.1", "passed")]),
        make_record("bob", "01_naive_bayes", [
            make_exercise("1.1", "not done"), make_exercise("1.2", "blocked", 2.0),
            make_exercise("1.10", "passed", 0.5)]),
        missing_notebook("bob", "02_logistic", ["2.1"]),
    ]


def write_all(folder: Path, records: list[Record]) -> None:
    for record in records:
        gradebook.write_record(folder, record)


# --------------------------------------------------------------------------- records


def test_points_earned_are_the_exercises_points_when_passed_else_zero():
    grades = gradebook.grades_table(class_records())
    assert list(grades.columns) == GRADES_COLUMNS
    alice = grades[(grades.student == "alice") & (grades.notebook == "01_naive_bayes")]
    assert list(alice.exercise) == ["1.1", "1.2", "1.10"]  # 1.10 after 1.2, not before
    assert list(alice.points) == [1.0, 0.0, 0.5]
    assert list(alice.max_points) == [1.0, 2.0, 0.5]
    assert list(alice.status) == ["passed", "failed", "passed"]
    missing = grades[(grades.student == "bob") & (grades.notebook == "02_logistic")].iloc[0]
    assert (missing.file, missing.error, missing.points) == ("", "notebook missing", 0.0)
    assert grades.points.dtype == float and grades.passed.dtype == bool


def test_a_failed_exercise_earns_the_points_of_the_checks_that_passed(tmp_path):
    record = make_record("carol", "01_naive_bayes", [make_exercise("1.2", "failed", 3.0, partial=2.0)])
    gradebook.write_record(tmp_path, record)  # a valid record
    grades = gradebook.grades_table([record])
    assert (grades.points.iloc[0], grades.max_points.iloc[0]) == (2.0, 3.0)


def test_records_round_trip_sorted(tmp_path):
    records = class_records()
    write_all(tmp_path, reversed(records))
    path = layout.record_path(tmp_path, "bob", "02_logistic")
    assert path == tmp_path / ".kit-grading" / "records" / "bob" / "02_logistic.json"
    assert gradebook.read_records(tmp_path) == records
    assert gradebook.read_record(tmp_path, "bob", "02_logistic") == records[3]
    assert gradebook.read_record(tmp_path, "carol", "02_logistic") is None


def test_grades_csv_is_the_merge_of_every_record(tmp_path):
    write_all(tmp_path, class_records())
    assert gradebook.write_grades(tmp_path, gradebook.read_records(tmp_path)) == tmp_path / "grades.csv"
    before = pd.read_csv(tmp_path / "grades.csv", keep_default_na=False, dtype={"exercise": str})

    # bob hands in 01 again and only 01 is regraded: everyone else's rows stay as they were
    regraded = make_record("bob", "01_naive_bayes", [
        make_exercise("1.1", "passed"), make_exercise("1.2", "passed", 2.0),
        make_exercise("1.10", "passed", 0.5)], submission_sha256="b" * 64)
    gradebook.write_record(tmp_path, regraded)
    assert gradebook.write_grades(tmp_path, gradebook.read_records(tmp_path)) == tmp_path / "grades.csv"
    after = pd.read_csv(tmp_path / "grades.csv", keep_default_na=False, dtype={"exercise": str})

    assert list(after.columns) == GRADES_COLUMNS
    assert len(after) == len(before) == 8
    is_bob_01 = (after.student == "bob") & (after.notebook == "01_naive_bayes")
    pd.testing.assert_frame_equal(after[~is_bob_01], before[~is_bob_01])
    assert list(after[is_bob_01].points) == [1.0, 2.0, 0.5]
    assert list(before[is_bob_01].points) == [0.0, 0.0, 0.5]


def test_is_current_needs_the_same_submission_and_solution():
    record = make_record()
    assert gradebook.is_current(record, "a" * 64, SOLUTION_SHA)
    assert not gradebook.is_current(record, "b" * 64, SOLUTION_SHA)  # the student handed in again
    assert not gradebook.is_current(record, "a" * 64, "6" * 64)  # the solution changed
    assert not gradebook.is_current(None, "a" * 64, SOLUTION_SHA)
    missing = missing_notebook("bob", "02_logistic", ["2.1"])
    assert gradebook.is_current(missing, None, SOLUTION_SHA)
    assert not gradebook.is_current(missing, "a" * 64, SOLUTION_SHA)


def test_unusable_records_are_skipped_with_one_line_each(tmp_path, capsys):
    good = make_record("alice")
    gradebook.write_record(tmp_path, good)
    garbled = layout.record_path(tmp_path, "bob", "01_naive_bayes")
    garbled.parent.mkdir(parents=True)
    garbled.write_text('{"version": 1, "student": "bo')
    newer = layout.record_path(tmp_path, "carol", "01_naive_bayes")
    newer.parent.mkdir(parents=True)
    newer.write_text(json.dumps(record_json("carol", version=RECORD_VERSION + 1)))
    elsewhere = layout.record_path(tmp_path, "dave", "01_naive_bayes")
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text(json.dumps(record_json("alice")))  # copied from alice's folder

    assert gradebook.read_records(tmp_path) == [good]
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 3, err
    assert "Traceback" not in err
    for path, line in zip([garbled, newer, elsewhere], lines, strict=True):
        assert str(path) in line
    assert "version" in lines[1]


@pytest.mark.parametrize("change, key", [
    (lambda r: r.pop("solution_sha256"), "solution_sha256"),
    (lambda r: r.update(seconds="41.2"), "seconds"),
    (lambda r: r.update(file=3), "file"),
    (lambda r: r.update(version=1), "version"),  # the kit before typed problems
    (lambda r: r.update(problem="notebook missing"), "problem"),
    (lambda r: r.pop("problem_line"), "problem_line"),
    (lambda r: r.update(student="../alice"), "student"),
    (lambda r: r.update(notebook=""), "notebook"),
    (lambda r: r.update(exercises={"1.1": {}}), "exercises"),
    (lambda r: r["exercises"][0].update(points=True), "points"),
    (lambda r: r["exercises"][0].update(points=-1), "points"),
    (lambda r: r["exercises"][0].update(status="ok"), "status"),
    (lambda r: r["exercises"][0].update(passed=False), "passed"),
    (lambda r: r["exercises"][0].pop("hidden"), "hidden"),
    (lambda r: r["exercises"][0].pop("stopped"), "stopped"),
    (lambda r: r["exercises"][0].update(partial="1"), "partial"),
    (lambda r: r["exercises"][0].update(partial=0.5), "partial"),  # it passed: all its points
    (lambda r: r["exercises"][0].update(status="failed", passed=False, partial=1.5), "partial"),
])
def test_a_bad_record_is_refused_naming_the_key(tmp_path, change, key):
    record = copy.deepcopy(record_json())
    change(record)
    with pytest.raises(KitError, match=f"'{key}'"):
        Record.from_json(record)
    path = layout.record_path(tmp_path, "alice", "01_naive_bayes")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    assert gradebook.read_records(tmp_path) == []  # skipped, with a line on stderr


def test_a_record_round_trips_through_json_with_its_problem():
    record = missing_notebook("bob", "02_logistic", ["2.1"])
    assert record.problem is Problem.MISSING and not record.problem.regrade
    assert Record.from_json(json.loads(json.dumps(record.to_json()))) == record
    assert [problem.regrade for problem in (Problem.NOT_MERGED, Problem.NOT_STARTED, Problem.RUN_FAILED,
                                            Problem.OUT_OF_TIME, Problem.OVER_LIMIT, Problem.NONE)] == \
        [False, True, False, False, False, False]  # only the grader's own failure is graded again


# --------------------------------------------------------------------------- class tables


def test_summary_is_points_per_student_and_notebook():
    table = summaries.summary(gradebook.grades_table(class_records()))
    assert list(table.index) == ["alice", "bob"]
    assert list(table.columns) == ["01_naive_bayes", "02_logistic", "total", "max_total"]
    assert table.loc["alice"].tolist() == [1.5, 1.0, 2.5, 4.5]
    assert table.loc["bob"].tolist() == [0.5, 0.0, 0.5, 4.5]
    assert all(dtype.kind == "f" for dtype in table.dtypes)


def test_a_notebook_without_a_grade_is_blank_in_the_summary():
    grades = gradebook.grades_table(class_records()[:3])  # bob's 02 was never graded
    table = summaries.summary(grades)
    assert pd.isna(table.loc["bob", "02_logistic"])
    assert table.loc["bob", ["total", "max_total"]].tolist() == [0.5, 3.5]


def test_pass_rates_count_each_status():
    rates = summaries.pass_rates(gradebook.grades_table(class_records())).set_index(["notebook", "exercise"])
    assert list(rates.columns) == ["students", "pass_rate", "passed", "failed", "blocked", "not done"]
    assert list(rates.index) == [("01_naive_bayes", "1.1"), ("01_naive_bayes", "1.2"),
                                 ("01_naive_bayes", "1.10"), ("02_logistic", "2.1")]
    assert rates.loc[("01_naive_bayes", "1.1")].tolist() == [2, 0.5, 1, 0, 0, 1]
    assert rates.loc[("01_naive_bayes", "1.2")].tolist() == [2, 0.0, 0, 1, 1, 0]
    assert rates.loc[("01_naive_bayes", "1.10")].tolist() == [2, 1.0, 2, 0, 0, 0]
    assert rates.loc[("02_logistic", "2.1")].tolist() == [2, 0.5, 1, 1, 0, 0]


def test_gradebook_csv_is_one_row_per_student(tmp_path):
    path = summaries.write_summary(tmp_path, gradebook.grades_table(class_records()))
    assert path == tmp_path / "gradebook.csv"
    lines = path.read_text().splitlines()
    assert lines == ["student,01_naive_bayes,02_logistic,total,max_total",
                     "alice,1.5,1.0,2.5,4.5",
                     "bob,0.5,0.0,0.5,4.5"]


def test_flagged_lists_only_rows_with_flags(tmp_path):
    gradebook.write_grades(tmp_path, class_records())
    read_back = pd.read_csv(tmp_path / "grades.csv", dtype={"exercise": str})  # '' comes back NaN
    for grades in (gradebook.grades_table(class_records()), read_back):
        review = summaries.flagged(grades)
        assert list(review.columns) == ["student", "notebook", "exercise", "flags"]
        assert review.values.tolist() == [["alice", "01_naive_bayes", "1.10", "reads the reference outputs"]]


# --------------------------------------------------------------------------- files the kit owns


def test_hand_edited_grades_survive_a_regrade(tmp_path):
    write_all(tmp_path, class_records())
    grades_csv = tmp_path / layout.GRADES_FILE
    gradebook.write_grades(tmp_path, gradebook.read_records(tmp_path))
    edited = grades_csv.read_text().replace("alice,01_naive_bayes,1.2,failed,False,0.0",
                                            "alice,01_naive_bayes,1.2,failed,False,1.5")
    assert edited != grades_csv.read_text()
    grades_csv.write_text(edited)

    gradebook.write_record(tmp_path, make_record("alice", "02_logistic", [make_exercise("2.1", "failed")]))
    written = gradebook.write_grades(tmp_path, gradebook.read_records(tmp_path))

    assert written != grades_csv and written.parent == tmp_path
    assert grades_csv.read_text() == edited
    new = pd.read_csv(written, keep_default_na=False, dtype={"exercise": str})
    assert new.loc[(new.student == "alice") & (new.exercise == "2.1"), "status"].tolist() == ["failed"]
    message = owned.where_written("grades", grades_csv, written)
    assert str(grades_csv) in message and str(written) in message
    assert owned.where_written("grades", grades_csv, grades_csv) == f"grades written to {grades_csv}"


def test_nothing_an_instructor_opens_evaluates_a_formula_or_holds_a_control_character(tmp_path):
    # A class folder named like a formula, a notebook file with a colour code, an error that
    # starts like a formula: each reaches grades.csv and gradebook.csv as plain, visible text.
    attack = make_record("=1+1", file="=2+3\x1b[31m.ipynb", exercises=[
        make_exercise("1.1", "failed", error='=HYPERLINK("http://x","click")'),
        make_exercise("1.2", "failed", error="-2+3", flags="@SUM(A1)\x07")])
    grades_csv = gradebook.write_grades(tmp_path, [attack])
    summary_csv = summaries.write_summary(tmp_path, gradebook.grades_table([attack]))
    for path in (grades_csv, summary_csv):
        text = path.read_text()
        assert "\x1b" not in text and "\x07" not in text
        cells = pd.read_csv(path, dtype=str, keep_default_na=False).map(str)
        starts = {cell[:1] for cell in cells.to_numpy().ravel()} | {column[:1] for column in cells.columns}
        assert not starts & set(spreadsheet.FORMULA_STARTS), (path.name, starts)
    grades = pd.read_csv(grades_csv, dtype=str, keep_default_na=False)
    assert set(grades.student) == {"'=1+1"}
    assert grades.error.tolist() == ["'=HYPERLINK(\"http://x\",\"click\")", "'-2+3"]
    assert grades["flags"].tolist()[1] == "'@SUM(A1)"


@pytest.mark.parametrize("text", ["=1+1", "+4", "-x", "@now", "\tTAB", "plain", "'quoted", "'=1+1",
                                  "''-x", "", "3"])
def test_a_spreadsheet_cell_reads_back_as_the_text_it_stands_for(text):
    assert spreadsheet.from_spreadsheet(spreadsheet.spreadsheet_text(text)) == text
    assert spreadsheet.spreadsheet_text(-2.5) == -2.5  # numbers stay numbers
