"""Exercise 8.1, max_cosine: each test row's highest cosine to a training row, and which."""

EXERCISE = "8.1"

_HEAD = '''
def max_cosine(train_counts, test_counts):
'''

MISTAKES = {
    "raw dot products of the counts (no normalisation)": _HEAD + '''
    similarity = (test_counts @ train_counts.T).toarray()
    return similarity.max(axis=1), similarity.argmax(axis=1)''',
    "cosine by hand, NaN for a review that shares no word": _HEAD + '''
    dots = (test_counts @ train_counts.T).toarray()
    test_norm = np.sqrt(np.asarray(test_counts.multiply(test_counts).sum(axis=1)))
    train_norm = np.sqrt(np.asarray(train_counts.multiply(train_counts).sum(axis=1))).T
    with np.errstate(invalid="ignore", divide="ignore"):
        similarity = dots / (test_norm * train_norm)
    return similarity.max(axis=1), similarity.argmax(axis=1)''',
    "L1 normalisation": _HEAD + '''
    similarity = (normalize(test_counts, norm="l1") @ normalize(train_counts, norm="l1").T).toarray()
    return similarity.max(axis=1), similarity.argmax(axis=1)''',
    "presence instead of counts": _HEAD + '''
    test, train = (test_counts > 0).astype(float), (train_counts > 0).astype(float)
    similarity = (normalize(test) @ normalize(train).T).toarray()
    return similarity.max(axis=1), similarity.argmax(axis=1)''',
}
