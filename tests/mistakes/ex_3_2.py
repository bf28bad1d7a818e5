"""Exercise 3.2, mc_permutation_test: R random swap patterns."""

EXERCISE = "3.2"

_HEAD = '''
def mc_permutation_test(a, b, R=5000, seed=0):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
'''

MISTAKES = {
    "p = s / R (the +1 forgotten)": _HEAD + '''
    rng = np.random.default_rng(seed)
    observed = abs(a.mean() - b.mean())
    s = 0
    for _ in range(R):
        swaps = rng.random(len(a)) < 0.5
        x, y = np.where(swaps, b, a), np.where(swaps, a, b)
        s += abs(x.mean() - y.mean()) >= observed - 1e-9
    return s / R, int(s), observed''',
    "the seed ignored (a fresh unseeded generator)": _HEAD + '''
    rng = np.random.default_rng()
    observed = abs(a.mean() - b.mean())
    s = 0
    for _ in range(R):
        swaps = rng.random(len(a)) < 0.5
        x, y = np.where(swaps, b, a), np.where(swaps, a, b)
        s += abs(x.mean() - y.mean()) >= observed - 1e-9
    return (s + 1) / (R + 1), int(s), observed''',
    "strict > instead of >=": _HEAD + '''
    rng = np.random.default_rng(seed)
    observed = abs(a.mean() - b.mean())
    s = 0
    for _ in range(R):
        swaps = rng.random(len(a)) < 0.5
        x, y = np.where(swaps, b, a), np.where(swaps, a, b)
        s += abs(x.mean() - y.mean()) > observed + 1e-9
    return (s + 1) / (R + 1), int(s), observed''',
    "a signed statistic (one-sided)": _HEAD + '''
    rng = np.random.default_rng(seed)
    observed = a.mean() - b.mean()
    s = 0
    for _ in range(R):
        swaps = rng.random(len(a)) < 0.5
        x, y = np.where(swaps, b, a), np.where(swaps, a, b)
        s += x.mean() - y.mean() >= observed - 1e-9
    return (s + 1) / (R + 1), int(s), abs(observed)''',
}
