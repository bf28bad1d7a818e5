"""The catalogue of student mistakes (tests/mistakes/): every one must fail its exercise.

The exercises are graded through the grading engine (``grading_harness.grade_variants``, which
calls ``grading.grade``, the code behind ``kit grade``), one kernel per notebook, on the
smallest slice of it: the notebook up to the last catalogued exercise's last check, where each
exercise's block (its cell and checks) is run once per answer — the solution, the released
stub, every mistake, and the solution again (it must still pass, so no answer changed what the
next one used). Each answer starts from the kernel's names as they were before the exercise.

An answer that later cells can see is run from the exercise's cell to the end of the slice, so
it is graded on its own exercise and on every later one, which must not be charged for it: the
stub (a later exercise that needs its work must say "blocked by"), and every answer that binds
a name a later cell reads, or whose solution does (``seen_later``: the later cells call or use
what it defined). Any other answer is graded on its own exercise only. The later cells could
reach it only through an object it changed in place: objects change in place across answers,
so the solutions graded after it (this exercise's second run, and the later exercises' own
runs, which start from the state it left) fail on such a change.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grading_harness
import nbformat
import pandas as pd
import pytest

from helpers import embeddings
from helpers.course.config import GRADE_JOBS, SOLUTIONS_DIR, notebooks_in
from helpers.course.engine.verdict import Status
from helpers.course.notebook.cells import exercise_id, exercises
from helpers.course.notebook.release import stub_source

CATALOGUE = Path(__file__).parent / "mistakes"
MIN_MISTAKES = 3
SOLUTIONS = ("solution", "solution again")
#: The notebooks whose slices use no Doc2Vec model.
WITHOUT_DOC2VEC = {"01", "02", "03", "09"}
#: The Doc2Vec notebooks whose catalogues take longest to grade, longest first. In a CI run on
#: 2 cores (2026-11-29, before answers later cells cannot see were graded alone): 04 1,712 s
#: (its first run trains the twelve sample models of 04-005), 05 567 s, 06 193, 07 164, 08 37.
LONGEST_FIRST = ("04", "05", "06", "07", "08")
ACCIDENTS = ("Timeout|not run|ran out of time|blocked by|"
             "(?:Syntax|Indentation|Name|Attribute|Type|Import|ModuleNotFound)Error")


def _catalogue() -> dict[str, dict[str, str]]:
    found = {}
    for path in sorted(CATALOGUE.glob("ex_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found[module.EXERCISE] = {name: source.strip("\n") for name, source in module.MISTAKES.items()}
    return found


MISTAKES = _catalogue()


def _notebook(exercise: str) -> str:
    return exercise.split(".")[0].zfill(2)


def _solution_of(number: str) -> nbformat.NotebookNode:
    return nbformat.read(notebooks_in(SOLUTIONS_DIR, [number])[0], as_version=4)


def _answers_of(number: str, solution: nbformat.NotebookNode) -> dict[str, dict[str, str]]:
    """The answers to every catalogued exercise of notebook ``number``, by exercise."""
    return {ex: _answers(ex, solution) for ex in MISTAKES if _notebook(ex) == number}


def _answers(exercise: str, solution: nbformat.NotebookNode) -> dict[str, str]:
    source = next(c.source for c in solution.cells if exercise_id(c) == exercise)
    return {"solution": source, "stub": stub_source(source, exercise), **MISTAKES[exercise],
            "solution again": source}


#: Calls that bind names no parse can see: an answer making them is assumed seen later.
DYNAMIC_BINDING = re.compile(r"\b(?:globals|exec|eval|setattr|__import__)\s*\(|import\s+\*")


def _bound(source: str) -> set[str] | None:
    """The module-level names ``source`` binds (defines, assigns, imports, catches, matches,
    or declares global in a function); None if it is not plain Python or binds names by other
    means (``DYNAMIC_BINDING``): then anything may be bound. A function's or class's own
    names are its own, but a walrus anywhere in one counts (in a default, a decorator or a
    base it binds a module-level name)."""
    if DYNAMIC_BINDING.search(source):
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(child.name)
                for inner in ast.walk(child):
                    if isinstance(inner, ast.Global):
                        found.update(inner.names)
                    elif isinstance(inner, ast.NamedExpr) and isinstance(inner.target, ast.Name):
                        found.add(inner.target.id)
                continue
            if isinstance(child, ast.Name) and not isinstance(child.ctx, ast.Load):
                found.add(child.id)
            elif isinstance(child, ast.Import | ast.ImportFrom):
                found.update((alias.asname or alias.name).split(".")[0] for alias in child.names)
            elif isinstance(child, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and child.name:
                found.add(child.name)
            elif isinstance(child, ast.MatchMapping) and child.rest:
                found.add(child.rest)
            visit(child)

    visit(tree)
    return found


def seen_later(answer: str, later_sources: list[str]) -> bool:
    """Whether a cell after the exercise's checks may read a name ``answer`` binds (every
    word of their sources counts, comments and strings too: when in doubt, seen)."""
    bound = _bound(answer)
    if bound is None:
        return True
    read = {word for source in later_sources for word in re.findall(r"[A-Za-z_]\w*", source)}
    return bool(bound & read)


def _later_cells(solution: nbformat.NotebookNode, exercise: str,
                 named: list[str]) -> list[nbformat.NotebookNode]:
    """The code cells a run of ``exercise``'s answers goes on to after its last check: up to
    the last check of the last exercise in ``named`` (the slice's cut, as in the harness)."""
    found = {ex.id: ex for ex in exercises(solution)}
    ids = [cell.id for cell in solution.cells]
    cut = max(ids.index(found[ex].cell_ids[-1]) for ex in named) + 1
    return [cell for cell in solution.cells[ids.index(found[exercise].cell_ids[-1]) + 1:cut]
            if cell.cell_type == "code"]


def _alone(solution: nbformat.NotebookNode, answers: dict[str, dict[str, str]]) -> dict[str, list[int]]:
    """For each exercise, the positions of the answers graded on their own exercise only: the
    solutions (the next exercise's runs grade the later ones) and every answer but the stub
    that no later cell of the slice sees (nor would see the solution, whose names an answer
    leaving one out would leave undefined)."""
    alone = {}
    for ex, named in answers.items():
        later = [cell.source for cell in _later_cells(solution, ex, list(answers))]
        solution_seen = seen_later(named["solution"], later)
        alone[ex] = [i for i, (name, source) in enumerate(named.items())
                     if name in SOLUTIONS or (name != "stub" and not solution_seen
                                              and not seen_later(source, later))]
    return alone


def _grade(number: str, work: Path) -> pd.DataFrame:
    """Grade every catalogued exercise of notebook ``number`` in one kernel.

    One row per answer and graded exercise: the answer's own and, for an answer later cells
    see, every later one's.
    """
    solution = _solution_of(number)
    answers = _answers_of(number, solution)
    work.mkdir()
    alone = _alone(solution, answers)
    results = grading_harness.grade_variants(solution, {ex: list(a.values()) for ex, a in answers.items()},
                                             work, alone=alone)
    return pd.DataFrame([(ex, name, graded, v.passed, str(v.status), v.reason, v.position)
                         for ex, named in answers.items()
                         for name, run in zip(named, results[ex], strict=True)
                         for graded, v in run.items()],
                        columns=["exercise", "answer", "graded", "passed", "status", "error", "position"])


@pytest.fixture(scope="module")
def graded(corpora, tmp_path_factory) -> pd.DataFrame:
    work = tmp_path_factory.mktemp("mistakes")
    numbers = sorted({_notebook(ex) for ex in MISTAKES}, key=_schedule)
    with ThreadPoolExecutor(max_workers=GRADE_JOBS) as pool:
        # The slices of 04-08 read the kit's model and the sample's PV-DBOW and PV-DM from
        # the shared cache: train them first, side by side, so that two grading kernels never
        # train one model at once; the notebooks without Doc2Vec are graded meanwhile.
        models = pool.submit(embeddings.prepare, [embeddings.config_for("quick"),
                                                  embeddings.sample_config(), embeddings.sample_config(dm=1)],
                             profile="quick", progress=False)

        def grade(number: str) -> pd.DataFrame:
            if number not in WITHOUT_DOC2VEC:
                models.result()
            return _grade(number, work / number)

        tables = list(pool.map(grade, numbers))
    return pd.concat(tables, ignore_index=True)


def _schedule(number: str) -> tuple[bool, int, str]:
    """The order to grade notebooks in: those without Doc2Vec first (they need no model),
    then the longest first, so that the two jobs end together."""
    rank = LONGEST_FIRST.index(number) if number in LONGEST_FIRST else len(LONGEST_FIRST)
    return number not in WITHOUT_DOC2VEC, rank, number


def test_each_catalogued_exercise_has_enough_mistakes():
    assert MISTAKES, "no catalogue"
    for exercise, mistakes in MISTAKES.items():
        assert len(mistakes) >= MIN_MISTAKES, exercise
        solution = _solution_of(_notebook(exercise))
        assert exercise in [ex.id for ex in exercises(solution)], exercise


def _own(graded: pd.DataFrame) -> pd.DataFrame:
    return graded[graded.graded == graded.exercise]


def _later(graded: pd.DataFrame) -> pd.DataFrame:
    return graded[graded.graded != graded.exercise]


@pytest.mark.kernel
@pytest.mark.slow
def test_the_solution_passes_before_and_after_the_mistakes(graded):
    solutions = graded[graded.answer.isin(SOLUTIONS)]
    assert solutions.passed.all(), solutions[~solutions.passed].to_string()


@pytest.mark.kernel
@pytest.mark.slow
def test_the_stub_fails_its_exercise_and_blocks_no_other(graded):
    stubs = graded[graded.answer == "stub"]
    own = _own(stubs)
    assert not own.passed.any(), own[own.passed].to_string()
    assert (own.status == Status.NOT_DONE).all(), own[["exercise", "status", "error"]].to_string()
    # a later exercise may need this one's work: then its row says so
    later = _later(stubs)
    told = later.error == "blocked by " + later.exercise + " (not done yet)"
    unexplained = later[~later.passed & ((later.status != Status.BLOCKED) | ~told)]
    assert unexplained.empty, unexplained[["exercise", "graded", "error"]].to_string()


@pytest.mark.kernel
@pytest.mark.slow
def test_every_mistake_fails_its_exercise_and_no_other(graded, capsys):
    answers = graded[~graded.answer.isin([*SOLUTIONS, "stub"])]
    mistakes = _own(answers)
    notebook = mistakes.exercise.str.split(".").str[0].rename("notebook")
    rate = mistakes.groupby(notebook).agg(mistakes=("passed", "size"),
                                          caught=("passed", lambda p: int((~p).sum())))
    with capsys.disabled():
        print("\nmistake catalogue, caught per notebook:\n" + rate.to_string())
    missed = mistakes[mistakes.passed]
    assert missed.empty, "mistakes that pass their exercise:\n" + missed[["exercise", "answer"]].to_string()
    # caught by a check, not by accident: the first failure must be in a check cell (not the
    # answer's own cell) and not a timeout, a cell that did not run, or the error Python gives
    # a typo in the catalogue (nor "blocked by": the earlier exercises are solved)
    by_check = mistakes.position.fillna(0) >= 1
    accidents = mistakes[~by_check | mistakes.error.str.contains(ACCIDENTS)]
    assert accidents.empty, accidents[["exercise", "answer", "position", "error"]].to_string()
    charged = _later(answers)[~_later(answers).passed]
    assert charged.empty, "mistakes charged to a later exercise:\n" + charged[
        ["exercise", "answer", "graded", "error"]].to_string()


def test_an_answer_is_seen_later_when_a_later_cell_reads_a_name_it_binds():
    later = ["errors = most_confident_errors(predictions, 5)\nprint(reviews.shape)"]
    assert seen_later("def most_confident_errors(p, n):\n    return p[:n]", later)
    assert seen_later("def f(p):\n    return p\nreviews = reviews.head()", later)  # a kit name rebound
    assert seen_later("def f(p):\n    global reviews\n    reviews = p", later)
    assert seen_later("from pandas import DataFrame as predictions", later)
    assert seen_later("%time x = 1", later)  # not plain Python: assumed seen
    assert not seen_later("def nb_fit(X, y):\n    counts = X.sum(0)\n    return counts", later)
    assert not seen_later("def f(p):\n    return reviews.shape", later)  # reads a kit name, binds none
    assert seen_later("from numpy import *", later)
    assert seen_later("def f(p):\n    globals()['reviews'] = p", later)
    assert seen_later("try:\n    pass\nexcept ValueError as reviews:\n    pass", later)
    assert seen_later("match 1:\n    case predictions:\n        pass", later)
    assert seen_later("def f(p=(reviews := 1)):\n    return p", later)
    assert seen_later("for reviews in range(2):\n    pass", later)
    assert seen_later("if True:\n    with open('x') as predictions:\n        pass", later)


def test_the_later_cells_of_an_exercise_are_those_after_its_checks_up_to_the_cut():
    solution = _solution_of("01")
    later = [cell.id for cell in _later_cells(solution, "1.2", ["1.1", "1.2", "1.3"])]
    assert later == ["01-011", "01-013", "01-yours", "01-015", "01-016", "01-017", "01-019", "01-020",
                     "01-020-hidden"]
    assert _later_cells(solution, "1.3", ["1.1", "1.2", "1.3"]) == []
    # 5.1's hidden check is followed by a code cell, and 5.5's last check ends the slice
    later = [cell.id for cell in _later_cells(_solution_of("05"), "5.1", ["5.1", "5.5"])]
    assert later[0] == "05-005-doc2vec" and later[-1] == "05-reviews-needed-hidden"


def test_the_answers_later_cells_see_are_graded_on_the_later_exercises():
    """01's later cells fit and predict with the student's nb_fit and nb_predict, so their
    mistakes are graded on 1.3 too; no later cell of 05 calls the student's functions."""
    for number, seen in [("01", {"1.1", "1.2"}), ("05", set())]:
        solution = _solution_of(number)
        answers = _answers_of(number, solution)
        alone = _alone(solution, answers)
        for ex, named in answers.items():
            names = list(named)
            expected = [i for i, name in enumerate(names) if name in SOLUTIONS or
                        (name != "stub" and ex not in seen)]
            assert alone[ex] == expected, (ex, [names[i] for i in alone[ex]])


def test_every_exercise_has_a_catalogue():
    notebooks = [nbformat.read(path, as_version=4) for path in notebooks_in(SOLUTIONS_DIR)]
    every = [ex.id for nb in notebooks for ex in exercises(nb)]
    assert every, "no exercises found"
    assert sorted(set(every) - set(MISTAKES)) == [], "exercises without a catalogue of mistakes"
