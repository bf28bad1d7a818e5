"""Corpus statistics for the data tour."""

import numpy as np
import pandas as pd

from helpers import corpus

REVIEWS = pd.DataFrame({
    "label": ["pos", "pos", "neg"],
    "text": ["a great great film .", "a moving film", "a dull film , dull"],
})


def test_review_lengths():
    assert corpus.review_lengths(REVIEWS).tokens.tolist() == [5, 3, 5]


def test_word_counts_and_top_words():
    counts = corpus.word_counts(REVIEWS)
    assert counts.loc["film"].tolist() == [1, 2, 3]  # neg, pos, total
    assert corpus.top_words(counts, 3).index.tolist() == ["a", "film", "dull"]
    assert corpus.top_words(counts, 2, exclude=frozenset({"a"})).index.tolist() == ["film", "dull"]
    assert "." not in corpus.top_words(counts, 20).index


def test_class_skew_is_the_smoothed_log_ratio():
    counts = corpus.word_counts(REVIEWS)
    skew = corpus.class_skew(counts, min_count=1)
    vocab = len(counts)
    expected = np.log((2 + 1) / (8 + vocab)) - np.log((0 + 1) / (5 + vocab))
    assert skew["great"] == expected
    assert skew.index[0] == "dull" and skew.index[-1] == "great"
    assert "film" not in corpus.class_skew(counts, min_count=4)
