"""Near-duplicates found once (``helpers.overlap``) and kept in one fold (``helpers.data``)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import data, leakage
from helpers.errors import InputError

TEXTS = ["the film was a great joy to watch", "the film was a great joy to watch ;",
         "a dull and boring plot", "a great plot with little else", "a dull and boring plot !"]


def test_similar_pairs_finds_texts_that_differ_in_punctuation_only():
    pairs = leakage.similar_pairs(TEXTS)
    assert list(zip(pairs["first"], pairs["second"], strict=True)) == [(0, 1), (2, 4)]
    assert np.allclose(pairs.similarity, 1.0)
    assert len(leakage.similar_pairs(TEXTS, threshold=0.01)) > len(pairs)


def test_groups_link_chains_and_folds_follow_each_group_s_first_member():
    groups = leakage.similarity_groups(TEXTS)
    assert groups[0] == groups[1] and groups[2] == groups[4] and len(set(groups)) == 3
    folds = leakage.grouped_folds(np.arange(5), groups)
    assert folds.tolist() == [0, 0, 2, 3, 2]


@pytest.mark.parametrize("call, message", [
    (lambda: leakage.similar_pairs(TEXTS, threshold=0), "threshold"),
    (lambda: leakage.similar_pairs(TEXTS, threshold=1.5), "threshold"),
    (lambda: leakage.similar_pairs("one text"), "texts"),
    (lambda: leakage.grouped_folds([0, 1], [0]), "equal length"),
    (lambda: leakage.grouped_folds([0.5, 1], [0, 1]), "whole numbers"),
    (lambda: leakage.grouped_folds([], []), "whole numbers"),
])
def test_bad_input_is_one_clear_error(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_the_reviews_near_duplicates_share_a_fold(corpora):
    reviews = data.load_movie_reviews()
    pairs = leakage.similar_pairs(reviews.text)
    assert len(pairs) == 8 and pairs.similarity.min() > 0.97
    folds = reviews.fold.to_numpy()
    assert (folds[pairs["first"]] == folds[pairs["second"]]).all()
    moved = folds != reviews.cv.to_numpy() % 10
    assert moved.sum() == 8  # one copy of each pair, nothing else
    assert set(np.bincount(folds)) <= set(range(198, 203))
