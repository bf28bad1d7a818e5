"""NBSVM: a linear SVM on presence features scaled by Naive Bayes log-count ratios.

Wang and Manning, *Baselines and Bigrams: Simple, Good Sentiment and Topic Classification*
(ACL 2012, section 2.3). With binarised features x̂ (1 where a word or bigram occurs), the
training documents of the positive class (``classes_[1]``) and of the negative class, and
smoothing α::

    p = α + Σ_{i positive} x̂_i        q = α + Σ_{i negative} x̂_i
    r = log( (p / ||p||₁) / (q / ||q||₁) )          (the log-count ratio, one per feature)

An L2-regularised, squared-hinge linear SVM (liblinear, as in the paper) is trained on
x̃ = r ∘ x̂, and its weights are interpolated towards their mean magnitude,

    w' = (1 - β) w̄ + β w,      w̄ = ||w||₁ / |V|,

which trusts the NB ratios where the SVM's weights are uncertain; the bias is kept. The
paper fixes C = 1, β = 0.25 and α = 1 for every data set (nothing is chosen on test data).
Its reported accuracies (Table 2; repeated in the authors' code, github.com/sidaw/nbsvm):
``PAPER_ACCURACY``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import LinearSVC
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_is_fitted

from helpers.errors import InputError
from helpers.naive_bayes import validated_counts
from helpers.validation import check_number

#: The paper's settings, the same for every data set.
C, BETA, ALPHA = 1.0, 0.25, 1.0
#: Iterations liblinear may take (the kit's SVMs allow the same; see ``evaluation.SVM_MAX_ITER``).
MAX_ITER = 10_000
#: Wang and Manning's accuracies (%): RT-2k is the 2,000 Pang & Lee reviews under 10-fold CV,
#: IMDB the Large Movie Review Dataset's 25,000 / 25,000 split.
PAPER_ACCURACY = {
    ("RT-2k", "MNB-uni"): 83.45, ("RT-2k", "MNB-bi"): 85.85, ("RT-2k", "SVM-uni"): 86.25,
    ("RT-2k", "SVM-bi"): 87.40, ("RT-2k", "NBSVM-uni"): 87.80, ("RT-2k", "NBSVM-bi"): 89.45,
    ("IMDB", "MNB-uni"): 83.55, ("IMDB", "MNB-bi"): 86.59, ("IMDB", "SVM-uni"): 86.95,
    ("IMDB", "SVM-bi"): 89.16, ("IMDB", "NBSVM-uni"): 88.29, ("IMDB", "NBSVM-bi"): 91.22,
}


def log_count_ratio(X, positive, alpha: float = ALPHA) -> np.ndarray:
    """The NB log-count ratio r of every feature (see the module's formula).

    Parameters
    ----------
    X : sparse matrix or array of shape (n_documents, n_features)
        Counts or presence; only whether a feature occurs (> 0) is used.
    positive : array-like of bool, shape (n_documents,)
        Which documents are of the positive class; both classes must occur.
    alpha : float
        Smoothing, > 0.

    Returns
    -------
    ndarray of shape (n_features,)

    Raises
    ------
    InputError
        ``alpha`` not a number > 0; ``positive`` not one True/False per row, or one class only.
    """
    check_number(alpha, "alpha", low=0, low_open=True)
    positive = np.asarray(positive)
    if positive.dtype != bool or positive.shape != (X.shape[0],):
        raise InputError("positive must hold one True/False per row of X.")
    if positive.all() or not positive.any():
        raise InputError("positive must mark documents of both classes.")
    present = _presence(X)
    p = alpha + np.asarray(present[positive].sum(axis=0)).ravel()
    q = alpha + np.asarray(present[~positive].sum(axis=0)).ravel()
    return np.log(p / p.sum()) - np.log(q / q.sum())


def _presence(X) -> sp.csr_matrix:
    """x̂: 1.0 where a feature occurs (> 0), as a sparse matrix."""
    present = sp.csr_matrix(X, dtype=float)
    present.data = (present.data > 0).astype(float)
    return present


class NBSVM(ClassifierMixin, BaseEstimator):
    """Wang and Manning's NBSVM for two classes, with the scikit-learn estimator API.

    Parameters
    ----------
    C : float
        The SVM's penalty (> 0).
    beta : float
        Interpolation β in [0, 1]: 1 keeps the SVM's weights, 0 their mean magnitude alone.
    alpha : float
        Smoothing of the log-count ratio (> 0).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class.
    r_ : ndarray of shape (n_features,)
        The log-count ratios.
    coef_ : ndarray of shape (n_features,)
        The interpolated weights w', applied to r ∘ x̂.
    intercept_ : float
        The SVM's bias.
    """

    def __init__(self, C: float = C, beta: float = BETA, alpha: float = ALPHA) -> None:
        self.C = C
        self.beta = beta
        self.alpha = alpha

    def fit(self, X, y) -> NBSVM:
        """Compute r on (X, y), train the SVM on r ∘ x̂ and interpolate its weights.

        Returns
        -------
        NBSVM
            ``self``, fitted.

        Raises
        ------
        InputError
            A parameter out of range; ``X`` not a 2-D numeric array or with negative values;
            ``y`` not one label per row or not exactly two classes.
        """
        check_number(self.C, "C", low=0, low_open=True)
        check_number(self.beta, "beta", low=0, high=1)
        check_number(self.alpha, "alpha", low=0, low_open=True)
        if y is None:
            raise InputError("fit needs the labels y, one per row of X.")
        X, y = self._validated(X, y)
        classes = unique_labels(y)
        if len(classes) != 2:
            raise InputError(f"NBSVM separates two classes; y holds {len(classes)}.")
        self.classes_ = classes
        positive = y == classes[1]
        self.r_ = log_count_ratio(X, positive, self.alpha)
        svm = LinearSVC(C=self.C, random_state=0, max_iter=MAX_ITER).fit(self._scaled(X), positive)
        w = svm.coef_.ravel()
        self.coef_ = (1 - self.beta) * np.abs(w).mean() + self.beta * w
        self.intercept_ = float(svm.intercept_[0])
        return self

    def decision_function(self, X) -> np.ndarray:
        """w' · (r ∘ x̂) + b for every row (positive: ``classes_[1]``)."""
        check_is_fitted(self)
        return self._scaled(self._validated(X)) @ self.coef_ + self.intercept_

    def predict(self, X) -> np.ndarray:
        """The class of every row: ``classes_[1]`` where the decision function is positive."""
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def _scaled(self, X) -> sp.csr_matrix:
        """r ∘ x̂: each present feature's value replaced by its log-count ratio."""
        return sp.csr_matrix(_presence(X).multiply(self.r_))

    def _validated(self, X, y=None):
        return validated_counts(self, X, y, "NBSVM")
