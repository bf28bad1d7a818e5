"""The course's assessment files (course/) agree with each other and with the notebooks.

course/course.toml is the one file a lecturer edits; the briefs, the rubric and the session plan
refer to it. The kit checks them (``helpers.course.course_file``, ``kit course check``): each
check returns a list of problems, so that each can be shown to fail on a broken copy (the second
half of this file) as well as to pass on the real files.
"""

from __future__ import annotations

import re
import shutil

from helpers.cli import main
from helpers.course import course_file
from helpers.course.course_file import (
    COURSE_DIR,
    REPOSITORY_KEY,
    UNSET,
    brief_problems,
    config_problems,
    exercise_references,
    notebook_facts,
    notebook_references,
    problems,
    reference_problems,
    rubric_problems,
)
from helpers.settings import REPO_ROOT, alpha

COURSE = COURSE_DIR


def _config() -> dict:
    return course_file.read()


def _rubric_headings() -> set[str]:
    rubric = (COURSE / "rubric.md").read_text(encoding="utf-8")
    return {m.group(1).strip() for m in re.finditer(r"^#+ (.+)$", rubric, re.MULTILINE)}


# --- The real files -----------------------------------------------------------------------------

def test_course_toml_parses_and_is_consistent():
    config = _config()
    assert config_problems(config) == []
    weights = [r["weight"] for r in config["reports"].values()]
    weights += [config["coursework"]["exercises_weight"], config["coursework"]["written_answers_weight"]]
    assert sum(weights) == 100


def test_each_brief_names_its_notebooks_and_refers_to_the_course_file():
    exercises, headings = notebook_facts()
    headings |= _rubric_headings()
    for key, report in _config()["reports"].items():
        text = (COURSE / report["brief"]).read_text(encoding="utf-8")
        assert notebook_references(text) >= set(report["notebooks"])
        assert brief_problems(key, report, text, exercises, headings) == []


def test_the_rubric_gives_each_report_100_marks():
    text = (COURSE / "rubric.md").read_text(encoding="utf-8")
    assert rubric_problems(text, list(_config()["reports"])) == []


def test_the_session_plan_and_the_rubric_name_what_exists():
    exercises, headings = notebook_facts()
    plan = (COURSE / "session_plan.md").read_text(encoding="utf-8")
    rubric = (COURSE / "rubric.md").read_text(encoding="utf-8")
    headings |= _rubric_headings()
    for name, text in (("session_plan.md", plan), ("rubric.md", rubric)):
        assert reference_problems(name, text, exercises, headings) == []
    for key in _config()["reports"]:
        assert f"reports.{key}.deadline" in plan


def test_kit_course_check_finds_no_problem_in_the_course_files(capsys):
    assert problems() == []
    assert main(["course", "check"]) == 0
    assert "no problem" in capsys.readouterr().out


def test_kit_course_check_lists_every_problem_of_a_broken_copy_and_fails(tmp_path, capsys):
    copy = tmp_path / "course"
    shutil.copytree(COURSE, copy)
    toml = (copy / "course.toml").read_text(encoding="utf-8")
    (copy / "course.toml").write_text(toml.replace("weight = 20", "weight = 25"), encoding="utf-8")
    (copy / "briefs" / "main_report.md").unlink()
    (copy / "session_plan.md").write_text("See notebook 99.\n", encoding="utf-8")
    found = problems(copy)
    assert main(["course", "check", "--course", str(copy)]) == 1
    out, err = capsys.readouterr()
    for expected in ("the weights sum to 105", "main_report.md does not exist",
                     "session_plan.md names notebook 99", "does not refer to reports.main.deadline"):
        assert any(expected in problem for problem in found), expected
        assert expected in out
    assert f"{len(found)} problems" in err


def test_kit_course_check_on_a_course_file_that_is_not_toml_says_so_in_one_line(tmp_path, capsys):
    copy = tmp_path / "course"
    shutil.copytree(COURSE, copy)
    (copy / "course.toml").write_text("[course\n", encoding="utf-8")
    assert main(["course", "check", "--course", str(copy)]) == 1
    said = capsys.readouterr().err
    assert said.startswith("kit: ") and "cannot be read as TOML" in said and said.count("\n") == 1


def test_the_readme_points_instructors_to_the_course_folder():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    instructors = readme[readme.index("## For instructors"):]
    assert "course/course.toml" in instructors[:instructors.index("\n## ", 1)]


# --- The checks fail on broken copies -----------------------------------------------------------

def test_a_changed_weight_fails():
    config = _config()
    total = sum(r["weight"] for r in config["reports"].values()) + sum(
        config["coursework"][key] for key in ("exercises_weight", "written_answers_weight"))
    config["reports"]["baseline"]["weight"] += 5
    assert any(f"sum to {total + 5}," in p for p in config_problems(config))


def test_a_missing_notebook_brief_or_date_fails():
    config = _config()
    config["reports"]["main"]["optional_notebooks"].append("99")
    config["reports"]["baseline"]["brief"] = "briefs/no_such_brief.md"
    config["reports"]["main"]["deadline"] = "5 February"
    problems = " | ".join(config_problems(config))
    assert "notebook '99'" in problems and "no_such_brief.md does not exist" in problems
    assert "not an ISO date" in problems


def test_a_brief_naming_what_does_not_exist_fails():
    exercises, headings = notebook_facts()
    report = _config()["reports"]["baseline"]
    text = (COURSE / report["brief"]).read_text(encoding="utf-8")
    broken = (text.replace("notebook 00", "notebook 99").replace("Exercise 2.1", "Exercise 2.7")
              .replace("*Round-robin folds*", "*Round robin folds*") + "\nDue 2027-02-05.\n")
    problems = " | ".join(brief_problems("baseline", report, broken, exercises, headings))
    for expected in ("names notebook 99", "does not name notebook(s) ['00']", "Exercise 2.7",
                     "*Round robin folds*", "writes a date (2027-02-05)"):
        assert expected in problems


def test_the_students_repository_is_owner_and_name_or_to_be_set():
    config = _config()
    for value in ("my-course/sentiment-2027", f"{UNSET}: e.g. my-course/sentiment-2027"):
        config["course"][REPOSITORY_KEY] = value
        assert config_problems(config) == []
    for value in ("https://github.com/my-course/sentiment-2027", "sentiment-2027", "", 2027):
        config["course"][REPOSITORY_KEY] = value
        assert any("student_repository: " in p and "owner/name" in p for p in config_problems(config)), value
    del config["course"][REPOSITORY_KEY]
    assert any("has no student_repository" in p for p in config_problems(config))


def test_the_significance_level_is_a_number_between_0_and_a_half_read_by_the_kit():
    config = _config()
    assert config["evaluation"]["alpha"] == alpha() == 0.05  # what the notebooks' outputs were written at
    for value in (0.01, 0.1):
        config["evaluation"]["alpha"] = value
        assert config_problems(config) == []
    for value in (0, 0.5, 1, -0.05, "0.05", True, float("nan")):
        config["evaluation"]["alpha"] = value
        assert any(p.startswith(f"[evaluation] alpha is {value!r}: it must be a number") for p in
                   config_problems(config)), value
    del config["evaluation"]["alpha"]
    assert "[evaluation] has no alpha (the course's significance level, e.g. 0.05)" in config_problems(config)
    del config["evaluation"]
    assert any(p.startswith("[evaluation] has no alpha") for p in config_problems(config))


def test_references_are_read_in_every_form_the_files_use():
    text = ("notebooks 01–03; notebook 04's table; notebooks 05, 06 and 07; notebook 08 or 09; "
            "`00_data`; Exercises 5.1–5.3; Exercises 1.1 and 1.2; Exercise 6.2")
    assert notebook_references(text) == {f"{n:02d}" for n in range(10)}
    assert exercise_references(text) == {"5.1", "5.2", "5.3", "1.1", "1.2", "6.2"}


def test_rubric_marks_that_do_not_sum_to_100_fail():
    text = (COURSE / "rubric.md").read_text(encoding="utf-8")
    row = "| B2 | Evaluation and statistics | 30 |"
    broken = text.replace(row, row.replace("30", "25"))
    assert broken != text
    problems = rubric_problems(broken, ["baseline", "main"])
    assert any("baseline criteria's marks sum to 95" in p for p in problems)
    gap = text.replace("| 20 | 17–20 | 13–16 |", "| 20 | 17–20 | 13–15 |")
    assert gap != text
    assert any("bands for 20 marks" in p for p in rubric_problems(gap, ["baseline", "main"]))
    assert any("no section" in p for p in rubric_problems(text, ["baseline", "main", "extra"]))


def test_a_rubric_or_plan_that_cannot_be_read_as_the_format_says_is_a_problem_not_a_crash(tmp_path):
    text = (COURSE / "rubric.md").read_text(encoding="utf-8")
    garbled = text.replace("| 20 | 17–20 | 13–16 |", "| 20 | 17 to 20 | 13–16 |")
    assert garbled != text
    assert any("the band row ['20', '17 to 20'" in p for p in rubric_problems(garbled, ["baseline", "main"]))
    copy = tmp_path / "course"
    shutil.copytree(COURSE, copy)
    (copy / "session_plan.md").unlink()
    assert problems(copy)[-1] == f"{copy / 'session_plan.md'} is missing"


def test_a_course_file_or_rubric_of_the_wrong_shape_is_a_list_of_problems_not_a_crash(tmp_path):
    copy = tmp_path / "course"
    shutil.copytree(COURSE, copy)
    toml = (copy / "course.toml").read_text(encoding="utf-8")
    (copy / "course.toml").write_text(toml.replace('notebooks = ["04", "05", "06"]', 'notebooks = "04"')
                                      + "\n[reports.extra]\n", encoding="utf-8")
    config = course_file.read(copy / "course.toml")
    config["reports"]["extra"] = 3
    assert config_problems(config) == ["[reports.extra] is not a table",
                                       "reports.main.notebooks is not a list of notebook numbers"]
    rubric = (copy / "rubric.md").read_text(encoding="utf-8")
    row = "| B2 | Evaluation and statistics | 30 |"
    short = rubric.replace(row, "| B2 | Evaluation |")
    assert short != rubric
    assert any("row without ID, criterion and marks" in p for p in rubric_problems(short, ["baseline"]))
    bracket = rubric.replace(row, row.replace("B2", "B2(x"))
    assert any(p.startswith("B2(x has levels []") for p in rubric_problems(bracket, ["baseline"]))
    (copy / "course.toml").write_text(toml, encoding="utf-8")
    (copy / "rubric.md").write_bytes(rubric.encode("utf-8") + b"\xff\xfe\n")
    assert problems(copy) == []
