"""Cheat flags: what in a student's code an instructor should review."""

from __future__ import annotations

import nbformat
import pytest

from helpers.course import flags
from helpers.course.config import SOLUTIONS_DIR, notebooks_in
from helpers.course.grading import graded_notebook
from helpers.course.release import exercise_id, release_notebook

REFERENCE = frozenset({"NaiveBayes", "sign_test"})


@pytest.mark.parametrize("code, reason", [
    ("from helpers.naive_bayes import NaiveBayes\nmodel = NaiveBayes().fit(X, y)",
     "uses the kit's reference implementation (NaiveBayes)"),
    ("import helpers.significance as s\np = s.sign_test(a, b).p_value",
     "uses the kit's reference implementation (sign_test)"),
    ("print = lambda *args: None", "redefines the builtin print"),
    ("def open(path):\n    return None", "redefines the builtin open"),
    ("from os import system as __import__", "redefines the builtin __import__"),
    ("get_ipython().input_transformers_post.append(f)", "touches the kernel"),
    ("import IPython\nIPython.get_ipython().events.register('pre_run_cell', f)", "touches the kernel"),
    ("import sys\nsys.modules['helpers.naive_bayes'].NaiveBayes = Mine", "touches the kernel"),
    ("__builtins__.print = lambda *a: None", "touches the kernel"),
    ("text = open('../solutions/01_naive_bayes.ipynb').read()", "reads the solutions folder"),
    ("def accuracy():\n    return 0.785", "a literal that equals a reference output (0.785)"),
    ("def broken(:\n    pass", "code that cannot be parsed"),
])
def test_each_cheat_is_flagged(code, reason):
    found = flags.code_flags(code, REFERENCE, printed="fold 0 accuracy: 0.785\n", solution="x = 0.5")
    assert any(f.startswith(reason) for f in found), found


def test_honest_code_is_not_flagged():
    code = ("def nb_predict(model, X):\n    scores = np.asarray(X @ model['log_likelihood'].T)\n"
            "    printed = 0.5\n    return model['classes'][np.argmax(scores + model['log_prior'], axis=1)]")
    assert flags.code_flags(code, REFERENCE, printed="p = 0.5\naccuracy 0.785", solution="x = 0.5") == []


@pytest.mark.parametrize("path", notebooks_in(SOLUTIONS_DIR), ids=lambda p: p.stem)
def test_the_solutions_are_not_flagged(path):
    solution = nbformat.read(path, as_version=4)
    reference = release_notebook(solution, path.name, hidden=True)
    graded = graded_notebook(reference, solution)
    found = flags.exercise_flags(graded, reference, solution, {c.id for c in graded.cells if exercise_id(c)})
    assert not any(found.values()), found
