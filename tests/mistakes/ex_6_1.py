"""Exercise 6.1, centered_cosine and centre_for: the cosine of u - m and v - m, and which m."""

EXERCISE = "6.1"

_COSINE = '''
def centered_cosine(u, v, mean):
'''

_RIGHT_COSINE = _COSINE + '''
    a, b = u - mean, v - mean
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
'''

_CENTRE = '''

def centre_for(vectors, groups):
'''

_RIGHT_CENTRE = _CENTRE + '''
    return np.asarray(vectors).mean(axis=0)'''

MISTAKES = {
    "the raw cosine (mean not subtracted)": _COSINE + '''
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))
''' + _RIGHT_CENTRE,
    "the centred dot product, not normalised": _COSINE + '''
    return float((u - mean) @ (v - mean))
''' + _RIGHT_CENTRE,
    "only u centred": _COSINE + '''
    a = u - mean
    return float(a @ v / (np.linalg.norm(a) * np.linalg.norm(v)))
''' + _RIGHT_CENTRE,
    "normalised by the raw vectors' lengths": _COSINE + '''
    return float((u - mean) @ (v - mean) / (np.linalg.norm(u) * np.linalg.norm(v)))
''' + _RIGHT_CENTRE,
    "each row centred on its own group's mean (removes what is measured)": _RIGHT_COSINE + _CENTRE + '''
    vectors = np.asarray(vectors)
    return pd.DataFrame(vectors).groupby(np.asarray(groups)).transform("mean").to_numpy()''',
    "no centre (a zero vector)": _RIGHT_COSINE + _CENTRE + '''
    return np.zeros(np.asarray(vectors).shape[1])''',
    "the mean of each row (axis=1) instead of each column": _RIGHT_COSINE + _CENTRE + '''
    return np.asarray(vectors).mean(axis=1, keepdims=True)''',
    "the mean of the first group's rows only": _RIGHT_COSINE + _CENTRE + '''
    vectors, groups = np.asarray(vectors), np.asarray(groups)
    return vectors[groups == groups[0]].mean(axis=0)''',
}
