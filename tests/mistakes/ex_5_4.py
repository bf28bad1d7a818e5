"""Exercise 5.4, wilson_interval: the Wilson score interval for k successes in n."""

EXERCISE = "5.4"

_HEAD = '''
def wilson_interval(k, n, z=1.96):
    p = k / n
'''

MISTAKES = {
    "the Wald interval p ± z·sqrt(p(1-p)/n)": _HEAD + '''
    half = z * np.sqrt(p * (1 - p) / n)
    return p - half, p + half''',
    "the centre without dividing by 1 + z²/n": _HEAD + '''
    centre = p + z**2 / (2 * n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half''',
    "z²/(4n²) left out of the half-width": _HEAD + '''
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n)
    return centre - half, centre + half''',
    "z written in as 1.96": _HEAD + '''
    z = 1.96
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half''',
}
