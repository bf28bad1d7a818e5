"""Argument checks shared by the public functions, in the spirit of scikit-learn's
``check_array`` and ``check_scalar``.

Each check returns the argument in the form the caller works with (a numpy array, a list
of str, a Python number) or raises one ``InputError`` that names the argument, says what
was wrong and what to pass instead, before any work is done.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

import numpy as np
import pandas as pd

from helpers.errors import InputError

Choice = TypeVar("Choice")

NUMERIC_KINDS = "biuf"  # numpy dtype kinds of bool, signed, unsigned and float numbers
#: float32 sums put a cosine of 1 slightly above it (2.4e-6 seen on notebook 08's texts).
SIMILARITY_ROUNDING = 1e-4
MAX_DRAWS = 10_000_000  # resamples, pairs or simulated items: 80 MB of float64 per array


def _numeric_array(values, name: str) -> np.ndarray:
    """``values`` as a numpy array of numbers (bool, int or float), or an InputError."""
    if isinstance(values, (str, bytes)) or values is None:
        raise InputError(f"{name} must be an array of numbers, not {type(values).__name__}.")
    try:
        array = np.asarray(values)
        if array.dtype == object:  # e.g. a pandas column of Python numbers, or a nullable one
            array = np.asarray(array.tolist())
    except (ValueError, TypeError):
        raise InputError(f"{name} must be a rectangular array of numbers (its rows have "
                         "different lengths, or it holds something else).") from None
    if array.dtype.kind not in NUMERIC_KINDS:
        raise InputError(f"{name} must hold numbers only (got values of type {array.dtype}): "
                         "convert or drop the others first.")
    return array


def check_array(values, name: str, ndim: int = 1, min_rows: int = 1) -> np.ndarray:
    """A finite float array of ``ndim`` dimensions with at least ``min_rows`` rows.

    Parameters
    ----------
    values : array-like
        Numbers (bool, int or float).
    name : str
        The argument's name, for the message.
    ndim : int
        The number of dimensions required (1: a vector, 2: a matrix of row vectors).
    min_rows : int
        The fewest rows (items) that make sense to the caller.

    Returns
    -------
    ndarray of float

    Raises
    ------
    InputError
        Not numbers, ragged, another number of dimensions, too few rows (or, for a
        matrix, no columns), NaN or infinite values.
    """
    array = _numeric_array(values, name).astype(float)
    if array.ndim != ndim:
        shape = "a 1-D array (one number per item)" if ndim == 1 else f"a {ndim}-D array"
        raise InputError(f"{name} must be {shape}, got shape {array.shape}.")
    if len(array) < min_rows:
        raise InputError(f"{name} needs at least {min_rows} value(s), got {len(array)}.")
    if ndim == 2 and array.shape[1] == 0:
        raise InputError(f"{name} has rows of length 0: each row must be a vector.")
    if not np.isfinite(array).all():
        raise InputError(f"{name} contains NaN or infinite values: drop or fill those items first.")
    return array


def check_in_range(array: np.ndarray, name: str, low: float, high: float) -> np.ndarray:
    """``array`` if every value lies in [low, high], else an InputError naming the first outlier."""
    outside = (array < low) | (array > high)
    if outside.any():
        raise InputError(f"{name} must lie in [{low}, {high}]; item {int(np.argmax(outside))} is "
                         f"{array[outside][0].item()}.")
    return array


def check_similarities(values, name: str = "similarity") -> np.ndarray:
    """Finite cosine similarities to training data, in [0, 1] up to float rounding (1.0000001)."""
    return check_in_range(check_array(values, name), name, 0, 1 + SIMILARITY_ROUNDING)


def check_binary(values, name: str) -> np.ndarray:
    """A 1-D boolean array from booleans or 0/1 numbers (e.g. per-item correctness).

    Raises
    ------
    InputError
        Not 1-D, empty, or holding anything but True/False or 0/1 (NaN, 0.5, strings).
    """
    array = _numeric_array(values, name)
    if array.ndim != 1 or len(array) == 0:
        raise InputError(f"{name} must be a non-empty 1-D array of booleans or 0/1, "
                         f"got shape {array.shape}.")
    bad = ~np.isin(array, (0, 1))
    if bad.any():
        raise InputError(f"{name} must hold only True/False or 0/1; item {int(np.argmax(bad))} "
                         f"is {array[bad][0].item()!r}: pass whether each item was right.")
    return array.astype(bool)


def check_same_length(**arrays) -> int:
    """The common length of the named arrays, or an InputError naming each length."""
    lengths = {name: len(array) for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise InputError(f"The arrays must be of equal length, one value per item ({listed}).")
    return next(iter(lengths.values()))


def check_int(value, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """A whole number (Python or numpy, not bool) of at least ``minimum`` (and at most
    ``maximum``: sizes beyond it would exhaust memory rather than answer)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise InputError(f"{name} must be a whole number, not {value!r}.")
    if value < minimum:
        raise InputError(f"{name} must be at least {minimum}, not {value}.")
    if maximum is not None and int(value) > maximum:
        raise InputError(f"{name} must be at most {maximum:,}, not {value:,}.")
    return int(value)


def check_number(value, name: str, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False) -> float:
    """A finite real number within [low, high] (an end is excluded when ``*_open``).

    Raises
    ------
    InputError
        Not a real number (a bool, a string, None), NaN or infinite, or out of range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a number, not {value!r}.")
    value = float(value)
    if not math.isfinite(value):
        raise InputError(f"{name} must be a finite number, not {value}.")
    below = low is not None and (value <= low if low_open else value < low)
    above = high is not None and (value >= high if high_open else value > high)
    if below or above:
        left, right = "(" if low_open else "[", ")" if high_open else "]"
        span = f"{left}{'-inf' if low is None else low}, {'inf' if high is None else high}{right}"
        raise InputError(f"{name} must be in {span}, not {value}.")
    return value


def _hashable(value) -> bool:
    """Whether ``value`` can be a choice: lists, arrays and columns cannot (and compare
    element-wise, which has no single truth value)."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def check_choice(value, name: str, choices: Iterable[Choice]) -> Choice:
    """The one of ``choices`` that ``value`` equals (``True`` for ``1`` or numpy's ``True``),
    else an InputError listing them."""
    allowed = tuple(choices)
    if not _hashable(value) or value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(map(repr, allowed))}, not {value!r}.")
    return allowed[allowed.index(value)]


def _ordered(values, name: str, what: str) -> list:
    """``values`` as a list, if they are an ordered sequence (a list, an array, a column).

    A string is a sequence of characters, and a dict or set has keys or no order, so each
    is surely a mistake for one value per item.
    """
    unordered = isinstance(values, (str, bytes, Mapping, set, frozenset)) or values is None
    scalar = isinstance(values, np.ndarray) and values.ndim == 0
    if unordered or scalar or not isinstance(values, Iterable):
        raise InputError(f"{name} must be a list of {what}, not {type(values).__name__}.")
    return list(values)


def check_labels(values, name: str) -> np.ndarray:
    """A 1-D object array of labels (str, numbers, None; anything hashable), one per item."""
    values = _ordered(values, name, "labels, one per item")
    array = np.empty(len(values), dtype=object)
    array[:] = values  # element by element: labels that are strings or tuples stay whole
    if not all(isinstance(value, Hashable) for value in values):
        raise InputError(f"{name} must hold one label (a str or number) per item, not lists or arrays.")
    return array


def check_table(table, name: str, columns: Iterable[str], min_rows: int = 1) -> pd.DataFrame:
    """``table`` if it is a DataFrame with ``columns`` and at least ``min_rows`` rows."""
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"{name} must be a DataFrame with columns {', '.join(columns)}, "
                         f"not {type(table).__name__}.")
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise InputError(f"{name} lacks the column(s) {', '.join(missing)} "
                         f"(it has {', '.join(map(str, table.columns)) or 'none'}).")
    if len(table) < min_rows:
        raise InputError(f"{name} needs at least {min_rows} row(s), got {len(table)}.")
    return table


def check_lexicon(lexicon) -> dict:
    """``lexicon`` if it is a dict with ``pos`` and ``neg`` collections of words."""
    words = [lexicon.get(key) for key in ("pos", "neg")] if isinstance(lexicon, Mapping) else []
    if len(words) != 2 or any(isinstance(w, str) or not isinstance(w, Iterable) for w in words):
        raise InputError("lexicon must be a dict with 'pos' and 'neg' sets of words "
                         "(helpers.data.load_opinion_lexicon()).")
    return lexicon


def check_texts(texts, name: str, allow_empty: bool = False) -> list[str]:
    """A list of str from a sequence of texts (a list, a pandas column, …).

    Raises
    ------
    InputError
        A single string (a sequence of characters, surely a mistake), not a sequence, empty
        (unless ``allow_empty``), or an item that is not a string (None, NaN, a number): its
        position is named.
    """
    texts = _ordered(texts, name, "texts")
    if not texts and not allow_empty:
        raise InputError(f"{name} is empty: give a non-empty list of texts.")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"{name}[{i}] is {text!r:.40}: every text must be a string "
                             "(drop or fill missing texts first).")
    return texts
