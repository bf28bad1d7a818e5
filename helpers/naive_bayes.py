"""Multinomial Naive Bayes from scratch, in log space, with add-alpha smoothing.

The reference for notebook 01's exercise. It follows the scikit-learn estimator API and
matches ``sklearn.naive_bayes.MultinomialNB`` (tested to 1e-9 in log probabilities), but
unlike it allows ``alpha=0``: unsmoothed NB, where a word never seen with a class gives that
class log-probability -inf (the zero-probability problem the notebook shows).

For a document d with word counts x_w, and class c::

    log P(c | d) = log P(c) + sum_w x_w log P(w | c) + const
    P(w | c) = (count(w, c) + alpha) / (sum_w' count(w', c) + alpha |V|)
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted, validate_data

from helpers.errors import InputError, KitError
from helpers.validation import check_number


class NaiveBayes(ClassifierMixin, BaseEstimator):
    """Multinomial Naive Bayes on (sparse) count or presence features.

    Parameters
    ----------
    alpha : float
        Additive smoothing; 1 is add-one (Laplace), 0 is none.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
        log P(c), from class frequencies.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Summed feature values per class.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        log P(w | c), smoothed.
    """

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = alpha

    def fit(self, X, y) -> NaiveBayes:
        """Estimate class priors and per-class word distributions from ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            Counts or presence: finite and >= 0.
        y : array-like of shape (n_documents,)
            Labels, at least two distinct ones.

        Returns
        -------
        NaiveBayes
            ``self``, fitted.

        Raises
        ------
        InputError
            (a ValueError) ``alpha`` not a finite number >= 0; ``X`` not a 2-D numeric array,
            NaN, infinite or negative; ``y`` not one label per row, or a single class.
        """
        check_number(self.alpha, "alpha", low=0)
        if y is None:
            raise InputError("fit needs the labels y, one per row of X.")
        X, y = self._validated(X, y)
        try:
            check_classification_targets(y)
        except (TypeError, ValueError):
            raise InputError("y must hold class labels of one type (all str or all whole numbers), "
                             "none missing.") from None
        classes, class_of_row = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise InputError(f"y has a single class ({y[0]!r}): Naive Bayes needs documents of at "
                             "least two classes.")
        self.classes_ = unique_labels(classes)  # as scikit-learn's LabelBinarizer gives them (dtype too)
        Y = np.zeros((len(y), len(classes)))  # one-hot: Y[d, c] = 1 if document d is of class c
        Y[np.arange(len(y)), class_of_row] = 1.0
        self.class_log_prior_ = np.log(Y.sum(axis=0)) - np.log(Y.shape[0])
        # X^T Y (Y dense) sums each feature over each class's documents in document order,
        # as the sparse product Y^T X would, without building a sparse result's structure:
        # the same numbers, 4x faster on the 2,000 reviews
        self.feature_count_ = np.ascontiguousarray((sp.csr_matrix(X).T @ Y).T)
        smoothed = self.feature_count_ + self.alpha
        with np.errstate(divide="ignore"):
            self.feature_log_prob_ = (np.log(smoothed)
                                      - np.log(smoothed.sum(axis=1, keepdims=True)))
        return self

    def _validated(self, X, y=None):
        return validated_counts(self, X, y, "Naive Bayes")

    def joint_log_likelihood(self, X) -> np.ndarray:
        """Return log P(c) + sum_w x_w log P(w | c) for each document and class.

        Only the words present in a document contribute (a sparse product), so an unseen
        word's -inf reaches exactly the documents that contain it.

        Raises
        ------
        InputError
            ``X`` not a 2-D numeric array with the training's number of features, NaN,
            infinite or negative.
        """
        check_is_fitted(self)
        X = sp.csr_matrix(self._validated(X))
        return np.asarray(X @ self.feature_log_prob_.T) + self.class_log_prior_

    def predict_log_proba(self, X) -> np.ndarray:
        """Return log P(c | d), normalised over classes (NaN where every class is -inf)."""
        jll = self.joint_log_likelihood(X)
        with np.errstate(invalid="ignore"):
            return jll - logsumexp(jll, axis=1, keepdims=True)

    def decision_function(self, X) -> np.ndarray:
        """For two classes, the log-odds log P(c1 | d) - log P(c0 | d) (positive: ``classes_[1]``)."""
        check_is_fitted(self)
        if len(self.classes_) != 2:
            raise KitError(f"decision_function is the log-odds of two classes; this model has "
                           f"{len(self.classes_)}: use predict_log_proba.")
        jll = self.joint_log_likelihood(X)
        with np.errstate(invalid="ignore"):
            return jll[:, 1] - jll[:, 0]

    def predict(self, X) -> np.ndarray:
        """Return the most probable class; ties (e.g. all -inf) go to the first class."""
        return self.classes_[np.argmax(self.joint_log_likelihood(X), axis=1)]


def validated_counts(estimator: BaseEstimator, X, y=None, model: str = "Naive Bayes"):
    """``X`` (and ``y``) as scikit-learn validates them for ``estimator``, its errors as one
    InputError naming ``model``; counts must not be negative (an NB log-probability or log-count
    ratio of them would be NaN). Fitting (``y`` given) records the number of features; predicting
    checks it.

    Raises
    ------
    InputError
        ``X`` not a 2-D numeric array or sparse matrix (or with another number of features than
        fitted), NaN, infinite or negative; ``y`` not one label per row.
    """
    try:
        if y is None:
            X = validate_data(estimator, X, accept_sparse="csr", reset=False)
        else:
            X, y = validate_data(estimator, X, y, accept_sparse="csr")
    except (ValueError, TypeError) as err:
        raise InputError(f"{err} ({model} takes a 2-D array or sparse matrix of counts or presence "
                         "X and one label per row y).") from None
    smallest = (X.data if sp.issparse(X) else X).min(initial=0)
    if smallest < 0:
        raise InputError(f"X holds negative values ({smallest}): {model} needs counts or presence (>= 0).")
    return X if y is None else (X, y)
