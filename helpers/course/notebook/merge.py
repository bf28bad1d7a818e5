"""Merge a student's notebook into the graded one.

The graded notebook is the released notebook (with its hidden checks, when grading a class)
with the student's exercise cells (matched by exercise id) and any cells the student added
put in. Every other cell, and every stored output, comes from the reference: a student
cannot pass by editing outputs or checks.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass

import nbformat
from nbformat import NotebookNode

from helpers import syntax
from helpers.course.notebook.cells import exercise_id, is_hidden
from helpers.course.notebook.release import without_run_on

#: How alike (difflib's ratio) a cell without an id must be to a reference cell to be taken
#: for it, edited.
EDITED_SIMILARITY = 0.6


@dataclass(frozen=True)
class Location:
    """Where a submission holds one exercise: the one notion ``kit check`` and grading share.

    Parameters
    ----------
    exercise : str
        ``"N.M"``.
    cell_id : str or None
        The submission's cell that holds it; None when no cell does.
    functions : tuple of str
        The functions (and classes) the released exercise cell defines.
    by_function : bool
        The exercise cell is gone (deleted, or replaced by a cell the student typed), and
        ``cell_id`` is the student's own cell that defines those functions.
    """

    exercise: str
    cell_id: str | None
    functions: tuple[str, ...] = ()
    by_function: bool = False

    @property
    def note(self) -> str:
        """What the student should know about where the exercise was found ('' when in its cell)."""
        names = ", ".join(self.functions)
        if self.by_function:
            return (f"its exercise cell is not in your notebook: checked in your own cell that "
                    f"defines {names}")
        if self.cell_id is None:
            defining = f", and no cell of yours defines {names}" if names else ""
            return (f"its exercise cell is not in your notebook (deleted?){defining}: copy the cell "
                    "back from the released notebook in notebooks/")
        return ""


def locate(reference: NotebookNode, submission: NotebookNode) -> dict[str, Location]:
    """Where the submission holds each of the reference's exercises.

    An exercise is in the cell with its exercise id (the cell with the reference cell's id
    first: a copy of an exercise cell keeps the id only on the original); else in the last
    cell the student added whose code defines every function the released exercise cell
    defines (a cell retyped by hand, the original deleted); else nowhere.
    """
    submission = with_cell_ids(submission, reference)
    ref_ids = {cell.id for cell in reference.cells}
    by_exercise = {exercise_id(c): c for c in submission.cells if exercise_id(c) is not None}
    by_id = {c.get("id"): c for c in submission.cells}
    added = [c for c in submission.cells if c.cell_type == "code" and c.get("id") not in ref_ids]
    found = {}
    for cell in reference.cells:
        ex = exercise_id(cell)
        if ex is None:
            continue
        functions = tuple(sorted(_functions(cell.source)))
        same_cell = by_id.get(cell.id)
        theirs = same_cell if same_cell is not None and exercise_id(same_cell) == ex else \
            by_exercise.get(ex) or same_cell
        if theirs is not None:
            found[ex] = Location(ex, theirs.id, functions)
            continue
        defining = [c for c in added if functions and set(functions) <= _functions(c.source)]
        found[ex] = Location(ex, defining[-1].id if defining else None, functions, bool(defining))
    return found


def _functions(source: str) -> set[str]:
    """The functions and classes a cell defines at its top level (none if it does not parse)."""
    try:
        tree = syntax.parse(source)
    except syntax.UNPARSABLE:
        return set()
    return {node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def graded_notebook(reference: NotebookNode, submission: NotebookNode) -> NotebookNode:
    """Merge a student's work into the released reference notebook.

    Exercise cells take the student's source from where ``locate`` finds the exercise (its
    cell, else the student's cell defining its functions, which then runs only there); cells
    the student added (ids unknown to the reference) are kept, without outputs, after the
    reference cell they followed. Every other cell, and every stored output, comes from
    the reference. No cell keeps the ``raises-exception`` tag that lets Run All go on.

    Parameters
    ----------
    reference : NotebookNode
        The released (student) version of the solution notebook, with reference outputs.
    submission : NotebookNode
        The student's notebook.

    Returns
    -------
    NotebookNode
        A new notebook; the inputs are not modified.
    """
    submission = with_cell_ids(submission, reference)
    graded = nbformat.from_dict(reference)
    ref_ids = {cell.id for cell in reference.cells}
    by_id = {c.get("id"): c for c in submission.cells}
    located = locate(reference, submission)
    moved = {where.cell_id for where in located.values() if where.by_function}
    added_after: dict[str | None, list[NotebookNode]] = {}
    previous = None
    for cell in submission.cells:
        if cell.get("id") in ref_ids:
            previous = cell.id
        elif cell.get("id") not in moved:
            extra = nbformat.from_dict(cell)
            if isinstance(extra.get("metadata"), dict):  # a copied exercise or check cell is theirs
                extra.metadata.pop("kit", None)
            if extra.cell_type == "code":
                extra.outputs, extra.execution_count = [], None
            added_after.setdefault(previous, []).append(extra)

    cells = list(added_after.get(None, []))
    for cell in graded.cells:
        ex = exercise_id(cell)
        if ex is not None and located[ex].cell_id is not None:
            cell.source = by_id[located[ex].cell_id].source
        cells.append(cell)
        cells.extend(added_after.get(cell.id, []))
    graded.cells = cells
    without_run_on(graded)  # an error fails its cell again, in released and added cells alike
    return graded


def with_cell_ids(submission: NotebookNode, reference: NotebookNode) -> NotebookNode:
    """The submission with an id on every cell (notebooks saved before nbformat 4.5 have none).

    A cell without an id takes the id of the reference's cell for the same exercise, else of
    the reference cell it stands in for: the two notebooks are aligned cell by cell
    (``difflib``, on type and source), so a cell the student edited in place still takes
    its reference cell's id (and is graded as that cell, not run a second time as their
    own). Any other cell is the student's own and gets a new id. Returns the submission
    itself when no id is missing.
    """
    if all(cell.get("id") for cell in submission.cells):
        return submission
    filled = nbformat.from_dict(submission)
    used = {cell.id for cell in filled.cells if cell.get("id")}
    by_exercise = {exercise_id(cell): cell.id for cell in reference.cells if exercise_id(cell)}
    matched = _aligned(filled.cells, [cell for cell in reference.cells if not is_hidden(cell)])
    for number, cell in enumerate(filled.cells):
        if cell.get("id"):
            continue
        ex = exercise_id(cell)
        candidates = [by_exercise[ex]] if ex in by_exercise else [matched.get(number)]
        new = next((i for i in candidates if i is not None and i not in used), None)
        while new is None or new in used:
            new, number = f"student-{number}", number + 1
        cell.id = new
        used.add(new)
    return filled


def _aligned(cells: list[NotebookNode], reference: list[NotebookNode]) -> dict[int, str]:
    """``{position in cells: id of the reference cell it stands for}``, for cells that are not
    exercises (those match by exercise id): equal runs pair up, and so do cells of the same
    type replaced in place by a similar one (edited)."""
    mine = [j for j, cell in enumerate(cells) if exercise_id(cell) is None]
    theirs = [cell for cell in reference if exercise_id(cell) is None]
    matcher = difflib.SequenceMatcher(None, [(c.cell_type, c.source) for c in theirs],
                                      [(cells[j].cell_type, cells[j].source) for j in mine],
                                      autojunk=False)
    pairs = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("equal", "replace"):
            continue
        for i, j in zip(range(i1, i2), range(j1, j2), strict=False):
            ours, ref = cells[mine[j]], theirs[i]
            if ours.cell_type == ref.cell_type and (tag == "equal" or difflib.SequenceMatcher(
                    None, ref.source, ours.source).ratio() >= EDITED_SIMILARITY):
                pairs[mine[j]] = ref.id
    return pairs


def code_numbers(nb: NotebookNode) -> dict[str, int]:
    """Map cell id -> nbval's ``Cell N`` number (position among code cells)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    return {c.id: n for n, c in enumerate(code)}



def heading_above(nb: NotebookNode, cell_id: str) -> str:
    """The last Markdown heading above a cell (what the student sees as its title), or ""."""
    index = next(i for i, cell in enumerate(nb.cells) if cell.get("id") == cell_id)
    for cell in reversed(nb.cells[:index]):
        headings = [line.lstrip("#").strip() for line in cell.source.splitlines()
                    if cell.cell_type == "markdown" and line.startswith("#")]
        if headings:
            return headings[-1]
    return ""
