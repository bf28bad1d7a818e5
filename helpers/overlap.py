"""Train–test overlap and near-duplicates: the n-gram cosine that the kit's folds and notebook 08 use.

For each test text, its overlap is the highest cosine similarity between its n-gram count
vector and any training text's (Elangovan et al., "Memorization vs. Generalization",
Algorithm 1); the mean over the test set is the overlap score.

The similarities are sparse products of L2-normalised count matrices, a chunk of test rows
at a time into one reused buffer, keeping only each row's maximum, so memory stays bounded
(no test × train matrix is ever held whole). The product is scikit-learn's
(``sparse_matmul_to_dense``, what ``cosine_similarity`` runs), in one thread: it holds the
GIL, and threads running scipy's slower product instead spent more CPU than they saved in
wall time (``benchmarks/bench_leakage.py``).

The counts are scikit-learn's ``CountVectorizer``'s, bit for bit, at a fraction of its cost:
each text is tokenised once by the vectoriser's own preprocessor, tokeniser and stop list,
its words become integer ids, and every n-gram an exact int64 code (no n-gram strings are
built); columns are numbered by first appearance, the order in which ``CountVectorizer``
stores each row's counts. That order is the order in which the product adds up each cosine
in float32, so the similarities are scikit-learn's to the last bit (the benchmark asserts it
on IMDB, the tests on real reviews).

Near-duplicates: ``similar_pairs`` finds every pair of texts at least a threshold similar,
``similarity_groups`` joins chains of them and ``grouped_folds`` keeps each group in one fold
(``helpers.data``'s folds); ``near_copies`` finds the training texts near any test text (what
the Doc2Vec corpus leaves out). Notebook 08's analysis of overlap (overlap-free folds,
accuracy by overlap, the effect of overlap at equal length) is ``helpers.leakage``, which
``helpers.data`` does not import.
"""

from __future__ import annotations

import array
import hashlib
import numbers
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from itertools import filterfalse
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize
from sklearn.utils.sparsefuncs import sparse_matmul_to_dense
from tqdm import tqdm

from helpers import settings, storage
from helpers.errors import InputError
from helpers.validation import (
    SIMILARITY_ROUNDING,
    check_int,
    check_number,
    check_same_length,
    check_table,
    check_texts,
)

NGRAMS = {1: (1, 1), 2: (2, 2), 3: (3, 3)}
#: Test rows per product: a buffer of CHUNK_SIZE × n_train float32 (25 MB for IMDB's 25,000).
CHUNK_SIZE = 250
#: Two texts are near-duplicates when the cosine of their unigram counts (English stop words
#: removed, as in ``train_test_overlap``) is at least this: the same review filed twice, lightly
#: edited. In the 2,000 reviews it finds 8 pairs (cosine 0.977 to 1.000; 3 to 69 tokens
#: differ); the next most similar pair of distinct reviews has 0.751 (notebook 08).
NEAR_DUPLICATE = 0.9
#: Cross-validation folds: a review's round-robin fold is ``cv % N_FOLDS`` (``helpers.data``).
N_FOLDS = 10


@dataclass(frozen=True)
class _Words:
    """Texts' words as integer ids: every text's, one text after another.

    Words are found as ``CountVectorizer`` finds them (its own preprocessor, tokeniser and
    stop list), so the counts made from them are its counts.
    """

    ids: np.ndarray
    starts: np.ndarray  # where each text's words start; one more entry, the total

    @classmethod
    def of(cls, texts: list[str], stop_words) -> _Words:
        vectorizer = CountVectorizer(stop_words=_stop_list(stop_words))
        preprocess, tokenize = vectorizer.build_preprocessor(), vectorizer.build_tokenizer()
        is_stop = (vectorizer.get_stop_words() or frozenset()).__contains__
        word_ids: defaultdict[str, int] = defaultdict()
        word_ids.default_factory = word_ids.__len__  # a new word gets the next number
        ids, starts = array.array("q"), array.array("q", [0])
        for text in texts:  # map and filterfalse keep the loop over words in C
            ids.extend(map(word_ids.__getitem__, filterfalse(is_stop, tokenize(preprocess(text)))))
            starts.append(len(ids))
        return cls(np.frombuffer(ids, dtype=np.int64), np.frombuffer(starts, dtype=np.int64))

    def texts(self, order: np.ndarray) -> _Words:
        """The same words with the texts in ``order`` (positions of texts)."""
        lengths = np.diff(self.starts)[order]
        starts = np.concatenate([[0], np.cumsum(lengths)])
        position = np.arange(starts[-1]) - np.repeat(starts[:-1] - self.starts[order], lengths)
        return _Words(self.ids[position], starts)


def _ngram_columns(words: _Words, ngram: int) -> tuple[np.ndarray, np.ndarray]:
    """Each n-gram occurrence's text and column; columns are numbered by first appearance.

    An n-gram is coded exactly as an int64: its first n - 1 words' code (renumbered densely,
    so that it stays below the number of words) times the number of distinct words, plus its
    last word's id. Occurrences that would span two texts are dropped.
    """
    ids = words.ids
    text_of = np.repeat(np.arange(len(words.starts) - 1), np.diff(words.starts))
    n_starts = max(len(ids) - ngram + 1, 0)
    distinct = int(ids.max()) + 1 if len(ids) else 1
    codes = ids[:n_starts]
    for offset in range(1, ngram):
        if offset > 1:
            codes = pd.factorize(codes)[0]
        codes = codes * distinct + ids[offset:offset + n_starts]
    within = text_of[:n_starts] == text_of[ngram - 1:ngram - 1 + n_starts]
    return text_of[:n_starts][within], pd.factorize(codes[within])[0]


def _count_vectors(words: _Words, n_train: int, ngram: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """L2-normalised n-gram count vectors of the training texts and of the test texts after them.

    The vocabulary includes test-only n-grams so that each test vector's norm is complete.
    Equal to ``CountVectorizer(ngram_range=(ngram, ngram), stop_words=...,
    dtype=np.float32).fit_transform(train_texts + test_texts)``, normalised, up to the
    numbering of the columns; each row's counts are stored in the same order.
    """
    text_of, columns = _ngram_columns(words, ngram)
    if not len(columns):
        raise InputError(f"The texts share no {ngram}-grams to count: they are empty or hold only stop "
                         "words or punctuation. Give texts with words (or stop_words=None).")
    counts = sp.csr_matrix((np.ones(len(columns), dtype=np.float32), (text_of, columns)),
                           shape=(len(words.starts) - 1, int(columns.max()) + 1))
    counts.sum_duplicates()  # and sorts each row's columns: by first appearance, as CountVectorizer
    counts = normalize(counts, norm="l2", copy=False)
    return counts[:n_train], counts[n_train:]


def _nearest(words: _Words, n_train: int, ngram: int, chunk_size: int, progress: bool) -> pd.DataFrame:
    """Each test text's highest similarity to a training text, and the first training text reaching it."""
    train, test = _count_vectors(words, n_train, ngram)
    train_t = train.T.tocsr()
    # scikit-learn's sparse product into a dense buffer, reused for every chunk
    buffer = np.empty((min(chunk_size, test.shape[0]), n_train), dtype=np.float32)
    similarity, nearest = np.empty(test.shape[0]), np.empty(test.shape[0], dtype=np.int64)
    for start in tqdm(range(0, test.shape[0], chunk_size), desc=f"overlap {ngram}-grams",
                      disable=not progress, leave=False):
        chunk = test[start:start + chunk_size]
        product = sparse_matmul_to_dense(chunk, train_t, out=buffer[:chunk.shape[0]])
        best = product.argmax(axis=1)
        similarity[start:start + len(best)] = product[np.arange(len(best)), best]
        nearest[start:start + len(best)] = best
    return pd.DataFrame({"similarity": similarity, "train_index": nearest})


def train_test_overlap(train_texts, test_texts, ngram: int = 1, stop_words: str | list | None = "english",
                       chunk_size: int = CHUNK_SIZE, progress: bool = True,
                       use_cache: bool = True) -> pd.DataFrame:
    """For each test text, its highest cosine similarity to any training text, and which.

    Parameters
    ----------
    train_texts, test_texts : sequences of str
    ngram : {1, 2, 3}
        Unigrams, bigrams only, or trigrams only.
    stop_words : "english", a list, or None
        Removed before counting (scikit-learn's English list by default, as in the paper).
    chunk_size : int
        Test rows per sparse product (memory: chunk_size × n_train float32).
    progress : bool
        Show a progress bar over chunks.
    use_cache : bool
        Read and write ``data/overlap/<key>.npz``, keyed by the texts, ``ngram``,
        ``stop_words`` and scikit-learn's version, and verified by its sha256 on every read.

    Returns
    -------
    DataFrame
        One row per test text: ``similarity`` (max cosine, 0 when nothing is shared) and
        ``train_index`` (position of the most similar training text; the first of equals).
        Its ``similarity.mean()`` is the overlap score.

    Raises
    ------
    InputError
        Texts not a non-empty sequence of strings (a ``None`` or a number is named by
        position), with no words to count; ``ngram`` not 1, 2 or 3; ``stop_words`` not
        "english", a list of str or None; ``chunk_size`` not a whole number >= 1.
    """
    train_texts, test_texts = check_texts(train_texts, "train_texts"), check_texts(test_texts, "test_texts")
    _check_overlap_arguments(ngram, stop_words, chunk_size)
    return _cached(train_texts, test_texts, ngram, stop_words, use_cache,
                   lambda: _nearest(_Words.of(train_texts + test_texts, stop_words), len(train_texts), ngram,
                                    chunk_size, progress))


def near_copies(train_texts, test_texts, threshold: float = NEAR_DUPLICATE, ngram: int = 1,
                stop_words: str | list | None = "english", chunk_size: int = CHUNK_SIZE,
                progress: bool = True) -> np.ndarray:
    """Which training texts are at least ``threshold`` similar to some test text.

    The similarity is ``train_test_overlap``'s; where that finds each test text's *nearest*
    training text, this finds *every* training text near any test text: what a training
    corpus must leave out so that no test text is seen in a near copy.

    Parameters
    ----------
    train_texts, test_texts : sequences of str
    threshold : float
        In (0, 1]; ``NEAR_DUPLICATE`` by default, the kit's one definition of a near-duplicate.
    ngram : {1, 2, 3}
    stop_words : "english", a list, or None
    chunk_size : int
        Test rows per sparse product (memory: chunk_size × len(train_texts) float32).
    progress : bool
        Show a progress bar over chunks.

    Returns
    -------
    ndarray of bool, one per training text

    Raises
    ------
    InputError
        As ``train_test_overlap``; ``threshold`` not a number in (0, 1].
    """
    train_texts, test_texts = check_texts(train_texts, "train_texts"), check_texts(test_texts, "test_texts")
    threshold = check_number(threshold, "threshold", low=0, high=1, low_open=True)
    _check_overlap_arguments(ngram, stop_words, chunk_size)
    train, test = _count_vectors(_Words.of(train_texts + test_texts, stop_words), len(train_texts), ngram)
    train_t = train.T.tocsr()
    buffer = np.empty((min(chunk_size, test.shape[0]), len(train_texts)), dtype=np.float32)
    near = np.zeros(len(train_texts), dtype=bool)
    for start in tqdm(range(0, test.shape[0], chunk_size), desc=f"near copies, {ngram}-grams",
                      disable=not progress, leave=False):
        chunk = test[start:start + chunk_size]
        product = sparse_matmul_to_dense(chunk, train_t, out=buffer[:chunk.shape[0]])
        # float32 sums may put a copy just under a threshold it equals: round as the checks do
        near |= (product >= threshold - SIMILARITY_ROUNDING).any(axis=0)
    return near


def _check_overlap_arguments(ngram, stop_words, chunk_size) -> None:
    if isinstance(ngram, bool) or not isinstance(ngram, numbers.Integral) or ngram not in NGRAMS:
        raise InputError(f"ngram must be 1 (unigrams), 2 (bigrams only) or 3 (trigrams only), not {ngram!r}.")
    _check_stop_words(stop_words)
    check_int(chunk_size, "chunk_size")


def _cached(train_texts: list[str], test_texts: list[str], ngram: int, stop_words, use_cache: bool,
            compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """The overlap from the cache, or ``compute()``d and stored."""
    path = _cache_path(train_texts, test_texts, ngram, stop_words) if use_cache else None
    return storage.cached(path, compute, lambda found, tmp: _save_npz(tmp, found),
                          lambda stored: _read_npz(stored, len(train_texts), len(test_texts)))


def _read_npz(path: Path, n_train: int, n_test: int) -> pd.DataFrame | None:
    """A cached overlap, if it has a row per test text and valid training positions."""
    with np.load(path, allow_pickle=False) as stored:
        found = pd.DataFrame({"similarity": stored["similarity"], "train_index": stored["train_index"]})
    fits = len(found) == n_test and found.train_index.between(0, n_train - 1).all()
    return found if fits and found.similarity.between(0, 1 + SIMILARITY_ROUNDING).all() else None


def _check_stop_words(stop_words) -> None:
    listed = isinstance(stop_words, (list, tuple, set, frozenset)) and all(
        isinstance(word, str) for word in stop_words)
    if not (stop_words is None or stop_words == "english" or listed):
        raise InputError(f"stop_words must be 'english', a list of words or None, not {stop_words!r}.")


def _stop_list(stop_words: str | list | None) -> str | list | None:
    """``stop_words`` as scikit-learn takes them (a list, sorted), and as the cache key records them."""
    return stop_words if stop_words is None or isinstance(stop_words, str) else sorted(stop_words)


def _save_npz(path: Path, found: pd.DataFrame) -> None:
    with open(path, "wb") as f:  # a file object: np.savez would append ".npz" to a bare name
        np.savez(f, similarity=found.similarity.to_numpy(), train_index=found.train_index.to_numpy())


def _cache_path(train_texts: Sequence[str], test_texts: Sequence[str], ngram: int,
                stop_words: str | list | None) -> Path:
    digest = hashlib.sha256()
    for texts in (train_texts, test_texts):  # each text with its length: no two inputs share a key
        digest.update(f"|{len(texts)}".encode())
        for text in texts:
            encoded = text.encode("utf-8", "surrogatepass")
            digest.update(f"|{len(encoded)}|".encode() + encoded)
    key = storage.key({"artefact": "overlap", "ngram": ngram, "stop_words": _stop_list(stop_words),
                       "texts": digest.hexdigest()}, libraries=["scikit-learn", "scipy"])
    return settings.data_dir() / "overlap" / f"{key}.npz"


def fold_overlap(reviews: pd.DataFrame, ngram: int = 1, stop_words: str | list | None = "english",
                 chunk_size: int = CHUNK_SIZE, use_cache: bool = True) -> pd.DataFrame:
    """Overlap of every review with the training folds of its own CV fold (round-robin folds).

    Each fold's overlap is ``train_test_overlap`` of its reviews with the other folds' (and is
    cached as such); the reviews are tokenised once for all folds.

    Returns
    -------
    DataFrame
        In the reviews' order: ``doc_id``, ``fold``, ``similarity``, ``nearest`` (doc_id of
        the most similar review in the training folds).

    Raises
    ------
    InputError
        ``reviews`` is not a table with doc_id, fold and text columns, or has fewer than two
        folds (a fold's training reviews are the other folds); see ``train_test_overlap``.
    """
    check_table(reviews, "reviews", ("doc_id", "fold", "text"))
    if reviews.fold.nunique() < 2:
        raise InputError("reviews must span at least two folds: each fold is compared with the others.")
    texts = check_texts(reviews.text, "reviews.text")
    _check_overlap_arguments(ngram, stop_words, chunk_size)
    words = cache(partial(_Words.of, texts, stop_words))  # tokenised when a fold is not cached
    folds = reviews.fold.to_numpy()
    similarity, nearest = np.zeros(len(reviews)), np.empty(len(reviews), dtype=object)
    for fold in np.unique(folds):
        train, test = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
        compute = partial(_nearest_in_order, words, np.concatenate([train, test]), len(train), ngram,
                          chunk_size)
        found = _cached([texts[i] for i in train], [texts[i] for i in test], ngram, stop_words, use_cache,
                        compute)
        similarity[test] = found.similarity.to_numpy()
        nearest[test] = reviews.doc_id.to_numpy()[train[found.train_index.to_numpy()]]
    return pd.DataFrame({"doc_id": reviews.doc_id.to_numpy(), "fold": folds,
                         "similarity": similarity, "nearest": nearest})


def _nearest_in_order(words: Callable[[], _Words], order: np.ndarray, n_train: int, ngram: int,
                      chunk_size: int) -> pd.DataFrame:
    """``_nearest`` of the texts taken in ``order``: the first ``n_train`` of them are the training texts."""
    return _nearest(words().texts(order), n_train, ngram, chunk_size, progress=False)


def similar_pairs(texts, threshold: float = NEAR_DUPLICATE, ngram: int = 1,
                  stop_words: str | list | None = "english") -> pd.DataFrame:
    """Every pair of texts whose n-gram cosine similarity is at least ``threshold``.

    The similarity is ``train_test_overlap``'s (L2-normalised n-gram counts), taken between
    every two texts of one collection.

    Parameters
    ----------
    texts : sequence of str
    threshold : float
        In (0, 1]; ``NEAR_DUPLICATE`` finds the same text filed twice.
    ngram : {1, 2, 3}
    stop_words : "english", a list, or None

    Returns
    -------
    DataFrame
        One row per pair, ``first`` < ``second`` (positions in ``texts``) and ``similarity``,
        most similar first.

    Raises
    ------
    InputError
        As ``train_test_overlap``; ``threshold`` not a number in (0, 1].
    """
    texts = check_texts(texts, "texts")
    threshold = check_number(threshold, "threshold", low=0, high=1, low_open=True)
    _check_overlap_arguments(ngram, stop_words, CHUNK_SIZE)
    vectors, _ = _count_vectors(_Words.of(texts, stop_words), len(texts), ngram)
    product = sp.triu(vectors @ vectors.T, k=1).tocoo()
    # float32 sums may put a pair just under 1.0 or a threshold it equals: round as the checks do
    keep = product.data >= threshold - SIMILARITY_ROUNDING
    pairs = pd.DataFrame({"first": product.row[keep], "second": product.col[keep],
                          "similarity": np.minimum(product.data[keep].astype(float), 1.0)})
    return pairs.sort_values(["similarity", "first", "second"], ascending=[False, True, True],
                             ignore_index=True)


def similarity_groups(texts, threshold: float = NEAR_DUPLICATE, ngram: int = 1,
                      stop_words: str | list | None = "english") -> np.ndarray:
    """Group texts linked by a chain of pairs at least ``threshold`` similar (``similar_pairs``).

    Parameters
    ----------
    texts : sequence of str
    threshold : float
        In (0, 1].
    ngram : {1, 2, 3}
    stop_words : "english", a list, or None

    Returns
    -------
    ndarray of int, one per text
        A group number per text: texts share one when a chain of similar pairs links them
        (connected components); a text similar to no other has a group of its own.

    Raises
    ------
    InputError
        As ``similar_pairs``.
    """
    texts = check_texts(texts, "texts")
    return _components(similar_pairs(texts, threshold, ngram, stop_words), len(texts))


def _components(pairs: pd.DataFrame, n: int) -> np.ndarray:
    """The group number of each of ``n`` texts, linked by ``pairs`` (``similar_pairs``)."""
    links = sp.coo_matrix((np.ones(len(pairs)), (pairs["first"], pairs["second"])), shape=(n, n))
    return connected_components(links, directed=False)[1]


def grouped_folds(folds, groups) -> np.ndarray:
    """Move every member of a group into the fold of the group's first member.

    So that near-duplicates (``similarity_groups``) are never split between a training and a
    test fold: no test text is classified by a model trained on its own copy.

    Parameters
    ----------
    folds : array-like of int
        Each item's fold before grouping.
    groups : array-like of int
        Each item's group (``similarity_groups``).

    Returns
    -------
    ndarray of int
        The folds, each group's members in one fold.

    Raises
    ------
    InputError
        ``folds`` or ``groups`` empty, of other lengths, or not whole numbers.
    """
    folds, groups = np.asarray(folds), np.asarray(groups)
    if not all(a.ndim == 1 and len(a) and np.issubdtype(a.dtype, np.integer) for a in (folds, groups)):
        raise InputError("folds and groups must be non-empty 1-D arrays of whole numbers, one per item.")
    check_same_length(folds=folds, groups=groups)
    first = pd.Series(np.arange(len(groups))).groupby(groups).transform("min").to_numpy()
    return folds[first]
