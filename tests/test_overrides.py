"""The instructor's corrections (overrides.csv), applied to every table and feedback file."""

from __future__ import annotations

import pandas as pd
import pytest
from test_gradebook import class_records, write_all

from helpers.cli import main
from helpers.course.classroom import feedback, gradebook, layout, overrides, summaries
from helpers.errors import KitError

HEADER = "student,notebook,exercise,points,comment\n"


def _overrides(folder, text: str) -> None:
    layout.overrides_path(folder).write_text(HEADER + text)


def test_no_file_means_no_corrections(tmp_path):
    assert overrides.read_overrides(tmp_path).empty
    assert overrides.with_overrides(class_records(), overrides.read_overrides(tmp_path)) == class_records()


@pytest.mark.parametrize("text, message", [
    ("alice,01_naive_bayes,1.2,lots,\n", "line 2: points must be empty or a number >= 0, not 'lots'"),
    ("alice,01_naive_bayes,1.2,-1,\n", "line 2: points must be empty or a number >= 0"),
    ("alice,01_naive_bayes,1.2,1,\nalice,01_naive_bayes,1.2,2,\n", "exercise 1.2 has more than one row"),
])
def test_a_malformed_correction_is_refused_with_its_line(tmp_path, text, message):
    _overrides(tmp_path, text)
    with pytest.raises(KitError, match=message):
        overrides.read_overrides(tmp_path)
    layout.overrides_path(tmp_path).write_text("student,points\nalice,1\n")
    with pytest.raises(KitError, match="lacks the column"):
        overrides.read_overrides(tmp_path)


def test_partial_credit_and_a_comment_replace_the_verdict_s_points_everywhere(tmp_path, capsys):
    _overrides(tmp_path, "alice,01_naive_bayes,1.2,1.5,right idea; the prior is off by one\n"
                         "bob,01_naive_bayes,1.10,,see me\nbob,03_typo,3.1,1,\n")
    records = class_records()
    corrected = overrides.with_overrides(records, overrides.read_overrides(tmp_path))
    assert records == class_records(), "the records themselves are untouched"
    assert "bob, 03_typo, exercise 3.1 matches no graded exercise" in capsys.readouterr().err
    grades = gradebook.grades_table(corrected).set_index(["student", "notebook", "exercise"])
    assert grades.loc[("alice", "01_naive_bayes", "1.2"), ["points", "max_points", "status"]].tolist() == [
        1.5, 2.0, "failed"]
    assert grades.loc[("alice", "01_naive_bayes", "1.2"), "comment"] == "right idea; the prior is off by one"
    assert grades.loc[("bob", "01_naive_bayes", "1.10"), ["points", "comment"]].tolist() == [0.5, "see me"]
    table = summaries.summary(gradebook.grades_table(corrected))
    assert table.loc["alice", "01_naive_bayes"] == 1.0 + 1.5 + 0.5
    _overrides(tmp_path, "alice,01_naive_bayes,1.2,3,\n")
    with pytest.raises(KitError, match="exercise 1.2 is worth 2 points, not 3"):
        overrides.with_overrides(records, overrides.read_overrides(tmp_path))


def test_corrections_reach_the_class_table_and_the_feedback_and_survive_rewriting(tmp_path):
    write_all(tmp_path, class_records())
    _overrides(tmp_path, "alice,01_naive_bayes,1.2,2,regraded by hand: the check was too strict\n")
    gradebook.write_grades(tmp_path, gradebook.read_records(tmp_path))  # as the last grading run left it
    assert main(["grade", str(tmp_path), "--summary"]) == 0
    table = pd.read_csv(layout.summary_path(tmp_path), index_col="student")
    assert table.loc["alice", "01_naive_bayes"] == 3.5
    # grades.csv follows the same correction, without a grading run
    grades = pd.read_csv(layout.grades_path(tmp_path), keep_default_na=False, dtype={"exercise": str})
    grades = grades.set_index(["student", "exercise"])
    assert grades.loc[("alice", "1.2"), "points"] == 2.0
    assert grades.loc[("alice", "1.2"), "comment"] == "regraded by hand: the check was too strict"
    _overrides(tmp_path, "alice,01_naive_bayes,1.2,1,\n")
    assert main(["grade", str(tmp_path), "--feedback-only"]) == 0
    grades = pd.read_csv(layout.grades_path(tmp_path), dtype={"exercise": str})
    grades = grades.set_index(["student", "exercise"])
    assert grades.loc[("alice", "1.2"), "points"] == 1.0
    _overrides(tmp_path, "alice,01_naive_bayes,1.2,2,regraded by hand: the check was too strict\n")
    assert main(["grade", str(tmp_path), "--feedback-only"]) == 0
    _, markdown = layout.feedback_paths(tmp_path, "alice", "01_naive_bayes")
    text = markdown.read_text()
    assert "| 1.2 | Exercise 1.2 | failed | 2 / 2 |" in text
    assert "- 1.2: regraded by hand: the check was too strict" in text
    feedback.write_all_feedback(tmp_path)  # a second writing keeps the correction
    assert "regraded by hand" in markdown.read_text()


def test_a_correction_worth_more_than_its_exercise_stops_grading_before_any_run(tmp_path):
    _overrides(tmp_path, "alice,01_naive_bayes,1.2,3,\nbob,01_naive_bayes,1.9,1,\n")
    corrections = overrides.read_overrides(tmp_path)
    overrides.check_overrides(corrections, {"01_naive_bayes": {"1.2": 3.0}})  # within its worth
    with pytest.raises(KitError, match="alice, 01_naive_bayes, exercise 1.2 is worth 2 points, not 3"):
        overrides.check_overrides(corrections, {"01_naive_bayes": {"1.2": 2.0}})


def test_grade_help_names_every_file_the_instructor_edits_or_receives(capsys):
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    shown = capsys.readouterr().out
    for name in (layout.ROSTER_FILE, layout.OVERRIDES_FILE, f"{layout.SHEET_PREFIX}NN_topic.csv",
                 layout.GRADES_FILE, f"{layout.FEEDBACK_DIR}/STUDENT/", layout.SUMMARY_FILE,
                 *layout.EXPORT_FILES.values()):
        assert name in shown, name
