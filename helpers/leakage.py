"""Notebook 08's analysis of train–test overlap (Elangovan et al., "Memorization vs. Generalization").

The overlap itself (each test text's highest n-gram cosine to a training text) and the
near-duplicates the kit's folds keep together are ``helpers.overlap``'s; their names are
also importable from here, as notebook 08 does. This module adds what the notebook asks of
them: ``threshold_groups`` and ``overlap_free_folds`` put each group of similar texts whole
into one fold, so that no test text has a training text that similar (the paper's Table 3
compares such folds with random ones); ``binned_accuracy`` bins items by overlap to see
whether accuracy rises with similarity to the training data; ``overlap_effect`` asks whether
overlap still predicts correctness once text length, which drives both, is held fixed.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy.linalg import LinAlgWarning
from scipy.stats import norm
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedGroupKFold

from helpers.errors import InputError, KitError
from helpers.overlap import (  # noqa: F401  (re-exported: notebook 08 imports them from here)
    CHUNK_SIZE,
    N_FOLDS,
    NEAR_DUPLICATE,
    _components,  # one rule that groups linked texts, for both modules
    fold_overlap,
    grouped_folds,
    near_copies,
    similar_pairs,
    similarity_groups,
    train_test_overlap,
)
from helpers.significance import bin_codes
from helpers.validation import (
    SIMILARITY_ROUNDING,
    check_array,
    check_binary,
    check_in_range,
    check_int,
    check_labels,
    check_number,
    check_same_length,
    check_similarities,
    check_texts,
)

#: The unpenalised logistic fit of ``overlap_effect``, by Newton's method (a handful of steps to
#: the maximum, where quasi-Newton lbfgs may stop short on features of unlike scales): tight
#: enough for every printed digit; a fit that has not converged in FIT_ITERATIONS is refused.
FIT_TOLERANCE = 1e-10
FIT_ITERATIONS = 100
#: A fit whose probabilities all lie this close to the outcomes has separated them (no maximum).
SEPARATED = 1e-6
OVERLAP_EFFECT_TERMS = ("intercept", "overlap", "log length")


def threshold_groups(texts, thresholds, n_folds: int = N_FOLDS, ngram: int = 1,
                     stop_words: str | list | None = "english") -> pd.DataFrame:
    """How texts group (``similarity_groups``) at each threshold, and whether folds can keep them whole.

    The lower the threshold, the more pairs link texts, until chains of them join most texts
    into one group (a giant component) larger than a fold: no split into ``n_folds`` folds of
    equal size can then keep every group in one fold. The pairs are found once, at the lowest
    threshold.

    Parameters
    ----------
    texts : sequence of str
    thresholds : sequence of float
        Each in (0, 1].
    n_folds : int
        The folds the groups are meant for.
    ngram : {1, 2, 3}
    stop_words : "english", a list, or None

    Returns
    -------
    DataFrame
        One row per threshold, in increasing order: ``threshold``, ``pairs`` (pairs of texts
        at least that similar), ``groups``, ``largest`` (texts in the largest group), ``fits``
        (whether the largest group fits in a fold of ceil(n / n_folds) texts).

    Raises
    ------
    InputError
        As ``similar_pairs``; ``thresholds`` empty or a threshold not in (0, 1]; ``n_folds``
        not a whole number from 2 to the number of texts.
    """
    texts = check_texts(texts, "texts")
    thresholds = sorted(check_number(t, "threshold", low=0, high=1, low_open=True)
                        for t in check_array(thresholds, "thresholds"))
    fold_size = math.ceil(len(texts) / check_int(n_folds, "n_folds", minimum=2, maximum=len(texts)))
    pairs = similar_pairs(texts, thresholds[0], ngram, stop_words)
    rows = []
    for threshold in thresholds:
        linked = pairs[pairs.similarity >= threshold - SIMILARITY_ROUNDING]
        sizes = np.bincount(_components(linked, len(texts)))
        rows.append({"threshold": threshold, "pairs": len(linked), "groups": len(sizes),
                     "largest": int(sizes.max()), "fits": bool(sizes.max() <= fold_size)})
    return pd.DataFrame(rows)


def overlap_free_folds(texts, labels, threshold: float, n_folds: int = N_FOLDS, ngram: int = 1,
                       stop_words: str | list | None = "english") -> np.ndarray:
    """Folds with no pair of texts at least ``threshold`` similar across them, labels balanced.

    Texts linked by a chain of such pairs (``similarity_groups``) form a group, and each group
    goes whole into one fold, so every text's highest similarity to the other folds' texts is
    below ``threshold``: the paper's overlap-free split, against random folds. The groups are
    assigned by scikit-learn's ``StratifiedGroupKFold``, unshuffled (so deterministic), which
    spreads each label's texts evenly over the folds as far as the groups allow: with many
    small groups the folds are also of near-equal size (the 2,000 reviews at 0.45: 199 to
    201), but a group larger than n / n_folds (``threshold_groups``) makes one fold larger.

    Parameters
    ----------
    texts : sequence of str
    labels : sequence
        Each text's label (two classes at least).
    threshold : float
        In (0, 1].
    n_folds : int
    ngram : {1, 2, 3}
    stop_words : "english", a list, or None

    Returns
    -------
    ndarray of int
        Each text's fold, 0 to n_folds - 1.

    Raises
    ------
    InputError
        As ``similar_pairs``; ``labels`` not one per text or of one class only; ``n_folds``
        not a whole number from 2 to the number of texts, or more than the texts form groups.
    """
    texts, labels = check_texts(texts, "texts"), check_labels(labels, "labels")
    check_same_length(texts=texts, labels=labels)
    if len(set(labels)) < 2:
        raise InputError("labels must hold at least two classes: the folds balance their shares.")
    n_folds = check_int(n_folds, "n_folds", minimum=2, maximum=len(texts))
    groups = similarity_groups(texts, threshold, ngram, stop_words)
    if groups.max() + 1 < n_folds:
        raise InputError(f"At threshold {threshold} the texts form {groups.max() + 1} groups, fewer than "
                         f"n_folds = {n_folds}: raise the threshold or use fewer folds.")
    folds = np.empty(len(texts), dtype=np.int64)
    splits = StratifiedGroupKFold(n_splits=n_folds).split(np.zeros(len(texts)), labels.astype(str), groups)
    for fold, (_, test) in enumerate(splits):
        folds[test] = fold
    return folds


def binned_accuracy(similarity, correct, bins="equal") -> pd.DataFrame:
    """Accuracy per similarity bin, like the paper's Tables 4 and 5.

    Parameters
    ----------
    similarity : array-like
        Each test item's overlap with the training data.
    correct : array-like of bool
        Whether a system got each item right.
    bins : "equal" or "quartiles"
        ``equal``: [0, 0.25), [0.25, 0.5), [0.5, 0.75), [0.75, 1]; ``quartiles``: four bins
        with a quarter of the items each.

    Returns
    -------
    DataFrame
        One row per bin: ``bin``, ``count``, ``share``, ``accuracy``, ``min`` and ``max``
        similarity (empty bins are kept, with NaN accuracy).

    Raises
    ------
    InputError
        ``similarity`` not finite numbers in [0, 1], ``correct`` not True/False or 0/1,
        either empty, of different lengths; ``bins`` unknown.
    """
    similarity = check_similarities(similarity)
    correct = check_binary(correct, "correct").astype(float)
    check_same_length(similarity=similarity, correct=correct)
    codes, labels = bin_codes(similarity, bins)
    frame = pd.DataFrame({"code": codes, "similarity": similarity, "correct": correct})
    table = frame.groupby("code").agg(count=("correct", "size"), accuracy=("correct", "mean"),
                                      min=("similarity", "min"), max=("similarity", "max"))
    table = table.reindex(range(4))
    table["count"] = table["count"].fillna(0).astype(int)
    table.insert(0, "bin", labels)
    table.insert(2, "share", table["count"] / len(similarity))
    return table.reset_index(drop=True)


def overlap_effect(similarity, correct, lengths, confidence: float = 0.95) -> pd.DataFrame:
    """Overlap's effect on correctness at equal length: a logistic regression with Wald tests.

    Longer texts both overlap more with the training texts (they hold more words to share) and
    are classified more accurately (more evidence), so accuracy by overlap bin mixes the two.
    The model separates them:

    log-odds(correct) = b0 + b1 · overlap + b2 · log(length),

    fitted by maximum likelihood without a penalty (Newton's method, to convergence). Each
    coefficient's standard error is the square root of the diagonal of the inverse Fisher
    information (X^T W X)^-1, with W = diag(p (1 - p)); its two-sided p-value is the Wald
    z-test's (z = b / se), its interval b ± z_{(1 + confidence) / 2} · se. b1 is the change in
    log-odds from overlap 0 to 1 at equal length. The items are treated as independent, which
    CV predictions only approximate.

    Parameters
    ----------
    similarity : array-like of float
        Each item's overlap with the training data, in [0, 1].
    correct : array-like of bool
        Whether a system got each item right (both outcomes must occur).
    lengths : array-like of int
        Each item's length in tokens, at least 1.
    confidence : float
        Of the intervals, in (0, 1).

    Returns
    -------
    DataFrame
        One row per term (intercept, overlap, log length): ``coef``, ``se``, ``p_value``,
        ``ci_low``, ``ci_high``.

    Raises
    ------
    InputError
        ``similarity`` not finite numbers in [0, 1]; ``correct`` not True/False or 0/1, or
        all of one value; ``lengths`` not numbers >= 1; any of them empty or of different
        lengths; ``confidence`` not in (0, 1).
    KitError
        The fit did not converge (e.g. overlap and length separate right from wrong items).
    """
    similarity = check_similarities(similarity)
    correct = check_binary(correct, "correct")
    lengths = check_in_range(check_array(lengths, "lengths"), "lengths", 1, np.inf)
    check_same_length(similarity=similarity, correct=correct, lengths=lengths)
    confidence = check_number(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)
    if correct.all() or not correct.any():
        raise InputError("correct must hold both right and wrong items: with one outcome the "
                         "coefficients are infinite.")
    X = np.column_stack([similarity, np.log(lengths)])
    with warnings.catch_warnings(record=True) as caught:  # said below, in words
        warnings.simplefilter("always")
        model = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=FIT_TOLERANCE,
                                   max_iter=FIT_ITERATIONS).fit(X, correct)
    p = model.predict_proba(X)[:, 1]
    # sklearn falls back to lbfgs on a singular Hessian (LinAlgWarning), and may then stop short;
    # items separated by overlap and length have no maximum: the fit just fits them all
    if (model.n_iter_[0] >= FIT_ITERATIONS or np.abs(p - correct).max() < SEPARATED
            or any(issubclass(w.category, (ConvergenceWarning, LinAlgWarning)) for w in caught)):
        raise KitError("overlap_effect's logistic fit did not converge (overlap and length may separate "
                       "right from wrong items, or the lengths be all alike): its coefficients and tests "
                       "would be wrong.")
    coef = np.concatenate([model.intercept_, model.coef_[0]])
    design = np.column_stack([np.ones(len(X)), X])
    se = np.sqrt(np.diag(np.linalg.inv(design.T @ (design * (p * (1 - p))[:, None]))))
    z = norm.ppf((1 + confidence) / 2)
    return pd.DataFrame({"term": OVERLAP_EFFECT_TERMS, "coef": coef, "se": se,
                         "p_value": 2 * norm.sf(np.abs(coef / se)),
                         "ci_low": coef - z * se, "ci_high": coef + z * se})
