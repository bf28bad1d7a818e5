"""Train–test overlap against a brute-force loop, and stratified evaluation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from helpers import data
from helpers.errors import InputError, KitError
from helpers.leakage import bin_codes, binned_accuracy, fold_overlap, train_test_overlap


def brute_force(train, test, ngram):
    """Every test × train pair, one at a time, straight from the definition of cosine."""
    vec = CountVectorizer(ngram_range=(ngram, ngram), stop_words="english").fit(list(train) + list(test))
    A, B = vec.transform(train).toarray().astype(float), vec.transform(test).toarray().astype(float)
    best = []
    for b in B:
        sims = [a @ b / (np.linalg.norm(a) * np.linalg.norm(b)) if a.any() and b.any() else 0.0
                for a in A]
        best.append((max(sims), int(np.argmax(sims))))
    return best


@pytest.mark.parametrize("ngram", [1, 2, 3])
def test_matches_brute_force_on_real_reviews(corpora, ngram):
    imdb = data.load_imdb("test")
    train, test = imdb.text.iloc[:120].tolist(), imdb.text.iloc[12500:12540].tolist()
    test.append(train[7])  # an exact duplicate must score 1 and point at its twin
    found = train_test_overlap(train, test, ngram, chunk_size=7, n_jobs=2, progress=False, use_cache=False)
    expected = brute_force(train, test, ngram)
    np.testing.assert_allclose(found.similarity, [s for s, _ in expected], atol=1e-5)
    assert found.similarity.iloc[-1] == pytest.approx(1.0, abs=1e-5)
    assert found.train_index.iloc[-1] == 7
    distinct = [i for i, (s, _) in enumerate(expected) if s > 0]
    assert (found.train_index.iloc[distinct] == [expected[i][1] for i in distinct]).mean() > 0.95


def test_nothing_shared_gives_zero():
    found = train_test_overlap(["red apples"], ["blue skies", "red apples"], progress=False, n_jobs=1,
                               use_cache=False)
    assert found.similarity.round(6).tolist() == [0.0, 1.0]


def test_bad_arguments():
    with pytest.raises(KitError, match="ngram"):
        train_test_overlap(["a b"], ["a b"], ngram=4)
    with pytest.raises(KitError, match="non-empty"):
        train_test_overlap([], ["a b"])


def test_fold_overlap_uses_only_training_folds(corpora):
    reviews = data.load_movie_reviews()
    small = pd.concat([reviews[reviews.fold == f].head(15) for f in range(3)])
    small = pd.concat([small, small.iloc[[0]].assign(doc_id="copy", fold=1)], ignore_index=True)
    # "copy" is a twin of the first review, in another fold
    found = fold_overlap(small, n_jobs=1, use_cache=False)
    assert found.doc_id.tolist() == small.doc_id.tolist()
    fold_of = small.set_index("doc_id").fold
    assert (found.fold.to_numpy() != fold_of.loc[found.nearest].to_numpy()).all()
    assert found.set_index("doc_id").similarity["copy"] == pytest.approx(1.0, abs=1e-5)


def test_binned_accuracy_equal_bins_and_quartiles():
    similarity = np.array([0.1, 0.2, 0.3, 0.6, 0.75, 1.0, 0.8, 0.9])
    correct = np.array([0, 1, 1, 1, 1, 1, 0, 1])
    table = binned_accuracy(similarity, correct)
    assert table["bin"].tolist() == ["[0, 0.25)", "[0.25, 0.5)", "[0.5, 0.75)", "[0.75, 1]"]
    assert table["count"].tolist() == [2, 1, 1, 4]
    assert table.accuracy.tolist() == [0.5, 1.0, 1.0, 0.75]
    assert table.share.sum() == pytest.approx(1.0)
    quartiles = binned_accuracy(similarity, correct, "quartiles")
    assert quartiles["count"].tolist() == [2, 2, 2, 2]
    assert quartiles["min"].tolist() == [0.1, 0.3, 0.75, 0.9]
    empty = binned_accuracy([0.1, 0.2], [1, 0])
    assert empty["count"].tolist() == [2, 0, 0, 0] and np.isnan(empty.accuracy.iloc[3])


def test_unknown_bins_are_a_clear_error():
    with pytest.raises(KitError, match="bins"):
        binned_accuracy([0.1, 0.9], [True, False], "deciles")


def test_overlap_is_cached_verified_on_read_and_rebuilt_when_corrupt(empty_data_dir):
    train, test = ["a good film", "a bad film", "dull plot"], ["good film", "bad plot"]
    first = train_test_overlap(train, test, progress=False)
    [cache] = (empty_data_dir / "overlap").glob("*.npz")
    assert cache.with_name(cache.name + ".sha256").is_file()
    pd.testing.assert_frame_equal(train_test_overlap(train, test, progress=False), first)

    with open(cache, "wb") as f:  # the file changes, its recorded checksum does not
        np.savez(f, similarity=np.ones(2), train_index=np.zeros(2, dtype=int))
    pd.testing.assert_frame_equal(train_test_overlap(train, test, progress=False), first)
    assert len(list(cache.parent.glob(f"{cache.name}.corrupt-*"))) == 1

    train_test_overlap(train, ["dull film"], progress=False)  # other texts, another entry
    assert len(list((empty_data_dir / "overlap").glob("*.npz"))) == 2
    train_test_overlap(train, test, progress=False, use_cache=False)
    assert len(list((empty_data_dir / "overlap").glob("*.npz"))) == 2


def test_texts_must_be_strings():
    with pytest.raises(KitError, match="must be a string"):
        train_test_overlap(["a good film"], [None], progress=False)


@pytest.mark.parametrize("kwargs, message", [
    ({"train_texts": []}, "train_texts is empty"),
    ({"test_texts": ["fine", None]}, r"test_texts\[1\] is None"),
    ({"train_texts": ["fine", 3]}, r"train_texts\[1\] is 3"),
    ({"train_texts": "one long text"}, "must be a list of texts"),
    ({"chunk_size": 0}, "chunk_size must be at least 1"),
    ({"n_jobs": 0}, "n_jobs must not be 0"),
    ({"n_jobs": 1.5}, "n_jobs must be a whole number"),
    ({"ngram": 0}, "ngram must be 1"),
    ({"ngram": "1"}, "ngram must be 1"),
    ({"ngram": True}, "ngram must be 1"),
    ({"stop_words": "french"}, "stop_words must be 'english'"),
    ({"train_texts": ["the and"], "test_texts": ["of the"]}, "share no 1-grams"),
])
def test_overlap_arguments_are_checked_before_any_work(empty_data_dir, kwargs, message):
    arguments = {"train_texts": ["a good film"], "test_texts": ["a bad film"]} | kwargs
    with pytest.raises(InputError, match=message):
        train_test_overlap(**arguments, progress=False)
    assert not (empty_data_dir / "overlap").exists()


@pytest.mark.parametrize("call, message", [
    (lambda: binned_accuracy([0.1, np.nan], [1, 0]), "NaN"),
    (lambda: binned_accuracy([0.1, 1.5], [1, 0]), r"must lie in \[0, "),
    (lambda: binned_accuracy([0.1, 0.9], [1, 0.5]), "only True/False or 0/1"),
    (lambda: binned_accuracy([0.1, 0.9], [1]), "equal length"),
    (lambda: bin_codes([0.5], "quartiles"), "at least two items"),
    (lambda: bin_codes([], "equal"), "at least 1"),
    (lambda: fold_overlap(pd.DataFrame({"doc_id": ["a"], "text": ["x"]})), r"lacks the column\(s\) fold"),
    (lambda: fold_overlap(pd.DataFrame({"doc_id": ["a"], "fold": [0], "text": ["x"]})), "two folds"),
])
def test_binning_and_fold_arguments_are_checked(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_texts_split_differently_have_different_cache_keys(empty_data_dir):
    joined = train_test_overlap(["good\x01film"], ["dull plot"], progress=False)
    split = train_test_overlap(["good", "film"], ["dull plot"], progress=False)
    assert len(list((empty_data_dir / "overlap").glob("*.npz"))) == 2
    assert len(joined) == len(split) == 1
    assert len(train_test_overlap(["good"], ["dull\x01plot", "film"], progress=False)) == 2
    assert len(train_test_overlap(["good"], ["dull", "plot", "film"], progress=False)) == 3


@pytest.mark.parametrize("stop_words", [("the",), {"the"}, frozenset({"the"}), ["the"]])
def test_stop_words_in_any_collection(stop_words):
    found = train_test_overlap(["the good film"], ["the film"], stop_words=stop_words, progress=False,
                               use_cache=False)
    assert found.similarity.iloc[0] > 0.7
