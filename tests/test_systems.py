"""The headline systems' declared C grids and the scale that centres them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from helpers import systems
from helpers.errors import InputError
from helpers.evaluation import BowSystem

#: Each grid: five powers of ten, from a tenth to a thousand times the feature's scale.
GRID_DECADES = np.arange(-1, 4)


def test_feature_scale_is_one_over_the_mean_squared_length():
    texts = ["good good film .", "a bad , bad , bad film ."]
    reviews = pd.DataFrame({"doc_id": ["a", "b"], "text": texts})
    counts = CountVectorizer(token_pattern=r"\S+").fit_transform(texts)
    # the kit's tokeniser keeps punctuation as tokens; lengths are sqrt(4 + 1 + 1) and sqrt(1 + 9 + 4 + 1 + 1)
    squared = np.asarray(counts.multiply(counts).sum(axis=1)).ravel()
    assert systems.feature_scale(BowSystem("svm"), reviews) == pytest.approx(1 / squared.mean())
    assert systems.feature_scale(BowSystem("svm", tfidf=True), reviews) == pytest.approx(1.0)


@pytest.mark.slow
def test_every_grid_follows_the_declared_rule(corpora):
    for name, setting in systems.SVM_FEATURES.items():
        centre = round(np.log10(systems.feature_scale(setting)))
        assert setting.Cs == pytest.approx(tuple(10.0 ** (centre + GRID_DECADES))), name


def test_feature_scale_refuses_what_is_not_a_setting():
    with pytest.raises(InputError, match="setting must be a BowSystem"):
        systems.feature_scale("unigram presence")
