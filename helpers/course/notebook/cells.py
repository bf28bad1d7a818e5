"""The course's notebook format: what marks an exercise, a check, a hidden check, an answer.

Conventions (nbgrader's, so instructors who know nbgrader feel at home):

- Exercise code sits between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` lines in a code
  cell whose metadata names the exercise: ``{"kit": {"exercise": "1.2"}}``. The block becomes
  ``# YOUR CODE HERE`` and ``raise NotImplementedError("exercise 1.2")``, indented like the
  ``BEGIN`` line; what stands around it (signature, docstring) stays.
- Markdown answers sit between ``=== BEGIN ANSWER ===`` and ``=== END ANSWER ===`` and become
  ``YOUR ANSWER HERE``. The cell's metadata names the question, ``{"kit": {"answer": "1.a"}}``,
  so ``kit grade`` can collect the students' answers (``helpers.course.classroom.answers``); it may
  give the answer's points (``"points": 2``, default ``ANSWER_POINTS``) and its marking scheme
  (``"marking": ["1: names the winner", ...]``), which the release leaves out.
- A cell whose first line is ``# NBVAL_CHECK_OUTPUT`` keeps its output as the reference that
  nbval compares against; every other output is cleared.
- An exercise's own checks are the checked cells that name it, ``{"kit": {"checks": "1.2"}}``.
  They stand after the exercise and before the next one, and every exercise has at least one
  that the student can see; other checked cells check the lab, not an exercise.
- A figure of the student's own results against the kit's is a code cell marked
  ``{"kit": {"figure": "yours"}}``: every notebook with an exercise has one (tested), and it
  draws from the student's functions, so an unfinished exercise stops it as it stops a check.
- A written answer that begins ``**Prediction.`` asks the student to predict what the code
  cells after it show, up to the next heading or written answer; the release marks those
  cells ``{"kit": {"reveal": "1.b"}}`` (not exercises, checks or figures of the student's own
  results), and the kit's kernel folds what they show until the student opens it.
- Hidden checks (nbgrader's idea, our markers): a checked cell whose code lies entirely
  between ``### BEGIN HIDDEN CHECKS`` and ``### END HIDDEN CHECKS`` calls the student's code on
  inputs the student has not seen. Release removes it; grading keeps it.

This module reads the format; ``release`` turns solutions into the students' notebooks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import nbformat
from nbformat import NotebookNode

from helpers.errors import KitError

CHECK_MARKER = "# NBVAL_CHECK_OUTPUT"
CHECK_TAG = "nbval-check-output"
SOLUTION_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION[^\n]*(?:\n|$)",
    re.MULTILINE | re.DOTALL,
)
ANSWER_BLOCK = re.compile(r"=== BEGIN ANSWER ===.*?=== END ANSWER ===", re.DOTALL)
#: A written answer's points when its cell's metadata gives none (``kit.points``).
ANSWER_POINTS = 1.0
#: An exercise's points when its cell's metadata gives none (``kit.points``).
DEFAULT_POINTS = 1.0
#: ``kit.figure`` of a cell that plots the student's own results against the kit's.
OWN_RESULTS_FIGURE = "yours"
#: How a written answer that asks for a prediction begins (before the cells that answer it).
PREDICTION_MARK = "**Prediction."
#: The ``kit`` metadata key the release gives a cell whose output answers a prediction: the
#: prediction's answer id (``helpers.course.student.reveal`` folds that output in the lab).
REVEAL_KEY = "reveal"
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN CHECKS", "### END HIDDEN CHECKS"
#: The first line of a hidden block may say what it tests, for the student's feedback.
INTENT_MARK = "# Intent:"
#: A hidden check's lines shorter than this are too common to give it away (``print(_p)``).
SECRET_LINE_CHARS = 12
HIDDEN_BLOCK = re.compile(rf"^[ \t]*{HIDDEN_BEGIN}[^\n]*\n.*?^[ \t]*{HIDDEN_END}[^\n]*(?:\n|$)",
                          re.MULTILINE | re.DOTALL)


def kit_metadata(cell: Mapping) -> dict:
    """A cell's ``kit`` metadata; empty when missing or malformed (a student's notebook may
    hold anything there)."""
    metadata = cell.get("metadata")
    found = metadata.get("kit") if isinstance(metadata, dict) else None
    return found if isinstance(found, dict) else {}


def is_own_results_figure(cell: NotebookNode) -> bool:
    """Whether a cell plots the student's own results against the kit's.

    Parameters
    ----------
    cell : NotebookNode
        Any cell; malformed metadata reads as none (``kit_metadata``).

    Returns
    -------
    bool
        True for a code cell whose ``kit.figure`` is ``OWN_RESULTS_FIGURE``.
    """
    return cell.get("cell_type") == "code" and kit_metadata(cell).get("figure") == OWN_RESULTS_FIGURE


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def exercise_id(cell: NotebookNode) -> str | None:
    """Return the exercise id stored in a cell's metadata (``kit.exercise``), if it is a string."""
    return _text(kit_metadata(cell).get("exercise"))


def hidden_intent(source: str) -> str:
    """What a hidden check tests, in the words a student may read: the ``# Intent:`` line
    that opens its hidden block ("" when it has none). Nothing else of a hidden check is
    ever shown."""
    try:
        intent = hidden_block(source)[1]
    except KitError:  # no hidden block
        return ""
    return intent[0].strip()[len(INTENT_MARK):].strip() if intent else ""


def hidden_block(source: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """A hidden-check cell's source cut at its (first) hidden block, as lines: what comes
    before it with the begin marker, its ``# Intent:`` line (if any), its code, and the end
    marker with what follows.

    Raises
    ------
    KitError
        If the source has no block from a begin marker to an end marker.
    """
    found = HIDDEN_BLOCK.search(source)
    if found is None:
        raise KitError(f"a hidden check needs both of its markers ('{HIDDEN_BEGIN}' and '{HIDDEN_END}').")
    begin, *body, end = found.group(0).splitlines()
    intent = body[:1] if body and body[0].strip().startswith(INTENT_MARK) else []
    return ([*source[:found.start()].splitlines(), begin], intent, body[len(intent):],
            [end, *source[found.end():].splitlines()])


def hidden_lines(notebook: NotebookNode) -> tuple[str, ...]:
    """The lines of a notebook's hidden checks that no student may read, longest first: each
    stripped line of a hidden block but its markers and ``# Intent:`` line (which the
    student's feedback shows), when it has at least ``SECRET_LINE_CHARS`` characters."""
    lines = {line.strip() for cell in notebook.cells if cell.cell_type == "code"
             for block in HIDDEN_BLOCK.findall(cell.source) for line in block.splitlines()}
    secret = {line for line in lines if len(line) >= SECRET_LINE_CHARS and not line.startswith(
        (HIDDEN_BEGIN, HIDDEN_END, INTENT_MARK))}
    return tuple(sorted(secret, key=lambda line: (-len(line), line)))


def points_of(solution: NotebookNode) -> dict[str, float]:
    """Each exercise's points: its cell's ``kit.points`` in the solution (default 1), or the
    sum of its checks' when they declare their own (``check_points_of``).

    Raises
    ------
    KitError
        If a cell's points are not a positive number, some of an exercise's checks declare
        points and others do not, or both the exercise and its checks declare them.
    """
    by_check = check_points_of(solution)
    found = {}
    metadata = {cell.get("id"): kit_metadata(cell) for cell in solution.cells}
    for ex in exercises(solution):
        own = metadata[ex.cell_ids[0]]
        declared = [by_check[c] for c in ex.cell_ids[1:] if c in by_check]
        if declared and "points" in own:
            raise KitError(f"exercise {ex.id}: declare its points on the exercise or its checks, not both.")
        if declared and len(declared) != len(ex.cell_ids) - 1:
            raise KitError(f"exercise {ex.id}: some of its checks declare points and others do not; "
                           "declare them on every check (partial credit) or on none.")
        found[ex.id] = float(sum(declared)) if declared else _positive(own, f"exercise {ex.id}")
    return found


def check_points_of(solution: NotebookNode) -> dict[str, float]:
    """The points of each check cell that declares its own (``kit.points``), by cell id.

    An exercise whose checks declare points is worth their sum, and a student whose exercise
    cell runs earns the points of each of its checks that passes (partial credit,
    ``verdict.decide``).

    Raises
    ------
    KitError
        If a check's points are not a positive number.
    """
    return {cell.id: _positive(kit_metadata(cell), f"a check of exercise {checked_exercise(cell)}")
            for cell in solution.cells
            if checked_exercise(cell) is not None and "points" in kit_metadata(cell)}


def _positive(metadata: Mapping, what: str) -> float:
    value = metadata.get("points", DEFAULT_POINTS)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise KitError(f"{what}: points must be a positive number, not {value!r}.")
    return float(value)


def answer_points(cell: NotebookNode, name: str = "notebook") -> float:
    """What a written answer is worth: its cell's ``kit.points`` (default ``ANSWER_POINTS``).

    Raises
    ------
    KitError
        If the points are not a positive number.
    """
    value = kit_metadata(cell).get("points", ANSWER_POINTS)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise KitError(f"{name}, answer {answer_id(cell)}: points must be a positive number, not {value!r}.")
    return float(value)


def marking_scheme(cell: NotebookNode) -> tuple[str, ...]:
    """What earns an answer's marks, one line each (``kit.marking``: a list of text, kept out
    of the release, since it would give the answer away)."""
    lines = kit_metadata(cell).get("marking", [])
    return tuple(line for line in lines if isinstance(line, str)) if isinstance(lines, list) else ()


def answer_id(cell: Mapping) -> str | None:
    """Return the written-answer id stored in a markdown cell's metadata (``kit.answer``), if any."""
    return _text(kit_metadata(cell).get("answer")) if cell.get("cell_type") == "markdown" else None


def is_checked(cell: NotebookNode) -> bool:
    """Return True if nbval compares this code cell's output (marker comment or tag)."""
    first_line = cell.source.lstrip().split("\n", 1)[0].strip()
    return first_line == CHECK_MARKER or CHECK_TAG in cell.get("metadata", {}).get("tags", [])


def checked_exercise(cell: NotebookNode) -> str | None:
    """Return the exercise a checked cell checks (``kit.checks``), if any."""
    return _text(kit_metadata(cell).get("checks"))


def without_hidden(notebook: NotebookNode) -> NotebookNode:
    """A copy of ``notebook`` without its hidden-check cells: they run in the grader, never in
    a kernel, where they would rebind the notebook's own names (``mine``, ``model``)."""
    shown = nbformat.from_dict(notebook)
    shown.cells = [cell for cell in shown.cells if not is_hidden(cell)]
    return shown


def is_hidden(cell: NotebookNode) -> bool:
    """Return True for a hidden-check cell: checked, and all its code inside the hidden markers.

    Raises
    ------
    KitError
        If hidden-check markers stand anywhere else (unterminated, or beside other code).
    """
    if cell.cell_type != "code" or (HIDDEN_BEGIN not in cell.source and HIDDEN_END not in cell.source):
        return False
    rest = HIDDEN_BLOCK.sub("", cell.source)
    lines = [line for line in rest.splitlines() if line.strip() and line.strip() != CHECK_MARKER]
    stray = HIDDEN_BEGIN in rest or HIDDEN_END in rest
    if not is_checked(cell) or lines or stray or not checked_exercise(cell):
        raise KitError(f"cell {cell.get('id')}: hidden checks must fill a {CHECK_MARKER} cell, "
                       f"from '{HIDDEN_BEGIN}' to '{HIDDEN_END}', that names its exercise "
                       '({"kit": {"checks": "N.M"}}).')
    return True


def is_graded_hidden(cell: NotebookNode) -> bool:
    """``is_hidden`` for a notebook being graded: markers a student typed in a cell of their
    own, where ``is_hidden`` would refuse them, are their code, not a hidden check."""
    try:
        return is_hidden(cell)
    except KitError:
        return False


@dataclass(frozen=True)
class Exercise:
    """An exercise and the cells that grade it: its own cell, then its own checks (by id)."""

    id: str
    cell_ids: tuple[str, ...]


def exercises(nb: NotebookNode, name: str = "notebook") -> list[Exercise]:
    """List a notebook's exercises, each with the ids of the cells that decide it.

    Raises
    ------
    KitError
        If an exercise has no check of its own that the student can see, or a check names an
        exercise that is not the one it follows.
    """
    found: list[Exercise] = []
    visible: dict[str, int] = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        ex, checked = exercise_id(cell), checked_exercise(cell)
        where = f"{name}, cell {cell.get('id')}"
        if ex is not None:
            if checked is not None:
                raise KitError(f"{where}: an exercise cell cannot also be a check.")
            if ex in visible:
                raise KitError(f"{where}: exercise {ex} appears twice.")
            found.append(Exercise(ex, (cell.id,)))
            visible[ex] = 0
        elif checked is not None:
            if not is_checked(cell):
                raise KitError(f"{where}: a check of exercise {checked} must start with {CHECK_MARKER} "
                               f"(or carry the {CHECK_TAG} tag).")
            if not found or found[-1].id != checked:
                raise KitError(f"{where}: checks exercise {checked} but does not stand between that "
                               "exercise and the next one.")
            found[-1] = Exercise(checked, (*found[-1].cell_ids, cell.id))
            visible[checked] += not is_hidden(cell)
    for exercise in found:
        if not visible[exercise.id]:
            raise KitError(f"{name}, exercise {exercise.id} (cell {exercise.cell_ids[0]}): no check of its "
                           f"own; add a {CHECK_MARKER} cell after it with "
                           f'{{"kit": {{"checks": "{exercise.id}"}}}}.')
    return found


def answer_cells(nb: NotebookNode, name: str = "notebook") -> list[NotebookNode]:
    """A solution's written-answer cells, in order.

    Raises
    ------
    KitError
        If a markdown cell holds a model answer but no answer id, or two cells share an id.
    """
    found: dict[str, NotebookNode] = {}
    for cell in nb.cells:
        where = f"{name}, cell {cell.get('id')}"
        answer = answer_id(cell)
        if cell.cell_type == "markdown" and ANSWER_BLOCK.search(cell.source) and answer is None:
            raise KitError(f'{where}: a model answer needs an answer id; add {{"kit": {{"answer": "N.a"}}}} '
                           "to its metadata.")
        if answer is not None:
            if answer in found:
                raise KitError(f"{where}: answer {answer} appears twice.")
            found[answer] = cell
    return list(found.values())
