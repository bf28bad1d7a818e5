"""The course's assessment files (course/) agree with each other and with the notebooks.

course/course.toml is the one file a lecturer edits; the briefs, the rubric and the session plan
refer to it. The checks below return a list of problems, so that each can be shown to fail on a
broken copy (the second half of this file) as well as to pass on the real files.
"""

from __future__ import annotations

import datetime
import json
import re
import tomllib
from pathlib import Path

from helpers.course.student.student_copy import REPOSITORY_KEY, UNSET, repository_problem
from helpers.settings import ALPHA_KEY, EVALUATION_TABLE, REPO_ROOT, alpha, alpha_problem

COURSE = REPO_ROOT / "course"
SOLUTIONS = REPO_ROOT / "solutions"
LEVELS = ["excellent", "good", "adequate", "weak", "missing"]


# --- Reading the files --------------------------------------------------------------------------

def _config() -> dict:
    return tomllib.loads((COURSE / "course.toml").read_text(encoding="utf-8"))


def _notebook_file(number: str) -> Path | None:
    found = sorted(SOLUTIONS.glob(f"{number}_*.ipynb"))
    return found[0] if len(found) == 1 else None


def _notebook_facts() -> tuple[set[str], set[str]]:
    """The exercise ids and the markdown headings (without their #s) of every solution notebook."""
    exercises, headings = set(), set()
    for path in sorted(SOLUTIONS.glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            kit = cell.get("metadata", {}).get("kit", {})
            if "exercise" in kit:
                exercises.add(kit["exercise"])
            if cell["cell_type"] == "markdown":
                source = "".join(cell["source"])
                headings.update(m.group(1).strip() for m in re.finditer(r"^#+ (.+)$", source, re.MULTILINE))
    return exercises, headings


def _table(lines: list[str], start: int) -> list[list[str]]:
    """The Markdown table that begins at or after line `start`: its rows as lists of cells, header
    first, the separator row left out."""
    while start < len(lines) and not lines[start].startswith("|"):
        start += 1
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not all(re.fullmatch(r":?-+:?", cell) for cell in cells):
            rows.append(cells)
    return rows


def _band(text: str) -> tuple[int, int]:
    low, high = re.fullmatch(r"(\d+)\s*[–-]\s*(\d+)\s*%?", text).groups()
    return int(low), int(high)


# --- References in the Markdown files -----------------------------------------------------------

_NOTEBOOK_WORD = re.compile(r"\bnotebooks?\s+(?=\d{2}\b)", re.IGNORECASE)
_NUMBER_OR_RANGE = re.compile(r"(\d{2})(?:\s*[–-]\s*(\d{2}))?\b")
_JOIN = re.compile(r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+)(?=\d{2}\b)")
_STEM = re.compile(r"`(\d{2})_([a-z0-9_]+)`")
_EXERCISE = re.compile(r"\bExercises?\s+(\d+)\.(\d+)((?:\s*(?:[–-]|,|and|or)\s*\d+\.\d+)*)")
_SECTION = re.compile(r"\bsections?\s+\*([^*]+)\*(?:\s+to\s+\*([^*]+)\*)?")


def notebook_references(text: str) -> set[str]:
    """Two-digit notebook numbers named as "notebook 04", "notebooks 01–03", "notebooks 01, 02
    and 03" (ranges expanded), or by file stem in backticks (`04_doc2vec`)."""
    found = set()
    for start in _NOTEBOOK_WORD.finditer(text):
        position = start.end()
        while match := _NUMBER_OR_RANGE.match(text, position):
            first, last = match.group(1), match.group(2) or match.group(1)
            found.update(f"{n:02d}" for n in range(int(first), int(last) + 1))
            join = _JOIN.match(text, match.end())
            if join is None:
                break
            position = join.end()
    found.update(match.group(1) for match in _STEM.finditer(text))
    return found


def exercise_references(text: str) -> set[str]:
    """Exercise ids named as "Exercise 1.3", "Exercises 1.1 and 1.2" or "Exercises 5.1–5.3"."""
    found = set()
    for match in _EXERCISE.finditer(text):
        notebook, first = match.group(1), int(match.group(2))
        found.add(f"{notebook}.{first}")
        for separator, other in re.findall(r"\s*([–-]|,|and|or)\s*\d+\.(\d+)", match.group(3)):
            last = int(other)
            numbers = range(first + 1, last + 1) if separator in "–-" else [last]
            found.update(f"{notebook}.{n}" for n in numbers)
    return found


def reference_problems(name: str, text: str, exercises: set[str], headings: set[str]) -> list[str]:
    """Notebooks, stems, exercises and sections named in a Markdown file that do not exist. A section
    is named in italics after "section" or "sections" ("sections *A* to *B*"); a heading of a
    notebook (or of the rubric) must start with its name."""
    problems = [f"{name} names notebook {number}, which solutions/ does not hold"
                for number in sorted(notebook_references(text)) if _notebook_file(number) is None]
    problems += [f"{name} names `{number}_{stem}`, which is not a notebook in solutions/"
                 for number, stem in _STEM.findall(text)
                 if not (SOLUTIONS / f"{number}_{stem}.ipynb").is_file()]
    problems += [f"{name} names Exercise {exercise}, which no solution notebook has"
                 for exercise in sorted(exercise_references(text)) if exercise not in exercises]
    sections = [" ".join(name.split()) for pair in _SECTION.findall(text) for name in pair if name]
    problems += [f"{name} names the section *{section}*, which starts no heading of the notebooks or rubric"
                 for section in sections if not any(h.startswith(section) for h in headings)]
    return problems


# --- The checks ---------------------------------------------------------------------------------

def config_problems(config: dict) -> list[str]:
    """What is wrong with a parsed course.toml: weights, deadlines, limits, notebooks, briefs."""
    problems = []
    reports = config.get("reports", {})
    if not config.get("course", {}).get("name"):
        problems.append("[course] has no name")
    problems += repository_problems(config.get("course", {}))
    problems += evaluation_problems(config)
    if not reports:
        problems.append("course.toml defines no [reports.*]")
    coursework = config.get("coursework", {})
    weights = {f"reports.{key}.weight": report.get("weight") for key, report in reports.items()}
    for key in ("exercises_weight", "written_answers_weight"):
        weights[f"coursework.{key}"] = coursework.get(key)
    for name, weight in weights.items():
        if not isinstance(weight, int) or not 0 <= weight <= 100:
            problems.append(f"{name} is {weight!r}, not a whole percentage from 0 to 100")
    if all(isinstance(w, int) for w in weights.values()) and sum(weights.values()) != 100:
        problems.append(f"the weights sum to {sum(weights.values())}, not 100: {weights}")
    for key, report in reports.items():
        deadline, limit = report.get("deadline"), report.get("word_limit")
        if type(deadline) is not datetime.date:
            problems.append(f"reports.{key}.deadline is {deadline!r}, not an ISO date (YYYY-MM-DD)")
        if not isinstance(limit, int) or limit <= 0:
            problems.append(f"reports.{key}.word_limit is {limit!r}, not a positive whole number")
        if not report.get("notebooks"):
            problems.append(f"reports.{key} draws on no notebooks")
        for number in [*report.get("notebooks", []), *report.get("optional_notebooks", [])]:
            if _notebook_file(number) is None:
                problems.append(f"reports.{key} names notebook {number!r}, which solutions/ does not hold")
        brief = COURSE / report.get("brief", "")
        if not report.get("brief") or not brief.is_file():
            problems.append(f"reports.{key}.brief: {brief} does not exist")
    for number in coursework.get("notebooks", []):
        if _notebook_file(number) is None:
            problems.append(f"coursework names notebook {number!r}, which solutions/ does not hold")
    baseline, main = reports.get("baseline", {}).get("deadline"), reports.get("main", {}).get("deadline")
    if type(baseline) is datetime.date and type(main) is datetime.date and not baseline < main:
        problems.append(f"the baseline report is due on {baseline}, not before the main report ({main})")
    return problems


def repository_problems(course: dict) -> list[str]:
    """``[course] student_repository``: the students' GitHub repository (``owner/name``) that
    ``kit release --student-repo`` names in the copy's README, or still "TO BE SET: ..."."""
    if REPOSITORY_KEY not in course:
        return [f"[course] has no {REPOSITORY_KEY} (owner/name, or \"{UNSET}: ...\" until it is chosen)"]
    value = course[REPOSITORY_KEY]
    if isinstance(value, str) and value.startswith(UNSET):
        return []
    problem = repository_problem(value)
    return [f"[course] {REPOSITORY_KEY}: {problem}"] if problem else []


def evaluation_problems(config: dict) -> list[str]:
    """``[evaluation] alpha``: the course's significance level, which the notebooks test at
    (``settings.alpha``), a number in (0, 0.5)."""
    table = config.get(EVALUATION_TABLE)
    if not isinstance(table, dict) or ALPHA_KEY not in table:
        return [f"[{EVALUATION_TABLE}] has no {ALPHA_KEY} (the course's significance level, e.g. 0.05)"]
    problem = alpha_problem(table[ALPHA_KEY])
    return [f"[{EVALUATION_TABLE}] {ALPHA_KEY} {problem}"] if problem else []


def brief_problems(key: str, report: dict, text: str, exercises: set[str], headings: set[str]) -> list[str]:
    """A brief names its report's notebooks and refers to course.toml for its date and limit."""
    name = report.get("brief", key)
    problems = reference_problems(name, text, exercises, headings)
    missing = set(report.get("notebooks", [])) | set(report.get("optional_notebooks", []))
    missing -= notebook_references(text)
    if missing:
        problems.append(f"{name} does not name notebook(s) {sorted(missing)} of reports.{key}")
    for setting in ("deadline", "word_limit", "weight"):
        if f"reports.{key}.{setting}" not in text:
            problems.append(f"{name} does not refer to reports.{key}.{setting} in course/course.toml")
    if dates := re.findall(r"\b\d{4}-\d{2}-\d{2}\b", text):
        problems.append(f"{name} writes a date ({', '.join(dates)}): refer to reports.{key}.deadline instead")
    return problems


def rubric_problems(text: str, report_keys: list[str]) -> list[str]:
    """The rubric's format (see its last section): marks summing to 100 per report, five levels
    per criterion, and bands that follow the levels' shares."""
    problems = []
    lines = text.splitlines()
    sections = {}
    for i, line in enumerate(lines):
        if match := re.fullmatch(r"## .+ \(`(\w+)`\)\s*", line):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
            sections[match.group(1)] = (i, end)
    shares_at = next((i for i, line in enumerate(lines) if line.startswith("| level | share")), None)
    bands_at = next((i for i, line in enumerate(lines) if line.startswith("| marks | excellent")), None)
    if shares_at is None or bands_at is None:
        return ["the rubric lacks its table of levels (| level | share ...) "
                "or of bands (| marks | excellent ...)"]
    shares = {row[0]: _band(row[1]) for row in _table(lines, shares_at)[1:]}
    if list(shares) != LEVELS:
        problems.append(f"the levels are {list(shares)}, not {LEVELS}")
    bands = {}
    for row in _table(lines, bands_at)[1:]:
        marks, ranges = int(row[0]), [_band(cell) for cell in row[1:]]
        bands[marks] = ranges
        expected_lows = [-(-shares[level][0] * marks // 100) for level in LEVELS if level in shares]
        if [low for low, _ in ranges] != expected_lows:
            problems.append(f"bands for {marks} marks start at {[low for low, _ in ranges]}, "
                            f"the shares give {expected_lows}")
        tops = [marks] + [low - 1 for low, _ in ranges[:-1]]
        if [high for _, high in ranges] != tops or ranges[-1][0] != 0:
            problems.append(f"bands for {marks} marks {ranges} do not run from {marks} to 0 without a gap")
    for key in report_keys:
        if key not in sections:
            problems.append(f"the rubric has no section '## ... (`{key}`)' for reports.{key}")
            continue
        start, end = sections[key]
        rows = _table(lines[:end], start)
        if not rows or rows[0] != ["ID", "Criterion", "Marks"]:
            problems.append(f"the {key} section's first table is not '| ID | Criterion | Marks |'")
            continue
        *criteria, total = rows[1:]
        if total[1] != "**Total**":
            problems.append(f"the {key} marks table does not end in a **Total** row")
        marks = {row[0]: int(row[2]) for row in criteria}
        stated = int(total[2].strip("*"))
        if sum(marks.values()) != stated or stated != 100:
            problems.append(f"the {key} criteria's marks sum to {sum(marks.values())}, "
                            f"the total row says {stated}, and both must be 100")
        for criterion, value in marks.items():
            if value not in bands:
                problems.append(f"{criterion} is worth {value} marks, a value the table of bands lacks")
            heading = next((i for i in range(start, end) if re.match(rf"### {criterion}\b", lines[i])), None)
            levels = [row[0] for row in _table(lines[:end], heading)[1:]] if heading is not None else []
            if levels != LEVELS:
                problems.append(f"{criterion} has levels {levels}, not a '### {criterion}' table of {LEVELS}")
    return problems


# --- The real files -----------------------------------------------------------------------------

def test_course_toml_parses_and_is_consistent():
    config = _config()
    assert config_problems(config) == []
    weights = [r["weight"] for r in config["reports"].values()]
    weights += [config["coursework"]["exercises_weight"], config["coursework"]["written_answers_weight"]]
    assert sum(weights) == 100


def test_each_brief_names_its_notebooks_and_refers_to_the_course_file():
    exercises, headings = _notebook_facts()
    rubric = (COURSE / "rubric.md").read_text(encoding="utf-8")
    headings |= {m.group(1).strip() for m in re.finditer(r"^#+ (.+)$", rubric, re.MULTILINE)}
    for key, report in _config()["reports"].items():
        text = (COURSE / report["brief"]).read_text(encoding="utf-8")
        assert notebook_references(text) >= set(report["notebooks"])
        assert brief_problems(key, report, text, exercises, headings) == []


def test_the_rubric_gives_each_report_100_marks():
    text = (COURSE / "rubric.md").read_text(encoding="utf-8")
    assert rubric_problems(text, list(_config()["reports"])) == []


def test_the_session_plan_and_the_rubric_name_what_exists():
    exercises, headings = _notebook_facts()
    plan = (COURSE / "session_plan.md").read_text(encoding="utf-8")
    rubric = (COURSE / "rubric.md").read_text(encoding="utf-8")
    headings |= {m.group(1).strip() for m in re.finditer(r"^#+ (.+)$", rubric, re.MULTILINE)}
    for name, text in (("session_plan.md", plan), ("rubric.md", rubric)):
        assert reference_problems(name, text, exercises, headings) == []
    for key in _config()["reports"]:
        assert f"reports.{key}.deadline" in plan


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
    exercises, headings = _notebook_facts()
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
