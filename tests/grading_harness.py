"""The tests' harness for grading many answers in one kernel (the mistake catalogue).

``grade_variants`` grades several answers to some exercises of a notebook through the one
grading engine (``grading.grade``), in one notebook and one kernel, so that a catalogue of
student mistakes runs in minutes; ``variants_notebook`` builds that notebook.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from helpers.course import config
from helpers.course.engine import grading
from helpers.course.engine.verdict import Verdict
from helpers.course.notebook.cells import Exercise, exercises
from helpers.course.notebook.merge import graded_notebook
from helpers.course.notebook.release import release_notebook
from helpers.errors import KitError

_SNAPSHOT = "__kit_state__"
# the snapshot leaves out the previous snapshot, which restoring it would bring back
_SNAPSHOT_SOURCE = f"{_SNAPSHOT} = dict(globals())\n{_SNAPSHOT}.pop({_SNAPSHOT!r}, None)"
# IPython's own names (_, __, _i, _ii, _iN, _N) are left alone: it keeps and culls them itself
_RESTORE_SOURCE = f"""\
for _kit_name in set(globals()) - set({_SNAPSHOT}) - {{{_SNAPSHOT!r}}}:
    if not __import__("re").fullmatch(r"_+|_i+|_i?\\d+", _kit_name):
        del globals()[_kit_name]
globals().update({_SNAPSHOT})"""


def _kernel_cell(source: str, cell_id: str) -> NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.id = cell_id
    return cell


def slice_end(nb: NotebookNode, named: Sequence[str], through: str | None = None) -> int:
    """The index of the cell after the last check of the later of the exercises ``named`` and
    ``through``: where a slice of ``nb`` that grades them is cut.

    Parameters
    ----------
    nb : NotebookNode
        A solution or graded notebook (the ids are its own cells').
    named : sequence of str
        Exercise ids (e.g. ``"4.1"``), at least one.
    through : str, optional
        An exercise the slice runs to at least.
    """
    found = {ex.id: ex for ex in exercises(nb)}
    ids = [cell.id for cell in nb.cells]
    return max(ids.index(found[ex].cell_ids[-1]) for ex in [*named, *([through] if through else [])]) + 1


def variants_notebook(solution: NotebookNode, answers: Mapping[str, Sequence[str]],
                      until: Mapping[str, Sequence[str | None]] | None = None, through: str | None = None
                      ) -> tuple[NotebookNode, dict[str, list[dict[str, Exercise]]]]:
    """One notebook that grades several answers to some of a notebook's exercises in one kernel.

    The graded notebook of a student who solved everything (hidden checks included) is cut
    after the last check of the last exercise named (or of ``through``). For each answer to an exercise, the
    notebook from that exercise's cell to the cut (or to the end of the exercise ``until``
    names) is repeated with the answer as the exercise cell, so the answer is graded on its
    own checks and on every later exercise's in its run (which should not be charged for
    it). Before each answer the kernel's names are put back as they
    were before the exercise (names added since are deleted, names rebound are restored), so
    no answer is graded on what an earlier one left behind; objects changed in place stay
    changed, so end each exercise's answers with its solution, which must pass again. The
    next exercise then starts from that state and the solved cells up to it.

    Parameters
    ----------
    solution : NotebookNode
        The instructor's notebook.
    answers : mapping of str to sequence of str
        For each exercise id (e.g. ``"1.2"``), the exercise cell's source for each answer.
    until : mapping of str to sequence of (str or None), optional
        For each exercise, for each of its answers, the exercise whose last check ends that
        answer's run (None, the default: the cut). The answer's own exercise grades it on that
        exercise only: e.g. solutions, whose later exercises the next exercise's runs grade
        anyway, and answers no later cell can see.
    through : str, optional
        An exercise the slice runs to at least: the cut is after the last check of the later of
        it and the last exercise named. So an exercise's answers graded in a notebook of their
        own run as far as they would beside every exercise up to ``through``.

    Returns
    -------
    (NotebookNode, dict of str to list of dict of str to Exercise)
        The notebook, and for each exercise named and each of its answers, the cells that
        decide that exercise and every later one in that answer's run.
    """
    reference = release_notebook(solution, hidden=True)
    complete = graded_notebook(reference, solution)
    found = {ex.id: ex for ex in exercises(complete)}
    unknown = [ex for ex in [*answers, *([through] if through else [])] if ex not in found]
    if unknown:
        raise KitError(f"No exercise {', '.join(unknown)} in this notebook "
                       f"(it has {', '.join(found) or 'none'}).")
    ids = [cell.id for cell in complete.cells]
    first_cell = {ex: ids.index(found[ex].cell_ids[0]) for ex in found}
    named = sorted(answers, key=first_cell.get)
    cut = slice_end(complete, named, through)
    ends = {ex: [cut if last is None else ids.index(found[last].cell_ids[-1]) + 1 for last in lasts]
            for ex, lasts in (until or {}).items()}
    cells, items, done = [], {}, 0
    for exercise in named:
        start = first_cell[exercise]
        name = exercise.replace(".", "_")  # cell ids allow no dots
        if done:  # back to the state before the previous exercise, then its solution onwards
            cells.append(_kernel_cell(_RESTORE_SOURCE, f"kit-restore-before-{name}"))
        cells += [*complete.cells[done:start], _kernel_cell(_SNAPSHOT_SOURCE, f"kit-snapshot-{name}")]
        graded = [ex for ex in found.values() if start <= first_cell[ex.id] < cut]
        items[exercise] = []
        for number, source in enumerate(answers[exercise]):
            suffix = f"-{name}-v{number}"
            end = ends[exercise][number] if exercise in ends else cut
            if not ids.index(found[exercise].cell_ids[-1]) < end <= cut:
                raise KitError(f"An answer to {exercise} must run to its own last check, and no further "
                               "than the cut (the last exercise named, or through).")
            cells.append(_kernel_cell(_RESTORE_SOURCE, f"kit-restore{suffix}"))
            for cell in complete.cells[start:end]:
                repeated = nbformat.from_dict(cell)
                repeated.id = cell.id + suffix
                if cell.id == found[exercise].cell_ids[0]:
                    repeated.source = source
                cells.append(repeated)
            items[exercise].append({ex.id: Exercise(ex.id, tuple(i + suffix for i in ex.cell_ids))
                                    for ex in graded if first_cell[ex.id] < end})
        done = start
    complete.cells = cells
    return complete, items


def grade_variants(solution: NotebookNode, answers: Mapping[str, Sequence[str]], work: Path,
                   timeout: float = config.CELL_TIMEOUT,
                   until: Mapping[str, Sequence[str | None]] | None = None, through: str | None = None
                   ) -> dict[str, list[dict[str, Verdict]]]:
    """Grade several answers to exercises of one notebook, as ``kit grade`` would.

    See ``variants_notebook``; the notebook runs under nbval in one fresh process.

    Returns
    -------
    dict of str to list of dict of str to Verdict
        For each exercise named and each of its answers, in order: the verdict on that
        exercise and on every later one (``Verdict.position`` is the first failing cell's:
        0 the exercise cell, 1 its first check...).
    """
    graded, items = variants_notebook(solution, answers, until, through)
    runs = [(exercise, run) for exercise, found in items.items() for run in found]
    every = [ex for _, run in runs for ex in run.values()]
    _, verdicts = grading.grade(graded, work, timeout, items=every)
    decided = iter(verdicts)
    found: dict[str, list[dict[str, Verdict]]] = {exercise: [] for exercise in items}
    for exercise, run in runs:
        found[exercise].append({ex_id: next(decided) for ex_id in run})
    return found
