"""Cross-validation on the 2,000 reviews, and the results store that later notebooks reuse.

Every system is evaluated with the same 10-fold round-robin scheme: a review's fold is
``cv % 10`` (``helpers.data.load_movie_reviews``), about 100 reviews of each class per fold (the
numbers follow no critic: a signed critic's reviews spread over the folds, so test folds
share critics with their training folds, ``helpers.critics``); the 8 near-duplicate pairs each
share one outer fold, so no review is tested by a model trained on its copy (the inner CV's
round-robin groups may still split a pair, which can only sway a choice of C or features,
never reach the test fold). Within each outer fold:

- the vocabulary is built from the nine training folds only (the corpus is counted once, and
  each fold keeps the columns its training folds contain at least ``min_df`` times: the
  same matrix a vectorizer fitted on the training folds would give; tf-idf weights are
  fitted on the training rows);
- an SVM's C is chosen by an inner cross-validation on those training folds (grouped into
  ``inner_folds`` round-robin groups), and so are its features in a ``FeatureChoice``
  (nested cross-validation); the test fold is never looked at until predicting.

Per-review predictions (doc_id, fold, system, prediction, score, correct, C) are cached in
``data/results/<key>.csv``, where the key is a hash of the system's parameters, the folds and
the data's checksum, so notebooks 03 onwards reuse them without retraining.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.model_selection import GridSearchCV, PredefinedSplit
from sklearn.svm import LinearSVC
from tqdm import tqdm

from helpers import data, settings, storage
from helpers.errors import InputError
from helpers.features import make_vectorizer, mark_negation
from helpers.naive_bayes import NaiveBayes
from helpers.nbsvm import NBSVM
from helpers.text import tokenized
from helpers.validation import (
    check_binary,
    check_choice,
    check_int,
    check_labels,
    check_number,
    check_same_length,
    check_table,
)

C_GRID = (0.001, 0.01, 0.1, 1.0)
SVM_MAX_ITER = 10000  # enough for LinearSVC to converge on the kit's features
#: LinearSVC's stopping tolerance (scikit-learn's default) for every model that predicts.
SVM_TOL = 1e-4
#: Choosing C (and features) by inner CV screens first: every candidate is scored with its fits
#: stopped at ``CHOICE_TOL`` (liblinear's own default for its dual solvers is 0.1), and only those
#: within ``SCREEN_MARGIN`` of the best screened accuracy are scored again at ``SVM_TOL``, which
#: decides. Large Cs on separable features converge slowly and are rarely near the best, so this
#: costs a fraction of scoring all at ``SVM_TOL``; a stopped-early fit's accuracy stays within a
#: few reviews of the converged fit's, far inside the margin, so the choice is the one ``SVM_TOL``
#: alone makes (benchmarks/bench_choice_tolerance.py asserts it, and a cold run of the practical
#: gave bit-identical predictions: docs/benchmarks.md). Deciding at ``CHOICE_TOL`` alone changed
#: near ties (one fold of svm-bow, several of the Doc2Vec systems).
CHOICE_TOL = 1e-2
SCREEN_MARGIN = 0.01
#: The sub-folder of ``data/results/`` for the predictions of bag-of-words systems (``BowSystem``,
#: ``FeatureChoice``). They call no BLAS routine (liblinear's solver, scipy's sparse products,
#: numpy's element-wise maths), so they are the same whatever BLAS kernels and threads run
#: (tests/test_evaluation.py compares them under other kernels), so a run that must recompute every
#: BLAS-dependent cache under other kernels may share this folder.
BLAS_FREE = "bow"
PREDICTION_COLUMNS = ["doc_id", "fold", "system", "prediction", "score", "correct", "C"]
#: Cross-validated predictions also say which candidate setting a ``FeatureChoice`` chose in each
#: fold (its position in ``candidates``; -1 for a system that chooses no features).
CHOICE_COLUMN = "setting"
#: The columns of ``fit_predict``'s table, before its ``system`` column (after ``doc_id``).
DEPLOYMENT_COLUMNS = ["doc_id", "label", "prediction", "score", "correct", "C"]


class Classifier(Protocol):
    """A fitted model as the kit uses it: labels, and scores whose sign gives the label."""

    def predict(self, X: Any) -> np.ndarray:
        """The predicted label of each row of ``X``."""

    def decision_function(self, X: Any) -> np.ndarray:
        """A score per row of ``X``: positive means ``pos``."""


class System(Protocol):
    """What ``cross_validate`` and ``fit_predict`` evaluate: ``BowSystem`` and
    ``helpers.embeddings.Doc2VecSystem`` are systems.

    A system represents a table of reviews once, as one matrix; cuts each fold's training and
    test matrices from it, fitting any weighting or scaling on the training rows only; and
    fits its classifier on a training matrix, tuning it (the SVM's C) on that matrix alone.
    """

    def key(self) -> str:
        """A short hash of every parameter: what the cached predictions are filed under."""

    def represent(self, reviews: pd.DataFrame) -> Any:
        """One matrix for all of ``reviews`` (doc_id and text), a row per review."""

    def features(self, matrix: Any, train: np.ndarray, test: np.ndarray) -> tuple[Any, Any]:
        """The training and test matrices of one split, given by row positions."""

    def fit_tuned(self, X: Any, y: np.ndarray) -> tuple[Classifier, float]:
        """The classifier fitted on (X, y) and the C inner CV chose for it (NaN if none)."""


@dataclass(frozen=True)
class BowSystem:
    """A bag-of-words classifier setting: features plus NB or a linear SVM.

    Parameters
    ----------
    classifier : {"nb", "svm", "nbsvm"}
        NB, a linear SVM (C chosen by inner CV), or Wang and Manning's NBSVM (``helpers.nbsvm``,
        the paper's fixed C, β and α: nothing to choose).
    ngram, binary, stemming, min_df, tfidf
        Feature settings (see ``helpers.features.make_vectorizer``).
    negation : bool
        Mark every token between a negation word and the next sentence punctuation with
        ``_NEG`` first (``helpers.features.mark_negation``), so "not good" counts as ``good_NEG``.
    alpha : float
        NB smoothing (1 = add-one, 0 = none).
    Cs : tuple of float
        SVM: the candidate C values; inner CV on the training folds picks one per fold.
    inner_folds : int
        SVM: how many round-robin groups the nine training folds form for the inner CV.
    """

    classifier: str = "nb"
    ngram: str = "unigram"
    binary: bool = False
    stemming: bool = False
    min_df: int = 1
    tfidf: bool = False
    negation: bool = False
    alpha: float = 1.0
    Cs: tuple[float, ...] = C_GRID
    inner_folds: int = 3

    def __post_init__(self) -> None:
        check_choice(self.classifier, "classifier", ("nb", "svm", "nbsvm"))

    def key(self) -> str:
        """A short hash of every parameter: what the cached predictions are filed under."""
        return storage.key({"system": "bow", **asdict(self)})

    def represent(self, reviews: pd.DataFrame) -> sp.csr_matrix:
        """The whole corpus's n-gram counts; ``features`` cuts them per fold."""
        return ngram_counts(reviews, self.ngram, self.stemming, self.negation)

    def features(self, counts: sp.csr_matrix, train: np.ndarray,
                 test: np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """Training and test matrices for one fold, from the corpus's n-gram counts."""
        seen = np.asarray((counts[train] > 0).sum(axis=0)).ravel() >= self.min_df
        X_train, X_test = counts[train][:, seen], counts[test][:, seen]
        if self.binary:
            X_train, X_test = (X_train > 0).astype(float), (X_test > 0).astype(float)
        if self.tfidf:
            weights = TfidfTransformer().fit(X_train)
            X_train, X_test = weights.transform(X_train), weights.transform(X_test)
        return X_train, X_test

    def fit_tuned(self, X: sp.csr_matrix, y: np.ndarray) -> tuple[Classifier, float]:
        """Fit the classifier on a training matrix; for the SVM choose C by inner CV first.

        Returns
        -------
        (model, C)
            The fitted model and the SVM's chosen C (NaN for NB; NBSVM's fixed C).
        """
        if self.classifier == "nb":
            return NaiveBayes(alpha=self.alpha).fit(X, y), np.nan
        if self.classifier == "nbsvm":
            model = NBSVM().fit(X, y)
            return model, float(model.C)
        return fit_svm(X, y, self.Cs, self.inner_folds)


@dataclass(frozen=True)
class _Candidates:
    """One split's matrices for every candidate of a ``FeatureChoice``: the candidates'
    features of the split's rows, and (for training rows) the rows' raw counts, from which
    the inner CV builds each candidate's features again on the inner training rows alone."""

    built: tuple[Any, ...]
    raw: tuple[Any, ...] = ()


@dataclass
class _Chosen:
    """The SVM of the candidate the inner CV chose, predicting from that candidate's features."""

    model: LinearSVC
    candidate: int

    def predict(self, X: _Candidates) -> np.ndarray:
        return self.model.predict(X.built[self.candidate])

    def decision_function(self, X: _Candidates) -> np.ndarray:
        return self.model.decision_function(X.built[self.candidate])


@dataclass(frozen=True)
class FeatureChoice:
    """A linear SVM whose features *and* C are chosen by inner CV on the training folds.

    Nested cross-validation: in each outer fold, every candidate feature setting with every C
    of its grid is scored by ``inner_folds``-fold round-robin CV on the training folds alone,
    each inner split's features (vocabulary, tf-idf weights) built from its inner training rows
    only; the best pair (the first candidate, then the smallest C, on a tie) is refitted on all
    the training folds. The test fold plays no part in any choice, so the CV accuracy is an
    honest estimate of the whole procedure, choice included (notebook 02).

    Parameters
    ----------
    candidates : tuple of BowSystem
        SVM settings to choose from, each with its own grid ``Cs``.
    inner_folds : int
        Round-robin groups of the training rows for the inner CV.
    """

    candidates: tuple[BowSystem, ...]
    inner_folds: int = 3

    def __post_init__(self) -> None:
        if not (isinstance(self.candidates, tuple) and self.candidates and all(
                isinstance(c, BowSystem) and c.classifier == "svm" for c in self.candidates)):
            raise InputError("candidates must be a non-empty tuple of SVM BowSystems.")
        for c in self.candidates:
            if not c.Cs or not all(check_number(C, "C", low=0, low_open=True) for C in c.Cs):
                raise InputError("every candidate needs a non-empty grid Cs of numbers > 0.")
        check_int(self.inner_folds, "inner_folds", minimum=2)

    def key(self) -> str:
        """A short hash of every candidate's key and the inner CV."""
        return storage.key({"system": "feature choice", "candidates": [c.key() for c in self.candidates],
                            "inner": self.inner_folds})

    def represent(self, reviews: pd.DataFrame) -> tuple[sp.csr_matrix, ...]:
        """Every candidate's n-gram counts (counted once per distinct tokenisation)."""
        counted: dict[tuple, sp.csr_matrix] = {}
        for c in self.candidates:
            setting = (c.ngram, c.stemming, c.negation)
            if setting not in counted:
                counted[setting] = c.represent(reviews)
        return tuple(counted[(c.ngram, c.stemming, c.negation)] for c in self.candidates)

    def features(self, matrices: tuple[sp.csr_matrix, ...], train: np.ndarray,
                 test: np.ndarray) -> tuple[_Candidates, _Candidates]:
        """Every candidate's training and test matrices, and the training rows' raw counts."""
        built = [c.features(m, train, test) for c, m in zip(self.candidates, matrices, strict=True)]
        return (_Candidates(tuple(b[0] for b in built), tuple(m[train] for m in matrices)),
                _Candidates(tuple(b[1] for b in built)))

    def inner_scores(self, X: _Candidates, y: np.ndarray, tol: float = SVM_TOL,
                     only: set[tuple[int, float]] | None = None) -> pd.DataFrame:
        """The inner-CV accuracy of every (candidate, C) on one split's training rows, the fits
        stopped at ``tol``; with ``only``, of those (candidate position, C) pairs alone.

        Returns
        -------
        DataFrame
            One row per candidate and C, in order: ``candidate`` (position), ``C``, ``accuracy``.
        """
        y = np.asarray(y)
        group = np.arange(len(y)) % self.inner_folds
        splits = [(np.flatnonzero(group != g), np.flatnonzero(group == g)) for g in range(self.inner_folds)]
        rows = []
        for i, (candidate, raw) in enumerate(zip(self.candidates, X.raw, strict=True)):
            Cs = [C for C in candidate.Cs if only is None or (i, float(C)) in only]
            if not Cs:
                continue
            built = [candidate.features(raw, inner_train, inner_test) for inner_train, inner_test in splits]
            for C in Cs:
                svm = make_svm(C, tol)
                scores = [np.mean(svm.fit(X_in, y[inner_train]).predict(X_out) == y[inner_test])
                          for (X_in, X_out), (inner_train, inner_test) in zip(built, splits, strict=True)]
                rows.append({"candidate": i, "C": float(C), "accuracy": float(np.mean(scores))})
        return pd.DataFrame(rows)

    def choose(self, X: _Candidates, y: np.ndarray, screen: bool = True) -> tuple[int, float]:
        """The (candidate position, C) of the best inner-CV accuracy at ``SVM_TOL`` (the first
        candidate, then the smallest C, on a tie); with ``screen``, among those that pass the
        screening at ``CHOICE_TOL`` (see ``SCREEN_MARGIN``)."""
        only = None
        if screen:
            rough = self.inner_scores(X, y, CHOICE_TOL)
            close = rough[_passes_screening(rough.accuracy.to_numpy())]
            only = set(zip(close.candidate.astype(int), close.C.astype(float), strict=True))
        scores = self.inner_scores(X, y, SVM_TOL, only)
        best = scores.sort_values(["accuracy", "candidate", "C"], ascending=[False, True, True]).iloc[0]
        return int(best.candidate), float(best.C)

    def fit_tuned(self, X: _Candidates, y: np.ndarray) -> tuple[Classifier, float]:
        """The best candidate's SVM, with its C, refitted on all training rows; and that C.

        The fitted model's ``candidate`` is the chosen candidate's position.
        """
        chosen, C = self.choose(X, y)
        return _Chosen(make_svm(C).fit(X.built[chosen], y), chosen), C


def make_svm(C: float = 1.0, tol: float = SVM_TOL) -> LinearSVC:
    """The kit's linear SVM with penalty ``C`` (seeded, iterations enough to converge).

    ``tol`` is the solver's stopping tolerance: ``SVM_TOL`` for a model that predicts,
    ``CHOICE_TOL`` for the screening fits of a choice of C (``SCREEN_MARGIN``).
    """
    return LinearSVC(C=C, tol=tol, random_state=0, max_iter=SVM_MAX_ITER)


def fit_svm(X, y, Cs, inner_folds: int = 3) -> tuple[LinearSVC, float]:
    """Fit a LinearSVC with C chosen by ``inner_folds``-fold CV on (X, y) alone.

    The inner folds are round-robin (row i goes to fold i % inner_folds), as the outer folds
    are: each takes every k-th training row, so both classes are balanced in every group.

    The choice is ``best_C``'s (screened at ``CHOICE_TOL``, decided at ``SVM_TOL``).

    Returns
    -------
    (LinearSVC, float)
        The model refitted on all of (X, y) with the chosen C, and that C.
    """
    C = best_C(X, y, Cs, inner_folds)
    return make_svm(C).fit(X, y), C


def best_C(X, y, Cs, inner_folds: int = 3, screen: bool = True) -> float:
    """The C that ``fit_svm`` chooses: the first of the best mean inner-CV accuracies at
    ``SVM_TOL`` (``inner_cv_accuracy``); with ``screen``, among the Cs within ``SCREEN_MARGIN``
    of the best accuracy at ``CHOICE_TOL``.

    Parameters and errors are ``inner_cv_accuracy``'s.
    """
    Cs = list(Cs)
    if screen:
        passes = _passes_screening(inner_cv_accuracy(X, y, Cs, inner_folds, CHOICE_TOL))
        Cs = [C for C, kept in zip(Cs, passes, strict=True) if kept]
    return float(Cs[int(np.argmax(inner_cv_accuracy(X, y, Cs, inner_folds)))])


def _passes_screening(rough: np.ndarray) -> np.ndarray:
    """Which candidates, by their accuracies at ``CHOICE_TOL``, are scored again at ``SVM_TOL``:
    those within ``SCREEN_MARGIN`` of the best (the one rule of ``best_C`` and
    ``FeatureChoice.choose``)."""
    return rough >= np.max(rough) - SCREEN_MARGIN


def inner_cv_accuracy(X, y, Cs, inner_folds: int = 3, tol: float = SVM_TOL) -> np.ndarray:
    """The mean inner-CV accuracy of the kit's SVM for each C: what ``fit_svm`` chooses from.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        Features of the training rows.
    y : array-like of shape (n,)
        Their labels (two or more classes).
    Cs : sequence of float
        Candidate penalties, each > 0.
    inner_folds : int
        Round-robin groups (row i in group i % inner_folds), at least 2 and at most n.
    tol : float
        The fits' stopping tolerance: ``SVM_TOL``, scikit-learn's default, or ``CHOICE_TOL``
        (``best_C``'s screening).

    Returns
    -------
    ndarray of shape (len(Cs),)
        Per C, in the order given, the accuracy on each held-out group averaged over groups.

    Raises
    ------
    InputError
        ``X`` not 2-D, or not one row per label; fewer than two classes; ``Cs`` empty or a
        C not a number > 0; ``inner_folds`` not a whole number from 2 to n.
    """
    if getattr(X, "ndim", None) != 2:
        raise InputError("X must be a 2-D array or sparse matrix, one row per item.")
    labels = check_labels(y, "y")
    check_same_length(X=range(X.shape[0]), y=labels)
    if len(set(labels)) < 2:
        raise InputError("y must hold at least two classes.")
    Cs = [check_number(C, "C", low=0, low_open=True) for C in Cs]
    if not Cs:
        raise InputError("Cs must hold at least one candidate C.")
    check_int(inner_folds, "inner_folds", minimum=2, maximum=X.shape[0])
    tol = check_number(tol, "tol", low=0, low_open=True)
    inner = PredefinedSplit(np.arange(X.shape[0]) % inner_folds)
    search = GridSearchCV(make_svm(tol=tol), {"C": Cs}, cv=inner, refit=False).fit(X, labels)
    return search.cv_results_["mean_test_score"]


def ngram_counts(reviews: pd.DataFrame, ngram: str, stemming: bool, negation: bool = False) -> sp.csr_matrix:
    """Count the n-grams of every review (columns: the whole corpus's vocabulary)."""
    vectorizer = make_vectorizer(ngram, stemming=stemming)
    documents = tokenized(reviews.text)
    if negation:
        documents = [mark_negation(tokens) for tokens in documents]
    return vectorizer.fit_transform(documents).tocsr()


def _fold(system: System, matrix: Any, labels: np.ndarray, folds: np.ndarray, fold: int) -> pd.DataFrame:
    train, test = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
    X_train, X_test = system.features(matrix, train, test)
    model, C = system.fit_tuned(X_train, labels[train])
    with np.errstate(invalid="ignore"):
        score = model.decision_function(X_test)
    return pd.DataFrame({"index": test, "prediction": model.predict(X_test), "score": score,
                         "C": C, CHOICE_COLUMN: getattr(model, "candidate", -1)})


def cross_validate(system: System, name: str | None = None, reviews: pd.DataFrame | None = None,
                   use_cache: bool = True, progress: bool = True, n_jobs: int = -1) -> pd.DataFrame:
    """Per-review predictions of ``system`` under 10-fold round-robin CV on the 2,000 reviews.

    Parameters
    ----------
    system : System
        What to evaluate (``BowSystem``, ``helpers.embeddings.Doc2VecSystem``).
    name : str, optional
        The ``system`` column's value (default: the system's key).
    reviews : DataFrame, optional
        Default ``helpers.data.load_movie_reviews()``; must have doc_id, fold and label, and
        whatever the system represents (text, for the kit's systems).
        The 2,000 reviews with other folds (notebook 08's overlap-free split) are cached under
        those folds; any other table bypasses the cache.
    use_cache : bool
        Read and write ``data/results/<key>.csv`` (keyed by the system and the folds).
    progress : bool
        Show a progress bar over folds.
    n_jobs : int
        Folds evaluated in parallel (joblib; -1: all cores). Results do not depend on it.

    Returns
    -------
    DataFrame
        One row per review, in the reviews' order: doc_id, fold, system, prediction,
        score (NB log-odds or SVM margin; positive means ``pos``), correct, C (the SVM's
        chosen C, NBSVM's fixed C, NaN for NB), setting (``CHOICE_COLUMN``: the position of
        the candidate a ``FeatureChoice`` chose in the review's fold; -1 for other systems).
    """
    name = name or system.key()
    if reviews is not None:  # the text is the system's to need: a system may represent reviews without it
        check_table(reviews, "reviews", ("doc_id", "fold", "label"))
    ours = data.load_movie_reviews() if (use_cache or reviews is None) else None
    cache = _cache_path(system, reviews, ours) if use_cache else None
    table = ours if reviews is None else reviews
    predictions = storage.cached(cache, lambda: _cross_validated(system, table, name, n_jobs, progress),
                                 lambda found, tmp: found.to_csv(tmp, index=False), _read_predictions)
    return predictions.assign(system=name)


def _cross_validated(system: System, reviews: pd.DataFrame, name: str, n_jobs: int,
                     progress: bool) -> pd.DataFrame:
    """Every review's prediction by the model trained on the other folds (see ``cross_validate``)."""
    matrix = system.represent(reviews)
    labels, folds = reviews.label.to_numpy(), reviews.fold.to_numpy()
    jobs = (delayed(_fold)(system, matrix, labels, folds, fold) for fold in sorted(set(folds)))
    parts = list(tqdm(Parallel(n_jobs=n_jobs, return_as="generator")(jobs), total=len(set(folds)),
                      desc=f"CV {name}", disable=not progress, leave=False))
    found = pd.concat(parts).set_index("index").sort_index()
    return pd.DataFrame({
        "doc_id": reviews.doc_id.to_numpy(), "fold": folds, "system": name,
        "prediction": found.prediction.to_numpy(), "score": found.score.to_numpy(),
        "correct": found.prediction.to_numpy() == labels, "C": found.C.to_numpy(),
        CHOICE_COLUMN: found[CHOICE_COLUMN].to_numpy(),
    }, columns=[*PREDICTION_COLUMNS, CHOICE_COLUMN])


def fit_predict(system: System, train: pd.DataFrame | None = None, test: pd.DataFrame | None = None,
                name: str | None = None, use_cache: bool = True) -> pd.DataFrame:
    """Train ``system`` on ``train`` (default: all 2,000 reviews) and label new reviews.

    The deployment setting: one final model, with the SVM's C chosen by inner CV on the
    training reviews, applied to reviews it has never seen.

    Parameters
    ----------
    system : System
    train : DataFrame, optional
        Training reviews with ``doc_id``, ``label`` and ``text`` (default
        ``helpers.data.load_movie_reviews()``).
    test : DataFrame
        New reviews with ``doc_id`` and ``text``, and ``label`` for scoring.
    name : str, optional
        The ``system`` column's value (default: the system's key).
    use_cache : bool
        Read and write ``data/results/<key>.csv`` when training on the 2,000 reviews (no
        ``train`` given) and the test reviews have labels: keyed by the system and the test
        reviews' ids, labels and texts.

    Returns
    -------
    DataFrame
        One row per test review: doc_id, system, label, prediction, score (positive means
        ``pos``), correct, C.
    """
    if test is None or len(test) == 0:
        raise InputError("fit_predict needs a non-empty table of test reviews.")
    cache = _deployment_path(system, test) if use_cache and train is None and "label" in test else None
    train = data.load_movie_reviews() if train is None else train
    found = storage.cached(cache, lambda: _deployed(system, train, test),
                           lambda table, tmp: table.to_csv(tmp, index=False),
                           lambda path: _read_deployed(path, test))
    found.insert(1, "system", name or system.key())
    return found


def _deployment_path(system: System, test: pd.DataFrame) -> Path:
    """Where ``fit_predict``'s predictions on ``test``, trained on the 2,000 reviews, are cached."""
    key = storage.key({"artefact": "deployment predictions", "system": system.key(),
                       "test": storage.content_digest(test, ["doc_id", "label", "text"])},
                      datasets=["movie_reviews"],
                      libraries=["numpy", "scipy", "scikit-learn", "nltk"])  # nltk: negation, stemming
    return _results_path(system, key)


def _read_deployed(path: Path, test: pd.DataFrame) -> pd.DataFrame | None:
    """Cached deployment predictions, if they have the columns and the test reviews, in order."""
    # pandas' default parser reads back every float to_csv wrote, bit for bit (its
    # float_precision="round_trip" is deprecated); the cache test holds it to that
    table = pd.read_csv(path, dtype={"doc_id": str, "label": str, "prediction": str})
    if list(table.columns) != DEPLOYMENT_COLUMNS or not np.array_equal(table.doc_id, test.doc_id.astype(str)):
        return None
    return table


def _deployed(system: System, train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """Train on ``train``, label ``test`` (see ``fit_predict``); without the system column."""
    both = pd.concat([train[["doc_id", "text"]], test[["doc_id", "text"]]], ignore_index=True)
    matrix = system.represent(both)
    train_rows, test_rows = np.arange(len(train)), np.arange(len(train), len(both))
    X_train, X_test = system.features(matrix, train_rows, test_rows)
    model, C = system.fit_tuned(X_train, train.label.to_numpy())
    prediction = model.predict(X_test)
    label = test.label.to_numpy() if "label" in test else np.full(len(test), None)
    return pd.DataFrame({"doc_id": test.doc_id.to_numpy(), "label": label, "prediction": prediction,
                         "score": model.decision_function(X_test), "correct": prediction == label,
                         "C": np.full(len(test), C, dtype=float)}, columns=DEPLOYMENT_COLUMNS)


def _cache_path(system: System, reviews: pd.DataFrame | None = None,
                ours: pd.DataFrame | None = None) -> Path | None:
    """Where ``system``'s predictions on ``reviews`` (default: the 2,000 reviews and their
    folds, ``ours`` if loaded already) are cached: None for a table that is not the 2,000
    reviews in their order."""
    ours = data.load_movie_reviews() if ours is None else ours
    if reviews is not None and not _same_reviews(reviews, ours):
        return None
    folds = (ours if reviews is None else reviews).fold.to_numpy()  # part of what was evaluated
    key = storage.key({"artefact": "cv predictions", "system": system.key(),
                       "folds": hashlib.sha256(folds.astype(np.int64).tobytes()).hexdigest()},
                      datasets=["movie_reviews"],
                      libraries=["numpy", "scipy", "scikit-learn", "nltk"])  # nltk: negation, stemming
    return _results_path(system, key)


def _results_path(system: System, key: str) -> Path:
    """Where predictions keyed ``key`` of ``system`` are cached: ``data/results/``, or for a
    bag-of-words system its sub-folder ``BLAS_FREE`` (see there)."""
    folder = settings.data_dir() / "results"
    return (folder / BLAS_FREE if isinstance(system, BowSystem | FeatureChoice) else folder) / f"{key}.csv"


def _same_reviews(reviews: pd.DataFrame, ours: pd.DataFrame) -> bool:
    """Whether ``reviews`` holds the 2,000 reviews, in order, with their labels and texts."""
    columns = ["doc_id", "label", "text"]
    return (len(reviews) == len(ours) and set(columns) <= set(reviews.columns)
            and all(np.array_equal(reviews[c].to_numpy(), ours[c].to_numpy()) for c in columns)
            and pd.api.types.is_integer_dtype(reviews.fold))


def _read_predictions(path: Path) -> pd.DataFrame | None:
    """Cached predictions, if they have the columns and one row per review (else None: rebuilt)."""
    table = pd.read_csv(path)
    if list(table.columns) != [*PREDICTION_COLUMNS, CHOICE_COLUMN] or len(table) != data.MOVIE_REVIEWS:
        return None
    return table


def fold_accuracies(predictions: pd.DataFrame) -> pd.Series:
    """Accuracy of each fold.

    Raises
    ------
    InputError
        ``predictions`` is not a non-empty table with fold and correct columns, a fold is
        missing, or ``correct`` holds anything but True/False or 0/1.
    """
    _check_predictions(predictions, ("fold", "correct"))
    return predictions.groupby("fold")["correct"].mean()


def summarize(predictions: pd.DataFrame) -> dict:
    """Headline numbers of one system's CV predictions.

    Returns
    -------
    dict
        ``system``, ``accuracy`` (fraction of all reviews classified correctly; with equal
        folds also the mean of fold accuracies), ``std`` (sample standard deviation of the
        fold accuracies; NaN with a single fold), ``n`` (number of reviews).

    Raises
    ------
    InputError
        As ``fold_accuracies``; also no system column, or predictions of several systems.
    """
    _check_predictions(predictions, ("system", "fold", "correct"))
    systems = predictions.system.unique()
    if len(systems) != 1:
        raise InputError(f"predictions holds several systems ({', '.join(map(str, systems))}): "
                         "summarize one at a time.")
    return {
        "system": str(predictions.system.iloc[0]),
        "accuracy": float(predictions.correct.mean()),
        "std": float(fold_accuracies(predictions).std(ddof=1)),
        "n": int(len(predictions)),
    }


def _check_predictions(predictions: pd.DataFrame, columns: tuple[str, ...]) -> None:
    check_table(predictions, "predictions", columns)
    check_binary(predictions.correct, "predictions.correct")
    if predictions.fold.isna().any():
        raise InputError("predictions has rows without a fold: give cross-validation predictions.")
