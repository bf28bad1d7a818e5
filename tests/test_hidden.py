"""Hidden checks run by the grader: plain data across, the kernel's answers, the checks' helpers."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sparse

from helpers.course.config import SOLUTIONS_DIR, notebooks_in
from helpers.course.engine import callee, hidden, plain
from helpers.course.engine.callee import Request
from helpers.course.engine.flags import BUILTINS, _top_level_bindings, reference_names
from helpers.course.notebook.cells import checked_exercise, is_hidden


def _across(value):
    """``value`` as the grader gets it: encoded in the kernel, sent as JSON text, decoded."""
    return plain.decode(plain.read(json.dumps(plain.encode(value))))


@pytest.mark.parametrize("value", [
    None, True, 0, -7, 2**70, 1.5, "pos", "", [1, "a", None], (1, 2.5), {"a": [1, 2], 3: (4,)}, {1, 2},
    [[1, 2], [3]], {"nested": {"deeper": [(1,), {2}]}},
])
def test_python_values_cross_as_they_are(value):
    assert _across(value) == value and type(_across(value)) is type(value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_floats_cross_in_strict_json(value):
    text = json.dumps(plain.encode(value), allow_nan=False)  # no bare NaN in the JSON
    back = plain.decode(plain.read(text))
    assert math.isnan(back) if math.isnan(value) else back == value


@pytest.mark.parametrize("array", [
    np.array([True, False]), np.arange(6, dtype=np.int8).reshape(2, 3), np.array([2**63], dtype=np.uint64),
    np.array([[0.5, -1e300]], dtype=np.float32), np.array([1 + 2j]), np.array(["neg", "pos"]),
    np.array(["neg", "pos"], dtype=object), np.zeros((0, 4)), np.array(3.25), np.asfortranarray(np.eye(3)),
])
def test_arrays_of_builtin_dtypes_cross_with_their_dtype_and_shape(array):
    back = _across(array)
    assert type(back) is np.ndarray and back.shape == array.shape and back.dtype == array.dtype
    assert back.tolist() == array.tolist()


def test_numpy_scalars_cross_as_python_numbers():
    assert _across(np.float64(0.25)) == 0.25 and type(_across(np.int32(3))) is int
    assert _across(np.str_("pos")) == "pos" and _across(np.bool_(True)) is True


def test_sparse_matrices_cross_rebuilt_from_their_arrays():
    matrix = sparse.random(5, 7, density=0.3, format="csc", random_state=0)
    back = _across(matrix)
    assert sparse.issparse(back) and back.format == "csr" and (back != matrix).nnz == 0


def test_pandas_tables_cross_as_their_index_and_values():
    series = pd.Series([0.5, 1.5], index=["a", "b"], name="score")
    pd.testing.assert_series_equal(_across(series), series)
    frame = pd.DataFrame({"doc_id": ["d1", "d2"], "score": [1.0, -2.0]}, index=[3, 4])
    pd.testing.assert_frame_equal(_across(frame), frame)
    assert _across(pd.Index(["x", "y"])) == ["x", "y"]


class Always(np.ndarray):
    """An attack from the issue: an array whose comparisons say True."""

    def __array_function__(self, func, types, args, kwargs):
        return True

    def __eq__(self, other):
        return True


class MyInt(int):
    def __eq__(self, other):
        return True


def test_a_student_s_subclass_crosses_as_the_plain_value_or_not_at_all():
    back = _across(np.arange(3.0).view(Always))
    assert type(back) is np.ndarray and not np.allclose(back, [9, 9, 9])
    for value in (MyInt(3), object(), [1, Always], {"log_prior": lambda: 1}, np.array([1], dtype="M8[D]")):
        with pytest.raises(plain.PlainDataError):
            plain.encode(value)


def _array(dtype: str, shape: list, data: bytes) -> dict:
    return {"array": {"dtype": dtype, "shape": shape, "data": base64.b64encode(data).decode()}}


@pytest.mark.parametrize("tree", [
    {"pickle": "gASV"}, {"list": [1], "tuple": [2]}, {"dict": [[1]]}, {"dict": [[[1], 2]]},
    _array("O", [1], b"\0" * 8), _array("V8", [1], b"\0" * 8), _array("<f8", [2], b"\0" * 8),
    _array("[('a', '<i4')]", [1], b"\0" * 4), _array("<f8", [-1], b""), {"array": {"dtype": "<f8"}},
    {"objects": {"shape": [2], "items": [1]}}, {"float": "1e999"}, {"set": [{"list": [1]}]},
    {"sparse": {"shape": [2, 2], "data": _array("<f8", [1], b"\0" * 8),
                "indices": _array("<i8", [1], b"\x07" + b"\0" * 7),
                "indptr": _array("<i8", [3], b"\0" * 8 + b"\1" + b"\0" * 7 + b"\1" + b"\0" * 7)}},
    {"series": {"index": [1]}},
])
def test_anything_but_plain_data_is_refused_in_the_grader(tree):
    with pytest.raises(plain.PlainDataError):
        plain.decode(tree)


def test_what_would_hog_the_grader_is_refused_quickly():
    colliding = {"set": [1 + k * (2**61 - 1) for k in range(plain.MAX_HASHED + 1)]}
    for tree in (colliding, {"dict": [[k, k] for k in range(plain.MAX_HASHED + 1)]},
                 {"sparse": {"shape": [1, 10**12], "data": _array("<f8", [0], b""),
                             "indices": _array("<i8", [0], b""), "indptr": _array("<i8", [2], bytes(16))}},
                 _array("<U0", [2], b""), {"series": {"index": [1], "values": _array("<f8", [1], bytes(8)),
                                                      "name": {"list": [1]}}}):
        with pytest.raises(plain.PlainDataError):
            plain.decode(tree)


def test_text_that_is_not_json_or_too_deep_or_too_long_is_refused():
    for text in ("{'a': 1}", "[" * 100_000 + "]" * 100_000, None):
        with pytest.raises(plain.PlainDataError):
            plain.decode(plain.read(text))
    deep = 1
    for _ in range(plain.MAX_DEPTH + 2):
        deep = {"list": [deep]}
    with pytest.raises(plain.PlainDataError):
        plain.decode(deep)


class Corrupter:
    def corrupt(self, tokens, rng):
        tokens.pop()
        return tokens


NAMES = {"add": lambda a, b: a + b, "Corrupter": Corrupter, "model": np.arange(3),
         "stub": lambda: (_ for _ in ()).throw(NotImplementedError("exercise 1.1")),
         "opaque": lambda: object(), "boom": lambda: 1 / 0}


def _ask(request: Request):
    return hidden.answer_of(callee.respond(request, NAMES), request.name)


def test_the_kernel_answers_a_call_with_plain_data_and_the_grader_reads_it():
    assert _ask(Request("add", (2, 3.5))) == 5.5
    assert _ask(Request("add", (hidden.kernel("model"), 1))).tolist() == [1, 2, 3]
    assert _ask(Request("add", (np.ones(2), 1), take="shape")) == (2,)
    value, arguments = _ask(Request("Corrupter", (["a", "b"], np.random.default_rng(0)), method="corrupt",
                                    arguments=True))
    assert value == ["a"] and arguments == [["a"], None]  # the caller's list as the call left it


@pytest.mark.parametrize("request_, name, said", [
    (Request("stub"), "NotImplementedError", "exercise 1.1"),
    (Request("boom"), "ZeroDivisionError", "division by zero"),
    (Request("missing"), "NameError", "name 'missing' is not defined"),
    (Request("add", (hidden.kernel("nothing"), 1)), "NameError", "run the cells above first"),
    (Request("opaque"), "PlainDataError", "opaque returned a builtins.object, which is not plain data"),
])
def test_what_the_student_s_code_raised_comes_back_as_a_student_error(request_, name, said):
    with pytest.raises(hidden.StudentError) as raised:
        _ask(request_)
    assert raised.value.name == name and said in raised.value.value
    assert "callee.py" not in raised.value.where  # the student's frames only


@pytest.mark.parametrize("answer", ["not json", json.dumps({"value": 1, "extra": 2}), json.dumps([1]),
                                    json.dumps({"value": {"pickle": "x"}}), hidden.no_answer("add")])
def test_a_forged_or_missing_answer_is_a_student_error_not_a_grader_error(answer):
    with pytest.raises(hidden.StudentError):
        hidden.answer_of(answer, "add")


def test_a_hidden_check_runs_here_and_only_calls_through_its_channel():
    asked = []

    def channel(request):
        asked.append(request.name)
        return callee.respond(request, NAMES)

    source = ("from helpers.course.engine.hidden import student\nimport numpy as np\n"
              "print('sum:', student.add(np.float64(1), 2))\nprint('names seen:', sorted(globals()))")
    printed = hidden.run(source, channel)
    assert printed.startswith("sum: 3.0\n") and asked == ["add"]
    assert "NAMES" not in printed  # a fresh namespace: nothing of the caller's


def test_close_and_same_say_false_for_answers_of_the_wrong_kind_instead_of_raising():
    assert hidden.close([0.1, 0.2], np.array([0.1, 0.2 + 1e-12]), atol=1e-9)
    assert not hidden.close([0.1, 0.2], [0.1, 0.2, 0.3], atol=1)
    assert not hidden.close({"a": 1}, [1.0]) and not hidden.close("x", 1.0) and not hidden.close(None, 1.0)
    assert hidden.close([np.nan, np.inf], [np.nan, np.inf])
    assert hidden.same(np.array(["neg", "pos"], dtype=object), ["neg", "pos"])
    assert not hidden.same([0, 1], ["neg", "pos"]) and not hidden.same(["pos"], ["pos", "pos"])


def test_secret_inputs_differ_from_run_to_run():
    assert len({hidden.secret_rng().integers(2**62) for _ in range(5)}) == 5


def _hidden_cells():
    return [(path.stem, cell) for path in notebooks_in(SOLUTIONS_DIR)
            for cell in nbformat.read(path, as_version=4).cells if is_hidden(cell)]


@pytest.mark.parametrize("name, cell", _hidden_cells(), ids=[cell.id for _, cell in _hidden_cells()])
def test_every_hidden_check_of_the_course_stands_alone_and_calls_the_student_only_through_student(name, cell):
    """A hidden check runs in the grader: every name it reads it binds or imports itself, and
    it reads none of the notebook's (it could not: they live in the kernel)."""
    import ast
    import symtable

    table = symtable.symtable(cell.source, "hidden", "exec")
    bound = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    unbound = [s.get_name() for s in table.get_symbols()
               if s.is_referenced() and not s.is_assigned() and not s.is_imported()]
    children = [s for child in table.get_children() for s in child.get_symbols() if s.is_global()]
    unbound += [s.get_name() for s in children if s.get_name() not in bound]
    assert set(unbound) <= BUILTINS, f"{cell.id} reads names it does not define: {set(unbound) - BUILTINS}"
    tree = ast.parse(cell.source)
    assert any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "student"
               for n in ast.walk(tree)), f"{cell.id} never calls the student's code"


def _visible_checks():
    found = []
    for path in notebooks_in(SOLUTIONS_DIR):
        solution = nbformat.read(path, as_version=4)
        names = frozenset().union(*(reference_names(c) for c in solution.cells))
        found += [(path.stem, cell, names) for cell in solution.cells
                  if checked_exercise(cell) is not None and not is_hidden(cell)]
    return found


@pytest.mark.parametrize("name, cell, names", _visible_checks(),
                         ids=[cell.id for _, cell, _ in _visible_checks()])
def test_visible_checks_leave_no_reference_of_the_kit_in_the_notebook(name, cell, names):
    """While the student's code runs, no name of a reference implementation is bound in the
    notebook's globals: a check imports the kit's answer inside a function of its own."""
    import ast

    bound = set(_top_level_bindings(ast.parse(cell.source)))
    assert not bound & names, f"{cell.id} binds the kit's {bound & names} in the notebook"


@pytest.mark.kernel
@pytest.mark.slow
def test_a_student_function_that_keeps_printing_still_times_out(tmp_path):
    """The hidden check's deadline holds while output flows (a chatty loop used to hold it off)."""
    import subprocess
    import sys
    import time

    from helpers.course.engine.nbval_run import read_report
    from helpers.course.engine.verdict import Ending

    fixture = Path(__file__).parent / "fixtures" / "solutions" / "00_fixture.ipynb"
    notebook = nbformat.read(fixture, as_version=4)
    notebook.cells[1].source = ("import time\ndef add(a, b):\n    while a < 0:\n"
                                "        print('.', flush=True)\n        time.sleep(0.2)\n    return a + b")
    nbformat.write(notebook, tmp_path / "chatty.ipynb")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "pytest", "chatty.ipynb", "-c", "pytest.ini", "--rootdir", ".",
                    "-p", "no:cacheprovider", "-p", "helpers.course.engine.nbval_plugin",
                    "--nbval-cell-timeout=5", "--kit-report=report.json", "-q"],
                   cwd=tmp_path, capture_output=True, timeout=900)
    results = read_report((tmp_path / "report.json").read_bytes())
    hidden_cell = results[2]
    assert hidden_cell.ending is Ending.STOPPED and hidden_cell.message.startswith("Timeout of 5 seconds")
    assert time.monotonic() - started < 600  # a hang guard, not a speed target
