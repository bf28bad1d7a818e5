"""Turn the instructor's ``solutions/`` into the students' ``notebooks/``.

Each cell is released as the format says (``cells``): solution blocks become stubs, model
answers ``YOUR ANSWER HERE``, hidden checks are removed, and only checked cells keep their
outputs; every code cell from the first exercise on is tagged ``raises-exception``, so
JupyterLab's Run All goes on past an unfinished exercise (grading removes the tag again).

The output is normalised (kernel metadata, execution counts = the code cell's position) and
byte-stable: releasing twice changes nothing. ``notebooks/RELEASED.sha256`` records what the
release wrote (``sha256sum -c`` reads it), so a notebook edited by hand since is never
overwritten without ``--force``, and then a copy is kept in ``backups/``.
"""

from __future__ import annotations

import copy
import hashlib
import re
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from helpers.course.config import BACKUPS_DIR, NOTEBOOKS_DIR, SOLUTIONS_DIR, backup_path, notebooks_in
from helpers.course.notebook.answer_text import ANSWER_PLACEHOLDER
from helpers.course.notebook.cells import (
    ANSWER_BLOCK,
    CHECK_MARKER,
    PREDICTION_MARK,
    REVEAL_KEY,
    SOLUTION_BLOCK,
    answer_cells,
    answer_id,
    answer_points,
    checked_exercise,
    exercise_id,
    exercises,
    is_checked,
    is_hidden,
    is_own_results_figure,
    points_of,
)
from helpers.course.notebook.compare import check_tolerance
from helpers.errors import KitError
from helpers.files import atomic_write

RUN_ON_TAG = "raises-exception"  # JupyterLab's Run All goes on past an error in such a cell
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
_KEPT_CELL_METADATA = ("kit", "tags")
_KEPT_NOTEBOOK_METADATA = ("kit",)


def blank_answers(source: str, points: float | None = None) -> str:
    """Replace every model answer in a markdown cell's ``source`` with ``YOUR ANSWER HERE``,
    preceded by what the answer is worth when ``points`` are given."""
    note = "" if points is None else f"*Written answer: {_points(points)}, marked by hand.*\n\n"
    return ANSWER_BLOCK.sub(lambda _: note + ANSWER_PLACEHOLDER, source)


def released_answer(cell: NotebookNode, name: str = "notebook") -> str:
    """What the release makes of a markdown cell: an answer cell blanked with its points noted."""
    return blank_answers(cell.source, answer_points(cell, name) if answer_id(cell) else None)


def stub_source(source: str, exercise: str, points: float | None = None) -> str:
    """Replace every solution block in ``source`` with a ``NotImplementedError`` stub, whose
    comment says what the exercise is worth when ``points`` are given."""
    worth = "" if points is None else f" (exercise {exercise}: {_points(points)}, graded by its checks)"

    def stub(match: re.Match) -> str:
        indent = match.group("indent")
        return (f"{indent}# YOUR CODE HERE{worth}\n"
                f'{indent}raise NotImplementedError("exercise {exercise}")\n')

    return SOLUTION_BLOCK.sub(stub, source).rstrip("\n")


def _points(points: float) -> str:
    return f"{points:g} point" + ("" if points == 1 else "s")


def release_notebook(solution: NotebookNode, name: str = "notebook",
                     hidden: bool = False) -> NotebookNode:
    """Return the student version of one solution notebook (the input is not modified).

    Parameters
    ----------
    solution : NotebookNode
        The instructor's notebook.
    name : str
        Its file name, for error messages.
    hidden : bool
        Keep the hidden checks (the version graded), instead of removing them (the released one).

    Raises
    ------
    KitError
        If a cell has a solution block but no exercise id, or an unterminated block; if an
        exercise has no visible check of its own (see ``exercises``); misplaced hidden markers.
    """
    nb = copy.deepcopy(solution)
    if not hidden:
        nb.cells = [cell for cell in nb.cells if not is_hidden(cell)]
        mark_revealing_cells(nb)
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"},
                   **{k: nb.metadata[k] for k in _KEPT_NOTEBOOK_METADATA if k in nb.metadata}}
    code_number = 0
    for cell in nb.cells:
        cell.metadata = {k: cell.metadata[k] for k in _KEPT_CELL_METADATA if k in cell.metadata}
        cell.metadata.get("kit", {}).pop("reference", None)  # which names are flagged stays private
        cell.metadata.get("kit", {}).pop("marking", None)  # what earns an answer's marks, too
        _check_tolerance(cell, name)
        if cell.cell_type == "markdown":
            cell.source = released_answer(cell, name)
        if cell.cell_type != "code":
            continue
        code_number += 1
        if "### BEGIN SOLUTION" in cell.source:
            ex = exercise_id(cell)
            if ex is None:
                raise KitError(f"{name}: a cell has a solution block but no exercise id; add "
                               '{"kit": {"exercise": "N.M"}} to its metadata.')
            exercises(solution, name)  # a malformed exercise is named before its points are read
            cell.source = stub_source(cell.source, ex, points_of(solution).get(ex))
            if "### BEGIN SOLUTION" in cell.source:
                raise KitError(f"{name}, exercise {ex}: '### BEGIN SOLUTION' has no matching "
                               "'### END SOLUTION'.")
        if is_checked(cell) and cell.outputs:
            cell.execution_count = code_number
            for output in cell.outputs:
                if output.output_type == "execute_result":
                    output.execution_count = code_number
        else:
            cell.outputs = []
            cell.execution_count = None
    exercises(solution, name)
    answer_cells(solution, name)
    if not hidden:
        run_on_after_first_exercise(nb)
    return nb


def mark_revealing_cells(nb: NotebookNode) -> None:
    """Mark the code cells that answer a "predict first" question (in place).

    After a written answer that begins ``PREDICTION_MARK``, every code cell up to the next
    heading or written answer gets ``kit.reveal`` = that answer's id, except exercises, their
    checks and the figures of the student's own results (which the student must see at once).
    Call it before the answers' text is released: it reads the question's first words.

    Parameters
    ----------
    nb : NotebookNode
        A notebook in the course's format (``helpers.course.notebook.cells``); changed in place.
    """
    asked = None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            text = cell.source.lstrip()
            if answer_id(cell) is not None or text.startswith("#"):
                asked = answer_id(cell) if text.startswith(PREDICTION_MARK) else None
        elif asked and not (exercise_id(cell) or checked_exercise(cell) or is_own_results_figure(cell)):
            cell.metadata.setdefault("kit", {})[REVEAL_KEY] = asked


def run_on_after_first_exercise(nb: NotebookNode) -> None:
    """Tag every code cell from the first exercise on ``raises-exception`` (in place).

    JupyterLab then sends those cells with ``stop_on_error`` off, so Run All on an untouched
    notebook reaches its end: an unfinished exercise fails its checks and the cells that need
    it, and every other cell still runs. Grading removes the tag (``without_run_on``).
    """
    first = next((i for i, cell in enumerate(nb.cells) if exercise_id(cell)), len(nb.cells))
    for cell in nb.cells[first:]:
        if cell.cell_type == "code":
            tags = cell.metadata.setdefault("tags", [])
            if RUN_ON_TAG not in tags:
                tags.append(RUN_ON_TAG)


def without_run_on(nb: NotebookNode) -> None:
    """Remove the ``raises-exception`` tag from every cell (in place), so errors fail again.

    Tags that are not a list of strings (a hand-edited notebook) are dropped altogether.
    """
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags")
        if tags is None:
            continue
        kept = [tag for tag in tags if tag != RUN_ON_TAG] if isinstance(tags, list) else []
        if kept:
            cell.metadata["tags"] = kept
        else:
            del cell.metadata["tags"]


def _check_tolerance(cell: NotebookNode, name: str) -> None:
    """Refuse a tolerance on a cell that is not checked, or one that is not a unit count."""
    if "tolerance" not in cell.metadata.get("kit", {}):
        return
    where = f"{name}, cell {cell.get('id')}"
    if cell.cell_type != "code" or not is_checked(cell):
        raise KitError(f"{where}: only a {CHECK_MARKER} cell can declare a tolerance.")
    try:
        check_tolerance(cell.metadata["kit"]["tolerance"])
    except KitError as err:
        raise KitError(f"{where}: {err}") from None


MANIFEST = "RELEASED.sha256"


def release(solutions_dir: Path = SOLUTIONS_DIR, notebooks_dir: Path = NOTEBOOKS_DIR,
            check: bool = False, force: bool = False, backups_dir: Path = BACKUPS_DIR) -> list[Path]:
    """Write (or with ``check``, only compare) the student notebooks for every solution.

    Parameters
    ----------
    solutions_dir, notebooks_dir : Path
        Source and destination folders (default: the repo's ``solutions/`` and ``notebooks/``).
    check : bool
        Write nothing; return the notebooks (and the manifest) that are missing or out of date.
    force : bool
        Overwrite notebooks edited since the release wrote them, keeping a copy of each in
        ``backups_dir``. Without it such notebooks are an error and nothing is written.
    backups_dir : Path
        Where ``force`` keeps the edited notebooks.

    Returns
    -------
    list of Path
        The student notebooks that were (or, with ``check``, would be) written or changed.
    """
    sources = notebooks_in(solutions_dir)
    if not sources:
        raise KitError(f"No solution notebooks (NN_topic.ipynb) in {solutions_dir}.")
    written = read_manifest(notebooks_dir)
    texts = {notebooks_dir / source.name: render(release_notebook(nbformat.read(source, as_version=4),
                                                                  source.name)) for source in sources}
    changed = [target for target, text in texts.items() if not _holds(target, text)]
    manifest = "".join(f"{_sha256(text.encode())}  {target.name}\n" for target, text in texts.items())
    manifest_path = notebooks_dir / MANIFEST
    if check:
        stale = not manifest_path.is_file() or manifest_path.read_text(encoding="utf-8") != manifest
        return changed + ([manifest_path] if stale else [])
    edited = [target for target in changed
              if target.is_file() and written.get(target.name) != _sha256(_content(target))]
    if edited and not force:
        raise KitError(f"{', '.join(t.name for t in edited)} in {notebooks_dir} changed since `kit release` "
                       "wrote them (or it did not write them); nothing was written. Edit solutions/, not "
                       "notebooks/ (students work in work/); `kit release --force` overwrites them and "
                       f"keeps a copy of each in {backups_dir}.")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for target in edited:
        shutil.copyfile(target, backup_path(backups_dir, target, stamp))
    notebooks_dir.mkdir(parents=True, exist_ok=True)
    for target in changed:
        # mypy cannot infer a lambda with a default argument (python/mypy#15459)
        atomic_write(target, lambda tmp, text=texts[target]: tmp.write_text(text, encoding="utf-8"))  # type: ignore[misc]
    atomic_write(manifest_path, lambda tmp: tmp.write_text(manifest, encoding="utf-8"))
    return changed


def _content(target: Path) -> bytes:
    """A notebook's bytes, line endings aside: git on Windows may check them out as CRLF."""
    return target.read_bytes().replace(b"\r\n", b"\n")


def _holds(target: Path, text: str) -> bool:
    """Whether ``target`` holds ``text``; any difference but line endings (another encoding
    too) counts."""
    return target.is_file() and _content(target) == text.encode("utf-8")


def read_manifest(notebooks_dir: Path) -> dict[str, str]:
    """What the last release wrote: ``{notebook name: sha256}`` (empty when it left no record)."""
    path = Path(notebooks_dir) / MANIFEST
    if not path.is_file():
        return {}
    pairs = (line.split("  ", 1) for line in path.read_text(encoding="utf-8").splitlines() if "  " in line)
    return {name: digest for digest, name in pairs}


def edited_since_release(path: Path) -> bool:
    """Whether a released notebook differs from what the last release wrote there (its line in
    ``RELEASED.sha256``); False when the release left no record of it."""
    path = Path(path)
    written = read_manifest(path.parent).get(path.name)
    return written is not None and path.is_file() and written != _sha256(_content(path))


def edited_notice(path: Path) -> str:
    """What a student reads about a released notebook edited by hand."""
    return (f"{path} was edited since the release (it differs from its line in {MANIFEST}), so it is "
            f"no longer the reference your work is compared with: `git checkout {path.parent.name}/"
            f"{path.name}` restores it; your own work belongs in your workspace's copy.")


def content_digest(data: bytes) -> str:
    """The sha256 of a file's bytes, line endings aside: git on Windows may check a file out
    with CRLF line endings, and it is the same file."""
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def manifest(files: Mapping[str, bytes]) -> str:
    """The manifest of a library: one ``sha256  name`` line per file (``sha256sum``'s format).

    Parameters
    ----------
    files : mapping of str to bytes
        Each file's path in the library (``/``-separated, e.g. ``course/config.py``) and its
        content.
    """
    return "".join(f"{content_digest(data)}  {name}\n" for name, data in sorted(files.items()))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render(nb: NotebookNode) -> str:
    """Serialise a notebook the way the kit stores it (nbformat's JSON plus a final newline)."""
    return nbformat.writes(nb) + "\n"
