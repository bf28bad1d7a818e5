"""The course's assessment files, read and checked as the kit reads them (``kit course check``).

``course/course.toml`` is the one file a lecturer edits: the reports' dates, weights and word
limits, the notebooks each draws on, the significance level the notebooks test at, the
students' repository. The briefs (``course/briefs/``), the rubric (``course/rubric.md``) and
the session plan (``course/session_plan.md``) refer to its values by name and to the
notebooks by number, exercise and section. ``problems`` lists everything that disagrees:
between these files, and with the solution notebooks. Each check returns a list of
problems, one sentence each, so that a broken copy says all that is wrong at once.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

from helpers import settings
from helpers.course.config import NOTEBOOK_GLOB, SOLUTIONS_DIR
from helpers.settings import ALPHA_KEY, COURSE_FILE, EVALUATION_TABLE, alpha_problem

COURSE_DIR = COURSE_FILE.parent
RUBRIC, SESSION_PLAN = "rubric.md", "session_plan.md"
#: The rubric's levels, best first: every criterion is marked at one of them.
LEVELS = ("excellent", "good", "adequate", "weak", "missing")
#: Where the course file names the students' repository: ``[course] student_repository``.
REPOSITORY_TABLE, REPOSITORY_KEY = "course", "student_repository"
#: How a value in ``course/course.toml`` that is still to be chosen begins.
UNSET = "TO BE SET"
#: Who weighs in the practical's mark besides the reports: ``[coursework]``'s two weights.
COURSEWORK_WEIGHTS = ("exercises_weight", "written_answers_weight")
_GITHUB_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
_HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)
_NOTEBOOK_WORD = re.compile(r"\bnotebooks?\s+(?=\d{2}\b)", re.IGNORECASE)
_NUMBER_OR_RANGE = re.compile(r"(\d{2})(?:\s*[–-]\s*(\d{2}))?\b")
_JOIN = re.compile(r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+)(?=\d{2}\b)")
_STEM = re.compile(r"`(\d{2})_([a-z0-9_]+)`")
_EXERCISE = re.compile(r"\bExercises?\s+(\d+)\.(\d+)((?:\s*(?:[–-]|,|and|or)\s*\d+\.\d+)*)")
_SECTION = re.compile(r"\bsections?\s+\*([^*]+)\*(?:\s+to\s+\*([^*]+)\*)?")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def read(path: Path = COURSE_FILE) -> dict[str, Any]:
    """The course file, parsed (``settings.read_course_file``).

    Raises
    ------
    KitError
        If it is missing or is not TOML (the message names the file).
    """
    return settings.read_course_file(path)


def problems(course_dir: Path = COURSE_DIR, solutions: Path = SOLUTIONS_DIR) -> list[str]:
    """Everything wrong with the course's files in ``course_dir``: the course file, each brief,
    the rubric and the session plan, against each other and the notebooks in ``solutions``.

    Returns
    -------
    list of str
        One sentence per problem; empty when all agree.

    Raises
    ------
    KitError
        If the course file cannot be read at all.
    """
    course_dir, solutions = Path(course_dir), Path(solutions)
    config = read(course_dir / COURSE_FILE.name)
    shape = shape_problems(config)
    if shape:  # the other checks read these tables
        return shape
    found = config_problems(config, course_dir, solutions)
    exercises, headings = notebook_facts(solutions)
    read_texts = {name: _text(course_dir / name) for name in (RUBRIC, SESSION_PLAN)}
    texts = {name: text for name, text in read_texts.items() if text is not None}
    if len(texts) < len(read_texts):
        return found + [f"{course_dir / name} is missing" for name in read_texts if name not in texts]
    headings |= {heading.strip() for heading in _HEADING.findall(texts[RUBRIC])}
    reports = config.get("reports", {})
    for key, report in reports.items():
        brief = _text(course_dir / report.get("brief", "")) if report.get("brief") else None
        if brief is not None:
            found += brief_problems(key, report, brief, exercises, headings, solutions)
    found += rubric_problems(texts[RUBRIC], list(reports))
    for name, text in texts.items():
        found += reference_problems(name, text, exercises, headings, solutions)
    found += [f"{SESSION_PLAN} does not refer to reports.{key}.deadline in course/course.toml"
              for key in reports if f"reports.{key}.deadline" not in texts[SESSION_PLAN]]
    return found


def _text(path: Path) -> str | None:
    # bytes that are not UTF-8 become U+FFFD: the checks still read the rest
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def shape_problems(config: dict[str, Any]) -> list[str]:
    """The tables a course file must hold as tables: ``[course]``, ``[evaluation]``,
    ``[coursework]``, and ``[reports.KEY]`` for each report; and each list of notebooks a list."""
    found = [f"[{name}] is not a table" for name in ("course", EVALUATION_TABLE, "coursework", "reports")
             if name in config and not isinstance(config[name], dict)]
    reports = config.get("reports", {})
    if isinstance(reports, dict):
        found += [f"[reports.{key}] is not a table" for key, report in reports.items()
                  if not isinstance(report, dict)]
        found += [f"reports.{key}.{field} is not a list of notebook numbers"
                  for key, report in reports.items() if isinstance(report, dict)
                  for field in ("notebooks", "optional_notebooks")
                  if not isinstance(report.get(field, []), list)]
    coursework = config.get("coursework", {})
    if isinstance(coursework, dict) and not isinstance(coursework.get("notebooks", []), list):
        found.append("coursework.notebooks is not a list of notebook numbers")
    return found


def _notebook_file(number: str, solutions: Path) -> Path | None:
    found = sorted(solutions.glob(f"{number}_*.ipynb"))
    return found[0] if len(found) == 1 else None


def notebook_facts(solutions: Path = SOLUTIONS_DIR) -> tuple[set[str], set[str]]:
    """The exercise ids and the Markdown headings (without their #s) of every solution notebook."""
    exercises: set[str] = set()
    headings: set[str] = set()
    for path in sorted(Path(solutions).glob(NOTEBOOK_GLOB)):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            kit = cell.get("metadata", {}).get("kit", {})
            if "exercise" in kit:
                exercises.add(kit["exercise"])
            if cell["cell_type"] == "markdown":
                headings.update(h.strip() for h in _HEADING.findall("".join(cell["source"])))
    return exercises, headings


def notebook_references(text: str) -> set[str]:
    """Two-digit notebook numbers named as "notebook 04", "notebooks 01–03", "notebooks 01, 02
    and 03" (ranges expanded), or by file stem in backticks (`04_doc2vec`)."""
    found: set[str] = set()
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
    found: set[str] = set()
    for match in _EXERCISE.finditer(text):
        notebook, first = match.group(1), int(match.group(2))
        found.add(f"{notebook}.{first}")
        for separator, other in re.findall(r"\s*([–-]|,|and|or)\s*\d+\.(\d+)", match.group(3)):
            last = int(other)
            numbers = range(first + 1, last + 1) if separator in "–-" else [last]
            found.update(f"{notebook}.{n}" for n in numbers)
    return found


def reference_problems(name: str, text: str, exercises: set[str], headings: set[str],
                       solutions: Path = SOLUTIONS_DIR) -> list[str]:
    """Notebooks, stems, exercises and sections named in a Markdown file that do not exist. A
    section is named in italics after "section" or "sections" ("sections *A* to *B*"); a
    heading of a notebook (or of the rubric) must start with its name."""
    found = [f"{name} names notebook {number}, which solutions/ does not hold"
             for number in sorted(notebook_references(text)) if _notebook_file(number, solutions) is None]
    found += [f"{name} names `{number}_{stem}`, which is not a notebook in solutions/"
              for number, stem in _STEM.findall(text) if not (solutions / f"{number}_{stem}.ipynb").is_file()]
    found += [f"{name} names Exercise {exercise}, which no solution notebook has"
              for exercise in sorted(exercise_references(text)) if exercise not in exercises]
    sections = [" ".join(section.split()) for pair in _SECTION.findall(text) for section in pair if section]
    found += [f"{name} names the section *{section}*, which starts no heading of the notebooks or rubric"
              for section in sections if not any(h.startswith(section) for h in headings)]
    return found


def config_problems(config: dict[str, Any], course_dir: Path = COURSE_DIR,
                    solutions: Path = SOLUTIONS_DIR) -> list[str]:
    """What is wrong with a parsed course file: name, repository, significance level, weights,
    deadlines, word limits, notebooks and briefs."""
    found = shape_problems(config)
    if found:
        return found
    reports, coursework = config.get("reports", {}), config.get("coursework", {})
    if not config.get("course", {}).get("name"):
        found.append("[course] has no name")
    found += repository_problems(config.get("course", {}))
    found += evaluation_problems(config)
    if not reports:
        found.append("course.toml defines no [reports.*]")
    weights = {f"reports.{key}.weight": report.get("weight") for key, report in reports.items()}
    weights |= {f"coursework.{key}": coursework.get(key) for key in COURSEWORK_WEIGHTS}
    found += [f"{name} is {weight!r}, not a whole percentage from 0 to 100"
              for name, weight in weights.items() if not _percentage(weight)]
    if all(isinstance(w, int) for w in weights.values()) and sum(weights.values()) != 100:
        found.append(f"the weights sum to {sum(weights.values())}, not 100: {weights}")
    for key, report in reports.items():
        found += _report_problems(key, report, Path(course_dir), Path(solutions))
    found += [f"coursework names notebook {number!r}, which solutions/ does not hold"
              for number in coursework.get("notebooks", [])
              if _notebook_file(number, Path(solutions)) is None]
    baseline, main = reports.get("baseline", {}).get("deadline"), reports.get("main", {}).get("deadline")
    if type(baseline) is datetime.date and type(main) is datetime.date and not baseline < main:
        found.append(f"the baseline report is due on {baseline}, not before the main report ({main})")
    return found


def _percentage(weight: object) -> bool:
    return isinstance(weight, int) and not isinstance(weight, bool) and 0 <= weight <= 100


def _report_problems(key: str, report: dict[str, Any], course_dir: Path, solutions: Path) -> list[str]:
    found = []
    deadline, limit = report.get("deadline"), report.get("word_limit")
    if type(deadline) is not datetime.date:
        found.append(f"reports.{key}.deadline is {deadline!r}, not an ISO date (YYYY-MM-DD)")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
        found.append(f"reports.{key}.word_limit is {limit!r}, not a positive whole number")
    if not report.get("notebooks"):
        found.append(f"reports.{key} draws on no notebooks")
    found += [f"reports.{key} names notebook {number!r}, which solutions/ does not hold"
              for number in [*report.get("notebooks", []), *report.get("optional_notebooks", [])]
              if _notebook_file(number, solutions) is None]
    brief = course_dir / report.get("brief", "")
    if not report.get("brief") or not brief.is_file():
        found.append(f"reports.{key}.brief: {brief} does not exist")
    return found


def repository_problem(value: object) -> str | None:
    """Why ``value`` is not a GitHub repository's ``owner/name``; None when it is one."""
    if isinstance(value, str) and _GITHUB_REPO.fullmatch(value) and not value.endswith(".git"):
        return None
    return f"{value!r} is not a GitHub repository's owner/name (e.g. my-course/sentiment-practical)"


def repository_problems(course: dict[str, Any]) -> list[str]:
    """``[course] student_repository``: the students' GitHub repository (``owner/name``) that
    ``kit release --student-repo`` names in the copy's README, or still "TO BE SET: ..."."""
    if REPOSITORY_KEY not in course:
        return [f"[course] has no {REPOSITORY_KEY} (owner/name, or \"{UNSET}: ...\" until it is chosen)"]
    value = course[REPOSITORY_KEY]
    if isinstance(value, str) and value.startswith(UNSET):
        return []
    problem = repository_problem(value)
    return [f"[course] {REPOSITORY_KEY}: {problem}"] if problem else []


def evaluation_problems(config: dict[str, Any]) -> list[str]:
    """``[evaluation] alpha``: the course's significance level, which the notebooks test at
    (``settings.alpha``), a number in (0, 0.5)."""
    table = config.get(EVALUATION_TABLE)
    if not isinstance(table, dict) or ALPHA_KEY not in table:
        return [f"[{EVALUATION_TABLE}] has no {ALPHA_KEY} (the course's significance level, e.g. 0.05)"]
    problem = alpha_problem(table[ALPHA_KEY])
    return [f"[{EVALUATION_TABLE}] {ALPHA_KEY} {problem}"] if problem else []


def brief_problems(key: str, report: dict[str, Any], text: str, exercises: set[str], headings: set[str],
                   solutions: Path = SOLUTIONS_DIR) -> list[str]:
    """A brief names its report's notebooks and what exists, and refers to the course file for
    its date, limit and weight instead of writing them."""
    name = report.get("brief", key)
    found = reference_problems(name, text, exercises, headings, solutions)
    missing = set(report.get("notebooks", [])) | set(report.get("optional_notebooks", []))
    missing -= notebook_references(text)
    if missing:
        found.append(f"{name} does not name notebook(s) {sorted(missing)} of reports.{key}")
    found += [f"{name} does not refer to reports.{key}.{setting} in course/course.toml"
              for setting in ("deadline", "word_limit", "weight") if f"reports.{key}.{setting}" not in text]
    if dates := _DATE.findall(text):
        found.append(f"{name} writes a date ({', '.join(dates)}): refer to reports.{key}.deadline instead")
    return found


def _table(lines: list[str], start: int) -> list[list[str]]:
    """The Markdown table that begins at or after line ``start``: its rows as lists of cells,
    header first, the separator row left out."""
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


def _band(text: str) -> tuple[int, int] | None:
    match = re.fullmatch(r"(\d+)\s*[–-]\s*(\d+)\s*%?", text)
    return (int(match[1]), int(match[2])) if match else None


def rubric_problems(text: str, report_keys: list[str]) -> list[str]:
    """The rubric's format (see its last section): marks summing to 100 per report, five levels
    per criterion, and bands that follow the levels' shares."""
    lines = text.splitlines()
    shares_at = next((i for i, line in enumerate(lines) if line.startswith("| level | share")), None)
    bands_at = next((i for i, line in enumerate(lines) if line.startswith("| marks | excellent")), None)
    if shares_at is None or bands_at is None:
        return ["the rubric lacks its table of levels (| level | share ...) "
                "or of bands (| marks | excellent ...)"]
    shares = {row[0]: _band(row[1]) if len(row) > 1 else None for row in _table(lines, shares_at)[1:]}
    found = [] if list(shares) == list(LEVELS) else [f"the levels are {list(shares)}, not {list(LEVELS)}"]
    if None in shares.values():
        return [*found, "the table of levels gives a share that is not a range such as 85–100 %"]
    bands, band_problems = _bands(_table(lines, bands_at)[1:], shares)
    return found + band_problems + _criteria_problems(lines, report_keys, bands)


def _bands(rows: list[list[str]], shares: dict[str, Any]) -> tuple[set[int], list[str]]:
    """The marks the table of bands covers, and what is wrong with its rows."""
    found: list[str] = []
    covered: set[int] = set()
    for row in rows:
        read_ranges = [_band(cell) for cell in row[1:]]
        ranges = [cells for cells in read_ranges if cells is not None]
        if not row[0].isdigit() or not ranges or len(ranges) < len(read_ranges):
            found.append(f"the band row {row} is not marks followed by ranges such as 17–20")
            continue
        marks = int(row[0])
        covered.add(marks)
        lows, highs = [low for low, _ in ranges], [high for _, high in ranges]
        expected_lows = [-(-shares[level][0] * marks // 100) for level in LEVELS if level in shares]
        if lows != expected_lows:
            found.append(f"bands for {marks} marks start at {lows}, the shares give {expected_lows}")
        if highs != [marks] + [low - 1 for low in lows[:-1]] or lows[-1] != 0:
            found.append(f"bands for {marks} marks {ranges} do not run from {marks} to 0 without a gap")
    return covered, found


def _criteria_problems(lines: list[str], report_keys: list[str], bands: set[int]) -> list[str]:
    """Each report's section: a marks table summing to 100, and a table of levels per criterion."""
    sections = {}
    for i, line in enumerate(lines):
        if match := re.fullmatch(r"## .+ \(`(\w+)`\)\s*", line):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
            sections[match.group(1)] = (i, end)
    found = []
    for key in report_keys:
        if key not in sections:
            found.append(f"the rubric has no section '## ... (`{key}`)' for reports.{key}")
            continue
        start, end = sections[key]
        rows = _table(lines[:end], start)
        if not rows or rows[0] != ["ID", "Criterion", "Marks"] or len(rows) < 2:
            found.append(f"the {key} section's first table is not '| ID | Criterion | Marks |'")
            continue
        *criteria, total = rows[1:]
        if any(len(row) < 3 for row in rows[1:]):
            found.append(f"the {key} marks table has a row without ID, criterion and marks")
            continue
        if total[1] != "**Total**":
            found.append(f"the {key} marks table does not end in a **Total** row")
        marks = {row[0]: int(row[2]) for row in criteria if row[2].isdigit()}
        stated = total[2].strip("*")
        if len(marks) < len(criteria) or stated != "100" or sum(marks.values()) != 100:
            found.append(f"the {key} criteria's marks sum to {sum(marks.values())}, "
                         f"the total row says {stated}, and both must be 100")
        for criterion, value in marks.items():
            if value not in bands:
                found.append(f"{criterion} is worth {value} marks, a value the table of bands lacks")
            pattern = re.compile(rf"### {re.escape(criterion)}\b")
            heading = next((i for i in range(start, end) if pattern.match(lines[i])), None)
            levels = [row[0] for row in _table(lines[:end], heading)[1:]] if heading is not None else []
            if levels != list(LEVELS):
                found.append(f"{criterion} has levels {levels}, "
                             f"not a '### {criterion}' table of {list(LEVELS)}")
    return found
