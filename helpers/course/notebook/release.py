"""Turn the instructor's ``solutions/`` into the students' ``notebooks/``.

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
- Hidden checks (nbgrader's idea, our markers): a checked cell whose code lies entirely
  between ``### BEGIN HIDDEN CHECKS`` and ``### END HIDDEN CHECKS`` calls the student's code on
  inputs the student has not seen. Release removes it; grading keeps it.
- Every code cell from the first exercise on is tagged ``raises-exception``, so JupyterLab's
  Run All goes on past an unfinished exercise; grading removes the tag again.

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
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from helpers.course.config import BACKUPS_DIR, NOTEBOOKS_DIR, SOLUTIONS_DIR, backup_path, notebooks_in
from helpers.course.notebook.compare import check_tolerance
from helpers.errors import KitError
from helpers.files import atomic_write

CHECK_MARKER = "# NBVAL_CHECK_OUTPUT"
CHECK_TAG = "nbval-check-output"
RUN_ON_TAG = "raises-exception"  # JupyterLab's Run All goes on past an error in such a cell
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
_SOLUTION = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION[^\n]*(?:\n|$)",
    re.MULTILINE | re.DOTALL,
)
_ANSWER = re.compile(r"=== BEGIN ANSWER ===.*?=== END ANSWER ===", re.DOTALL)
ANSWER_PLACEHOLDER = "YOUR ANSWER HERE"
#: A written answer's points when its cell's metadata gives none (``kit.points``).
ANSWER_POINTS = 1.0
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN CHECKS", "### END HIDDEN CHECKS"
#: The first line of a hidden block may say what it tests, for the student's feedback.
INTENT_MARK = "# Intent:"
#: A hidden check's lines shorter than this are too common to give it away (``print(_p)``).
SECRET_LINE_CHARS = 12
_HIDDEN = re.compile(rf"^[ \t]*{HIDDEN_BEGIN}[^\n]*\n.*?^[ \t]*{HIDDEN_END}[^\n]*(?:\n|$)",
                     re.MULTILINE | re.DOTALL)
_KEPT_CELL_METADATA = ("kit", "tags")
_KEPT_NOTEBOOK_METADATA = ("kit",)


def kit_metadata(cell: NotebookNode) -> dict:
    """A cell's ``kit`` metadata; empty when missing or malformed (a student's notebook may
    hold anything there)."""
    metadata = cell.get("metadata")
    found = metadata.get("kit") if isinstance(metadata, dict) else None
    return found if isinstance(found, dict) else {}


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
    found = _HIDDEN.search(source)
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
             for block in _HIDDEN.findall(cell.source) for line in block.splitlines()}
    secret = {line for line in lines if len(line) >= SECRET_LINE_CHARS and not line.startswith(
        (HIDDEN_BEGIN, HIDDEN_END, INTENT_MARK))}
    return tuple(sorted(secret, key=lambda line: (-len(line), line)))


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


def answer_id(cell: NotebookNode) -> str | None:
    """Return the written-answer id stored in a markdown cell's metadata (``kit.answer``), if any."""
    return _text(kit_metadata(cell).get("answer")) if cell.get("cell_type") == "markdown" else None


def blank_answers(source: str) -> str:
    """Replace every model answer in a markdown cell's ``source`` with ``YOUR ANSWER HERE``."""
    return _ANSWER.sub(ANSWER_PLACEHOLDER, source)


def is_checked(cell: NotebookNode) -> bool:
    """Return True if nbval compares this code cell's output (marker comment or tag)."""
    first_line = cell.source.lstrip().split("\n", 1)[0].strip()
    return first_line == CHECK_MARKER or CHECK_TAG in cell.get("metadata", {}).get("tags", [])


def checked_exercise(cell: NotebookNode) -> str | None:
    """Return the exercise a checked cell checks (``kit.checks``), if any."""
    return _text(kit_metadata(cell).get("checks"))


def is_hidden(cell: NotebookNode) -> bool:
    """Return True for a hidden-check cell: checked, and all its code inside the hidden markers.

    Raises
    ------
    KitError
        If hidden-check markers stand anywhere else (unterminated, or beside other code).
    """
    if cell.cell_type != "code" or (HIDDEN_BEGIN not in cell.source and HIDDEN_END not in cell.source):
        return False
    rest = _HIDDEN.sub("", cell.source)
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
    for ex in found:
        if not visible[ex.id]:
            raise KitError(f"{name}, exercise {ex.id} (cell {ex.cell_ids[0]}): no check of its own; "
                           f'add a {CHECK_MARKER} cell after it with {{"kit": {{"checks": "{ex.id}"}}}}.')
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
        if cell.cell_type == "markdown" and _ANSWER.search(cell.source) and answer is None:
            raise KitError(f'{where}: a model answer needs an answer id; add {{"kit": {{"answer": "N.a"}}}} '
                           "to its metadata.")
        if answer is not None:
            if answer in found:
                raise KitError(f"{where}: answer {answer} appears twice.")
            found[answer] = cell
    return list(found.values())


def stub_source(source: str, exercise: str) -> str:
    """Replace every solution block in ``source`` with a ``NotImplementedError`` stub."""

    def stub(match: re.Match) -> str:
        indent = match.group("indent")
        return (f"{indent}# YOUR CODE HERE\n"
                f'{indent}raise NotImplementedError("exercise {exercise}")\n')

    return _SOLUTION.sub(stub, source).rstrip("\n")


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
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"},
                   **{k: nb.metadata[k] for k in _KEPT_NOTEBOOK_METADATA if k in nb.metadata}}
    code_number = 0
    for cell in nb.cells:
        cell.metadata = {k: cell.metadata[k] for k in _KEPT_CELL_METADATA if k in cell.metadata}
        cell.metadata.get("kit", {}).pop("reference", None)  # which names are flagged stays private
        cell.metadata.get("kit", {}).pop("marking", None)  # what earns an answer's marks, too
        _check_tolerance(cell, name)
        if cell.cell_type == "markdown":
            cell.source = blank_answers(cell.source)
        if cell.cell_type != "code":
            continue
        code_number += 1
        if "### BEGIN SOLUTION" in cell.source:
            ex = exercise_id(cell)
            if ex is None:
                raise KitError(f"{name}: a cell has a solution block but no exercise id; add "
                               '{"kit": {"exercise": "N.M"}} to its metadata.')
            cell.source = stub_source(cell.source, ex)
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
        atomic_write(target, lambda tmp, text=texts[target]: tmp.write_text(text, encoding="utf-8"))
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


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render(nb: NotebookNode) -> str:
    """Serialise a notebook the way the kit stores it (nbformat's JSON plus a final newline)."""
    return nbformat.writes(nb) + "\n"
