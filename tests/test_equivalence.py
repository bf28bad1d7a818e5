"""The paired difference of two systems (Tango's interval, TOST) and the corrected resampled t-test."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import chi2, norm, ttest_1samp
from scipy.stats import t as t_distribution

from helpers.errors import InputError
from helpers.significance import (
    EQUIVALENCE_MARGIN,
    corrected_resampled_ttest,
    paired_difference,
    tango_statistic,
)


def _pairs(plus: int, minus: int, both_right: int, both_wrong: int):
    a = [1] * plus + [0] * minus + [1] * both_right + [0] * both_wrong
    b = [0] * plus + [1] * minus + [1] * both_right + [0] * both_wrong
    return np.array(a), np.array(b)


def test_tango_statistic_by_hand():
    # b = 40, c = 20, n = 160, delta = 0.05 (the PropCIs example's counts):
    # 2n = 320; B = -60 + (320 - 40 + 20) * 0.05 = -45; C = -20 * 0.05 * 0.95 = -0.95;
    # p21 = (sqrt(45^2 + 4 * 320 * 0.95) + 45) / 640 = (sqrt(3241) + 45) / 640 = 0.1592653;
    # Z = (40 - 20 - 160 * 0.05) / sqrt(160 * (2 * 0.1592653 + 0.05 * 0.95)) = 12 / sqrt(58.56489) = 1.568060
    assert tango_statistic(40, 20, 160, 0.05) == pytest.approx(1.568060, abs=1e-6)


@pytest.mark.parametrize("b,c,n,delta", [(40, 20, 160, 0.05), (127, 121, 2000, -0.02), (3, 9, 30, 0.1),
                                         (0, 5, 50, -0.3), (12, 0, 40, 0.6)])
def test_tango_statistic_uses_the_restricted_maximum_likelihood_estimate(b, c, n, delta):
    """The closed-form p21 maximises the multinomial likelihood under p12 - p21 = delta."""
    def negative_log_likelihood(p21):
        p12 = p21 + delta
        return -(b * np.log(p12) + c * np.log(p21) + (n - b - c) * np.log(1 - p12 - p21))

    low, high = max(0.0, -delta), (1 - delta) / 2
    found = minimize_scalar(negative_log_likelihood, bounds=(low + 1e-12, high - 1e-12), method="bounded",
                            options={"xatol": 1e-12}).x
    expected = (b - c - n * delta) / math.sqrt(n * (2 * found + delta * (1 - delta)))
    assert tango_statistic(b, c, n, delta) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("b,c", [(127, 121), (46, 132), (5, 0), (1, 7)])
def test_tango_statistic_at_zero_is_mcnemars(b, c):
    z = tango_statistic(b, c, 2000, 0.0)
    assert z == pytest.approx((b - c) / math.sqrt(b + c), rel=1e-12)
    assert 2 * norm.sf(abs(z)) == pytest.approx(chi2.sf((b - c) ** 2 / (b + c), 1), rel=1e-9)


@pytest.mark.parametrize("b,c,both,neither", [(127, 121, 1500, 252), (40, 20, 50, 50), (1, 7, 1, 12),
                                              (0, 0, 10, 5), (3, 0, 0, 0), (240, 101, 1400, 259)])
def test_the_interval_is_every_delta_the_score_test_keeps(b, c, both, neither):
    result = paired_difference(*_pairs(b, c, both, neither))
    n = b + c + both + neither
    z = norm.ppf(0.975)
    assert result.difference == pytest.approx((b - c) / n)
    assert result.low <= result.difference <= result.high
    grid = np.linspace(-1 + 1e-9, 1 - 1e-9, 4001)
    kept = grid[[abs(tango_statistic(b, c, n, d)) <= z for d in grid]]
    step = grid[1] - grid[0]
    assert result.low == pytest.approx(kept.min(), abs=step)
    assert result.high == pytest.approx(kept.max(), abs=step)
    for end, sign in ((result.low, 1), (result.high, -1)):
        if abs(end) < 1:
            assert tango_statistic(b, c, n, end) == pytest.approx(sign * z, abs=1e-6)


def test_with_many_discordant_items_the_interval_is_walds():
    # 127 against 121 of 2,000: Wald's difference ± 1.96 sqrt((b + c) - (b - c)^2 / n) / n
    result = paired_difference(*_pairs(127, 121, 1500, 252))
    half = norm.ppf(0.975) * math.sqrt(248 - 6**2 / 2000) / 2000
    assert (result.low, result.high) == pytest.approx((0.003 - half, 0.003 + half), abs=2e-4)


def test_swapping_the_systems_mirrors_the_result():
    a, b = _pairs(40, 20, 50, 50)
    forward, backward = paired_difference(a, b), paired_difference(b, a)
    assert (backward.low, backward.high) == pytest.approx((-forward.high, -forward.low), abs=1e-9)
    assert (backward.p_lower, backward.p_upper) == pytest.approx((forward.p_upper, forward.p_lower))


@pytest.mark.parametrize("b,c,both,neither", [(127, 121, 1500, 252), (127, 160, 1500, 213),
                                              (60, 40, 1800, 100), (10, 12, 150, 28), (300, 310, 1200, 190)])
def test_tost_is_equivalent_exactly_when_the_90_percent_interval_lies_inside_the_margin(b, c, both, neither):
    a_right, b_right = _pairs(b, c, both, neither)
    result = paired_difference(a_right, b_right)
    ninety = paired_difference(a_right, b_right, confidence=0.90)
    n = b + c + both + neither
    assert result.margin == EQUIVALENCE_MARGIN == 0.02
    assert result.p_lower == pytest.approx(norm.sf(tango_statistic(b, c, n, -0.02)))
    assert result.p_upper == pytest.approx(norm.cdf(tango_statistic(b, c, n, 0.02)))
    assert result.p_equivalence == max(result.p_lower, result.p_upper)
    assert result.equivalent == (-0.02 < ninety.low and ninety.high < 0.02)


def test_no_significant_difference_need_not_be_equivalence():
    # 10 against 12 of 200: far from significant, and the interval is far wider than ±2 points
    result = paired_difference(*_pairs(10, 12, 150, 28))
    assert result.low < -0.02 and result.high > 0.02 and not result.equivalent
    # and with hundreds of discordant reviews on 2,000, the same small gap is equivalent within ±2 points
    assert paired_difference(*_pairs(127, 121, 1500, 252)).equivalent


def test_corrected_resampled_ttest_by_hand():
    d = np.array([[0.01, 0.03, -0.02], [0.02, 0.00, 0.02]])  # 2 runs x 3 folds, J = 6
    # mean = 0.06 / 6 = 0.01; s^2 = (0 + 4 + 9 + 1 + 1 + 1) e-4 / 5 = 3.2e-4;
    # se = sqrt((1/6 + 1/2) * 3.2e-4) = sqrt(2.1333e-4) = 0.0146059; t = 0.684653
    result = corrected_resampled_ttest(d, test_train_ratio=0.5)
    assert (result.mean, result.df, result.n_estimates) == (pytest.approx(0.01), 5, 6)
    assert result.standard_error == pytest.approx(0.0146059, abs=1e-7)
    assert result.t == pytest.approx(0.684653, abs=1e-6)
    assert result.p_value == pytest.approx(2 * t_distribution.sf(0.684653, 5), abs=1e-6)
    half = t_distribution.ppf(0.975, 5) * 0.0146059
    assert (result.low, result.high) == pytest.approx((0.01 - half, 0.01 + half), abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_without_the_correction_it_is_scipys_one_sample_t_test(seed):
    d = np.random.default_rng(seed).normal(0.01, 0.02, size=(5, 10))
    result = corrected_resampled_ttest(d, test_train_ratio=0)
    scipy = ttest_1samp(d.ravel(), 0.0)
    assert result.t == pytest.approx(scipy.statistic, rel=1e-12)
    assert result.p_value == pytest.approx(scipy.pvalue, rel=1e-9)
    interval = scipy.confidence_interval(0.95)
    assert (result.low, result.high) == pytest.approx((interval.low, interval.high), rel=1e-9)


def test_the_correction_widens_the_interval_and_raises_p():
    d = np.random.default_rng(3).normal(0.01, 0.02, size=(5, 10))
    plain, corrected = corrected_resampled_ttest(d, 0), corrected_resampled_ttest(d, 200 / 1800)
    assert corrected.standard_error == pytest.approx(plain.standard_error * math.sqrt((1 / 50 + 1 / 9) * 50))
    assert corrected.p_value > plain.p_value
    assert corrected.high - corrected.low > plain.high - plain.low


def test_equal_differences_have_no_spread_to_test():
    assert corrected_resampled_ttest(np.zeros((2, 5)), 1 / 9).p_value == 1.0
    shifted = corrected_resampled_ttest(np.full(6, 0.01), 1 / 9)
    assert shifted.p_value == 0.0 and shifted.t == math.inf


@pytest.mark.parametrize("call,message", [
    (lambda: paired_difference([1, 0], [1]), "equal length"),
    (lambda: paired_difference([1, 0.5], [1, 0]), "only True/False or 0/1"),
    (lambda: paired_difference([1, 0], [1, 0], margin=0), r"margin must be in \(0, 1\)"),
    (lambda: paired_difference([1, 0], [1, 0], confidence=95), r"confidence must be in \(0, 1\)"),
    (lambda: paired_difference([1, 0], [1, 0], alpha=0.5), r"alpha must be in \(0, 0.5\)"),
    (lambda: tango_statistic(5, 6, 10, 0.0), "cannot exceed n"),
    (lambda: tango_statistic(5, 1, 10, 1.0), r"delta must be in \(-1, 1\)"),
    (lambda: tango_statistic(-1, 1, 10, 0.0), "plus must be at least 0"),
    (lambda: corrected_resampled_ttest([0.1], 1 / 9), "at least 2"),
    (lambda: corrected_resampled_ttest([0.1, np.nan], 1 / 9), "NaN"),
    (lambda: corrected_resampled_ttest(["a", "b"], 1 / 9), "numbers only"),
    (lambda: corrected_resampled_ttest([[0.1, 0.2], [0.3]], 1 / 9), "rectangular"),
    (lambda: corrected_resampled_ttest([0.1, 0.2], -1), r"test_train_ratio must be in \[0, inf\]"),
    (lambda: corrected_resampled_ttest([0.1, 0.2], 1 / 9, confidence=1), r"confidence must be in \(0, 1\)"),
])
def test_bad_arguments_are_one_clear_input_error(call, message):
    with pytest.raises(InputError, match=message):
        call()
