"""Paired significance tests."""

import numpy as np
import pytest
from scipy.stats import binomtest

from helpers.errors import KitError
from helpers.significance import sign_test


def _pairs(plus: int, minus: int, both_right: int, both_wrong: int):
    a = [1] * plus + [0] * minus + [1] * both_right + [0] * both_wrong
    b = [0] * plus + [1] * minus + [1] * both_right + [0] * both_wrong
    return np.array(a), np.array(b)


@pytest.mark.parametrize("plus,minus", [(10, 3), (3, 10), (20, 20), (0, 7), (126, 238)])
def test_sign_test_without_ties_is_scipys_binomial_test(plus, minus):
    result = sign_test(*_pairs(plus, minus, 0, 0))
    assert (result.plus, result.minus, result.ties) == (plus, minus, 0)
    assert result.p_value == pytest.approx(binomtest(plus, plus + minus, 0.5).pvalue, rel=1e-12)


def test_sign_test_splits_ties_as_documented():
    # The course's NB vs SVM-BOW counts: 126 vs 238 wins, 1,636 ties -> p = 0.013.
    result = sign_test(*_pairs(126, 238, 1000, 636))
    assert result.ties == 1636
    assert round(result.p_value, 3) == 0.013
    # Odd ties: ceil(3 / 2) = 2 on each side, n = 4 + 1 + 5 = 10, k = 2 + 1 = 3.
    odd = sign_test(*_pairs(1, 5, 2, 1))
    assert odd.p_value == pytest.approx(binomtest(3, 10, 0.5).pvalue)


def test_sign_test_identical_systems_give_one():
    assert sign_test([1, 0, 1], [1, 0, 1]).p_value == 1.0


def test_sign_test_is_symmetric():
    a, b = _pairs(7, 2, 3, 4)
    assert sign_test(a, b).p_value == sign_test(b, a).p_value


def test_sign_test_bad_input():
    with pytest.raises(KitError, match="equal length"):
        sign_test([1, 0], [1])
    with pytest.raises(KitError, match="empty"):
        sign_test([], [])
