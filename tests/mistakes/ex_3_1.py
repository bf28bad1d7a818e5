"""Exercise 3.1, exact_permutation_test: all 2^n swap patterns."""

EXERCISE = "3.1"

_HEAD = '''
def exact_permutation_test(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
'''

MISTAKES = {
    "strict > instead of >= (the observed pattern not counted)": _HEAD + '''
    observed = abs(a.mean() - b.mean())
    s = 0
    for swaps in itertools.product([False, True], repeat=len(a)):
        swaps = np.array(swaps)
        x, y = np.where(swaps, b, a), np.where(swaps, a, b)
        s += abs(x.mean() - y.mean()) > observed + 1e-9
    return s / 2 ** len(a), int(s), observed''',
    "a signed statistic (one-sided)": _HEAD + '''
    observed = a.mean() - b.mean()
    s = 0
    for swaps in itertools.product([False, True], repeat=len(a)):
        swaps = np.array(swaps)
        x, y = np.where(swaps, b, a), np.where(swaps, a, b)
        s += x.mean() - y.mean() >= observed - 1e-9
    return s / 2 ** len(a), int(s), abs(observed)''',
    "the Monte Carlo formula (s + 1) / (R + 1) for the exact test": _HEAD + '''
    observed = abs(a.mean() - b.mean())
    s = 0
    for swaps in itertools.product([False, True], repeat=len(a)):
        swaps = np.array(swaps)
        x, y = np.where(swaps, b, a), np.where(swaps, a, b)
        s += abs(x.mean() - y.mean()) >= observed - 1e-9
    return (s + 1) / (2 ** len(a) + 1), int(s), observed''',
    "only one item swapped at a time (n patterns, not 2^n)": _HEAD + '''
    observed = abs(a.mean() - b.mean())
    s = 1
    for i in range(len(a)):
        x, y = a.copy(), b.copy()
        x[i], y[i] = b[i], a[i]
        s += abs(x.mean() - y.mean()) >= observed - 1e-9
    return s / (len(a) + 1), int(s), observed''',
}
