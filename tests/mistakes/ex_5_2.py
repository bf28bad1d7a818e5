"""Exercise 5.2, nb_contributions: count × log P(w|pos)/P(w|neg) for each feature of a text."""

EXERCISE = "5.2"

_HEAD = '''
def nb_contributions(model, vectorizer, text):
    counts = vectorizer.transform([tokenize(text)]).tocsr()
    features = vectorizer.get_feature_names_out()[counts.indices]
'''

MISTAKES = {
    "the log ratio the wrong way round (neg over pos)": _HEAD + '''
    log_ratio = model.feature_log_prob_[0] - model.feature_log_prob_[1]
    return pd.Series(counts.data * log_ratio[counts.indices], index=features)''',
    "presence instead of the count": _HEAD + '''
    log_ratio = model.feature_log_prob_[1] - model.feature_log_prob_[0]
    return pd.Series(log_ratio[counts.indices], index=features)''',
    "the probability ratio, not its log": _HEAD + '''
    ratio = np.exp(model.feature_log_prob_[1]) / np.exp(model.feature_log_prob_[0])
    return pd.Series(counts.data * ratio[counts.indices], index=features)''',
    "the class prior added to every feature": _HEAD + '''
    log_ratio = model.feature_log_prob_[1] - model.feature_log_prob_[0]
    prior = model.class_log_prior_[1] - model.class_log_prior_[0]
    return pd.Series(counts.data * log_ratio[counts.indices] + prior, index=features)''',
}
