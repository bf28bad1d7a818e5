"""Paired significance tests for comparing two systems on the same items.

- ``sign_test``: the course's two-sided sign test with ties split evenly between the sides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from helpers.errors import KitError


@dataclass(frozen=True)
class SignTestResult:
    """Outcome of ``sign_test``: the p-value and the counts it came from."""

    p_value: float
    plus: int  # items A gets right and B wrong
    minus: int  # items B gets right and A wrong
    ties: int  # items both get right, or both wrong


def _paired(a, b, name_a: str = "a", name_b: str = "b") -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 1 or b.ndim != 1 or len(a) != len(b):
        raise KitError(f"{name_a} and {name_b} must be 1-D and of equal length "
                       f"(got shapes {a.shape} and {b.shape}): one score per item for each system.")
    if len(a) == 0:
        raise KitError("No items to compare: the score arrays are empty.")
    return a, b


def sign_test(correct_a, correct_b) -> SignTestResult:
    """Two-sided exact sign test of two systems' per-item correctness, ties split evenly.

    Each item is a plus (only A right), a minus (only B right) or a tie. Ties carry evidence
    that the systems are alike, so instead of being dropped they are shared: half of them
    (rounded up, so an odd tie counts once on each side) are added to each side::

        n = 2 * ceil(ties / 2) + plus + minus
        k = ceil(ties / 2) + min(plus, minus)
        p = min(1, 2 * P(X <= k)),  X ~ Binomial(n, 1/2)

    Rounding up makes the test slightly conservative for an odd number of ties. With many
    ties the test is conservative in general: they pull k towards n / 2.

    Parameters
    ----------
    correct_a, correct_b : array-like of bool or 0/1
        Whether each system got each item right (same items, same order).

    Returns
    -------
    SignTestResult
        ``p_value``, ``plus``, ``minus``, ``ties``.
    """
    a, b = _paired(correct_a, correct_b, "correct_a", "correct_b")
    a, b = a.astype(bool), b.astype(bool)
    plus, minus = int(np.sum(a & ~b)), int(np.sum(~a & b))
    ties = len(a) - plus - minus
    half_ties = math.ceil(ties / 2)
    n = 2 * half_ties + plus + minus
    k = half_ties + min(plus, minus)
    p = min(1.0, 2 * float(binom.cdf(k, n, 0.5))) if n else 1.0
    return SignTestResult(p, plus, minus, ties)
