"""NB from scratch against scikit-learn's MultinomialNB."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.naive_bayes import MultinomialNB

from helpers.errors import InputError, KitError
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


@pytest.mark.parametrize("make, message", [
    (lambda X, y: (NaiveBayes(alpha=np.nan), X, y), "alpha must be a finite number"),
    (lambda X, y: (NaiveBayes(alpha="1"), X, y), "alpha must be a number"),
    (lambda X, y: (NaiveBayes(), -X, y), "negative values"),
    (lambda X, y: (NaiveBayes(), X.toarray() * np.nan, y), "NaN"),
    (lambda X, y: (NaiveBayes(), X, y[:-1]), "inconsistent numbers of samples"),
    (lambda X, y: (NaiveBayes(), X, np.full(len(y), "pos")), "single class"),
    (lambda X, y: (NaiveBayes(), X, None), "fit needs the labels y"),
    (lambda X, y: (NaiveBayes(), X, np.linspace(0, 1, len(y))), "labels of one type"),
    (lambda X, y: (NaiveBayes(), X, np.r_[y[:-1], None].astype(object)), "labels of one type"),
    (lambda X, y: (NaiveBayes(), [["a", "b"]], ["pos"]), "Naive Bayes takes a 2-D array"),
    (lambda X, y: (NaiveBayes(), X.toarray()[0], y[:1]), "2D array"),
])
def test_fit_refuses_bad_input_with_one_clear_error(counts, make, message):
    model, X, y = make(*counts)
    params = model.get_params()
    with pytest.raises(InputError, match=message):
        model.fit(X, y)
    assert str(model.get_params()) == str(params) and not hasattr(model, "classes_")


def test_fit_returns_self_and_predict_checks_its_input(counts):
    X, y = counts
    model = NaiveBayes()
    assert model.fit(X, y) is model and model.get_params() == {"alpha": 1.0}
    with pytest.raises(InputError, match="features"):
        model.predict(X[:, :5])
    with pytest.raises(InputError, match="negative values"):
        model.predict(-X)
    three = NaiveBayes().fit(X, np.arange(X.shape[0]) % 3)
    with pytest.raises(KitError, match="two classes"):
        three.decision_function(X)
