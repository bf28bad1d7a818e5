"""The catalogue of student mistakes (tests/mistakes/): every one must fail its exercise.

The exercises are graded through the grading engine (``grading_harness.grade_variants``, which
calls ``grading.grade``, the code behind ``kit grade``), one kernel per notebook (per exercise for
the longest, ``BY_EXERCISE``), on the
smallest slice of it: the notebook up to the last catalogued exercise's last check, where each
exercise's block (its cell and checks) is run once per answer — the solution, the released
stub, every mistake, and the solution again (it must still pass, so no answer changed what the
next one used). Each answer starts from the kernel's names as they were before the exercise.

An answer runs on to the later exercises that can see it, so that it is graded on its own
exercise and on each of them, which must not be charged for it: the stub runs to the end of
the slice (a later exercise that needs its work must say "blocked by"); any other answer runs to
the last later exercise one of whose cells may read what the answer changed (``reached``: the
names it, or its solution, binds, followed through every cell that reads one to the names that
cell binds and the objects it changes in place), or stops after its own checks. What a cell
does to an object through another name (an alias, a function it hands the object to) is not
followed; objects changed in place stay changed across answers, so the solutions graded after
it (this exercise's second run, and the later exercises' own runs, which start from the state
it left) fail on such a change if it lasts. A notebook graded one exercise per kernel
(``BY_EXERCISE``) keeps the first of these only: there a later exercise starts from the
solutions' state.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import symtable
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import MappingProxyType

import grading_harness
import nbformat
import pandas as pd
import pytest

from helpers import embeddings, syntax
from helpers.course.config import GRADE_JOBS, SOLUTIONS_DIR, notebooks_in
from helpers.course.engine.verdict import Status
from helpers.course.notebook.cells import HIDDEN_BEGIN, HIDDEN_END, exercise_id, exercises
from helpers.course.notebook.release import stub_source

CATALOGUE = Path(__file__).parent / "mistakes"
MIN_MISTAKES = 3
SOLUTIONS = ("solution", "solution again")
#: The notebooks whose slices use no Doc2Vec model.
WITHOUT_DOC2VEC = {"01", "02", "03", "09"}
#: The Doc2Vec notebooks whose catalogues take longest to grade, longest first. In a CI run on
#: 2 cores (2026-11-29, before answers later cells cannot see were graded alone, and while
#: 04's first run still trained the twelve sample models of 04-005 itself): 04 1,712 s, 05 567 s,
#: 06 193, 07 164, 08 37.
LONGEST_FIRST = ("04", "05", "06", "07", "08")
#: The notebooks whose catalogue is graded in one kernel per exercise, side by side: 04's kernel
#: was the last to end in a CI simulation (2026-11-29), 22 min while 05-08 took 9 beside it. (It
#: still trained ten sample models itself then, which the fixture's models phase now trains first.)
BY_EXERCISE = {"04"}
#: The cell that trains the Doc2Vec models the slices read: the kit's model and the sample's
#: (04's variants and seeds), with the names it uses from the cells above it.
MODELS_CELL = ("04", "04-005")
#: The statements and expressions whose names are their own (unless declared global).
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
#: The name under which a hidden check calls the student's functions (``student.nb_fit(...)``).
STUDENT = "student"
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
    tree = None if DYNAMIC_BINDING.search(source) else _parsed(source)
    if tree is None:
        return None
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.comprehension):  # its target is its own; a walrus in it is not
                for part in (child.iter, *child.ifs):
                    visit(part)
                continue
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
                found.update(_import_names(child))
            elif isinstance(child, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and child.name:
                found.add(child.name)
            elif isinstance(child, ast.MatchMapping) and child.rest:
                found.add(child.rest)
            visit(child)

    visit(tree)
    return found


def _globals_read(source: str) -> set[str]:
    """The globals plain Python ``source`` may read before it binds them: each statement's
    names read at module level or as globals in its functions (``symtable``) or updated in
    place (``x += 1``), less those the statements before it bound for certain."""
    found: set[str] = set()
    bound: set[str] = set()
    for statement in syntax.parse(source).body:
        text = ast.unparse(statement)
        scopes = [symtable.symtable(text, "<cell>", "exec")]
        while scopes:
            scope = scopes.pop()
            found.update(symbol.get_name() for symbol in scope.get_symbols()
                         if symbol.is_referenced() and symbol.get_name() not in bound
                         and (scope.get_type() == "module" or symbol.is_global()))
            scopes += scope.get_children()
        found.update(name for name in _updated(statement) if name not in bound)
        bound |= _bound_for_certain(text)
    return found


def _updated(statement: ast.stmt) -> set[str]:
    """The globals a statement updates in place (``x += 1``; in a function, only a name it
    declares global): a read that ``symtable`` does not report."""
    declared = {name for node in ast.walk(statement) if isinstance(node, ast.Global) for name in node.names}
    found: set[str] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and \
                (not in_function or node.target.id in declared):
            found.add(node.target.id)
        inner = in_function or isinstance(node, SCOPES)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(statement, False)
    return found


def _bound_for_certain(source: str) -> set[str]:
    """The names plain Python ``source`` binds whatever happens: by its own statements (not in
    an ``if``, a loop, a ``try`` or a function), assigning, defining or importing each."""
    found: set[str] = set()
    for statement in syntax.parse(source).body:
        if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            found.update(node.id for target in targets for node in ast.walk(target)
                         if isinstance(node, ast.Name))
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(statement.name)
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            found |= _import_names(statement)
    return found


def _reads(source: str) -> set[str] | None:
    """The names a cell may read from the kernel's globals: those its code reads
    (``_globals_read``; none for a hidden check, which runs in the grader), the student's
    functions a hidden check calls (``student.<name>``) and every string that is a name
    (``kernel("model")``); None if it is not plain Python (it may read anything)."""
    tree = _parsed(source)
    if tree is None:
        return None
    found = set() if HIDDEN_BEGIN in source else _globals_read(source)  # a hidden check's: the grader's
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == STUDENT:
            found.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            found.add(node.value)
    return found


def _changed(source: str) -> set[str]:
    """The globals whose objects plain Python ``source`` may change in place (``x[k] = v``,
    ``x.a += v``, ``del x[k]``, ``x.append(v)``), in its functions too."""
    found = set()
    for node in ast.walk(syntax.parse(source)):
        target = node.value if isinstance(node, ast.Attribute | ast.Subscript) and \
            not isinstance(node.ctx, ast.Load) else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
        if isinstance(target, ast.Name):
            found.add(target.id)
    return found & _globals_read(source)


def reached(answer: str, solution: str, later: list[str], imported: set[str],
            functions: Mapping[str, set[str]] = MappingProxyType({})) -> list[bool] | None:
    """For each cell after an exercise's cell (``later``, in order), whether it may read what
    the answer changed, or None when that cannot be told (a cell that is not plain Python,
    or binds names by other means, ``DYNAMIC_BINDING``).

    What the answer changed: the names it binds and those its solution binds (an answer that
    leaves one out leaves it undefined), and the objects it may change in place
    (``_changed``). Each cell that reads one of them, itself or through a function defined
    earlier that reads it (``functions``: each function's name and the globals it reads),
    passes it on, to the names it binds and the objects it may change in place, except the
    modules and objects the notebook imports (``imported``); a cell that reads none of them
    and binds one for certain binds it anew. A hidden check binds nothing: it runs in the
    grader.
    """
    bound, in_solution = _bound(answer), _bound(solution)
    if bound is None or in_solution is None:
        return None
    tainted, found = bound | in_solution | (_changed(answer) - imported), []
    for source in later:
        reads, binds = _reads(source), _bound(source)
        if reads is None or binds is None:
            return None
        hidden, called = HIDDEN_BEGIN in source, set()
        while new := (reads & functions.keys()) - called:
            called |= new
            reads |= set().union(*(functions[name] for name in new))
        found.append(bool(reads & tainted))
        if hidden:
            continue
        if found[-1]:
            tainted |= (binds | _changed(source)) - imported
        else:
            tainted -= _bound_for_certain(source)
        functions = {**functions, **_functions_of(source)}
    return found


def _imported(solution: nbformat.NotebookNode) -> set[str]:
    """The names any code cell of the notebook (not a hidden check: it runs in the grader)
    binds by an import."""
    found = set()
    for cell in solution.cells:
        if cell.cell_type == "code" and HIDDEN_BEGIN not in cell.source and \
                (tree := _parsed(cell.source)) is not None:
            found.update(name for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                         for name in _import_names(node))
    return found


def _functions_of(source: str) -> dict[str, set[str]]:
    """The functions plain Python ``source`` defines, with the globals each reads."""
    return {node.name: _globals_read(ast.unparse(node)) for node in syntax.parse(source).body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def _functions_before(solution: nbformat.NotebookNode, end: int) -> dict[str, set[str]]:
    """The functions the code cells before cell ``end`` define (not a hidden check's), the
    last definition of each, with the globals each reads."""
    found: dict[str, set[str]] = {}
    for cell in solution.cells[:end]:
        if cell.cell_type == "code" and HIDDEN_BEGIN not in cell.source and _parsed(cell.source) is not None:
            found.update(_functions_of(cell.source))
    return found


def _import_names(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The names an import binds (``import a.b`` binds ``a``; a star import names none)."""
    return {(alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"}


def _parsed(source: str) -> ast.Module | None:
    try:
        return syntax.parse(source)
    except SyntaxError:
        return None


def _until(solution: nbformat.NotebookNode, answers: dict[str, dict[str, str]],
           through: str | None = None) -> dict[str, list[str | None]]:
    """For each exercise, for each answer, the exercise whose last check ends its run (None:
    the slice's cut): the stub runs to the cut (a later exercise that needs its work must say
    "blocked by"), the solutions stop at their own exercise (the next exercise's runs grade
    the later ones), and every other answer runs to the last later exercise with a cell that
    may read what it changed (``reached``), or stops at its own. The slice is cut after the last
    exercise named, or after ``through``."""
    found = {ex.id: ex for ex in exercises(solution)}
    ids = [cell.id for cell in solution.cells]
    cut = grading_harness.slice_end(solution, list(answers), through)
    imported = _imported(solution)
    before = {ex: _functions_before(solution, ids.index(found[ex].cell_ids[0])) for ex in answers}
    until = {}
    for ex, named in answers.items():
        first, own_end = ids.index(found[ex].cell_ids[0]), ids.index(found[ex].cell_ids[-1])
        later = [i for i in range(first + 1, cut) if solution.cells[i].cell_type == "code"]
        spans = {other.id: range(ids.index(other.cell_ids[0]), ids.index(other.cell_ids[-1]) + 1)
                 for other in found.values() if own_end < ids.index(other.cell_ids[0]) < cut}
        until[ex] = []
        for name, source in named.items():
            seen = None if name == "stub" else [False] * len(later) if name in SOLUTIONS else \
                reached(source, named["solution"], [solution.cells[i].source for i in later], imported,
                        before[ex])
            if seen is None:
                until[ex].append(None)
                continue
            reading = {i for i, read in zip(later, seen, strict=True) if read}
            until[ex].append(max((other for other, span in spans.items() if reading & set(span)),
                                 key=lambda other: spans[other].start, default=ex))
    return until


def _last(solution: nbformat.NotebookNode, named: Mapping[str, object]) -> str:
    """The exercise of ``named`` that comes last in ``solution``."""
    position = {ex.id: i for i, ex in enumerate(exercises(solution))}
    return max(named, key=position.__getitem__)


def _jobs(number: str) -> list[tuple[str, ...]]:
    """The kernels notebook ``number``'s catalogue is graded in, each by the exercises it grades:
    one for the whole catalogue, or one per exercise for ``BY_EXERCISE``."""
    named = tuple(ex for ex in MISTAKES if _notebook(ex) == number)
    return [(ex,) for ex in named] if number in BY_EXERCISE else [named]


def _grade(number: str, graded: tuple[str, ...], work: Path) -> pd.DataFrame:
    """Grade the catalogued exercises ``graded`` of notebook ``number`` in one kernel.

    Each answer runs as far as it would among every catalogued exercise of the notebook. One
    row per answer and graded exercise: the answer's own and, for an answer later cells see,
    every later one's.
    """
    solution = _solution_of(number)
    every = _answers_of(number, solution)
    answers = {ex: every[ex] for ex in graded}
    through = _last(solution, every)
    work.mkdir()
    results = grading_harness.grade_variants(solution, {ex: list(a.values()) for ex, a in answers.items()},
                                             work, until=_until(solution, answers, through), through=through)
    return pd.DataFrame([(ex, name, graded, v.passed, str(v.status), v.reason, v.position)
                         for ex, named in answers.items()
                         for name, run in zip(named, results[ex], strict=True)
                         for graded, v in run.items()],
                        columns=["exercise", "answer", "graded", "passed", "status", "error", "position"])


@pytest.fixture(scope="module")
def graded(corpora, tmp_path_factory) -> pd.DataFrame:
    work = tmp_path_factory.mktemp("mistakes")
    numbers = sorted({_notebook(ex) for ex in MISTAKES}, key=_schedule)
    jobs = [(number, graded) for number in numbers for graded in _jobs(number)]
    with ThreadPoolExecutor(max_workers=GRADE_JOBS) as pool:
        # The slices of 04-08 read the kit's model and the sample's models from the shared
        # cache: train them first, two at a time, while the notebooks without Doc2Vec are graded.
        # 04's kernel would train the sample's alone, one exercise ahead of its checks, while
        # 05-08 are graded beside it and then leave a core idle.
        models = pool.submit(embeddings.prepare, _models(), profile="quick", progress=False)

        def grade(job: tuple[str, tuple[str, ...]]) -> pd.DataFrame:
            number, graded = job
            if number not in WITHOUT_DOC2VEC:
                models.result()
            return _grade(number, graded, work / "_".join(graded))

        tables = list(pool.map(grade, jobs))
    return pd.concat(tables, ignore_index=True)


def _models() -> list[embeddings.Doc2VecConfig]:
    """The models ``MODELS_CELL`` trains: its code run with ``prepare`` replaced by a recorder
    (nothing is trained), after the names it takes from 04's first cell."""
    number, cell_id = MODELS_CELL
    source = next(cell.source for cell in _solution_of(number).cells if cell.id == cell_id)
    recorded: list[embeddings.Doc2VecConfig] = []
    names = {"time": time, "kit_config": embeddings.config_for("quick"),
             "sample_config": embeddings.sample_config, "print": lambda *_, **__: None,
             "prepare": lambda models, **_: recorded.extend(models)}
    exec(source, names)  # noqa: S102 - the kit's own solution cell
    return recorded


def _schedule(number: str) -> tuple[bool, int, str]:
    """The order to grade notebooks in: those without Doc2Vec first (they need no model),
    then the longest first, so that the two jobs end together."""
    rank = LONGEST_FIRST.index(number) if number in LONGEST_FIRST else len(LONGEST_FIRST)
    return number not in WITHOUT_DOC2VEC, rank, number


def test_the_models_trained_first_are_the_kit_s_and_the_sample_s_of_notebook_04():
    models = _models()
    assert len(models) == len(set(models)) > 10
    read_by_05_to_08 = {embeddings.config_for("quick"), embeddings.sample_config(),
                        embeddings.sample_config(dm=1)}
    assert read_by_05_to_08 <= set(models)


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


def test_the_names_an_answer_binds_are_those_of_the_module_level():
    assert _bound("def f(p):\n    x = 1\n    return p") == {"f"}
    assert _bound("def f(p):\n    global reviews\n    reviews = p") == {"f", "reviews"}
    assert _bound("from pandas import DataFrame as predictions") == {"predictions"}
    assert _bound("try:\n    pass\nexcept ValueError as reviews:\n    pass") == {"reviews"}
    assert _bound("match 1:\n    case predictions:\n        pass") == {"predictions"}
    assert _bound("def f(p=(reviews := 1)):\n    return p") == {"f", "reviews"}
    assert _bound("for reviews in range(2):\n    pass") == {"reviews"}
    assert _bound("if True:\n    with open('x') as predictions:\n        pass") == {"predictions"}
    assert _bound("x = [i for i in range(3)]") == {"x"}  # a comprehension's variable is its own
    assert _bound("x = [(y := i) for i in range(3)]") == {"x", "y"}
    for unknown in ("%time x = 1", "from numpy import *", "def f(p):\n    globals()['reviews'] = p"):
        assert _bound(unknown) is None, unknown  # anything may be bound


def test_what_an_answer_changed_reaches_the_cells_that_read_it_and_what_they_made_of_it():
    answer, solution = "def nb_fit(X, y):\n    return X", "def nb_fit(X, y):\n    return X"
    imported = {"np"}

    def reaches(*later: str) -> list[bool] | None:
        return reached(answer, solution, list(later), imported)

    assert reaches("model = nb_fit(1, 2)", "print(model)", "print(labels)") == [True, True, False]
    assert reaches("model = nb_fit(1, 2)", "model = 3", "print(model)") == [True, False, False]  # bound anew
    assert reaches("def g():\n    nb_fit = 1\n    return nb_fit") == [False]  # a function's own name
    assert reaches("def g():\n    return nb_fit(1, 2)") == [True]  # a global its function reads
    assert reaches("def nb_fit(X, y):\n    return y\nnb_fit(1, 2)") == [False]  # bound before read
    assert reaches("reviews['nb'] = nb_fit(1, 2)", "print(reviews)") == [True, True]  # changed in place
    assert reaches("found.append(nb_fit(1, 2))", "print(found)") == [True, True]
    assert reaches("import numpy as np\nx = nb_fit(np, 2)", "np.mean(1)") == [True, False]  # a module
    hidden = f"# NBVAL_CHECK_OUTPUT\n{HIDDEN_BEGIN}\ny = student.nb_fit(1, 2)\nprint(labels)\n{HIDDEN_END}"
    assert reaches(hidden, "print(y)") == [True, False]  # a hidden check runs in the grader
    assert reaches("print(labels)", "print(kernel('nb_fit'))") == [False, True]
    assert reached("def f():\n    pass", solution, ["print(nb_fit)"], imported) == [True]  # the solution's
    for maybe in ("if False:\n    model = 0", "for model in []:\n    pass", "model: int",
                  "def reset():\n    global model\n    model = 0"):  # bound only perhaps: still reached
        assert reaches("model = nb_fit(1, 2)", maybe, "print(model)") == [True, False, True], maybe
    assert reaches("model = nb_fit(1, 2)", "model += 1", "print(model)") == [True, True, True]
    assert reaches("def g():\n    n = 0\n    n += 1") == [False]  # a function's own name
    assert reached("X = 1", "X = 1", ["print(report())"], imported, {"report": {"X"}}) == [True]
    report = "def report():\n    return model"  # defined before model is changed, called after
    assert reaches(report, "model = nb_fit(1, 2)", "report()") == [False, True, True]
    changes = "reviews.drop(columns='x', inplace=True)"  # the answer changes a kit object in place
    assert reached(changes, solution, ["print(reviews)"], imported) == [True]
    assert reaches("%time nb_fit(1, 2)") is None  # not plain Python: cannot tell
    assert reached("from numpy import *", solution, ["print(1)"], imported) is None


def test_an_answer_is_graded_up_to_the_last_later_exercise_that_reads_what_it_changed():
    """05's 5.1 check leaves the student's errors in the kernel (errors = most_confident_errors(...)),
    which 5.2's first check reads; 04's later cells read train_dbow's model only outside any
    exercise (04-010-variants), and 01's only in the cells between exercises."""
    expected = {"05": {"5.1": "5.2"}, "04": {}, "01": {}}
    for number, reaching in expected.items():
        solution = _solution_of(number)
        answers = _answers_of(number, solution)
        until = _until(solution, answers)
        for ex, named in answers.items():
            wanted = [None if name == "stub" else ex if name in SOLUTIONS else reaching.get(ex, ex)
                      for name in named]
            assert until[ex] == wanted, (ex, until[ex])


def test_an_exercise_graded_in_a_kernel_of_its_own_runs_as_far_as_among_every_exercise():
    """Every exercise's answers, alone with ``through``, end where they end among all of their
    notebook's (05's 5.1 mistakes reach 5.2), and run the same cells after the snapshot."""
    assert all(len(_jobs(number)) > 1 for number in BY_EXERCISE)
    for number in sorted({_notebook(ex) for ex in MISTAKES}):
        solution = _solution_of(number)
        answers = _answers_of(number, solution)
        through = _last(solution, answers)
        assert through == list(answers)[-1]  # the catalogue's order is the notebook's
        together = _until(solution, answers)
        sources = {ex: list(named.values()) for ex, named in answers.items()}
        whole, _ = grading_harness.variants_notebook(solution, sources, together)
        for ex in answers:
            alone = _until(solution, {ex: answers[ex]}, through)
            assert alone == {ex: together[ex]}, ex
            own, _ = grading_harness.variants_notebook(solution, {ex: sources[ex]}, alone, through=through)
            assert _after_snapshot(own, ex) == _after_snapshot(whole, ex), ex


def _after_snapshot(nb: nbformat.NotebookNode, exercise: str) -> list[tuple[str, str]]:
    """The cells that grade ``exercise``'s answers: from its snapshot to the next exercise's
    restore (or the end), by id and source."""
    name = exercise.replace(".", "_")
    ids = [cell.id for cell in nb.cells]
    start = ids.index(f"kit-snapshot-{name}")
    end = next((i for i in range(start + 1, len(ids)) if ids[i].startswith("kit-restore-before-")), len(ids))
    return [(cell.id, cell.source) for cell in nb.cells[start:end]]


def test_every_exercise_has_a_catalogue():
    notebooks = [nbformat.read(path, as_version=4) for path in notebooks_in(SOLUTIONS_DIR)]
    every = [ex.id for nb in notebooks for ex in exercises(nb)]
    assert every, "no exercises found"
    assert sorted(set(every) - set(MISTAKES)) == [], "exercises without a catalogue of mistakes"
