"""Exercise 1.1, nb_fit: estimating the Naive Bayes parameters."""

EXERCISE = "1.1"

MISTAKES = {
    "a uniform prior instead of the class frequencies": '''
def nb_fit(X, y, alpha=1.0):
    classes = np.unique(y)
    log_prior = np.full(len(classes), -np.log(len(classes)))
    counts = np.vstack([np.asarray(X[y == c].sum(axis=0)).ravel() for c in classes]) + alpha
    log_likelihood = np.log(counts) - np.log(counts.sum(axis=1, keepdims=True))
    return {"classes": classes, "log_prior": log_prior, "log_likelihood": log_likelihood}''',
    "alpha added to the counts but not alpha |V| to the denominator": '''
def nb_fit(X, y, alpha=1.0):
    classes = np.unique(y)
    log_prior = np.log([np.mean(y == c) for c in classes])
    raw = np.vstack([np.asarray(X[y == c].sum(axis=0)).ravel() for c in classes])
    log_likelihood = np.log(raw + alpha) - np.log(raw.sum(axis=1, keepdims=True))
    return {"classes": classes, "log_prior": log_prior, "log_likelihood": log_likelihood}''',
    "alpha ignored (always add-one)": '''
def nb_fit(X, y, alpha=1.0):
    classes = np.unique(y)
    log_prior = np.log([np.mean(y == c) for c in classes])
    counts = np.vstack([np.asarray(X[y == c].sum(axis=0)).ravel() for c in classes]) + 1
    log_likelihood = np.log(counts) - np.log(counts.sum(axis=1, keepdims=True))
    return {"classes": classes, "log_prior": log_prior, "log_likelihood": log_likelihood}''',
    "normalised over the classes (wrong axis) instead of over the words": '''
def nb_fit(X, y, alpha=1.0):
    classes = np.unique(y)
    log_prior = np.log([np.mean(y == c) for c in classes])
    counts = np.vstack([np.asarray(X[y == c].sum(axis=0)).ravel() for c in classes]) + alpha
    log_likelihood = np.log(counts) - np.log(counts.sum(axis=0, keepdims=True))
    return {"classes": classes, "log_prior": log_prior, "log_likelihood": log_likelihood}''',
    "the prior from word counts per class instead of review counts": '''
def nb_fit(X, y, alpha=1.0):
    classes = np.unique(y)
    words = np.array([X[y == c].sum() for c in classes], dtype=float)
    log_prior = np.log(words / words.sum())
    counts = np.vstack([np.asarray(X[y == c].sum(axis=0)).ravel() for c in classes]) + alpha
    log_likelihood = np.log(counts) - np.log(counts.sum(axis=1, keepdims=True))
    return {"classes": classes, "log_prior": log_prior, "log_likelihood": log_likelihood}''',
}
