"""Exercise 2.1, choose_C: the SVM's C by inner cross-validation."""

EXERCISE = "2.1"

MISTAKES = {
    "the first candidate, whatever the scores": '''
def choose_C(X, y, Cs, inner_folds=3):
    return Cs[0]''',
    "C chosen by training accuracy (no held-out fold)": '''
def choose_C(X, y, Cs, inner_folds=3):
    models = [LinearSVC(C=C, random_state=0, max_iter=evaluation.SVM_MAX_ITER).fit(X, y) for C in Cs]
    means = [np.mean(model.predict(X) == y) for model in models]
    return Cs[int(np.argmax(means))]''',
    "argmin of the inner accuracy": '''
def choose_C(X, y, Cs, inner_folds=3):
    group = np.arange(X.shape[0]) % inner_folds
    means = []
    for C in Cs:
        scores = []
        for g in range(inner_folds):
            model = LinearSVC(C=C, random_state=0, max_iter=evaluation.SVM_MAX_ITER)
            model.fit(X[group != g], y[group != g])
            scores.append(np.mean(model.predict(X[group == g]) == y[group == g]))
        means.append(np.mean(scores))
    return Cs[int(np.argmin(means))]''',
    "inner_folds ignored (always 3)": '''
def choose_C(X, y, Cs, inner_folds=3):
    group = np.arange(X.shape[0]) % 3
    means = []
    for C in Cs:
        scores = []
        for g in range(3):
            model = LinearSVC(C=C, random_state=0, max_iter=evaluation.SVM_MAX_ITER)
            model.fit(X[group != g], y[group != g])
            scores.append(np.mean(model.predict(X[group == g]) == y[group == g]))
        means.append(np.mean(scores))
    return Cs[int(np.argmax(means))]''',
}
