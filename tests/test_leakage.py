"""Train–test overlap against a brute-force loop, and stratified evaluation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.stats import norm
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from helpers import data
from helpers.errors import InputError, KitError
from helpers.leakage import (
    binned_accuracy,
    overlap_effect,
    overlap_free_folds,
    threshold_groups,
)
from helpers.overlap import _count_vectors, _Words, fold_overlap, near_copies, train_test_overlap
from helpers.significance import bin_codes


def brute_force(train, test, ngram):
    """Every test × train pair, one at a time, straight from the definition of cosine."""
    vec = CountVectorizer(ngram_range=(ngram, ngram), stop_words="english").fit(list(train) + list(test))
    A, B = vec.transform(train).toarray().astype(float), vec.transform(test).toarray().astype(float)
    best = []
    # 15,000 dot products of vocabulary-long vectors: OpenBLAS splits each over its threads, and
    # with the other core busy each call waits for it (46 s against 0.8 s in one thread, measured
    # beside a CI run; 118 s in one)
    with threadpool_limits(1):
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
    found = train_test_overlap(train, test, ngram, chunk_size=7, progress=False, use_cache=False)
    expected = brute_force(train, test, ngram)
    np.testing.assert_allclose(found.similarity, [s for s, _ in expected], atol=1e-5)
    assert found.similarity.iloc[-1] == pytest.approx(1.0, abs=1e-5)
    assert found.train_index.iloc[-1] == 7
    distinct = [i for i, (s, _) in enumerate(expected) if s > 0]
    assert (found.train_index.iloc[distinct] == [expected[i][1] for i in distinct]).mean() > 0.95


def test_near_copies_finds_every_training_text_near_any_test_text(corpora):
    """Not only the nearest: a test review copied twice (lightly edited once) marks both copies."""
    imdb = data.load_imdb("test")
    train, test = imdb.text.iloc[:150].tolist(), imdb.text.iloc[12500:12530].tolist()
    train[10], train[90] = test[3], test[3] + " zebra"  # a copy, and a copy with a word added
    found = near_copies(train, test, threshold=0.9, chunk_size=7, progress=False)
    vectors = CountVectorizer(stop_words="english").fit(train + test)
    expected = cosine_similarity(vectors.transform(train), vectors.transform(test)).max(axis=1) >= 0.9
    assert found.dtype == bool and found.tolist() == expected.tolist()
    assert found[10] and found[90] and found.sum() >= 2
    assert not near_copies(train, test, threshold=1.0, progress=False)[90]


@pytest.mark.parametrize("kwargs, message", [
    ({"threshold": 0}, "threshold must be"),
    ({"threshold": 1.5}, "threshold must be"),
    ({"ngram": 4}, "ngram must be 1"),
    ({"test_texts": []}, "test_texts"),
])
def test_near_copies_arguments_are_checked(kwargs, message):
    with pytest.raises(InputError, match=message):
        near_copies(**({"train_texts": ["a good film"], "test_texts": ["a bad film"]} | kwargs))


def sklearn_overlap(train, test, ngram, stop_words="english", chunk=5):
    """What the kit must equal bit for bit: scikit-learn's counts and cosine_similarity, chunk by chunk."""
    words = stop_words if stop_words is None or isinstance(stop_words, str) else sorted(stop_words)
    counts = CountVectorizer(ngram_range=(ngram, ngram), stop_words=words,
                             dtype=np.float32).fit_transform(list(train) + list(test))
    train_counts, test_counts = counts[:len(train)], counts[len(train):]
    best, where = [], []
    for start in range(0, len(test), chunk):
        similarity = cosine_similarity(test_counts[start:start + chunk], train_counts)
        best.append(similarity.max(axis=1))
        where.append(similarity.argmax(axis=1))
    return np.concatenate(best).astype(float), np.concatenate(where)


@pytest.mark.parametrize("ngram, stop_words", [(1, "english"), (2, "english"), (3, "english"), (1, None),
                                               (2, ["film", "movie", "the"])])
def test_bit_identical_to_scikit_learn(corpora, ngram, stop_words):
    imdb = data.load_imdb("train")
    train, test = imdb.text.iloc[:300].tolist(), imdb.text.iloc[12500:12560].tolist()
    test += [train[3], "", "the and of", train[5][:40]]  # a twin, nothing to count, stop words only, a start
    found = train_test_overlap(train, test, ngram, stop_words, chunk_size=7, progress=False, use_cache=False)
    similarity, nearest = sklearn_overlap(train, test, ngram, stop_words)
    assert found.similarity.to_numpy().tobytes() == similarity.tobytes()
    assert found.train_index.tolist() == nearest.tolist()


def test_counts_are_count_vectorizers_in_its_storage_order(corpora):
    texts = data.load_movie_reviews().text.iloc[:40].tolist() + ["Good, GOOD film!", "", "a an the"]
    for ngram in (1, 2, 3):
        train, test = _count_vectors(_Words.of(texts, "english"), 30, ngram)
        ours = sp.vstack([train, test]).tocsr()
        expected = normalize(CountVectorizer(ngram_range=(ngram, ngram), stop_words="english",
                                             dtype=np.float32).fit_transform(texts))
        assert ours.shape == expected.shape
        assert np.array_equal(ours.indptr, expected.indptr)
        assert ours.data.tobytes() == expected.data.tobytes()
        # the same columns up to their numbering: a one-to-one map from ours to scikit-learn's
        columns = dict(zip(ours.indices.tolist(), expected.indices.tolist(), strict=True))
        assert len(set(columns.values())) == len(columns) == ours.shape[1]
        assert [columns[c] for c in ours.indices] == expected.indices.tolist()


def test_words_of_reordered_texts_are_the_words_of_the_texts_reordered():
    texts = ["a good film", "", "bad film, bad plot", "plot twist"]
    order = np.array([3, 0, 2, 1])
    moved, fresh = _Words.of(texts, None).texts(order), _Words.of([texts[i] for i in order], None)
    assert moved.starts.tolist() == fresh.starts.tolist() == [0, 2, 4, 8, 8]
    renamed = dict(zip(moved.ids.tolist(), fresh.ids.tolist(), strict=True))
    assert len(set(renamed.values())) == len(renamed) == 5  # plot, twist, good, film, bad
    assert [renamed[i] for i in moved.ids.tolist()] == fresh.ids.tolist()


def test_nothing_shared_gives_zero():
    found = train_test_overlap(["red apples"], ["blue skies", "red apples"], progress=False, use_cache=False)
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
    found = fold_overlap(small, use_cache=False)
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
    ({"chunk_size": 1.5}, "chunk_size must be a whole number"),
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


# --- Similarity groups at several thresholds, and overlap-free folds -------------------------------

# Two near-copies (0 ~ 2), a chain at a lower threshold (3 ~ 4 ~ 5) and texts alike in nothing
# (near-duplicates themselves: tests/test_folds.py).
CHAINED = ["red apples and green pears", "blue skies over calm seas", "red apples and green pears !",
           "cold winter night frost", "cold winter night snow", "winter night snow storm",
           "loud music bright lights", "quiet library old books"]


def test_threshold_groups_count_pairs_groups_and_whether_the_largest_fits_a_fold():
    table = threshold_groups(CHAINED, [0.9, 0.5], n_folds=4)
    assert table.threshold.tolist() == [0.5, 0.9]  # in increasing order
    assert table.pairs.tolist() == [4, 1]
    assert table.groups.tolist() == [5, 7]
    assert table.largest.tolist() == [3, 2]
    assert table.fits.tolist() == [False, True]  # folds of 8 / 4 = 2 texts


def test_overlap_free_folds_keep_similar_texts_together_and_labels_balanced():
    texts = CHAINED + [f"alpha{i} beta{i}" for i in range(12)]  # and 12 texts alike in nothing
    labels = np.array(["pos", "neg", "neg", "pos", "neg", "pos", "pos", "neg"] + ["pos", "neg"] * 6)
    folds = overlap_free_folds(texts, labels, 0.5, n_folds=4)
    assert folds[0] == folds[2] and folds[3] == folds[4] == folds[5]
    counts = pd.crosstab(folds, labels)
    assert len(counts) == 4 and (counts.max() - counts.min()).max() <= 1  # each label spread evenly
    assert overlap_free_folds(texts, labels, 0.5, n_folds=4).tolist() == folds.tolist()  # deterministic
    reviews = pd.DataFrame({"doc_id": [str(i) for i in range(20)], "fold": folds, "text": texts})
    assert fold_overlap(reviews, use_cache=False).similarity.max() < 0.5


@pytest.mark.parametrize("call, message", [
    (lambda: overlap_free_folds(CHAINED, ["pos"] * 7, 0.5, n_folds=2), "equal length"),
    (lambda: overlap_free_folds(CHAINED, ["pos"] * 8, 0.5, n_folds=2), "two classes"),
    (lambda: overlap_free_folds(CHAINED, ["pos", "neg"] * 4, 1.5, n_folds=2), r"threshold must be in \(0"),
    (lambda: overlap_free_folds(CHAINED, ["pos", "neg"] * 4, 0.5, n_folds=1), "n_folds must be at least 2"),
    (lambda: overlap_free_folds(CHAINED, ["pos", "neg"] * 4, 0.1, n_folds=6), "fewer than n_folds"),
    (lambda: threshold_groups(CHAINED, []), "at least 1"),
    (lambda: threshold_groups(CHAINED, [0.5, 0.0]), r"threshold must be in \(0"),
    (lambda: threshold_groups(CHAINED, [0.5], n_folds=9), "n_folds must be at most 8"),
])
def test_fold_arguments_are_checked(call, message):
    with pytest.raises(InputError, match=message):
        call()


def newton_logistic(X, y, steps=50):
    """Unpenalised logistic regression by Newton's method, straight from the likelihood."""
    design = np.column_stack([np.ones(len(X)), X])
    beta = np.zeros(design.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-design @ beta))
        information = design.T @ (design * (p * (1 - p))[:, None])
        beta = beta + np.linalg.solve(information, design.T @ (y - p))
    return beta, np.sqrt(np.diag(np.linalg.inv(information)))


def test_overlap_effect_is_the_maximum_likelihood_fit_with_wald_tests():
    rng = np.random.default_rng(0)
    similarity, lengths = rng.uniform(0.1, 0.7, 400), rng.integers(50, 1500, 400)
    log_odds = -1 + 2 * similarity + 0.3 * np.log(lengths)
    correct = rng.uniform(size=400) < 1 / (1 + np.exp(-log_odds))
    table = overlap_effect(similarity, correct, lengths)
    beta, se = newton_logistic(np.column_stack([similarity, np.log(lengths)]), correct)
    assert table.term.tolist() == ["intercept", "overlap", "log length"]
    np.testing.assert_allclose(table.coef, beta, rtol=1e-5)
    np.testing.assert_allclose(table.se, se, rtol=1e-5)
    z = beta / se
    np.testing.assert_allclose(table.p_value, 2 * (1 - norm.cdf(np.abs(z))), rtol=1e-5)
    np.testing.assert_allclose(table.ci_high - table.coef, 1.959964 * se, rtol=1e-5)


@pytest.mark.parametrize("kwargs, message", [
    ({"correct": [1, 1, 1]}, "both right and wrong"),
    ({"lengths": [10, 0, 5]}, r"lengths must lie in \[1"),
    ({"similarity": [0.1, 0.2]}, "equal length"),
    ({"confidence": 1.0}, r"confidence must be in \(0"),
])
def test_overlap_effect_arguments_are_checked(kwargs, message):
    arguments = {"similarity": [0.1, 0.2, 0.3], "correct": [1, 0, 1], "lengths": [10, 20, 30]} | kwargs
    with pytest.raises(InputError, match=message):
        overlap_effect(**arguments)


@pytest.mark.parametrize("lengths", [[120, 80, 300, 95, 210, 60, 150, 400], [100] * 8])
def test_overlap_effect_refuses_a_fit_that_has_not_converged(lengths):
    # overlap alone separates right from wrong (the likelihood grows without bound), or the
    # lengths are all alike (log length is the intercept again)
    similarity = np.array([0.1, 0.15, 0.2, 0.25, 0.5, 0.55, 0.6, 0.65])
    with pytest.raises(KitError, match="did not converge"):
        overlap_effect(similarity, similarity > 0.3, lengths)
