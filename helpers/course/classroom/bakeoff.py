"""``kit bakeoff``: each student's best system scored once, in the sandbox, on reviews no notebook shows.

A student enters by handing in notebook 10 (``helpers.bakeoff.BAKEOFF_NOTEBOOK``) beside their
other notebooks: it builds their best system and defines ``ENTRY(texts)``, one label (``"pos"``
or ``"neg"``) per text; the rules (``helpers.bakeoff.RULES``) say what a system may train on.
For each student the notebook runs in the grading sandbox (same limits and isolation as
``kit grade``), seeing of the data folder only what a system may train on: an allow-list of
folders and of kinds of artefact (``data_view``); the grader then calls ``ENTRY`` once on
the test texts and reads its answer as plain data. The labels never enter the sandbox: each
answer is scored here.

The test set is ``default_test_set`` (a fixed sample of IMDB test reviews that no notebook,
corpus or Doc2Vec model holds), or any labelled CSV the instructor names (``read_test_set``).
The kit's own systems (``systems.NAMES``), trained on the 2,000 reviews, enter as baselines.
Every scored system goes into one ``leaderboard.leaderboard``: Wilson intervals, a paired
permutation test for every pair, Holm-corrected, ranks that separate only what a test
separates. An entry that crashes, runs out of time or memory, or answers with the wrong
number of labels or other labels gets one line saying so and no rank; nothing of it stops
the other entries.
"""

from __future__ import annotations

import ast
import base64
import dataclasses
import hashlib
import html
import io
import json
import secrets
import shutil
import tempfile
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
from nbformat import NotebookNode

from helpers import (
    data,
    embeddings,
    evaluation,
    leaderboard,
    overlap,
    owned,
    settings,
    storage,
    syntax,
    systems,
)
from helpers.bakeoff import BAKEOFF_NOTEBOOK, ENTRY, LABELS, checked_labels
from helpers.course import config
from helpers.course.classroom import layout
from helpers.course.classroom.classgrade import MAX_NOTEBOOK_MB
from helpers.course.classroom.spreadsheet import spreadsheet_csv
from helpers.course.engine import sandbox
from helpers.course.engine.limits import Job, Limits
from helpers.course.engine.nbval_run import run_notebook
from helpers.course.engine.verdict import Ending
from helpers.course.notebook.cells import CHECK_MARKER, HIDDEN_BEGIN, HIDDEN_END
from helpers.course.safe_text import printable
from helpers.errors import KitError
from helpers.files import atomic_write
from helpers.log import LOGGER

#: The default test set: this many IMDB test reviews, half of each label, drawn with this seed.
TEST_SIZE = 2000
TEST_SEED = 0
#: How the default test set is drawn (part of its cache key).
TEST_RULE = ("IMDB test reviews of the deployment sample's films (every Doc2Vec corpus leaves those "
             "films out), not in the deployment sample, no near copy (overlap.NEAR_DUPLICATE) of another "
             "IMDB review or of the 2,000 reviews, one of each group of near copies among them; "
             "TEST_SIZE // 2 per label, seeded")
#: Entries of the data folder an entry's sandbox sees: the data a system may train on, the
#: caches and the Doc2Vec models. Every other entry (the archive, the training corpora, whose
#: id files name every IMDB review with its label, the tables of notebooks) is hidden.
SHOWN_DATA = ("nltk_data", "aclImdb", "cache", "models", "results")
#: Of the IMDB folder, only these are shown: the train split (unsup inside), the vocabulary
#: and the fetch stamp; the test split, the manifest (which names every test file with its
#: checksum), the words' expected ratings and the README (which names the test folders) are not.
SHOWN_IMDB = ("train", "imdb.vocab", ".kit-verified")
#: Of ``cache`` and ``models``, only artefacts of these kinds are shown (their file names begin
#: so; each with its checksum and lock file): the parsed IMDB train and unlabelled tables, the
#: groups of near-duplicates among the 2,000 reviews (their folds), the Doc2Vec models (and
#: their document vectors, ``d2v_<key>_documents_…``: the numbers the model holds) and the
#: 2,000 reviews' vectors. Any other file there (the test table, the
#: held-out reviews, an artefact set aside, one of a kind added later) is hidden until its kind is
#: named here: an allow-list, since no scan can see a test review's id in every encoding.
SHOWN_KINDS = {"cache": ("imdb_train_", "imdb_unsup_", data.GROUPS_CACHE_PREFIX),
               "models": ("d2v_", "vectors_")}
#: ``results`` names its artefacts by their keys alone, so each is read: a table of predictions
#: is shown when every review it names is one of the 2,000, a feature choice when it holds
#: only the choice (``CHOICE_KEYS``); any other file is hidden, a JSON file larger than a
#: choice can be (``CHOICE_MAX_BYTES``: an explainer's fit holds megabytes) without reading it.
CHOICE_KEYS = {"candidate", "C"}
CHOICE_MAX_BYTES = 1024
#: The folders shown file by file, as they are when an entry starts: a file written there while
#: the bake-off runs (another run's predictions on its test set) is not seen.
LISTED = (*SHOWN_KINDS, "results")
#: How the kit's baselines are named on the leaderboard (``KIT_PREFIX + systems.NAMES``).
KIT_PREFIX = "kit "
#: What an entry that handed in nothing is told (kept out of the leaderboard's page).
ABSENT = f"no {BAKEOFF_NOTEBOOK}"
#: What the grader's cell prints once the predictions are collected.
COLLECTED = "predictions collected"
#: The kernel's function the grader calls: the student's entry, its answer made plain data.
WRAPPER = "_kit_bakeoff_entry"
#: The files written into the submissions folder.
TABLE_FILE, PAIRS_FILE = "bakeoff.csv", "bakeoff_pairs.csv"
PAGE_FILE, FIGURE_FILE = "bakeoff.html", "bakeoff.png"
#: Literals this large in an entry's code are flagged for the instructor to read (``flags``):
#: the IMDB archive is public, so a table of the test reviews' labels typed into a notebook
#: is the one way round the sandbox. A cell's items are counted together (a table cut into
#: pieces); a string of a few thousand characters holds a packed table of 2,000 labels.
LARGE_LITERAL_ITEMS = 500
LARGE_LITERAL_CHARS = 5_000
#: Every scored entry, saved in the submissions folder as it finishes (``Saved``): a run that
#: stops (Ctrl-C, a crash, the machine) loses no entry scored before, and a later run on the
#: same test set keeps each entry whose notebook is unchanged (``kit bakeoff --again`` runs
#: every entry). An entry that got no rank runs again: more time or memory may mend it.
ENTRIES_FILE = "bakeoff_entries.json"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One student's entry, scored or not.

    ``predictions`` holds one label per test review when the entry answered with valid
    labels; otherwise it is None and ``problem`` says, in one line, why it got no rank.
    """

    student: str
    predictions: tuple[str, ...] | None
    problem: str = ""
    seconds: float | None = None
    kept: bool = False
    flags: tuple[str, ...] = ()


# --------------------------------------------------------------------------- the test set


def default_test_set(progress: bool = True) -> pd.DataFrame:
    """The default bake-off test set (``TEST_RULE``): ``TEST_SIZE`` IMDB test reviews.

    Drawn from the reviews of the deployment sample's films that the sample does not hold: every
    Doc2Vec corpus leaves those films out (``embeddings.held_out_reviews``), IMDB's train and
    unsup splits hold none of them, and no notebook shows these reviews. A review that is a near
    copy of any other IMDB review or of one of the 2,000 reviews is left out, except of another
    such candidate: of each group of near copies among them, the first stays.
    Computed once (about 30 s on 2 cores) and cached under ``data/bakeoff/``, which no entry sees.

    Returns
    -------
    DataFrame
        ``doc_id``, ``movie_id``, ``label``, ``text``; ``TEST_SIZE // 2`` per label, in doc_id order.
    """
    params = {"artefact": "bakeoff test set", "size": TEST_SIZE, "seed": TEST_SEED, "rule": TEST_RULE,
              "threshold": overlap.NEAR_DUPLICATE, "held_out": embeddings.HOLD_OUT_RULE}
    key = storage.key(params, datasets=embeddings.SOURCES, libraries=("numpy", "pandas", "scikit-learn"))
    path = settings.data_dir() / "bakeoff" / f"test_{key}.csv"
    return storage.cached(path, lambda: _drawn(progress), lambda table, tmp: table.to_csv(tmp, index=False),
                          _read_drawn)


def _drawn(progress: bool) -> pd.DataFrame:
    test = data.load_imdb("test")
    deployment = data.imdb_sample()
    of_films = test.movie_id.isin(set(deployment.movie_id))
    candidates = test[of_films & ~test.doc_id.isin(set(deployment.doc_id))]
    seen = _texts_seen(set(candidates.doc_id))
    copied = overlap.near_copies(candidates.text.tolist(), seen, progress=progress)
    candidates = candidates[~copied]
    groups = overlap.similarity_groups(candidates.text.tolist())
    candidates = candidates[~pd.Series(groups).duplicated().to_numpy()]  # the first of each group stays
    drawn = candidates.groupby("label", group_keys=False).sample(TEST_SIZE // 2, random_state=TEST_SEED)
    return drawn.sort_index()[["doc_id", "movie_id", "label", "text"]].reset_index(drop=True)


def _shuffled(n: int) -> np.ndarray:
    """A permutation of ``n`` items that nobody can predict (a new one for every entry), so the
    order of the test texts tells an entry nothing about their labels."""
    return np.random.default_rng(secrets.randbits(128)).permutation(n)


def _texts_seen(candidates: set[str]) -> list[str]:
    """Every text a notebook shows or a corpus holds, but the candidates: IMDB's 100,000 reviews
    and the 2,000 reviews."""
    imdb = pd.concat([data.load_imdb(split)[["doc_id", "text"]] for split in data.IMDB_SPLITS])
    return imdb.text[~imdb.doc_id.isin(candidates)].tolist() + data.load_movie_reviews().text.tolist()


def _read_drawn(path: Path) -> pd.DataFrame | None:
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    balanced = table.label.value_counts().to_dict() == dict.fromkeys(LABELS, TEST_SIZE // 2)
    fits = list(table.columns) == ["doc_id", "movie_id", "label", "text"] and len(table) == TEST_SIZE \
        and table.doc_id.is_unique and balanced
    return table if fits else None


def read_test_set(path: Path) -> pd.DataFrame:
    """An instructor's own test set: a CSV with columns ``text`` and ``label`` (``pos``/``neg``).

    Returns
    -------
    DataFrame
        ``doc_id`` (the CSV's, else ``row_<n>``), ``label``, ``text``.

    Raises
    ------
    KitError
        If the file cannot be read, lacks a column, holds an empty text, a label other than
        ``pos`` or ``neg``, repeated doc ids, or fewer than two reviews.
    """
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError, UnicodeDecodeError) as err:
        raise KitError(f"Could not read the test set {path}: {err}") from None
    missing = {"text", "label"} - set(table.columns)
    if missing:
        raise KitError(f"The test set {path} needs the columns text and label; it lacks "
                       f"{', '.join(sorted(missing))}.")
    if len(table) < 2:
        raise KitError(f"The test set {path} holds {len(table)} review(s): a bake-off needs at least two.")
    wrong = table[~table.label.isin(LABELS)]
    if len(wrong):
        raise KitError(f"The test set {path}: row {wrong.index[0] + 2} has the label "
                       f"{wrong.label.iloc[0]!r}; each label must be pos or neg.")
    empty = table[table.text.str.strip() == ""]
    if len(empty):
        raise KitError(f"The test set {path}: row {empty.index[0] + 2} has an empty text.")
    ids = table.doc_id if "doc_id" in table else pd.Series([f"row_{i}" for i in range(len(table))])
    if not ids.is_unique or (ids.str.strip() == "").any():
        raise KitError(f"The test set {path} needs a distinct, non-empty doc_id in every row.")
    labels_per_text = table.groupby("text").label.nunique()
    if (labels_per_text > 1).any():
        raise KitError(f"The test set {path} gives one text two labels: {labels_per_text.idxmax()[:60]!r}.")
    return pd.DataFrame({"doc_id": ids.to_numpy(), "label": table.label.to_numpy(),
                         "text": table.text.to_numpy()})


#: The longest alias a leaderboard shows.
MAX_ALIAS_CHARS = 40


def read_aliases(path: Path, students: Sequence[str]) -> dict[str, str]:
    """The names the leaderboard shows instead of the students' folder names: a CSV with
    columns ``student`` (a folder name) and ``alias``.

    Returns
    -------
    dict
        Folder name -> alias, for every one of ``students``.

    Raises
    ------
    KitError
        If the file cannot be read or lacks a column, names a student twice, or a student of
        the class has no alias, or an alias is empty, not printable as it is (``printable``:
        no control or escape characters), longer than ``MAX_ALIAS_CHARS``, given twice, named
        like one of the kit's systems, or another student's folder name (the page would name
        the wrong student). Nothing has run then.
    """
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError, UnicodeDecodeError) as err:
        raise KitError(f"Could not read the aliases {path}: {err}") from None
    if not {"student", "alias"} <= set(table.columns):
        raise KitError(f"The aliases {path} need the columns student and alias.")
    named = table.student.str.strip()
    if named.duplicated().any():
        raise KitError(f"The aliases {path} name {named[named.duplicated()].iloc[0]!r} twice.")
    aliases = dict(zip(named, table.alias.str.strip(), strict=True))
    missing = sorted(set(students) - set(aliases))
    if missing:
        raise KitError(f"The aliases {path} give no alias to {', '.join(missing[:5])}"
                       f"{' …' if len(missing) > 5 else ''}: every student folder needs one.")
    shown = [aliases[student] for student in students]
    problems = [f"{alias!r} is {why}" for alias, why in (
        *((a, "empty") for a in shown if not a),
        *((a, "not printable as it is") for a in shown if printable(a) != a),
        *((a, f"over {MAX_ALIAS_CHARS} characters") for a in shown if len(a) > MAX_ALIAS_CHARS),
        *((a, "given twice") for a in sorted({a for a in shown if shown.count(a) > 1})),
        *((a, "named like one of the kit's systems") for a in shown if a.startswith(KIT_PREFIX)),
        *((a, "another student's folder name") for student in students for a in [aliases[student]]
          if a in students and a != student))]
    if problems:
        raise KitError(f"The aliases {path}: {'; '.join(problems)}.")
    return {student: aliases[student] for student in students}


@dataclasses.dataclass(frozen=True)
class DataView:
    """What an entry sees of the data folder, from one look at it.

    Attributes
    ----------
    hidden : tuple of str
        Paths, relative to the data folder, that an entry must not see.
    listed : tuple of str
        The folders of ``LISTED`` and, inside them, every file an entry may see: all it sees
        of them (``Job.listed_data``), so that a file written there later is not seen.
    """

    hidden: tuple[str, ...]
    listed: tuple[str, ...]


def data_view(data_dir: Path, training_ids: Collection[str] | None = None) -> DataView:
    """What of ``data_dir`` an entry may see. Hidden: every entry but ``SHOWN_DATA``, every part
    of the IMDB folder but ``SHOWN_IMDB``, every file of ``cache`` and ``models`` not of a kind
    in ``SHOWN_KINDS``, and every file of ``results`` that is not a table of predictions on
    ``training_ids`` (default: the 2,000 reviews' doc ids) or a feature choice
    (``_shown_result``); of those three folders, only what is shown is listed."""
    if not data_dir.is_dir():
        return DataView((), ())
    ids = frozenset(data.load_movie_reviews().doc_id if training_ids is None else training_ids)
    hidden = [entry.name for entry in data_dir.iterdir() if entry.name not in SHOWN_DATA]
    imdb = data_dir / "aclImdb"
    if imdb.is_dir():
        hidden += [f"aclImdb/{entry.name}" for entry in imdb.iterdir() if entry.name not in SHOWN_IMDB]
    shown: dict[Path, bool] = {}
    listed: list[str] = []
    for name in LISTED:
        for path in _files(data_dir / name):
            artefact = storage.artefact_of(path)
            if artefact not in shown:
                kinds = SHOWN_KINDS.get(name)
                shown[artefact] = artefact.name.startswith(kinds) if kinds else _shown_result(artefact, ids)
            (listed if shown[artefact] else hidden).append(path.relative_to(data_dir).as_posix())
    return DataView(tuple(sorted(hidden)), (*LISTED, *listed))


def _files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.is_dir() else []


def _shown_result(path: Path, training_ids: frozenset[str]) -> bool:
    """Whether the artefact at ``path`` of ``results`` is one an entry may read: a CSV table
    whose ``doc_id`` column names only ``training_ids``, or a feature choice's JSON."""
    try:
        if path.suffix == ".csv":
            ids = pd.read_csv(path, usecols=["doc_id"], dtype=str, keep_default_na=False).doc_id
            return bool(ids.isin(training_ids).all())
        if path.suffix == ".json":
            if path.stat().st_size > CHOICE_MAX_BYTES:
                return False
            found = json.loads(path.read_text(encoding="utf-8"))
            return isinstance(found, dict) and set(found) == CHOICE_KEYS
    except (OSError, ValueError, UnicodeDecodeError):  # unreadable, not such a table, gone
        return False
    return False


# --------------------------------------------------------------------------- one entry


def entry_notebook(submission: NotebookNode, texts: Sequence[str]) -> NotebookNode:
    """The notebook an entry's run executes: the student's code cells, unchecked and without
    outputs, then the grader's cell, which calls ``ENTRY`` on ``texts`` and records its answer.

    The grader's cell is a hidden check: it runs in the grading process, not the kernel (which
    never sees it), and ``hidden.record``-s what the student's function answered (plain data,
    made a list of strings by ``as_labels``)."""
    cells = [nbformat.v4.new_code_cell(_unchecked(cell.source)) for cell in submission.cells
             if cell.cell_type == "code"]
    # in the kernel, the answer made plain data as the dry run makes it (a generator, a
    # Categorical or a pandas string array would not cross to the grader as they are)
    cells.append(nbformat.v4.new_code_cell(f"def {WRAPPER}(texts):\n"
                                           f"    from helpers.bakeoff import as_labels\n"
                                           f"    return as_labels({ENTRY}(texts))"))
    body = (f"from helpers.bakeoff import as_labels\n"
            f"from helpers.course.engine.hidden import record, student\n\n"
            f"record(as_labels(student.{WRAPPER}({list(texts)!r})))\nprint({COLLECTED!r})")
    grader = nbformat.v4.new_code_cell(f"{CHECK_MARKER}\n{HIDDEN_BEGIN}\n{body}\n{HIDDEN_END}",
                                       metadata={"kit": {"checks": "bakeoff"}})
    grader.outputs = [nbformat.v4.new_output("stream", name="stdout", text=COLLECTED + "\n")]
    return nbformat.v4.new_notebook(cells=[*cells, grader])


def flags(notebook: NotebookNode) -> tuple[str, ...]:
    """What an instructor should read in an entry, one line per code cell: the items of its
    literal lists, tuples, sets and dicts, counted together, when there are at least
    ``LARGE_LITERAL_ITEMS`` (a table of answers, or one cut into pieces); a string or bytes
    literal of at least ``LARGE_LITERAL_CHARS`` characters (one packed into a string). A flag
    is not a verdict: the entry is run and ranked all the same.

    Parameters
    ----------
    notebook : NotebookNode
        The entry; its cells are read as IPython reads them (magics and ``!`` commands made
        Python first). A cell that is not Python even so fails its run, which says so.

    Returns
    -------
    tuple of str
        One line per flag, in the order of the cells.
    """
    from IPython.core.inputtransformer2 import TransformerManager

    transformer = TransformerManager()
    found = []
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for number, cell in enumerate(code, start=1):
        try:
            tree = syntax.parse(transformer.transform_cell(cell.source))
        except syntax.UNPARSABLE:
            continue
        nodes = list(ast.walk(tree))
        items = sum(len(node.elts) for node in nodes if isinstance(node, ast.List | ast.Tuple | ast.Set))
        items += sum(len(node.keys) for node in nodes if isinstance(node, ast.Dict))
        longest = max((len(node.value) for node in nodes
                       if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)), default=0)
        if items >= LARGE_LITERAL_ITEMS:
            found.append(f"code cell {number} holds literals of {items:,} items")
        if longest >= LARGE_LITERAL_CHARS:
            found.append(f"code cell {number} holds a literal of {longest:,} characters")
    return tuple(found)


def _flags_of(path: Path) -> tuple[str, ...]:
    try:
        return flags(nbformat.read(path, as_version=4))
    except Exception:  # a notebook the kit cannot read: its run says so
        return ()


def _unchecked(source: str) -> str:
    """A student's cell with no line that would make nbval compare its outputs: every cell
    of theirs runs in the kernel and is judged by nothing but the grader's call."""
    return "".join(line for line in source.splitlines(keepends=True) if not _is_check_marker(line))


def _is_check_marker(line: str) -> bool:
    """Whether nbval reads ``line`` as its check-output marker (any number of ``#``)."""
    stripped = line.strip()
    return stripped.startswith("#") and stripped.lstrip("#").strip() == CHECK_MARKER.lstrip("#").strip()


def score_entry(folder: Path, texts: Sequence[str], timeout: float, job: Job) -> Entry:
    """Run one student's entry in ``job``'s sandbox and collect its labels for ``texts``.

    Never raises for anything the entry does: a missing, unreadable or too large notebook, a
    crash, a timeout or a wrong answer is an ``Entry`` with its ``problem``.
    """
    path = folder / BAKEOFF_NOTEBOOK
    if path.is_symlink():
        return Entry(folder.name, None, f"{BAKEOFF_NOTEBOOK} is a symbolic link, not a notebook")
    if not path.is_file():
        return Entry(folder.name, None, ABSENT)
    if path.stat().st_size > MAX_NOTEBOOK_MB * 2**20:
        return Entry(folder.name, None, f"{BAKEOFF_NOTEBOOK} is over {MAX_NOTEBOOK_MB} MB")
    order = _shuffled(len(texts))
    scratch = Path(tempfile.mkdtemp(prefix="kit-bakeoff-"))
    try:
        try:
            graded = entry_notebook(nbformat.read(path, as_version=4), [texts[i] for i in order])
            nbformat.write(graded, scratch / "entry.ipynb")
        except Exception as err:  # any notebook the kit cannot read or write is a line, not a crash
            return Entry(folder.name, None,
                         f"{BAKEOFF_NOTEBOOK} is not a notebook the kit can run ({type(err).__name__})")
        run = run_notebook(scratch / "entry.ipynb", timeout, job)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    seconds = round(run.outcome.seconds, 1) if run.outcome else None
    last = sum(cell.cell_type == "code" for cell in graded.cells) - 1
    result = run.results.get(last)
    if result is not None and result.ending is Ending.PASSED and result.recorded:
        labels, problem = checked_labels(json.loads(result.recorded), len(texts))
        if labels is not None:  # back in the test set's order
            labels = tuple(np.asarray(labels)[np.argsort(order)])
        return Entry(folder.name, labels, problem, seconds)
    why = result.error() if result is not None else run.problem_line
    why = why or f"the notebook ended before {ENTRY} was called"
    failed = sorted(number for number, cell in run.results.items()
                    if number < last and cell.ending is not Ending.PASSED)
    if failed:
        why = f"code cell {failed[0] + 1} failed ({run.results[failed[0]].error()}); then {why}"
    return Entry(folder.name, None, why, seconds)


# --------------------------------------------------------------------------- the class


def test_key(test: pd.DataFrame) -> str:
    """The test set's identity: its reviews' ids and texts, in order (not their labels, which
    no entry's answer depends on)."""
    identity = json.dumps([test.doc_id.astype(str).tolist(), test.text.tolist()], ensure_ascii=False)
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


class Saved:
    """The scored entries kept in ``ENTRIES_FILE`` of a submissions folder, for one test set
    and one set of run conditions.

    Each is saved (the whole file written anew, atomically) as soon as it is scored, with the
    sha256 of the notebook it came from; ``get`` gives it back only for that very notebook,
    run under the same ``conditions``. An entry run again that gets no rank loses its saved
    score. Entries saved for other test sets or conditions are kept as they are. The file
    holds the sha256 of its own entries: one the kit did not write, or that changed since, is
    refused, and a file the kit wrote survives a crash of the kit between two saves.

    Parameters
    ----------
    submissions : Path
        The submissions folder, where the file is.
    test : DataFrame
        The test set (``test_key``).
    conditions : str
        What else an answer depends on (``conditions``): the data hidden, the limits.

    Raises
    ------
    KitError
        If the file is not the kit's, or was changed since the kit wrote it, before any entry
        runs.
    """

    def __init__(self, submissions: Path, test: pd.DataFrame, conditions: str = "") -> None:
        self.path = Path(submissions) / ENTRIES_FILE
        self.test, self.size, self.conditions = test_key(test), len(test), conditions
        self.records, unreadable = _saved_records(self.path)
        if unreadable:
            LOGGER.warning("kit bakeoff: %d saved entr%s in %s could not be read; %s run again.", unreadable,
                           "y" if unreadable == 1 else "ies", self.path, "it" if unreadable == 1 else "they")
        self._lock = threading.Lock()

    def get(self, student: str, notebook: str) -> Entry | None:
        """The entry saved for ``student``'s notebook of sha256 ``notebook`` on this test set,
        under these conditions; None when there is none."""
        record = self.records.get((self.test, student))
        if record is None or record["notebook"] != notebook or record.get("conditions") != self.conditions:
            return None
        labels, problem = checked_labels(record["predictions"], self.size)
        return Entry(student, labels, problem, record["seconds"], kept=True) if labels is not None else None

    def add(self, entry: Entry, notebook: str) -> None:
        """Save ``entry``, run from the notebook of sha256 ``notebook``: its labels when it was
        scored; when it was not, no score of an earlier run stays saved for it."""
        key = (self.test, entry.student)
        with self._lock:
            if entry.predictions is None:
                if self.records.pop(key, None) is None:
                    return
            else:
                self.records[key] = {"test": self.test, "student": entry.student, "notebook": notebook,
                                     "conditions": self.conditions, "seconds": entry.seconds,
                                     "predictions": list(entry.predictions)}
            entries = list(self.records.values())
            text = json.dumps({"entries": entries, "sha256": _entries_digest(entries)}, ensure_ascii=False)
            atomic_write(self.path, lambda tmp: tmp.write_text(text + "\n", encoding="utf-8"))


def conditions(hidden: Sequence[str], limits: Limits, timeout: float, budget: float) -> str:
    """What an entry's answer depends on besides its notebook and the test set: the data
    hidden from it and what it may use. A saved entry is kept only under the same."""
    described = {"hidden": sorted(hidden), "limits": dataclasses.asdict(limits), "timeout": timeout,
                 "budget": budget}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode("utf-8")).hexdigest()


def _entries_digest(entries: list) -> str:
    return hashlib.sha256(json.dumps(entries, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _saved_records(path: Path) -> tuple[dict[tuple[str, str], dict], int]:
    """The readable records of ``path`` by (test, student), and how many were not readable.

    Raises
    ------
    KitError
        If ``path`` is not a file the kit wrote as it wrote it (its entries' sha256).
    """
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, 0
    except (OSError, ValueError):
        saved = None
    records = saved.get("entries") if isinstance(saved, dict) else None
    if not isinstance(records, list) or saved.get("sha256") != _entries_digest(records):
        raise KitError(f"{owned.kept_message(path)}; nothing was run. Move it away to keep it: "
                       f"{ENTRIES_FILE} is where kit bakeoff saves each scored entry.")
    good = [r for r in records if _readable(r)]
    return {(r["test"], r["student"]): r for r in good}, len(records) - len(good)


def _readable(record: object) -> bool:
    return isinstance(record, dict) and all(isinstance(record.get(name), str)
                                            for name in ("test", "student", "notebook", "conditions")) \
        and isinstance(record.get("predictions"), list) \
        and (record.get("seconds") is None or isinstance(record.get("seconds"), int | float))


def _notebook_digest(path: Path) -> str | None:
    """The sha256 of a student's entry notebook, or None when there is none the kit would run
    (missing, a symbolic link, too large, unreadable: ``score_entry`` says which)."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_NOTEBOOK_MB * 2**20:
            return None
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def entries(submissions: Path, test: pd.DataFrame, *, timeout: float = config.CELL_TIMEOUT,
            limits: Limits | None = None, jobs: int = config.GRADE_JOBS,
            budget: float = config.BAKEOFF_BUDGET, again: bool = False,
            on_entry: Callable[[Entry], None] | None = None) -> list[Entry]:
    """Score every student folder's entry on ``test``'s texts, ``jobs`` at a time.

    Each entry gets the texts in an order of its own that nobody can predict. Each entry is
    saved as it finishes (``Saved``); an entry scored before from the same notebook, on the
    same test set and under the same conditions (``conditions``), is kept, not run again,
    unless ``again``. Ctrl-C, or any error of the kit's, stops every running entry (their
    sandboxes included) and the ones not started.

    Raises
    ------
    KitError
        If bubblewrap, which alone can hide the test labels from an entry, is not installed,
        or its sandbox cannot run the kit here, or the saved entries' file is not the kit's.
    """
    if sandbox.kind() != sandbox.BUBBLEWRAP:
        raise KitError("kit bakeoff runs each entry in bubblewrap, which hides the test reviews' labels "
                       "from it; it is not installed here (apt-get install bubblewrap).")
    _prepare_shown_caches()
    texts = test.text.tolist()
    view = data_view(settings.data_dir())
    limits = limits or Limits()
    saved = Saved(submissions, test, conditions(view.hidden, limits, timeout, budget))
    slots = sandbox.Slots(jobs)

    def one(folder: Path) -> Entry:
        path = folder / BAKEOFF_NOTEBOOK
        try:
            notebook = _notebook_digest(path)
            entry = None if again or notebook is None else saved.get(folder.name, notebook)
            if entry is None:
                with slots.take() as slot:
                    job = Job(limits, slot, budget, view.hidden, view.listed)
                    entry = score_entry(folder, texts, timeout, job)
                if notebook is not None:
                    _save(saved, entry, notebook)
            if notebook is not None:
                entry = dataclasses.replace(entry, flags=_flags_of(path))
        except Exception as err:  # the kit's failure on one entry is that entry's line
            said = str(err).replace(str(folder), "the entry's folder")[:200]
            entry = Entry(folder.name, None,
                          f"the kit could not run this entry ({type(err).__name__}: {said})")
        if on_entry is not None:
            on_entry(entry)
        return entry

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        with sandbox.stopping_together():  # the jobs run in sessions of their own
            sandbox.self_test(settings.data_dir())
            found = list(pool.map(one, layout.student_folders(submissions)))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return found


def check_saved(submissions: Path) -> None:
    """Refuse, before anything runs, a saved entries' file the kit did not write as it is.

    Raises
    ------
    KitError
        If ``ENTRIES_FILE`` in ``submissions`` is not the kit's, or changed since it wrote it.
    """
    _saved_records(Path(submissions) / ENTRIES_FILE)


def _save(saved: Saved, entry: Entry, notebook: str) -> None:
    """Save ``entry``; a file that cannot be written costs the saving, not the run."""
    try:
        saved.add(entry, notebook)
    except OSError as err:
        LOGGER.warning("kit bakeoff: %s could not be saved in %s (%s); the leaderboard will hold it.",
                       entry.student, saved.path, err)


def _prepare_shown_caches() -> None:
    """Cache the IMDB splits an entry may load: in its sandbox the archive is hidden, so the
    cached tables are how it reads them."""
    for split in ("train", "unsup"):
        data.load_imdb(split)


def baselines(names: Sequence[str], test: pd.DataFrame, progress: bool = True) -> dict[str, np.ndarray]:
    """The kit's systems, each trained on the 2,000 reviews, labelling ``test``'s texts:
    ``KIT_PREFIX + name`` -> its labels."""
    found = {}
    for name in names:
        if progress:
            LOGGER.info("kit bakeoff: training the baseline %s on the 2,000 reviews", name)
        predicted = evaluation.fit_predict(systems.system(name), test=test[["doc_id", "text"]], name=name,
                                           use_cache=False)
        found[KIT_PREFIX + name] = predicted.prediction.to_numpy()
    return found


@dataclasses.dataclass(frozen=True)
class Bakeoff:
    """A scored class: the leaderboard of every scored system, which of them are the kit's,
    and the entries without a rank (student, problem)."""

    board: leaderboard.Leaderboard
    unranked: pd.DataFrame
    baselines: frozenset[str] = frozenset()
    #: Student -> what to read in their entry (``flags``), for the entries flagged.
    flagged: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


def rank(scored: dict[str, np.ndarray], labels: np.ndarray, failed: Sequence[Entry],
         alpha: float | None = None, baseline_names: frozenset[str] = frozenset()) -> Bakeoff:
    """Rank every scored system (name -> its labels) against ``labels`` (``leaderboard``);
    ``baseline_names`` are the kit's.

    Raises
    ------
    KitError
        If fewer than two systems were scored (nothing to compare).
    """
    if len(scored) < 2:
        raise KitError(f"A bake-off leaderboard needs at least two scored systems; {len(scored)} "
                       "answered. Add the kit's baselines (--baselines) or wait for more entries.")
    correct = {name: np.asarray(predicted) == labels for name, predicted in scored.items()}
    board = leaderboard.leaderboard(correct, alpha=alpha)
    unranked = pd.DataFrame([(entry.student, entry.problem) for entry in failed],
                            columns=["student", "problem"])
    return Bakeoff(board, unranked, baseline_names)


def bakeoff(submissions: Path, test: pd.DataFrame, baseline_names: Sequence[str] = systems.NAMES,
            progress: bool = True, aliases: Mapping[str, str] | None = None, **options) -> Bakeoff:
    """Score the kit's baselines and a class on ``test`` and rank them (``baselines``,
    ``entries``, ``rank``). The baselines come first, so a failure there costs no entry's run.

    ``aliases`` (folder name -> the name shown, ``read_aliases``) name the students on the
    leaderboard and in its files; ``options`` go to ``entries`` (timeout, limits, jobs, budget,
    again, on_entry), which names them by folder.

    Raises
    ------
    KitError
        If a student folder is named like one of the kit's systems, or the class and the
        baselines cannot make two systems to compare.
    """
    folders = layout.student_folders(submissions)
    clashes = sorted({folder.name for folder in folders} & {KIT_PREFIX + name for name in systems.NAMES})
    if clashes:
        raise KitError(f"A student folder is named like one of the kit's systems ({', '.join(clashes)}): "
                       "rename it.")
    if len(folders) + len(baseline_names) < 2:
        raise KitError(f"A bake-off needs at least two systems: {submissions} holds {len(folders)} student "
                       f"folder(s) and {len(baseline_names)} baseline(s) were asked for.")
    unnamed = sorted({folder.name for folder in folders} - set(aliases or {})) if aliases is not None else []
    if unnamed:
        raise KitError(f"No alias for {', '.join(unnamed[:5])}: every student folder needs one "
                       "(read_aliases).")
    check_saved(submissions)
    scored = baselines(baseline_names, test, progress)
    found = entries(submissions, test, **options)
    if aliases is not None:
        found = [dataclasses.replace(entry, student=aliases[entry.student]) for entry in found]
    scored.update({entry.student: np.asarray(entry.predictions) for entry in found
                   if entry.predictions is not None})
    ranked = rank(scored, test.label.to_numpy(), [entry for entry in found if entry.predictions is None],
                  baseline_names=frozenset(KIT_PREFIX + name for name in baseline_names))
    return dataclasses.replace(ranked, flagged={entry.student: entry.flags for entry in found if entry.flags})


# --------------------------------------------------------------------------- what is written


def table(result: Bakeoff) -> pd.DataFrame:
    """One row per system: the ranked ones (rank, system, kind, accuracy, low, high, n, beats),
    then the entries without a rank, with their problem; ``flags`` says what to read in an
    entry (``flags``), for the instructor (the page leaves it out)."""
    ranked = result.board.table.assign(
        kind=lambda t: np.where(t.system.isin(result.baselines), "kit baseline", "student"), problem="")
    unranked = pd.DataFrame({"system": result.unranked.student, "kind": "student",
                             "problem": result.unranked.problem})
    columns = ["rank", "system", "kind", "accuracy", "low", "high", "n", "beats", "problem", "flags"]
    both = pd.concat([ranked, unranked], ignore_index=True)
    both["flags"] = both.system.map(lambda name: "; ".join(result.flagged.get(name, ())))
    return both.reindex(columns=columns).astype({"rank": "Int64", "n": "Int64"})


def page(result: Bakeoff, figure_png: bytes, test_name: str) -> str:
    """The leaderboard as one HTML page: the figure, the ranked table, every pair, and the
    entries that could not be scored (those who handed in nothing are only counted)."""
    def as_html(frame: pd.DataFrame) -> str:
        return frame.to_html(index=False, na_rep="", float_format=lambda x: f"{x:.4f}", escape=True)

    figure = base64.b64encode(figure_png).decode("ascii")
    shown = result.unranked[result.unranked.problem != ABSENT]
    unranked = "".join(f"<li>{html.escape(row.student)}: {html.escape(row.problem)}</li>"
                       for row in shown.itertuples())
    absent = len(result.unranked) - len(shown)
    ranked = table(result).dropna(subset=["rank"]).drop(columns=["problem", "flags"])
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Bake-off</title></head><body>"
            f"<h1>Bake-off</h1><p>Test set: {html.escape(test_name)}. Ranks separate only systems whose "
            f"difference a paired permutation test finds significant after Holm's correction "
            f"(α = {result.board.alpha:g}); systems that share a rank were not told apart.</p>"
            f"<img alt='accuracy with 95 % intervals' src='data:image/png;base64,{figure}'>"
            f"<h2>Systems</h2>{as_html(ranked)}"
            f"<h2>Every pair</h2>{as_html(result.board.pairs)}"
            f"<h2>Entries without a rank</h2><ul>{unranked or '<li>none</li>'}</ul>"
            f"<p>{absent} student folder(s) held no entry.</p></body></html>")


def figure_png(result: Bakeoff) -> bytes:
    """The leaderboard's figure (``leaderboard.plot``) as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = leaderboard.plot(result.board)
    ax.figure.tight_layout()
    buffer = io.BytesIO()
    ax.figure.savefig(buffer, format="png", dpi=120)
    plt.close(ax.figure)
    return buffer.getvalue()


def write(result: Bakeoff, submissions: Path, test_name: str) -> list[tuple[Path, Path]]:
    """Write the leaderboard's files into the submissions folder, never over a file the
    instructor changed (``owned``); returns (intended, written) per file. The CSV files are
    safe to open in a spreadsheet (``spreadsheet.spreadsheet_csv``)."""
    png = figure_png(result)
    contents: dict[str, str | bytes] = {
        TABLE_FILE: spreadsheet_csv(table(result)), PAIRS_FILE: spreadsheet_csv(result.board.pairs),
        FIGURE_FILE: png, PAGE_FILE: page(result, png, test_name)}
    return [(submissions / name, owned.write_owned(submissions / name, content))
            for name, content in contents.items()]
