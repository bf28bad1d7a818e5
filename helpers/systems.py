"""The kit's headline systems, by name: what ``kit results`` reports and notebooks compare.

===============  =============================================================
``nb``           add-one multinomial NB on unigram counts
``nb-presence``  the same on unigram presence
``svm-bow``      LinearSVC on bag-of-words features, the features (one of
                 ``SVM_FEATURES``) and C both chosen by inner CV on the training folds
``nbsvm``        Wang and Manning's NBSVM on uni+bi presence (``helpers.nbsvm``: an SVM on
                 features scaled by NB log-count ratios, the paper's C, β and α)
``svm-doc2vec``  LinearSVC on PV-DBOW vectors (100-d) inferred for the reviews from a
                 model trained on all IMDB reviews but the deployment sample (10
                 epochs, one worker; the full profile: 20 epochs, all cores)
===============  =============================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helpers import data, embeddings, evaluation, leaderboard
from helpers.errors import InputError, KitError
from helpers.evaluation import BowSystem, FeatureChoice, System
from helpers.validation import check_choice

NAMES = ("nb", "nb-presence", "svm-bow", "nbsvm", "svm-doc2vec")
#: One rule sets every C grid: five powers of ten, from a tenth to a thousand times the feature's
#: scale. The scale is 1 / (the mean squared length of a review's feature vector over the 2,000
#: reviews), to the nearest power of ten: LinearSVC's C weighs hinge losses whose size grows with a
#: vector's length, so one C regularises long count vectors far less than unit-length tf-idf rows.
#: Scales (label-free, ``feature_scale``): unigram frequency 1/9,033 (1e-4), unigram presence 1/346
#: (1e-3), uni+bi presence 1/1,012 (1e-3), tf-idf 1 (unit rows). A first rule, a hundredth to a
#: hundred times the scale, put uni+bi tf-idf's choice at its top (C = 100) in 10 of 10 folds; this
#: one was set after that count, before any other. Notebook 02 prints how often each C was chosen,
#: and how often at a grid's edge.
SVM_FEATURES = {
    "unigram frequency": BowSystem("svm", Cs=(1e-5, 1e-4, 1e-3, 1e-2, 1e-1)),
    "unigram presence": BowSystem("svm", binary=True, Cs=(1e-4, 1e-3, 1e-2, 1e-1, 1.0)),
    "unigram tf-idf": BowSystem("svm", tfidf=True, Cs=(0.1, 1.0, 10.0, 100.0, 1000.0)),
    "uni+bi presence": BowSystem("svm", ngram="uni+bi", binary=True, Cs=(1e-4, 1e-3, 1e-2, 1e-1, 1.0)),
    "uni+bi tf-idf": BowSystem("svm", ngram="uni+bi", tfidf=True, Cs=(0.1, 1.0, 10.0, 100.0, 1000.0)),
}


def feature_scale(setting: BowSystem, reviews: pd.DataFrame | None = None) -> float:
    """Where a feature's C grid is centred: 1 / the mean squared length of a review's vector.

    Parameters
    ----------
    setting : BowSystem
        An SVM feature setting (``SVM_FEATURES``' values).
    reviews : DataFrame, optional
        Reviews with ``doc_id`` and ``text``; the 2,000 reviews by default. Labels are not read.

    Raises
    ------
    InputError
        If ``setting`` is not a BowSystem.
    """
    if not isinstance(setting, BowSystem):
        raise InputError(f"setting must be a BowSystem, not {type(setting).__name__}.")
    reviews = data.load_movie_reviews() if reviews is None else reviews
    rows = np.arange(len(reviews))
    X, _ = setting.features(setting.represent(reviews), rows, rows[:1])
    return float(1 / np.asarray(X.multiply(X).sum(axis=1)).mean())


def system(name: str, profile: str | None = None) -> System:
    """The system object for a headline name (Doc2Vec sized for ``profile``).

    Raises
    ------
    InputError
        If ``name`` is not one of ``NAMES``.
    """
    check_choice(name, "name", NAMES)
    if name == "nb":
        return BowSystem("nb")
    if name == "nb-presence":
        return BowSystem("nb", binary=True)
    if name == "svm-bow":
        return FeatureChoice(tuple(SVM_FEATURES.values()))
    if name == "nbsvm":
        return BowSystem("nbsvm", ngram="uni+bi", binary=True)
    if name == "svm-doc2vec":
        return embeddings.Doc2VecSystem((embeddings.config_for(profile),),
                                        workers=embeddings.workers_for(profile))
    raise KitError(f"systems.NAMES lists {name!r}, which systems.system() does not make: add it there.")


def predictions(name: str, profile: str | None = None, progress: bool = True) -> pd.DataFrame:
    """Cached 10-fold CV predictions of a headline system (computed on first use)."""
    return evaluation.cross_validate(system(name, profile), name=name, progress=progress)


def results_table(names: list[str] | None = None, profile: str | None = None,
                  progress: bool = True) -> pd.DataFrame:
    """The headline table: system, CV accuracy, std and n, recomputing only what is not cached."""
    return pd.DataFrame([evaluation.summarize(predictions(n, profile, progress))
                         for n in names or NAMES])


def ranked(names: list[str] | None = None, profile: str | None = None, progress: bool = True,
           alpha: float | None = None) -> leaderboard.Leaderboard:
    """Every headline system (or ``names``) on the same 10 folds, ranked by
    ``leaderboard.leaderboard``: Wilson intervals, a paired permutation test for every pair,
    Holm-corrected, and ranks that separate only significant differences. The CV predictions
    are the cached ones (computed on first use)."""
    names = names or list(NAMES)
    return leaderboard.leaderboard({name: predictions(name, profile, progress).correct.to_numpy()
                                    for name in names}, alpha=alpha)
