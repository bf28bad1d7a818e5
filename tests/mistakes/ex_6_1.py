"""Exercise 6.1, centered_cosine: the cosine of u - mean and v - mean."""

EXERCISE = "6.1"

_HEAD = '''
def centered_cosine(u, v, mean):
'''

MISTAKES = {
    "the raw cosine (mean not subtracted)": _HEAD + '''
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))''',
    "the centred dot product, not normalised": _HEAD + '''
    return float((u - mean) @ (v - mean))''',
    "only u centred": _HEAD + '''
    a = u - mean
    return float(a @ v / (np.linalg.norm(a) * np.linalg.norm(v)))''',
    "normalised by the raw vectors' lengths": _HEAD + '''
    return float((u - mean) @ (v - mean) / (np.linalg.norm(u) * np.linalg.norm(v)))''',
}
