"""Exercise 1.2, nb_predict: the most probable class."""

EXERCISE = "1.2"

MISTAKES = {
    "the prior left out of the score": '''
def nb_predict(model, X):
    scores = np.asarray(X @ model["log_likelihood"].T)
    return model["classes"][np.argmax(scores, axis=1)]''',
    "argmin instead of argmax": '''
def nb_predict(model, X):
    scores = np.asarray(X @ model["log_likelihood"].T) + model["log_prior"]
    return model["classes"][np.argmin(scores, axis=1)]''',
    "class indices returned instead of class labels": '''
def nb_predict(model, X):
    scores = np.asarray(X @ model["log_likelihood"].T) + model["log_prior"]
    return np.argmax(scores, axis=1)''',
    "probabilities multiplied instead of logs added (underflow)": '''
def nb_predict(model, X):
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    likelihood = np.exp(model["log_likelihood"])
    scores = np.stack([np.prod(likelihood[c] ** X, axis=1) for c in range(len(model["classes"]))], axis=1)
    return model["classes"][np.argmax(scores * np.exp(model["log_prior"]), axis=1)]''',
}
