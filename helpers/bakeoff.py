"""The class bake-off, the student's side: the rules, what an entry must answer, a dry run.

An entry is notebook 10 (``BAKEOFF_NOTEBOOK``), handed in like the others. It builds the
student's best system and defines ``ENTRY(texts)``: a list of review texts in, one label
(``"pos"`` or ``"neg"``) per text out. The instructor scores every entry once, on reviews no
notebook shows (``kit bakeoff``). Before handing in, ``dry_run`` calls the entry the way the
bake-off will, on reviews the rules let a system train on, and says whether its answer would
be scored and how accurate it was there; ``cross_validate`` estimates a system's accuracy on
what it trains on, each fold's system built anew and scored as an entry is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

from helpers import data
from helpers.errors import InputError
from helpers.significance import accuracy_interval
from helpers.validation import check_int, check_table, check_texts

#: The notebook a student hands in to enter.
BAKEOFF_NOTEBOOK = "10_bakeoff.ipynb"
#: The function it must define.
ENTRY = "predict_sentiment"
LABELS = ("neg", "pos")
#: Reviews of IMDB's train split a dry run labels by default (half of each label).
DRY_RUN_SIZE = 1000
#: Folds ``cross_validate`` makes of a table that has none of its own, and the range allowed.
CV_FOLDS = 5
MIN_FOLDS, MAX_FOLDS = 2, 20
#: The largest seed scikit-learn's shuffles take.
MAX_SEED = 2**32 - 1
RULES = f"""\
A bake-off entry is notebook {BAKEOFF_NOTEBOOK}: it defines {ENTRY}(texts), a list of review
texts in and a list of the same length out, each label "pos" or "neg".
- Train only on the 2,000 reviews (data.load_movie_reviews), IMDB's train and unsup splits
  (data.load_imdb("train"), data.load_imdb("unsup")) and the kit's Doc2Vec models. Never on
  IMDB's test split, which holds the bake-off's films, nor on the deployment sample.
- Choose everything (features, C, epochs) by cross-validation on what you train on: the test
  reviews are scored once, by the instructor, and nobody sees them before.
- The notebook runs from top to bottom in the grading sandbox (no internet, no file of yours
  beside it, at most an hour in all and 20 minutes a cell by default), and then {ENTRY} is
  called once. The sandbox holds only the data above (and the kit's other NLTK corpora):
  code that reads IMDB's test split, the training corpora (embeddings.imdb_vectors) or the
  notebooks' tables stops there with an error."""


def as_labels(answer: object) -> object:
    """An entry's answer made JSON: a list of strings when it is a sequence (a list, tuple,
    array or Series), else a description of what it is (``{"returned": "dict"}``)."""
    if _described(answer):  # made so already (in the kernel, before it crossed to the grader)
        return answer
    if isinstance(answer, (str, bytes, dict)) or not hasattr(answer, "__iter__"):
        return {"returned": type(answer).__name__}
    items = answer.tolist() if hasattr(answer, "tolist") else list(answer)
    if not isinstance(items, list):  # a 0-d array: one value, not a sequence
        return {"returned": type(answer).__name__}
    return [str(item) if isinstance(item, str) else repr(item)[:40] for item in items]


def _described(answer: object) -> TypeGuard[dict[str, str]]:
    """Whether ``answer`` is ``as_labels``' description of an answer that is not a sequence."""
    return type(answer) is dict and set(answer) == {"returned"} and type(answer["returned"]) is str


def checked_labels(answer: object, n: int) -> tuple[tuple[str, ...] | None, str]:
    """``(labels, "")`` when ``answer`` (``as_labels``' output) holds ``n`` labels, each
    ``pos`` or ``neg``; else ``(None, why it cannot be scored)``."""
    if not isinstance(answer, list):
        kind = answer["returned"] if _described(answer) else type(answer).__name__
        return None, f"{ENTRY} returned a {kind}, not a list of labels"
    if len(answer) != n:
        return None, f"{ENTRY} returned {len(answer)} label{'s' * (len(answer) != 1)} for {n} reviews"
    others = sorted({str(label) for label in answer} - set(LABELS))
    if others:
        shown = ", ".join(repr(label) for label in others[:3])
        return None, f"{ENTRY} returned labels other than 'pos' and 'neg' ({shown})"
    return tuple(answer), ""


@dataclass(frozen=True)
class DryRun:
    """How an entry did on a dry run: accuracy with its Wilson 95 % interval, on ``n`` reviews."""

    accuracy: float
    low: float
    high: float
    n: int

    def __str__(self) -> str:
        return (f"dry run on {self.n:,} IMDB train reviews: accuracy {100 * self.accuracy:.1f} % "
                f"(95 % interval {100 * self.low:.1f} to {100 * self.high:.1f})")


def dry_run(predict: Callable, n: int = DRY_RUN_SIZE, seed: int = 0) -> DryRun:
    """Call ``predict`` as the bake-off will, on ``n`` seeded IMDB train reviews, and score it.

    The reviews are ones the rules let a system train on, so this checks that the entry
    answers in a form the bake-off scores; its accuracy is an estimate of the bake-off's only
    for a system that did not train on IMDB's train split.

    Raises
    ------
    InputError
        If ``predict`` is not callable, ``n`` is not an even number from 2 to 25,000, or the
        answer could not be scored (the line says why, as the bake-off would).
    """
    if not callable(predict):
        raise InputError(f"predict must be your {ENTRY} function, not {type(predict).__name__}.")
    check_int(n, "n", 2, 25_000)
    if n % 2:
        raise InputError(f"n must be even (half the reviews of each label), not {n}.")
    reviews = data.load_imdb("train").groupby("label", group_keys=False).sample(n // 2, random_state=seed)
    labels, problem = checked_labels(as_labels(predict(reviews.text.tolist())), n)
    if labels is None:
        raise InputError(f"The bake-off could not score this entry: {problem}.")
    accuracy, low, high = accuracy_interval([label == truth for label, truth in zip(labels, reviews.label,
                                                                                      strict=True)])
    return DryRun(accuracy, low, high, n)


@dataclass(frozen=True)
class Estimate:
    """A system's cross-validated accuracy.

    Attributes
    ----------
    accuracy : float
        The share of all ``n`` reviews labelled right, each by the fold's system that did not
        train on it.
    low, high : float
        Wilson's 95 % interval around it, which treats the ``n`` reviews as independent tests
        of one system: they were labelled by one system per fold, and reviews of one film or
        critic go together, so the true uncertainty is wider (the folds' spread shows some).
    n : int
        Reviews labelled.
    folds : tuple of float
        Each fold's accuracy, in the order the folds were made.
    """

    accuracy: float
    low: float
    high: float
    n: int
    folds: tuple[float, ...]

    def __str__(self) -> str:
        return (f"cross-validation on {self.n:,} reviews, {len(self.folds)} folds: accuracy "
                f"{100 * self.accuracy:.2f} % (Wilson 95 % interval {100 * self.low:.1f} to "
                f"{100 * self.high:.1f}, as if the reviews were independent; folds from "
                f"{100 * min(self.folds):.1f} to {100 * max(self.folds):.1f})")


#: ``build(texts, labels)``: trains a system, returns its ``predict_sentiment``.
Builder = Callable[[list[str], list[str]], Callable[[list[str]], object]]


def cross_validate(build: Builder, reviews: pd.DataFrame, folds: int = CV_FOLDS, seed: int = 0) -> Estimate:
    """Estimate the accuracy of the system ``build`` makes, by cross-validation on ``reviews``.

    For each fold, ``build(texts, labels)`` trains a system on the other folds' reviews and
    returns its ``predict_sentiment``; that is called once on the fold's texts and its answer
    checked as the bake-off checks an entry's. The estimate is for reviews like ``reviews``
    (the 2,000 reviews come tokenised and lower-cased, IMDB's as raw text): the bake-off's
    are IMDB reviews of films none of these is about.

    Parameters
    ----------
    build : callable
        ``build(texts, labels) -> predict_sentiment``, both lists of str.
    reviews : DataFrame
        ``text`` and ``label`` (``pos``/``neg``). Its own ``fold`` column, if it has one, gives
        the folds (the 2,000 reviews' ten, ``data.load_movie_reviews``); else ``folds``
        stratified folds, with every film's reviews in one when it has ``movie_id`` (IMDB's
        tables, ``data.load_imdb``), so that no film is both trained on and tested.
    folds : int
        Folds to make (``MIN_FOLDS`` to ``MAX_FOLDS``) when ``reviews`` has no ``fold`` column.
    seed : int
        The shuffle of the reviews into those folds (0 to 2**32 - 1).

    Returns
    -------
    Estimate
        The accuracy over every review, its Wilson interval, and each fold's accuracy.

    Raises
    ------
    InputError
        Before anything is trained: if ``build`` is not callable, ``folds`` or ``seed`` is
        out of range, ``reviews`` lacks a column, a text is not a string, a label is not
        ``pos`` or ``neg``, a fold is missing or there are fewer than two, there are fewer
        reviews of a label (or films) than folds, or a fold's training reviews hold one
        label. While training: if ``build`` returns no function, or its function an answer
        the bake-off could not score.
    """
    if not callable(build):
        raise InputError(f"build must be a function that trains a system and returns its {ENTRY}, "
                         f"not {type(build).__name__}.")
    check_int(folds, "folds", MIN_FOLDS, MAX_FOLDS)
    check_int(seed, "seed", 0, MAX_SEED)
    texts, labels = _checked_reviews(reviews)
    splits = _folds(reviews, labels, folds, seed)
    correct = np.zeros(len(texts), dtype=bool)
    for train, test in splits:
        correct[test] = _scored_fold(build, texts, labels, train, test)
    accuracy, low, high = accuracy_interval(correct)
    return Estimate(accuracy, low, high, len(texts), tuple(float(correct[test].mean()) for _, test in splits))


def _checked_reviews(reviews: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """The texts and labels of ``reviews``, refused in one line if they cannot be scored."""
    check_table(reviews, "reviews", ("text", "label"), min_rows=MIN_FOLDS)
    texts = check_texts(reviews.text, "reviews.text")
    labels = reviews.label.to_numpy(dtype=object)
    others = sorted({repr(label) for label in labels if not (isinstance(label, str) and label in LABELS)})
    if others:
        raise InputError(f"reviews.label must be 'pos' or 'neg', not {', '.join(others[:3])}.")
    return texts, labels.astype(str).astype(object)


def _scored_fold(build: Builder, texts: list[str], labels: np.ndarray, train: np.ndarray,
                 test: np.ndarray) -> np.ndarray:
    """Whether each of ``test``'s reviews was labelled right by the system built on ``train``'s."""
    predict = build([texts[i] for i in train], [labels[i] for i in train])
    if not callable(predict):
        raise InputError(f"build must return the system's {ENTRY} function, not {type(predict).__name__}.")
    answer, problem = checked_labels(as_labels(predict([texts[i] for i in test])), len(test))
    if answer is None:
        raise InputError(f"The bake-off could not score this system: {problem}.")
    return np.asarray(answer, dtype=object) == labels[test]


def _folds(reviews: pd.DataFrame, labels: np.ndarray, folds: int,
           seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) positions of each fold: the table's own folds, else stratified ones,
    grouped by film where the table names them."""
    if "fold" in reviews.columns:
        splits = _given_folds(reviews.fold)
    else:
        if min(np.sum(labels == label) for label in LABELS) < folds:
            raise InputError(f"reviews must hold at least {folds} reviews of each label for {folds} folds.")
        stratified = labels.astype(str)
        if "movie_id" in reviews.columns:
            films = _films(reviews)
            named = len(set(films))
            if named < folds:
                raise InputError(f"reviews name {named} films (movie_id): "
                                 f"{folds} folds need at least {folds}.")
            splitter = StratifiedGroupKFold(folds, shuffle=True, random_state=seed)
            splits = list(splitter.split(np.zeros(len(labels)), stratified, films))
        else:
            splitter = StratifiedKFold(folds, shuffle=True, random_state=seed)
            splits = list(splitter.split(np.zeros(len(labels)), stratified))
    if any(len(set(labels[train])) < 2 for train, _ in splits):
        raise InputError("A fold's training reviews hold only one label: give more reviews, or fewer folds.")
    return splits


def _given_folds(fold: pd.Series) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) positions of each fold a table names in its ``fold`` column."""
    if fold.isna().any():
        missing = int(fold.isna().sum())
        raise InputError(f"reviews.fold is missing for {missing} review(s): give each review its fold.")
    given = fold.to_numpy()
    names = pd.unique(given)
    if len(names) < MIN_FOLDS:
        raise InputError(f"reviews.fold must name at least {MIN_FOLDS} folds.")
    return [(np.flatnonzero(given != name), np.flatnonzero(given == name)) for name in names]


def _films(reviews: pd.DataFrame) -> np.ndarray:
    """Each review's film, as a string; a review without one is a film of its own."""
    return np.array([f"film {film}" if pd.notna(film) else f"review {i}"
                     for i, film in enumerate(reviews.movie_id)], dtype=object)
