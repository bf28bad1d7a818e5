"""Exercise 4.2, svm_on_vectors: 10-fold CV of a LinearSVC on standardised document vectors."""

EXERCISE = "4.2"

_HEAD = '''
from sklearn.preprocessing import StandardScaler


def svm_on_vectors(vectors, reviews, Cs=evaluation.C_GRID):
    predicted = np.empty(len(reviews), dtype=object)
    y = reviews.label.to_numpy()
'''

MISTAKES = {
    "no standardisation": _HEAD + '''
    for fold in range(10):
        train, test = np.flatnonzero(reviews.fold != fold), np.flatnonzero(reviews.fold == fold)
        model, _ = evaluation.fit_svm(vectors[train], y[train], Cs)
        predicted[test] = model.predict(vectors[test])
    return predicted''',
    "the scaler fitted on all rows, test fold included": _HEAD + '''
    X = StandardScaler().fit_transform(vectors)
    for fold in range(10):
        train, test = np.flatnonzero(reviews.fold != fold), np.flatnonzero(reviews.fold == fold)
        model, _ = evaluation.fit_svm(X[train], y[train], Cs)
        predicted[test] = model.predict(X[test])
    return predicted''',
    "no inner choice of C (the grid's first)": _HEAD + '''
    for fold in range(10):
        train, test = np.flatnonzero(reviews.fold != fold), np.flatnonzero(reviews.fold == fold)
        scaler = StandardScaler().fit(vectors[train])
        model = evaluation.make_svm(Cs[0]).fit(scaler.transform(vectors[train]), y[train])
        predicted[test] = model.predict(scaler.transform(vectors[test]))
    return predicted''',
    "contiguous KFold blocks instead of the kit's round-robin folds": _HEAD + '''
    from sklearn.model_selection import KFold

    for train, test in KFold(10).split(vectors):
        scaler = StandardScaler().fit(vectors[train])
        model, _ = evaluation.fit_svm(scaler.transform(vectors[train]), y[train], Cs)
        predicted[test] = model.predict(scaler.transform(vectors[test]))
    return predicted''',
}
MISTAKES["Cs ignored (the kit's grid always)"] = _HEAD + '''
    for fold in range(10):
        train, test = np.flatnonzero(reviews.fold != fold), np.flatnonzero(reviews.fold == fold)
        scaler = StandardScaler().fit(vectors[train])
        model, _ = evaluation.fit_svm(scaler.transform(vectors[train]), y[train], evaluation.C_GRID)
        predicted[test] = model.predict(scaler.transform(vectors[test]))
    return predicted'''
