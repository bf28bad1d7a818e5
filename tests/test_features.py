"""Bag-of-words feature settings."""

import pytest
from nltk.sentiment.util import mark_negation as nltk_mark_negation

from helpers.errors import InputError, KitError
from helpers.features import make_vectorizer, mark_negation, stem_tokens

DOCS = [["a", "good", "good", "film"], ["a", "bad", "film", "film"]]


def test_unigram_counts_and_presence():
    counts = make_vectorizer("unigram")
    X = counts.fit_transform(DOCS).toarray()
    assert list(counts.get_feature_names_out()) == ["a", "bad", "film", "good"]
    assert X.tolist() == [[1, 0, 1, 2], [1, 1, 2, 0]]
    assert make_vectorizer("unigram", binary=True).fit_transform(DOCS).toarray().max() == 1


def test_bigrams_only_and_both():
    assert list(make_vectorizer("bigram").fit(DOCS).get_feature_names_out()) == [
        "a bad", "a good", "bad film", "film film", "good film", "good good"]
    assert len(make_vectorizer("uni+bi").fit(DOCS).get_feature_names_out()) == 4 + 6


def test_cut_off_and_stemming():
    assert list(make_vectorizer(min_df=2).fit(DOCS).get_feature_names_out()) == ["a", "film"]
    assert stem_tokens(["films", "running", "loved"]) == ["film", "run", "love"]
    stemmed = make_vectorizer(stemming=True).fit([["films", "film"]])
    assert list(stemmed.get_feature_names_out()) == ["film"]


def test_tfidf_rows_are_unit_length():
    X = make_vectorizer(tfidf=True).fit_transform(DOCS)
    assert abs((X.multiply(X)).sum(axis=1) - 1).max() < 1e-12


def test_unknown_ngram_setting():
    with pytest.raises(KitError, match="choose one of"):
        make_vectorizer("trigram")


@pytest.mark.parametrize("kwargs, message", [
    ({"ngram": ["unigram"]}, "Unknown ngram setting"),
    ({"min_df": 0}, "min_df must be at least 1"),
    ({"min_df": 0.5}, "min_df must be a whole number"),
    ({"max_features": 0}, "max_features must be at least 1"),
    ({"binary": "yes"}, "binary must be True or False"),
    ({"tfidf": 1}, "tfidf must be True or False"),
])
def test_settings_are_checked_when_the_vectorizer_is_made(kwargs, message):
    with pytest.raises(InputError, match=message):
        make_vectorizer(**kwargs)


def test_mark_negation_is_nltks_and_leaves_its_input_alone():
    tokens = ["i", "didn't", "like", "it", ",", "not", "once", ".", "never", "again", "!", "fine"]
    before = list(tokens)
    marked = mark_negation(tokens)
    assert marked == nltk_mark_negation(list(before)) and tokens == before
    assert marked[:8] == ["i", "didn't", "like_NEG", "it_NEG", ",_NEG", "not_NEG", "once_NEG", "."]
    assert marked[8:] == ["never", "again_NEG", "!", "fine"]


@pytest.mark.parametrize("tokens", ["not good", ["not", 3], [None]])
def test_mark_negation_takes_a_list_of_strings(tokens):
    with pytest.raises(InputError, match="list of strings"):
        mark_negation(tokens)
