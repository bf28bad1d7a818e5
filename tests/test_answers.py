"""Answer sheets: written answers collected from submitted notebooks, points kept by hand."""

from __future__ import annotations

import csv
import os

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from test_gradebook import make_record

from helpers.cli import main
from helpers.course.classroom import answers, classgrade, feedback, gradebook, layout, summaries
from helpers.course.notebook import cells, release
from helpers.errors import KitError

NOTEBOOK = "01_topic"
PREDICT = ("**Which model wins, and by how much?**\n\n"
           "=== BEGIN ANSWER ===\nNB, by 2 points.\n=== END ANSWER ===")
EXPLAIN = "**Why?**\n\n=== BEGIN ANSWER ===\nBinary <features>.\n=== END ANSWER ===\n\nThen run on."


MARKING = ["1: names NB as the winner", "1: gives the margin, 2 points"]


def answer_cell(source: str, question: str, **kit):
    return new_markdown_cell(source, metadata={"kit": {"answer": question, **kit}})


def solution_notebook():
    return new_notebook(cells=[new_markdown_cell("# Topic"),
                               answer_cell(PREDICT, "1.a", points=2, marking=MARKING),
                               new_code_cell("print(1)"), answer_cell(EXPLAIN, "1.b")])


@pytest.fixture
def klass(tmp_path):
    """A class folder (ann answered both, bob left his notebook as released, cat deleted 1.b
    and emptied 1.a, dan handed in nothing) and the solution's path."""
    solution = tmp_path / "solutions" / f"{NOTEBOOK}.ipynb"
    solution.parent.mkdir()
    nbformat.write(solution_notebook(), solution)
    student = release.release_notebook(solution_notebook(), NOTEBOOK)
    subs = tmp_path / "subs"
    ann = nbformat.from_dict(student)
    ann.cells[1].source = ann.cells[1].source.replace("YOUR ANSWER HERE", "SVM, by <5> points")
    ann.cells[3].source = "I think: YOUR ANSWER HERE binary features\n\nThen run on."
    cat = nbformat.from_dict(student)
    cat.cells[1].source = ""
    del cat.cells[3]
    found = {}
    for name, nb in {"ann": ann, "bob": student, "cat": cat}.items():
        (subs / name).mkdir(parents=True)
        nbformat.write(nb, subs / name / f"{NOTEBOOK}.ipynb")
        found[name] = subs / name / f"{NOTEBOOK}.ipynb"
    (subs / "dan").mkdir()
    return subs, solution, {**found, "dan": None}


def test_released_answer_cells_keep_their_id_and_points_and_lose_the_model_answer_and_marking():
    cells = release.release_notebook(solution_notebook(), NOTEBOOK).cells
    assert cells[1].metadata == {"kit": {"answer": "1.a", "points": 2}}
    assert cells[1].source == ("**Which model wins, and by how much?**\n\n"
                               "*Written answer: 2 points, marked by hand.*\n\nYOUR ANSWER HERE")
    assert "*Written answer: 1 point, marked by hand.*" in cells[3].source


@pytest.mark.parametrize("cells, message", [
    ([new_markdown_cell("=== BEGIN ANSWER ===\nx\n=== END ANSWER ===")], "needs an answer id"),
    ([answer_cell(PREDICT, "1.a"), answer_cell(EXPLAIN, "1.a")], "appears twice"),
])
def test_release_refuses_an_answer_without_a_unique_id(cells, message):
    with pytest.raises(KitError, match=message):
        release.release_notebook(new_notebook(cells=cells), NOTEBOOK)


def test_questions_give_prompt_model_answer_points_and_marking():
    asked = answers.questions(solution_notebook())
    assert list(asked) == ["1.a", "1.b"]
    assert (asked["1.a"].prompt, asked["1.a"].model) == ("**Which model wins, and by how much?**",
                                                         "NB, by 2 points.")
    assert (asked["1.a"].points, asked["1.a"].marking) == (2.0, tuple(MARKING))
    assert (asked["1.b"].points, asked["1.b"].marking) == (cells.ANSWER_POINTS, ())
    for bad in (0, -1, "2", True):
        with pytest.raises(KitError, match="answer 1.a: points must be a positive number"):
            answers.questions(new_notebook(cells=[answer_cell(PREDICT, "1.a", points=bad)]))


def test_the_sheet_holds_every_student_and_question_with_empty_points(klass):
    subs, solution, found = klass
    csv, page = answers.write_sheets(subs, solution, found)
    assert (csv.name, page.name) == (f"answers_{NOTEBOOK}.csv", f"answers_{NOTEBOOK}.html")
    table = answers.read_sheet(csv)
    assert list(table.columns) == answers.SHEET_COLUMNS
    got = table.set_index(["student", "question"]).answer.to_dict()
    assert got == {("ann", "1.a"): "SVM, by <5> points", ("ann", "1.b"): "I think:  binary features",
                   ("bob", "1.a"): "", ("bob", "1.b"): "", ("cat", "1.a"): "", ("cat", "1.b"): "",
                   ("dan", "1.a"): "", ("dan", "1.b"): ""}
    assert (table.points == "").all() and (table.comment == "").all()
    assert table.set_index(["student", "question"]).max_points[("dan", "1.a")] == "2"
    text = page.read_text()
    assert "SVM, by &lt;5&gt; points" in text and "Binary &lt;features&gt;." in text and "<script" not in text
    assert "1: gives the margin, 2 points" in text and "1.a (2 points)" in text


def test_points_typed_by_the_instructor_survive_a_rerun(klass):
    subs, solution, found = klass
    csv, _ = answers.write_sheets(subs, solution, found)
    marked = answers.read_sheet(csv)
    marked.loc[(marked.student == "ann") & (marked.question == "1.a"), ["points", "comment"]] = ["2", "clear"]
    marked.loc[(marked.student == "bob") & (marked.question == "1.b"), "points"] = "0.5"
    marked.to_csv(csv, index=False)
    typed = csv.read_bytes()
    assert answers.write_sheets(subs, solution, found) == [] and csv.read_bytes() == typed
    late = nbformat.read(found["bob"], as_version=4)  # bob hands in again, with an answer
    late.cells[1].source = late.cells[1].source.replace("YOUR ANSWER HERE", "NB")
    nbformat.write(late, found["bob"])
    again, _ = answers.write_sheets(subs, solution, found)
    assert csv.read_bytes() == typed  # the instructor's sheet is never overwritten
    merged = answers.read_sheet(again).set_index(["student", "question"])
    assert again != csv and merged.answer[("bob", "1.a")] == "NB"
    assert merged.points[("ann", "1.a")] == "2" and merged.points[("bob", "1.b")] == "0.5"
    assert merged.comment[("ann", "1.a")] == "clear"
    assert merged.points[("cat", "1.a")] == ""


def test_a_newer_stamped_sheet_is_named_as_not_counted(klass, capsys):
    subs, solution, found = klass
    csv, _ = answers.write_sheets(subs, solution, found)
    answers.read_sheet(csv).assign(points="1").to_csv(csv, index=False)  # the instructor marks
    late = nbformat.read(found["bob"], as_version=4)
    late.cells[1].source = late.cells[1].source.replace("YOUR ANSWER HERE", "NB")
    nbformat.write(late, found["bob"])
    beside, _ = answers.write_sheets(subs, solution, found)
    os.utime(csv, (1, 1))  # the marked sheet is the older one
    answers.written_marks(subs)
    assert f"{beside.name} is newer than {csv.name}" in capsys.readouterr().err


def test_a_marked_sheet_is_not_copied_again_until_an_answer_changes(klass, capsys):
    subs, solution, found = klass
    csv_path, _ = answers.write_sheets(subs, solution, found)
    # marked, and saved as a spreadsheet saves it: every field quoted, so not the kit's bytes
    answers.read_sheet(csv_path).assign(points="1").to_csv(csv_path, index=False, quoting=csv.QUOTE_ALL)
    marked = csv_path.read_bytes()
    assert answers.write_sheets(subs, solution, found) == []  # a regrade, nothing new handed in
    assert csv_path.read_bytes() == marked
    sheets = sorted(p.name for p in subs.glob("answers_*"))
    assert sheets == [csv_path.name, csv_path.with_suffix(".html").name]
    assert "newer than" not in capsys.readouterr().err
    late = nbformat.read(found["bob"], as_version=4)
    late.cells[1].source = late.cells[1].source.replace("YOUR ANSWER HERE", "NB")
    nbformat.write(late, found["bob"])
    beside, _ = answers.write_sheets(subs, solution, found)  # bob's new answer: a merged copy beside
    assert beside != csv_path and csv_path.read_bytes() == marked
    merged = answers.read_sheet(beside).set_index(["student", "question"])
    assert merged.answer[("bob", "1.a")] == "NB" and merged.points[("ann", "1.a")] == "1"


def test_an_unchanged_sheet_is_rewritten_in_place(klass):
    subs, solution, found = klass
    first = answers.write_sheets(subs, solution, found)
    assert answers.write_sheets(subs, solution, found) == first


def _mark_ann(klass, points: list[str], comments: list[str] | None = None) -> None:
    """Write the class's sheet and type ``points`` (and comments) for ann's questions, as an
    instructor would."""
    subs, solution, found = klass
    csv, _ = answers.write_sheets(subs, solution, found)
    marked = answers.read_sheet(csv)
    marked.loc[marked.student == "ann", "points"] = points
    if comments:
        marked.loc[marked.student == "ann", "comment"] = comments
    marked.to_csv(csv, index=False)


def test_written_points_and_their_maximum_count_in_the_class_table(klass):
    subs, _, _ = klass
    _mark_ann(klass, ["2", "0.5"])
    written = answers.written_marks(subs)
    assert written.written["ann"] == 2.5 and written.written.drop("ann").isna().all()  # not marked yet
    assert set(written.written_max) == {3.0}  # 1.a is worth 2, 1.b the default 1
    assert (written.loc["ann", "marked_max"], written.loc["ann", "unmarked"]) == (3.0, 0)
    grades = pd.DataFrame({"student": ["ann", "bob"], "notebook": [NOTEBOOK] * 2, "points": [1.0, 0.0],
                           "max_points": [1.0, 1.0]})
    table = summaries.summary(grades, written)
    assert list(table.columns) == [NOTEBOOK, "written", "unmarked", "total", "max_total"]
    assert table.loc["ann", "total"] == 3.5 and table.loc["bob", "total"] == 0.0
    assert table.loc["ann", "max_total"] == 4.0  # never fewer points possible than earned
    # bob's answers wait for a mark: shown as such, and counted in neither total nor max_total
    assert pd.isna(table.loc["bob", "written"]) and table.loc["bob", "unmarked"] == 2
    assert table.loc["bob", "max_total"] == 1.0
    assert (table.total <= table.max_total).all()
    assert list(summaries.summary(grades).columns) == [NOTEBOOK, "total", "max_total"]


@pytest.mark.parametrize("typed", ["good", "-1", "2.5"])
def test_points_that_are_not_a_number_from_0_to_the_maximum_are_refused(klass, typed):
    subs, solution, found = klass
    csv, _ = answers.write_sheets(subs, solution, found)
    marked = answers.read_sheet(csv)
    marked.loc[0, "points"] = typed
    marked.to_csv(csv, index=False)
    with pytest.raises(KitError, match="ann, question 1.a, must be empty or a number from 0 to 2,"):
        answers.written_marks(subs)


def test_marks_and_comments_reach_the_student_s_feedback(klass):
    subs, _, _ = klass
    _mark_ann(klass, ["1.5", ""], ["names NB; margin <wrong>", "not marked: see me"])
    record = make_record("ann", NOTEBOOK)
    gradebook.write_record(subs, record)
    feedback.write_all_feedback(subs)
    page, text = layout.feedback_paths(subs, "ann", NOTEBOOK)
    markdown = text.read_text()
    assert "## Written answers" in markdown and "| 1.a | 1.5 / 2 | names NB; margin \\<wrong\\> |" in markdown
    assert "| 1.b | not marked yet / 1 | not marked: see me |" in markdown
    assert "margin &lt;wrong&gt;" in page.read_text()
    gradebook.write_record(subs, make_record("bob", NOTEBOOK))
    feedback.write_all_feedback(subs)
    assert "Written answers" not in layout.feedback_paths(subs, "bob", NOTEBOOK)[1].read_text()


def test_a_notebook_without_questions_writes_no_sheet(tmp_path):
    solution = tmp_path / f"{NOTEBOOK}.ipynb"
    nbformat.write(new_notebook(cells=[new_markdown_cell("# Topic")]), solution)
    assert answers.write_sheets(tmp_path, solution, {"ann": None}) == []
    assert answers.written_marks(tmp_path).empty


def test_grading_writes_a_sheet_per_notebook_for_the_whole_class(klass, capsys):
    subs, solution, _ = klass
    assert classgrade.write_answer_sheets(subs, [solution]) == [(NOTEBOOK, layout.sheet_path(subs, NOTEBOOK))]
    table = answers.read_sheet(layout.sheet_path(subs, NOTEBOOK))
    assert sorted(set(table.student)) == ["ann", "bob", "cat", "dan"]
    assert layout.sheet_path(subs, NOTEBOOK, ".html").is_file()
    assert capsys.readouterr().out == ""  # only the command prints


def test_kit_grade_summary_adds_the_marked_points(klass):
    subs, _, _ = klass
    _mark_ann(klass, ["2", "1"])
    gradebook.write_record(subs, make_record("ann", NOTEBOOK))
    assert main(["grade", str(subs), "--summary"]) == 0
    table = pd.read_csv(subs / layout.SUMMARY_FILE, index_col="student")
    assert table.loc["ann", "written"] == 3.0 and table.loc["ann", "total"] == 4.0
    assert table.loc["ann", "max_total"] == 1.0 + 3.0  # one exercise worth 1, the answers 3


def test_a_sheet_shows_formula_like_names_and_answers_as_text_and_reads_them_back(klass):
    subs, solution, found = klass
    (subs / "ann").rename(subs / "=1+1")
    found["=1+1"] = subs / "=1+1" / f"{NOTEBOOK}.ipynb"
    del found["ann"]
    answer = nbformat.read(found["=1+1"], as_version=4)
    written = "-1 for NB, \x1b[31m+2 for SVM"
    answer.cells[1].source = answer.cells[1].source.replace("SVM, by <5> points", written)
    nbformat.write(answer, found["=1+1"])
    csv, _ = answers.write_sheets(subs, solution, found)
    raw = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert "\x1b" not in csv.read_text()
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in raw.to_numpy().ravel())
    table = answers.read_sheet(csv)
    assert set(table.student) == {"=1+1", "bob", "cat", "dan"}
    assert table.set_index(["student", "question"]).answer[("=1+1", "1.a")] == "-1 for NB, +2 for SVM"
    raw.loc[(raw.student == "'=1+1") & (raw.question == "1.a"), "points"] = "2"  # marked in a spreadsheet
    raw.to_csv(csv, index=False)
    assert answers.written_marks(subs).written["=1+1"] == 2.0


def test_a_sheet_written_before_max_points_takes_them_from_the_solution(tmp_path):
    from helpers.course import config

    notebook = "01_naive_bayes"
    asked = answers.questions(nbformat.read(config.SOLUTIONS_DIR / f"{notebook}.ipynb", as_version=4))
    first, second = list(asked)[:2]
    layout.sheet_path(tmp_path, notebook).write_text(
        f"student,question,prompt,answer,points\nann,{first},,x,0.5\nann,{second},,y,\n")
    written = answers.written_marks(tmp_path)
    assert written.loc["ann", "written"] == 0.5
    assert written.loc["ann", "written_max"] == asked[first].points + asked[second].points
