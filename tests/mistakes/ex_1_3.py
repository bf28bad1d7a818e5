"""Exercise 1.3, my_sign_test: the two-sided sign test with ties split."""

EXERCISE = "1.3"

_HEAD = '''
from scipy.stats import binom


def my_sign_test(correct_a, correct_b):
    a, b = np.asarray(correct_a, dtype=bool), np.asarray(correct_b, dtype=bool)
    plus, minus = int(np.sum(a & ~b)), int(np.sum(~a & b))
    ties = len(a) - plus - minus
'''

MISTAKES = {
    "ties dropped": _HEAD + '''
    n, k = plus + minus, min(plus, minus)
    return min(1.0, 2 * binom.cdf(k, n, 0.5)), plus, minus, ties''',
    "one-sided (no factor 2)": _HEAD + '''
    half = int(np.ceil(ties / 2))
    n, k = 2 * half + plus + minus, half + min(plus, minus)
    return min(1.0, binom.cdf(k, n, 0.5)), plus, minus, ties''',
    "half the ties rounded down": _HEAD + '''
    half = ties // 2
    n, k = 2 * half + plus + minus, half + min(plus, minus)
    return min(1.0, 2 * binom.cdf(k, n, 0.5)), plus, minus, ties''',
    "off by one: P(X < k) instead of P(X <= k)": _HEAD + '''
    half = int(np.ceil(ties / 2))
    n, k = 2 * half + plus + minus, half + min(plus, minus)
    return min(1.0, 2 * binom.cdf(k - 1, n, 0.5)), plus, minus, ties''',
    "max instead of min of the two sides": _HEAD + '''
    half = int(np.ceil(ties / 2))
    n, k = 2 * half + plus + minus, half + max(plus, minus)
    return min(1.0, 2 * binom.cdf(k, n, 0.5)), plus, minus, ties''',
}
MISTAKES |= {
    "n counts the ties once, k adds the rounded-up half": _HEAD + '''
    half = int(np.ceil(ties / 2))
    n, k = ties + plus + minus, half + min(plus, minus)
    return min(1.0, 2 * binom.cdf(k, n, 0.5)), plus, minus, ties''',
    "the two-sided p not capped at 1": _HEAD + '''
    half = int(np.ceil(ties / 2))
    n, k = 2 * half + plus + minus, half + min(plus, minus)
    return 2 * binom.cdf(k, n, 0.5), plus, minus, ties''',
}
