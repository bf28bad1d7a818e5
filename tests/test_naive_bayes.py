"""NB from scratch against scikit-learn's MultinomialNB."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.naive_bayes import MultinomialNB

from helpers.naive_bayes import NaiveBayes


@pytest.fixture
def counts():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(0.4, size=(80, 60)))
    y = np.array(["neg", "pos"])[rng.integers(0, 2, size=80)]
    return X, y


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_matches_multinomialnb(counts, alpha):
    X, y = counts
    ours, theirs = NaiveBayes(alpha=alpha).fit(X, y), MultinomialNB(alpha=alpha).fit(X, y)
    np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.class_log_prior_, theirs.class_log_prior_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.predict_log_proba(X), theirs.predict_log_proba(X),
                               rtol=0, atol=1e-9)
    assert (ours.predict(X) == theirs.predict(X)).all()
    np.testing.assert_allclose(ours.predict_log_proba(X.toarray()), theirs.predict_log_proba(X),
                               rtol=0, atol=1e-9)


def test_three_classes(counts):
    X, _ = counts
    y = np.arange(X.shape[0]) % 3
    ours, theirs = NaiveBayes().fit(X, y), MultinomialNB().fit(X, y)
    np.testing.assert_allclose(ours.predict_log_proba(X), theirs.predict_log_proba(X), atol=1e-9)


def test_unsmoothed_unseen_word_gives_minus_infinity_and_first_class():
    X = sp.csr_matrix(np.array([[2, 0], [0, 3], [1, 1]]))
    model = NaiveBayes(alpha=0).fit(X[:2], ["neg", "pos"])
    jll = model.joint_log_likelihood(X)
    assert np.isneginf(jll[0, 1]) and np.isneginf(jll[1, 0])
    assert np.isneginf(jll[2]).all()  # both words: each class has one zero
    assert model.predict(X).tolist() == ["neg", "pos", "neg"]  # the tie goes to classes_[0]
    assert np.isnan(model.decision_function(X)[2])


def test_decision_function_is_the_log_odds(counts):
    X, y = counts
    model = NaiveBayes().fit(X, y)
    log_proba = model.predict_log_proba(X)
    np.testing.assert_allclose(model.decision_function(X), log_proba[:, 1] - log_proba[:, 0])


def test_negative_alpha_is_refused(counts):
    with pytest.raises(ValueError, match="alpha"):
        NaiveBayes(alpha=-1).fit(*counts)
