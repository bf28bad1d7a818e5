"""Exercise 9.1, expected_score: the share of pairs where real beats fake, ties one half."""

EXERCISE = "9.1"

_HEAD = '''
def expected_score(real, fake):
    real, fake = np.asarray(real), np.asarray(fake)
'''

MISTAKES = {
    "ties counted as losses": _HEAD + '''
    return float(np.mean(real > fake))''',
    "ties counted as wins": _HEAD + '''
    return float(np.mean(real >= fake))''',
    "fake more plausible counted (the pairs reversed)": _HEAD + '''
    tie = np.isclose(real, fake, rtol=1e-9, atol=0)
    return float(np.mean(np.where(tie, 0.5, fake > real)))''',
    "the means compared, not the pairs": _HEAD + '''
    return float(real.mean() > fake.mean())''',
}
MISTAKES["ties as exact equality (==)"] = _HEAD + '''
    return float(np.mean(np.where(real == fake, 0.5, real > fake)))'''
MISTAKES["ties by numpy's default isclose (3e-6 apart called a tie)"] = _HEAD + '''
    return float(np.mean(np.where(np.isclose(real, fake), 0.5, real > fake)))'''
