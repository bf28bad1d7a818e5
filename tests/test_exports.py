"""The class table for Canvas and Moodle, through the instructor's roster."""

from __future__ import annotations

import pandas as pd
import pytest
from test_gradebook import class_records, write_all

from helpers.cli import main
from helpers.course.classroom import exports, gradebook, layout, summaries
from helpers.errors import KitError

ROSTER = ("folder,student_id,name,email\n"
          "alice,s001,\"Smith, Alice\",alice@uni.example\n"
          "carol,s003,\"Jones, Carol\",carol@uni.example\n")


def test_a_roster_is_read_and_a_bad_one_refused(tmp_path):
    assert exports.read_roster(tmp_path) is None
    layout.roster_path(tmp_path).write_text(ROSTER)
    assert exports.read_roster(tmp_path).student_id.tolist() == ["s001", "s003"]
    for text, message in (("folder,name\nalice,A\n", "lacks the column"),
                          (ROSTER + "alice,s004,A,a@x\n", "folder 'alice' is listed twice"),
                          (ROSTER + "dave,s001,D,d@x\n", "student_id 's001' is listed twice"),
                          (ROSTER + "erin,,E,e@x\n", "every row needs a student_id")):
        layout.roster_path(tmp_path).write_text(text)
        with pytest.raises(KitError, match=message):
            exports.read_roster(tmp_path)


def test_canvas_and_moodle_files_follow_their_import_formats(tmp_path, capsys):
    write_all(tmp_path, class_records())
    layout.roster_path(tmp_path).write_text(ROSTER)
    assert main(["grade", str(tmp_path), "--summary"]) == 0
    said = capsys.readouterr()
    assert "left out of the LMS files: bob" in said.err  # graded, not on the roster
    canvas = pd.read_csv(layout.export_path(tmp_path, "canvas"), dtype=str, keep_default_na=False)
    # one column per assignment; the LMS sums its own total
    assert list(canvas.columns) == [*exports.CANVAS_COLUMNS, "01_naive_bayes", "02_logistic"]
    possible = canvas.iloc[0]
    assert possible["Student"] == exports.CANVAS_POINTS_ROW
    assert [float(possible[c]) for c in ("01_naive_bayes", "02_logistic")] == [3.5, 1.0]
    alice = canvas[canvas["SIS User ID"] == "s001"].iloc[0]
    assert (alice["Student"], alice["SIS Login ID"], float(alice["01_naive_bayes"])) == (
        "Smith, Alice", "alice@uni.example", 1.5)
    carol = canvas[canvas["SIS User ID"] == "s003"].iloc[0]
    assert carol["01_naive_bayes"] == "" and carol["02_logistic"] == ""  # on the roster, nothing graded
    moodle = pd.read_csv(layout.export_path(tmp_path, "moodle"), dtype=str, keep_default_na=False)
    assert list(moodle.columns) == [*exports.MOODLE_COLUMNS, "01_naive_bayes", "02_logistic"]
    assert moodle["ID number"].tolist() == ["s001", "s003"]
    assert float(moodle.set_index("ID number").loc["s001", "01_naive_bayes"]) == 1.5


def test_without_a_roster_the_summary_says_how_to_get_the_lms_files(tmp_path, capsys):
    write_all(tmp_path, class_records())
    assert main(["grade", str(tmp_path), "--summary"]) == 0
    assert "(no roster.csv: add one" in capsys.readouterr().out
    assert not layout.export_path(tmp_path, "canvas").exists()
    assert summaries.summary(gradebook.grades_table(class_records())).loc["alice", "total"] == 2.5


def test_lms_files_keep_ids_as_typed_and_leave_unmarked_answers_empty(tmp_path):
    write_all(tmp_path, class_records())
    layout.roster_path(tmp_path).write_text("folder,student_id,name,email\nalice,-001,\"=Smith\",a@x\n"
                                            "bob,s002,Bob,b@x\n")
    written = pd.DataFrame({"written": [2.0, float("nan")], "written_max": [3.0, 3.0],
                            "marked_max": [3.0, 0.0], "unmarked": [0, 2]},
                           index=pd.Index(["alice", "bob"], name="student"))
    exports.write_exports(tmp_path, gradebook.grades_table(class_records()), written)
    canvas = pd.read_csv(layout.export_path(tmp_path, "canvas"), dtype=str, keep_default_na=False)
    assert canvas["SIS User ID"].tolist()[1:] == ["-001", "s002"]  # no spreadsheet apostrophe
    assert canvas["written"].tolist()[1:] == ["2.0", ""]  # bob's answers are not marked yet
    assert "unmarked" not in canvas.columns  # a count for the instructor, not a grade


def test_a_row_with_an_unquoted_comma_is_refused_with_its_line(tmp_path):
    layout.roster_path(tmp_path).write_text("folder,student_id,name,email\nalice,s001,Smith, Alice,a@x\n")
    with pytest.raises(KitError, match="line 2 has 5 fields where the header has 4"):
        exports.read_roster(tmp_path)
