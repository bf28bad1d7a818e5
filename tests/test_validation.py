"""The shared argument checks: what each accepts, what it returns, and its one clear error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import validation
from helpers.errors import InputError, KitError


def test_check_array_returns_finite_floats_of_the_right_shape():
    assert validation.check_array([1, True, 2.5], "x").tolist() == [1.0, 1.0, 2.5]
    assert validation.check_array(pd.Series([1, 2], dtype=object), "x").dtype == float
    assert validation.check_array([[1, 2]], "m", ndim=2).shape == (1, 2)
    assert validation.check_array([], "x", min_rows=0).shape == (0,)


@pytest.mark.parametrize("values, kwargs, message", [
    ("12", {}, "array of numbers, not str"),
    (None, {}, "not NoneType"),
    (["1", "2"], {}, "numbers only"),
    ([1 + 2j], {}, "numbers only"),
    ([[1, 2], [3]], {}, "rectangular"),
    ([[1, 2]], {}, "1-D array"),
    ([1, 2], {"ndim": 2}, "2-D array"),
    (np.empty((2, 0)), {"ndim": 2}, "rows of length 0"),
    ([], {}, "at least 1 value"),
    ([1, np.nan], {}, "NaN or infinite"),
    ([1, -np.inf], {}, "NaN or infinite"),
    (pd.array([1, None], dtype="Int64"), {}, "NaN"),
])
def test_check_array_refuses(values, kwargs, message):
    with pytest.raises(InputError, match=message):
        validation.check_array(values, "x", **kwargs)


def test_check_binary_takes_booleans_and_zero_one_only():
    assert validation.check_binary([1, 0, True, 1.0], "c").tolist() == [True, False, True, True]
    assert validation.check_binary(pd.Series([True, False], dtype=object), "c").dtype == bool
    for values, message in [([0.5, 1], "item 0 is 0.5"), ([1, np.nan], "item 1 is nan"), ([2], "item 0 is 2"),
                            (["True"], "numbers only"), ([], "non-empty"), ([[1]], "1-D")]:
        with pytest.raises(InputError, match=message):
            validation.check_binary(values, "c")


def test_check_int_and_check_number():
    assert validation.check_int(np.int64(3), "n") == 3
    assert validation.check_int(0, "seed", minimum=0) == 0
    with pytest.raises(InputError, match="n must be at most 10, not 1,000"):
        validation.check_int(1000, "n", maximum=10)
    for value, message in [(True, "whole number"), (2.0, "whole number"), ("3", "whole number"),
                           (0, "at least 1")]:
        with pytest.raises(InputError, match=message):
            validation.check_int(value, "n")
    assert validation.check_number(np.float32(0.5), "p", 0, 1) == 0.5
    assert validation.check_number(1, "p", 0, 1) == 1.0
    for value, kwargs, message in [
            (np.nan, {}, "finite"), (np.inf, {}, "finite"), (True, {}, "a number"), (None, {}, "a number"),
            (0, {"low": 0, "low_open": True}, r"in \(0, inf\]"),
            (1, {"high": 1, "high_open": True}, r"in \[-inf, 1\)"), (-1, {"low": 0}, "in")]:
        with pytest.raises(InputError, match=message):
            validation.check_number(value, "p", **kwargs)


def test_check_same_length_choice_and_range():
    assert validation.check_same_length(a=[1, 2], b=[3, 4]) == 2
    with pytest.raises(InputError, match="a has 2, b has 1"):
        validation.check_same_length(a=[1, 2], b=[3])
    assert validation.check_choice("equal", "bins", ("equal", "quartiles")) == "equal"
    for value in ("deciles", ["equal"], None):
        with pytest.raises(InputError, match="bins must be one of 'equal', 'quartiles'"):
            validation.check_choice(value, "bins", ("equal", "quartiles"))
    for equal in (1, 1.0, np.True_):  # what equals a choice is given back as that choice
        assert validation.check_choice(equal, "exact", ("auto", True, False)) is True
    rounded = 1.000002384185791  # a float32 cosine of identical texts (notebook 08)
    assert validation.check_similarities([0, rounded]).tolist() == [0, rounded]
    with pytest.raises(InputError, match=r"item 1 is -0.1"):
        validation.check_similarities([0.5, -0.1])


def test_check_texts_labels_table_and_lexicon():
    assert validation.check_texts(pd.Series(["a", "b"]), "texts") == ["a", "b"]
    assert validation.check_texts([], "texts", allow_empty=True) == []
    for texts, message in [("a text", "list of texts, not str"), ([], "is empty"), (7, "not int"),
                           (["a", None], r"texts\[1\] is None"), (["a", 3], r"texts\[1\] is 3")]:
        with pytest.raises(InputError, match=message):
            validation.check_texts(texts, "texts")
    assert validation.check_labels(("pos", None, 1), "y").tolist() == ["pos", None, 1]
    for labels, message in [("pos", "list of labels"), ({"a": 1}, "not dict"), (np.array("a"), "ndarray"),
                            ([["a"], ["b"]], "one label")]:
        with pytest.raises(InputError, match=message):
            validation.check_labels(labels, "y")
    table = pd.DataFrame({"a": [1]})
    assert validation.check_table(table, "t", ["a"]) is table
    for frame, message in [({"a": [1]}, "must be a DataFrame"), (table.iloc[:0], "at least 1 row"),
                           (table.rename(columns={"a": "b"}), "lacks the column.s. a .it has b")]:
        with pytest.raises(InputError, match=message):
            validation.check_table(frame, "t", ["a"])
    lexicon = {"pos": {"good"}, "neg": {"bad"}}
    assert validation.check_lexicon(lexicon) is lexicon
    for bad in ({"pos": {"good"}}, {"pos": "good", "neg": "bad"}, [("pos", "good")]):
        with pytest.raises(InputError, match="'pos' and 'neg'"):
            validation.check_lexicon(bad)


def test_input_error_is_a_kit_error_and_a_value_error():
    with pytest.raises(KitError):
        validation.check_int(0, "n")
    with pytest.raises(ValueError):
        validation.check_int(0, "n")
