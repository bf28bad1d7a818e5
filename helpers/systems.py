"""The kit's headline systems, by name: what ``kit results`` reports and notebooks compare.

===============  =============================================================
``nb``           add-one multinomial NB on unigram counts
``nb-presence``  the same on unigram presence
``svm-bow``      LinearSVC on unigram+bigram presence, C by inner CV
``svm-doc2vec``  LinearSVC on PV-DBOW vectors (100-d) inferred for the reviews from a
                 model trained on IMDB (sized by the profile: 10 or 20 epochs)
===============  =============================================================
"""

from __future__ import annotations

import pandas as pd

from helpers import embeddings, evaluation
from helpers.errors import KitError
from helpers.evaluation import C_GRID, BowSystem, System

NAMES = ("nb", "nb-presence", "svm-bow", "svm-doc2vec")


def system(name: str, profile: str | None = None) -> System:
    """The system object for a headline name (Doc2Vec sized for ``profile``)."""
    if name == "nb":
        return BowSystem("nb")
    if name == "nb-presence":
        return BowSystem("nb", binary=True)
    if name == "svm-bow":
        # C = 1 is left out of the grid: the inner CV never picks it for presence features.
        return BowSystem("svm", ngram="uni+bi", binary=True, Cs=C_GRID[:-1])
    if name == "svm-doc2vec":
        return embeddings.Doc2VecSystem((embeddings.config_for(profile),),
                                        workers=embeddings.workers_for(profile))
    raise KitError(f"Unknown system {name!r}; choose from {', '.join(NAMES)}.")


def predictions(name: str, profile: str | None = None, progress: bool = True) -> pd.DataFrame:
    """Cached 10-fold CV predictions of a headline system (computed on first use)."""
    return evaluation.cross_validate(system(name, profile), name=name, progress=progress)


def results_table(names: list[str] | None = None, profile: str | None = None,
                  progress: bool = True) -> pd.DataFrame:
    """The headline table: system, CV accuracy, std and n, recomputing only what is not cached."""
    return pd.DataFrame([evaluation.summarize(predictions(n, profile, progress))
                         for n in names or NAMES])
