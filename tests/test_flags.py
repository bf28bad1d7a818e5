"""Cheat flags: what in a student's code an instructor should review."""

from __future__ import annotations

import nbformat
import pytest

from helpers.course.config import SOLUTIONS_DIR, notebooks_in
from helpers.course.engine import flags
from helpers.course.engine.grading import graded_notebook
from helpers.course.notebook.cells import exercise_id
from helpers.course.notebook.release import release_notebook

REFERENCE = frozenset({"NaiveBayes", "sign_test"})


@pytest.mark.parametrize("code, reason", [
    ("from helpers.naive_bayes import NaiveBayes\nmodel = NaiveBayes().fit(X, y)",
     "uses the kit's reference implementation (NaiveBayes)"),
    ("import helpers.significance as s\np = s.sign_test(a, b).p_value",
     "uses the kit's reference implementation (sign_test)"),
    ("print = lambda *args: None", "redefines the builtin print"),
    ("def open(path):\n    return None", "redefines the builtin open"),
    ("from os import system as __import__", "redefines the builtin __import__"),
    ("get_ipython().input_transformers_post.append(f)", "touches the kernel or interpreter (get_ipython)"),
    ("import IPython\nIPython.get_ipython().events.register('pre_run_cell', f)", "touches the kernel"),
    ("import sys\nsys.modules['helpers.naive_bayes'].NaiveBayes = Mine", "touches the kernel"),
    ("from sys import modules\nmodules['numpy'].allclose = f", "touches the kernel"),
    ("globals()['print'] = f", "touches the kernel or interpreter (globals)"),
    ("exec('pri' + 'nt = f')", "touches the kernel or interpreter (exec)"),
    ("__builtins__.print = lambda *a: None", "touches the kernel"),
    ("np.allclose = lambda *a, **k: True", "patches np.allclose"),
    # the attacks of a hostile class (issue K22), each in one exercise cell
    ("import numpy as np\nnp.allclose = lambda *a, **k: True", "patches np.allclose"),
    ("from numpy import testing\ntesting.assert_allclose = f", "patches testing.assert_allclose"),
    ("import importlib\nm = importlib.import_module('helpers.naive_' + 'bayes')\n"
     "NB = getattr(m, 'Naive' + 'Bayes')", "imports by a computed name (importlib)"),
    ("m = __import__('helpers.naive_' + 'bayes')", "imports by a computed name (__import__)"),
    ("import helpers.naive_bayes as h\nmodel = h.NaiveBayes()",
     "uses the kit's reference implementation (NaiveBayes)"),
    ("import inspect, linecache\ndef nb_fit(X, y):\n    caller = inspect.currentframe().f_back.f_back\n"
     "    return linecache.getlines(caller.f_code.co_filename)",
     "looks into the running program (f_back, f_code, inspect, linecache)"),
    ("def nb_fit(X, y):\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n"
     "        return e.__traceback__.tb_frame.f_back.f_globals",
     "looks into the running program (f_back, f_globals, tb_frame)"),
    ("import gc\nchecks = [o for o in gc.get_objects() if callable(o)]",
     "looks into the running program (gc)"),
    ("def accuracy():\n    return 0.78500000", "a literal that equals a reference output (0.785)"),
    ("class Always(float):\n    def __eq__(self, other):\n        return True", "defines __eq__"),
    ("text = open('../solutions/01_naive_bayes.ipynb').read()", "reads the solutions or a notebook file"),
    ("text = open('01_naive_bayes.ipynb').read()", "reads the solutions or a notebook file"),
    ("from helpers.course.config import SOLUTIONS_DIR", "uses the course tooling (helpers.course)"),
    ("path = 'SOLUTIONS_DIR'", "reads the solutions or a notebook file"),
    ("def accuracy():\n    return 0.785", "a literal that equals a reference output (0.785)"),
    ("def shift():\n    return -0.785", "a literal that equals a reference output"),
    ("def broken(:\n    pass", "code that cannot be parsed"),
    # the reference reached under other names (issue K27)
    ("def nb_fit(X, y, alpha=1.0):\n    return vars()['NaiveBayes'](alpha=alpha).fit(X, y)",
     "names the kit's reference implementation in a string (NaiveBayes)"),
    ("def nb_fit(X, y, alpha=1.0):\n    return vars()['NaiveBayes'](alpha=alpha).fit(X, y)",
     "touches the kernel or interpreter (vars)"),
    ("import helpers.naive_bayes as m\nfit = getattr(m, 'NaiveBayes')",
     "imports the module of the kit's reference implementation (helpers.naive_bayes)"),
    ("import helpers.naive_bayes as m\nfit = getattr(m, 'NaiveBayes')",
     "names the kit's reference implementation in a string (NaiveBayes)"),
    ("from helpers import significance as s", "imports the module of the kit's reference implementation"),
    ("import sys\nNB = sys.modules['helpers.naive_bayes']", "touches the kernel or interpreter (sys)"),
    ("def f():\n    return locals()", "touches the kernel or interpreter (locals)"),
    ("def choose_C(X, y, Cs):\n    return getattr(evaluation, 'inner_cv_' + 'accuracy')(X, y)",
     "reads an attribute by a computed name (getattr)"),
    # the reviewer's routes round the first flags (issue K27)
    ("import pkgutil\nNB = pkgutil.resolve_name('helpers.naive_' + 'bayes:Naive' + 'Bayes')",
     "imports by a computed name (pkgutil)"),
    ("import pkgutil\nNB = pkgutil.resolve_name('helpers.naive_' + 'bayes:Naive' + 'Bayes')",
     "names the kit's reference implementation in a string (NaiveBayes)"),
    ("import pickle\nNB = pickle.loads(b'chelpers.naive_bayes\\nNaiveBayes\\n.')",
     "imports by a computed name (pickle)"),
    ("import sklearn.naive_bayes as m\nNB = m.__dict__['Multinomial' + 'NB']",
     "looks into the running program"),
    ("import os\nos.sys.modules['bui' + 'ltins'].print = f", "looks into the running program (modules)"),
    ("from operator import attrgetter\nget = attrgetter('x')", "imports by a computed name (attrgetter)"),
    ("m = 'helpers.' + 'course.engine.callee'", "uses the course tooling (helpers.course)"),
])
def test_each_cheat_is_flagged(code, reason):
    found = flags.code_flags(code, REFERENCE, printed="fold 0 accuracy: 0.785\n", solution="x = 0.5")
    assert any(f.startswith(reason) for f in found), found


@pytest.mark.parametrize("code", [
    "def nb_predict(model, X):\n    scores = np.asarray(X @ model['log_likelihood'].T)\n"
    "    return model['classes'][np.argmax(scores + model['log_prior'], axis=1)]",
    "def total(values):\n    sum = 0\n    for v in values:\n        sum += v\n    return sum",  # a local
    "NaiveBayes = None",  # assigning a name is not using the reference
    "def upper(k, n):\n    return min(1.0, k / n + 0.5)",  # common numbers that a check prints
    "def fit(model, X):\n    model.coef_ = X.mean(axis=0)\n    return model",  # its own object
    "table = df.eval('a + b')",  # a method called eval is not the builtin
    "import numpy as np\nx = np.zeros(3)\nx[0] = 1.0",  # a module's function called, nothing patched
    "import numpy as np\ndef fit(model, X):\n    model.mean_ = np.mean(X)\n    return model",
    # a name taken from a module that also defines a reference is not the reference
    "from helpers.significance import wilson_half_width",
    "size = getattr(model, 'vector_size', 100)",  # an attribute named in full
    'def f(a, b):\n    """Unlike sign_test, this counts ties."""\n    return a',  # a docstring is no value
])
def test_honest_code_is_not_flagged(code):
    printed = "p = 0.5\naccuracy 0.785 ceiling 1.0000"
    assert flags.code_flags(code, REFERENCE, printed=printed, solution="x = 0.5") == []


@pytest.mark.parametrize("path", notebooks_in(SOLUTIONS_DIR), ids=lambda p: p.stem)
def test_the_solutions_are_not_flagged(path):
    solution = nbformat.read(path, as_version=4)
    reference = release_notebook(solution, path.name, hidden=True)
    graded = graded_notebook(reference, solution)
    found = flags.exercise_flags(graded, reference, solution, {c.id for c in graded.cells if exercise_id(c)})
    assert not any(found.values()), found


def test_code_too_deep_to_parse_is_flagged_not_a_crash():
    deep = "_x = " + "+".join(["1"] * 3000) + "\n"
    assert flags.code_flags(deep) == ["code that cannot be parsed"]
    assert flags.code_flags("x = 1\x00") == ["code that cannot be parsed"]


def test_a_reference_carried_in_another_exercise_s_cell_is_flagged():
    """1.3's reference imported in 1.1's cell, to be used by 1.3's answer: flagged in 1.1's."""
    solution = nbformat.read(notebooks_in(SOLUTIONS_DIR, ["01"])[0], as_version=4)
    reference = release_notebook(solution, "01_naive_bayes.ipynb", hidden=True)
    carrier = nbformat.from_dict(solution)
    cell = next(c for c in carrier.cells if exercise_id(c) == "1.1")
    cell.source += "\n\nfrom helpers.significance import sign_test as _helper\n"
    graded = graded_notebook(reference, carrier)
    found = flags.exercise_flags(graded, reference, solution, {c.id for c in graded.cells if exercise_id(c)})
    assert any("(sign_test)" in reason for reason in found["1.1"]), found
