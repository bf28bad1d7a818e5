"""Paired significance tests, the Wilson interval and the unpaired bin comparison."""

import itertools
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest, fisher_exact, norm
from scipy.stats import permutation_test as scipy_permutation_test

from helpers import significance
from helpers.errors import InputError, KitError
from helpers.significance import (
    accuracy_interval,
    compare,
    holm,
    lowest_vs_highest,
    permutation_test,
    reviews_needed,
    sign_test,
    simulate_power,
    wilson_half_width,
)


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


# --------------------------------------------------------------------------- permutation test

SLIDES_A = [0.01, 0.03, 0.05, 0.01, 0.04, 0.02]
SLIDES_B = [0.1, 0.15, 0.2, 0.08, 0.3, 0.4]

scores = st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=1, max_size=10)
pairs_of_scores = st.integers(1, 10).flatmap(
    lambda n: st.tuples(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=n, max_size=n),
                        st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=n, max_size=n)))


def brute_force_p(a, b):
    """Every swap pattern, one by one, with plain Python (the definition of the exact test)."""
    n = len(a)
    observed = abs(sum(a) / n - sum(b) / n)
    at_least = 0
    for swaps in itertools.product([False, True], repeat=n):
        x = [bi if s else ai for ai, bi, s in zip(a, b, swaps, strict=True)]
        y = [ai if s else bi for ai, bi, s in zip(a, b, swaps, strict=True)]
        if abs(sum(x) / n - sum(y) / n) >= observed - 1e-9:
            at_least += 1
    return at_least / 2 ** n


def test_worked_example_from_the_slides():
    result = permutation_test(SLIDES_A, SLIDES_B)
    assert result.exact and result.n_resamples == 64
    assert round(result.statistic, 4) == 0.1783
    assert result.s == 2 and result.p_value == 2 / 64
    assert round((result.s + 1) / (result.n_resamples + 1), 4) == 0.0462  # the slides' number


@settings(max_examples=60, deadline=None)
@given(pairs_of_scores)
def test_exact_equals_brute_force_enumeration(pair):
    a, b = pair
    assert permutation_test(a, b, exact=True).p_value == pytest.approx(brute_force_p(a, b))


@settings(max_examples=40, deadline=None)
@given(pairs_of_scores, st.integers(0, 2**32 - 1))
def test_p_in_unit_interval_and_symmetric(pair, seed):
    a, b = pair
    for exact in (True, False):
        ab = permutation_test(a, b, n_resamples=200, seed=seed, exact=exact)
        ba = permutation_test(b, a, n_resamples=200, seed=seed, exact=exact)
        assert 0 < ab.p_value <= 1
        assert ab.p_value == ba.p_value


@settings(max_examples=30, deadline=None)
@given(scores, st.integers(0, 1000))
def test_identical_systems_give_one(a, seed):
    assert permutation_test(a, a, n_resamples=100, seed=seed, exact=False).p_value == 1.0
    assert permutation_test(a, a, exact=True).p_value == 1.0


@settings(max_examples=15, deadline=None)
@given(st.integers(8, 12), st.integers(0, 10_000))
def test_monte_carlo_is_within_monte_carlo_error_of_exact(n, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.random(n), rng.random(n) + 0.2
    exact = permutation_test(a, b, exact=True).p_value
    R = 20_000
    mc = permutation_test(a, b, n_resamples=R, seed=seed, exact=False).p_value
    assert abs(mc - exact) <= 5 * np.sqrt(exact * (1 - exact) / R) + 2 / R


def test_same_seed_same_result_and_auto_switch():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 2, 500), rng.integers(0, 2, 500)
    first, again = permutation_test(a, b, seed=7), permutation_test(a, b, seed=7)
    assert first.p_value == again.p_value and not first.exact
    np.testing.assert_array_equal(first.null_distribution, again.null_distribution)
    assert len(first.null_distribution) == first.n_resamples == 5000
    assert permutation_test(a[:12], b[:12], n_resamples=5000).exact  # 2^12 <= 5000
    assert not permutation_test(a[:13], b[:13], n_resamples=5000).exact


@pytest.mark.parametrize("seed,kind", [(0, "0/1"), (1, "0/1"), (2, "0/1"), (3, "real"), (4, "real")])
def test_agrees_with_scipy_within_monte_carlo_error(seed, kind):
    rng = np.random.default_rng(seed)
    n, R = 300, 5000
    if kind == "0/1":  # few distinct differences: swaps drawn per group
        a = (rng.random(n) < 0.80).astype(float)
        b = np.where(rng.random(n) < 0.15, 1 - a, a)
    else:  # e.g. per-item average precision: a coin per item
        a = rng.random(n)
        b = np.clip(a + rng.normal(0.01, 0.1, n), 0, 1)

    def abs_mean_difference(x, y, axis):
        return np.abs(np.mean(x, axis=axis) - np.mean(y, axis=axis))

    theirs = scipy_permutation_test((a, b), abs_mean_difference, permutation_type="samples",
                                    vectorized=True, n_resamples=R, alternative="greater",
                                    random_state=seed).pvalue
    ours = permutation_test(a, b, n_resamples=R, seed=seed + 100).p_value
    p = (ours + theirs) / 2
    assert abs(ours - theirs) <= 5 * np.sqrt(2 * p * (1 - p) / R) + 2 / R


def _zero_one_scores(n: int, seed: int, discordant_a: int, discordant_b: int):
    """0/1 correctness of two systems on n items: A alone right on discordant_a, B alone on
    discordant_b, both right on 80% of the rest."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    a, b = np.zeros(n), np.zeros(n)
    a[order[:discordant_a]] = 1
    b[order[discordant_a:discordant_a + discordant_b]] = 1
    both = order[discordant_a + discordant_b:]
    right = both[rng.random(len(both)) < 0.8]
    a[right] = b[right] = 1
    return a, b


@pytest.mark.parametrize("n", [2000, 8192, 20_001])
@pytest.mark.parametrize("dtype", [float, int, bool])
def test_block_summary_equals_the_full_array_path(monkeypatch, n, dtype):
    """0/1 scores are summarised block by block; the result is the full-array path's, to the bit."""
    a, b = (x.astype(dtype) for x in _zero_one_scores(n, n, n // 10, n // 10 + 30))
    blocks = permutation_test(a, b, n_resamples=2000, seed=3)
    monkeypatch.setattr(significance, "_whole_differences", lambda a, b: None)
    full = permutation_test(a, b, n_resamples=2000, seed=3)
    assert (blocks.p_value, blocks.statistic, blocks.s) == (full.p_value, full.statistic, full.s)
    np.testing.assert_array_equal(blocks.null_distribution, full.null_distribution)


def test_zero_one_path_allocates_no_array_of_n_floats():
    """The cause of the jump at n = 100,000: fresh n-float temporaries on every call (page faults)."""
    n = 200_000
    a, b = _zero_one_scores(n, 0, 12_000, 12_500)
    permutation_test(a, b, n_resamples=1000, seed=0)
    tracemalloc.start()
    try:
        permutation_test(a, b, n_resamples=1000, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < n * 8 / 4


@pytest.mark.parametrize("seed", [0, 1])
def test_binomial_per_group_agrees_with_a_coin_per_item(monkeypatch, seed):
    """The 0/1 path (Binomial swaps per group of equal |d|) and the general path (a coin per
    item) draw from the same null distribution: on data with p near 0.1 (not at its floor)
    the p-values agree within 4 Monte Carlo standard errors of their difference,
    sqrt(2 p (1 - p) / R)."""
    a, b = _zero_one_scores(2000, seed, 150, 187)
    R = 5000
    grouped = permutation_test(a, b, n_resamples=R, seed=seed)
    monkeypatch.setattr(significance, "MAX_BINOMIAL_GROUPS", 0)
    per_item = permutation_test(a, b, n_resamples=R, seed=seed)
    p = (grouped.p_value + per_item.p_value) / 2
    assert 0.03 < p < 0.3
    assert grouped.statistic == per_item.statistic
    assert abs(grouped.p_value - per_item.p_value) <= 4 * np.sqrt(2 * p * (1 - p) / R)


def test_custom_statistic_macro_f1():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(0)
    gold = rng.choice(["neg", "pos"], 60)
    good = np.where(rng.random(60) < 0.9, gold, "pos")
    poor = np.where(rng.random(60) < 0.6, gold, "neg")

    def macro_f1_gap(x, y):
        return abs(f1_score(gold, x, average="macro") - f1_score(gold, y, average="macro"))

    result = permutation_test(good, poor, n_resamples=300, statistic=macro_f1_gap, seed=0)
    assert result.statistic == pytest.approx(macro_f1_gap(good, poor))
    assert result.p_value < 0.05 and len(result.null_distribution) == 300
    assert permutation_test(good, good, n_resamples=50, statistic=macro_f1_gap, seed=0).p_value == 1


def test_permutation_test_bad_input():
    with pytest.raises(KitError, match="equal length"):
        permutation_test([1, 0, 1], [1, 0])
    with pytest.raises(KitError, match="empty"):
        permutation_test([], [])
    with pytest.raises(KitError, match="NaN"):
        permutation_test([1, np.nan], [0, 1])
    with pytest.raises(KitError, match="too many"):
        permutation_test(np.ones(30), np.zeros(30), exact=True)


def test_compare_table():
    rng = np.random.default_rng(0)
    correct = {"x": rng.integers(0, 2, 200), "y": rng.integers(0, 2, 200)}
    table = compare(correct, [("x", "y")], n_resamples=500, progress=False)
    row = table.iloc[0]
    assert (row.a, row.b) == ("x", "y")
    assert row.plus + row.minus + row.ties == 200
    assert row.perm_p == permutation_test(correct["x"], correct["y"], 500, seed=0).p_value
    assert row.sign_p == sign_test(correct["x"], correct["y"]).p_value


def test_holm_multiplies_the_ith_smallest_by_m_minus_i_and_keeps_the_order():
    assert holm([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5]).tolist() == [0.5]
    assert holm([0.3, 0.3, 0.45]).tolist() == pytest.approx([0.9, 0.9, 0.9])  # ties alike, order kept
    assert holm([0.6, 0.7]).tolist() == [1.0, 1.0]  # capped at 1
    p = np.random.default_rng(0).uniform(0, 0.2, 30)
    adjusted = holm(p)
    assert (adjusted >= p).all() and (adjusted <= np.minimum(1, 30 * p) + 1e-15).all()  # at most Bonferroni
    assert (np.diff(adjusted[np.argsort(p)]) >= 0).all()  # the order of the p-values is kept


def test_power_simulation_rejects_more_for_larger_differences():
    from helpers.significance import simulate_power

    null = simulate_power(n=500, difference=0.0, trials=200, n_resamples=200, progress=False)
    strong = simulate_power(n=500, difference=0.08, trials=50, n_resamples=200, progress=False)
    assert null["permutation test"] <= 0.10 and null["sign test"] <= 0.10  # about alpha or less
    assert strong["permutation test"] >= 0.9
    assert strong["permutation test"] >= strong["sign test"]
    with pytest.raises(KitError, match="Impossible"):
        simulate_power(difference=0.5, discordance=0.1)


def test_accuracy_interval_is_wilsons():
    correct = np.array([True] * 81 + [False] * 19)
    accuracy, low, high = accuracy_interval(correct)
    p, n, z = 0.81, 100, norm.ppf(0.975)
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    assert accuracy == 0.81
    assert (low, high) == pytest.approx((centre - half, centre + half))
    with pytest.raises(KitError):
        accuracy_interval([])


def test_lowest_vs_highest_uses_fisher_exact():
    similarity = np.r_[np.full(30, 0.1), np.full(30, 0.9)]
    correct = np.r_[np.ones(15), np.zeros(15), np.ones(29), np.zeros(1)].astype(bool)
    result = lowest_vs_highest(similarity, correct)
    summary = (result["low"], result["high"], result["n_low"], result["n_high"])
    assert summary == ("[0, 0.25)", "[0.75, 1]", 30, 30)
    assert result["accuracy_low"] == 0.5 and result["accuracy_high"] == pytest.approx(29 / 30)
    assert result["p_value"] == pytest.approx(fisher_exact([[15, 15], [29, 1]])[1])


# --------------------------------------------------------------------------- argument checks

GOOD = [True, False, True, True]


@pytest.mark.parametrize("call, message", [
    (lambda: sign_test([1, np.nan, 0, 1], GOOD), "correct_a must hold only True/False or 0/1"),
    (lambda: sign_test(["yes", "no", "no", "yes"], GOOD), "must hold numbers only"),
    (lambda: sign_test([0.5, 1, 0, 1], GOOD), "item 0 is 0.5"),
    (lambda: sign_test([2, 1, 0, 1], GOOD), "only True/False or 0/1"),
    (lambda: sign_test([[1, 0], [0, 1]], [[1, 0], [0, 1]]), "1-D"),
    (lambda: sign_test([[1, 0], [1]], GOOD), "rectangular"),
    (lambda: sign_test(None, GOOD), "not NoneType"),
    (lambda: permutation_test([1.0, np.inf], [0.0, 1.0]), "NaN or infinite"),
    (lambda: permutation_test([1, 0], [0, 1], n_resamples=0), "n_resamples must be at least 1"),
    (lambda: permutation_test([1, 0], [0, 1], n_resamples=2.5), "n_resamples must be a whole number"),
    (lambda: permutation_test([1, 0], [0, 1], n_resamples=10**12), "n_resamples must be at most"),
    (lambda: permutation_test([1, 0], [0, 1], seed=-1), "seed must be at least 0"),
    (lambda: permutation_test([1, 0], [0, 1], exact="yes"), "exact must be one of"),
    (lambda: permutation_test([1, 0], [0, 1], statistic="f1"), "statistic must be a function"),
    (lambda: permutation_test([1, 0], [0, 1], statistic=lambda a, b: np.nan), "must be finite"),
    (lambda: permutation_test(["a", "b"], ["b", "a"]), "numbers only"),
    (lambda: compare({"nb": GOOD}, [("nb", "svm")], progress=False),
     r"No correctness for system\(s\) 'svm'; correct has 'nb'"),
    (lambda: compare({"nb": GOOD, "svm": GOOD[:3]}, [("nb", "svm")], progress=False), "equal length"),
    (lambda: compare({"nb": GOOD, "svm": GOOD}, ("nb", "svm"), progress=False), "must be a .name_a"),
    (lambda: compare({"nb": GOOD, "svm": GOOD}, [], progress=False), "non-empty list"),
    (lambda: compare([GOOD, GOOD], [("nb", "svm")], progress=False), "non-empty dict"),
    (lambda: compare({"nb": GOOD, "svm": GOOD}, [("nb", "svm")], n_resamples=-5, progress=False),
     "n_resamples"),
    (lambda: holm([]), "at least 1"),
    (lambda: holm([0.5, 1.5]), r"p_values must lie in \[0, 1\]; item 1 is 1.5"),
    (lambda: holm([0.5, np.nan]), "NaN"),
    (lambda: simulate_power(n=0, progress=False), "n must be at least 1"),
    (lambda: simulate_power(trials=1.5, progress=False), "trials must be a whole number"),
    (lambda: simulate_power(accuracy=np.nan, progress=False), "accuracy must be a finite number"),
    (lambda: simulate_power(alpha=1, progress=False), r"alpha must be in \(0, 1\)"),
    (lambda: simulate_power(difference=-0.5, discordance=0.1, progress=False), "Impossible"),
    (lambda: accuracy_interval([1, 0, np.nan]), "only True/False or 0/1"),
    (lambda: accuracy_interval(GOOD, confidence=95), r"confidence must be in \(0, 1\)"),
    (lambda: lowest_vs_highest([0.1, 0.9], GOOD), "equal length"),
    (lambda: lowest_vs_highest([0.1, np.nan, 0.5, 0.9], GOOD), "NaN"),
    (lambda: lowest_vs_highest([0.1, 2.0, 0.5, 0.9], GOOD), r"must lie in \[0, "),
    (lambda: lowest_vs_highest([0.1, 0.2, 0.5, 0.9], GOOD, bins="deciles"), "bins must be one of"),
])
def test_bad_arguments_are_one_clear_input_error(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_power_on_the_feasible_boundary_is_simulated():
    from helpers.significance import simulate_power

    found = simulate_power(n=50, accuracy=0.9, difference=0.0, discordance=0.2, trials=5, progress=False)
    assert all(0 <= rate <= 1 for rate in found.values())


@pytest.mark.parametrize("accuracy,n", [(0.811, 1000), (0.9, 10), (1.0, 25), (0.0, 3), (1.0, 1)])
def test_wilson_half_width_is_half_scipys_wilson_interval(accuracy, n):
    interval = binomtest(round(accuracy * n), n).proportion_ci(0.95, method="wilson")
    assert wilson_half_width(accuracy, n) == pytest.approx((interval.high - interval.low) / 2, abs=1e-12)


@pytest.mark.parametrize("accuracy,half_width,z", [(0.85, 0.05, 1.96), (0.5, 0.1, 1.96), (0.97, 0.01, 1.96),
                                                  (1.0, 0.05, 1.96), (0.8, 0.05, 2.5758), (0.9, 0.3, 1.96),
                                                  (0.5, 0.5, 1.96)])
def test_reviews_needed_is_the_first_n_narrow_enough(accuracy, half_width, z):
    n = reviews_needed(accuracy, half_width, z)
    first = next(m for m in range(1, 10_000) if wilson_half_width(accuracy, m, z) <= half_width)
    assert n == first


@pytest.mark.parametrize("call,message", [
    (lambda: reviews_needed(1.2, 0.05), "accuracy"), (lambda: reviews_needed(0.8, 0), "half_width"),
    (lambda: reviews_needed(0.8, 0.6), "half_width"), (lambda: reviews_needed(0.8, 0.05, z=-1), "z"),
    (lambda: wilson_half_width(0.8, 0), "n"), (lambda: wilson_half_width(float("nan"), 5), "accuracy"),
])
def test_reviews_needed_refuses_what_has_no_answer(call, message):
    with pytest.raises(InputError, match=message):
        call()


@pytest.mark.parametrize("true, false", [(1, 0), (np.True_, np.False_), (1.0, 0.0)])
def test_exact_given_as_a_number_or_numpy_s_bool_is_that_bool(true, false):
    """check_choice admits what equals True or False: the test then runs as with True or False
    (it once failed on 0/1 scores with an AttributeError for 1 and numpy's True)."""
    a, b = np.array([1, 0, 1, 1, 0, 1, 1, 1]), np.array([0, 0, 1, 0, 0, 1, 0, 1])
    exact = permutation_test(a, b, exact=True, progress=False)
    assert permutation_test(a, b, exact=true, progress=False).p_value == exact.p_value == 0.25
    monte_carlo = permutation_test(a, b, exact=False, seed=3, progress=False)
    assert permutation_test(a, b, exact=false, seed=3, progress=False).p_value == monte_carlo.p_value
