"""The catalogue of student mistakes (tests/mistakes/): every one must fail its exercise.

Each exercise is graded through the grading engine (``grade_variants``, the code behind
``kit grade``) on the smallest slice of its notebook: the cells up to its last check, run
once, then one block per answer — the solution, the released stub, every mistake, and the
solution again (it must still pass, so no answer changed what the next one used).
"""

from __future__ import annotations

import importlib.util
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from helpers.course import grading
from helpers.course.config import GRADE_JOBS, SOLUTIONS_DIR, notebooks_in
from helpers.course.release import exercise_id, exercises, stub_source

CATALOGUE = Path(__file__).parent / "mistakes"
MIN_MISTAKES = 3


def _catalogue() -> dict[str, dict[str, str]]:
    found = {}
    for path in sorted(CATALOGUE.glob("ex_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found[module.EXERCISE] = {name: source.strip("\n") for name, source in module.MISTAKES.items()}
    return found


MISTAKES = _catalogue()


def _solution_of(exercise: str) -> nbformat.NotebookNode:
    number = exercise.split(".")[0].zfill(2)
    return nbformat.read(notebooks_in(SOLUTIONS_DIR, [number])[0], as_version=4)


def _grade(exercise: str, work: Path) -> pd.DataFrame:
    solution = _solution_of(exercise)
    source = next(c.source for c in solution.cells if exercise_id(c) == exercise)
    answers = {"solution": source, "stub": stub_source(source, exercise), **MISTAKES[exercise],
               "solution again": source}
    work.mkdir()
    results = grading.grade_variants(solution, exercise, list(answers.values()), work)
    return pd.DataFrame([(exercise, name, passed, error) for name, (passed, error) in
                         zip(answers, results, strict=True)],
                        columns=["exercise", "answer", "passed", "error"])


@pytest.fixture(scope="module")
def graded(corpora, tmp_path_factory) -> pd.DataFrame:
    work = tmp_path_factory.mktemp("mistakes")
    with ThreadPoolExecutor(max_workers=GRADE_JOBS) as pool:
        tables = list(pool.map(lambda ex: _grade(ex, work / ex.replace(".", "_")), MISTAKES))
    return pd.concat(tables, ignore_index=True)


def test_each_catalogued_exercise_has_enough_mistakes():
    assert MISTAKES, "no catalogue"
    for exercise, mistakes in MISTAKES.items():
        assert len(mistakes) >= MIN_MISTAKES, exercise
        solution = _solution_of(exercise)
        assert exercise in [ex.id for ex in exercises(solution)], exercise


def test_the_solution_passes_before_and_after_the_mistakes(graded):
    solutions = graded[graded.answer.isin(["solution", "solution again"])]
    assert solutions.passed.all(), solutions[~solutions.passed].to_string()


def test_the_stub_fails_its_exercise(graded):
    stubs = graded[graded.answer == "stub"]
    assert not stubs.passed.any(), stubs[stubs.passed].to_string()
    assert all(stubs.error.str.startswith("NotImplementedError: exercise")), stubs.error.tolist()


def test_every_mistake_fails_its_exercise(graded, capsys):
    mistakes = graded[~graded.answer.isin(["solution", "solution again", "stub"])]
    notebook = mistakes.exercise.str.split(".").str[0].rename("notebook")
    rate = mistakes.groupby(notebook).agg(mistakes=("passed", "size"),
                                          caught=("passed", lambda p: int((~p).sum())))
    with capsys.disabled():
        print("\nmistake catalogue, caught per notebook:\n" + rate.to_string())
    missed = mistakes[mistakes.passed]
    assert missed.empty, "mistakes that pass their exercise:\n" + missed[["exercise", "answer"]].to_string()
    # caught by a check, not by accident: a timeout, a cell that did not run or a typo in the
    # catalogue would also fail the exercise
    accidents = mistakes[mistakes.error.str.contains("Timeout|not run|NameError|SyntaxError|ran out of time")]
    assert accidents.empty, accidents[["exercise", "answer", "error"]].to_string()
