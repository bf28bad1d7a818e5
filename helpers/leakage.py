"""Train–test overlap (Elangovan et al., "Memorization vs. Generalization") and stratified evaluation.

For each test text, its overlap is the highest cosine similarity between its n-gram count
vector and any training text's (the paper's Algorithm 1); the mean over the test set is
the overlap score. Items can then be binned by overlap to see whether accuracy rises with
similarity to the training data.

The similarities are computed as sparse products of L2-normalised count matrices, a chunk
of test rows at a time, keeping only each row's running maximum, so memory stays bounded
(no test × train matrix is ever held whole); chunks run in parallel threads.
"""

from __future__ import annotations

import hashlib
import numbers
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize
from tqdm import tqdm

from helpers import settings, storage
from helpers.errors import InputError
from helpers.validation import (
    SIMILARITY_ROUNDING,
    check_binary,
    check_choice,
    check_int,
    check_same_length,
    check_similarities,
    check_table,
    check_texts,
)

NGRAMS = {1: (1, 1), 2: (2, 2), 3: (3, 3)}
EQUAL_BINS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _count_vectors(train_texts, test_texts, ngram: int, stop_words) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """L2-normalised n-gram count vectors over the train ∪ test vocabulary.

    The vocabulary includes test-only n-grams so that each test vector's norm is complete.
    """
    words = stop_words if stop_words is None or isinstance(stop_words, str) else sorted(stop_words)
    vectorizer = CountVectorizer(ngram_range=NGRAMS[ngram], stop_words=words, dtype=np.float32)
    try:
        counts = vectorizer.fit_transform(train_texts + test_texts)
    except ValueError:  # scikit-learn's "empty vocabulary": nothing to compare
        raise InputError(f"The texts share no {ngram}-grams to count: they are empty or hold only stop "
                         "words or punctuation. Give texts with words (or stop_words=None).") from None
    counts = normalize(counts, norm="l2", copy=False).tocsr()
    return counts[: len(train_texts)], counts[len(train_texts):]


def _chunk_max(test_chunk: sp.csr_matrix, train_t: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    similarity = (test_chunk @ train_t).toarray()
    best = similarity.argmax(axis=1)
    return similarity[np.arange(len(best)), best], best


def train_test_overlap(train_texts, test_texts, ngram: int = 1, stop_words: str | list | None = "english",
                       chunk_size: int = 1000, n_jobs: int = -1, progress: bool = True,
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
        Test rows per sparse product (memory: about chunk_size × n_train floats per worker).
    n_jobs : int
        Threads working on chunks (joblib; -1: all cores).
    progress : bool
        Show a progress bar over chunks.
    use_cache : bool
        Read and write ``data/overlap/<key>.npz``, keyed by the texts, ``ngram``,
        ``stop_words`` and scikit-learn's version, and verified by its sha256 on every read.

    Returns
    -------
    DataFrame
        One row per test text: ``similarity`` (max cosine, 0 when nothing is shared) and
        ``train_index`` (position of the most similar training text). Its
        ``similarity.mean()`` is the overlap score.

    Raises
    ------
    InputError
        Texts not a non-empty sequence of strings (a ``None`` or a number is named by
        position), with no words to count; ``ngram`` not 1, 2 or 3; ``stop_words`` not
        "english", a list of str or None; ``chunk_size`` not a whole number >= 1;
        ``n_jobs`` not a whole number other than 0.
    """
    train_texts, test_texts = check_texts(train_texts, "train_texts"), check_texts(test_texts, "test_texts")
    if isinstance(ngram, bool) or not isinstance(ngram, numbers.Integral) or ngram not in NGRAMS:
        raise InputError(f"ngram must be 1 (unigrams), 2 (bigrams only) or 3 (trigrams only), not {ngram!r}.")
    _check_stop_words(stop_words)
    check_int(chunk_size, "chunk_size")
    if check_int(n_jobs, "n_jobs", minimum=-sys.maxsize) == 0:
        raise InputError("n_jobs must not be 0: give the number of threads, or -1 for all cores.")
    cache = _cache_path(train_texts, test_texts, ngram, stop_words) if use_cache else None
    if cache is not None:
        found = storage.load(cache, lambda path: _read_npz(path, len(train_texts), len(test_texts)))
        if found is not None:
            return found
    train, test = _count_vectors(train_texts, test_texts, ngram, stop_words)
    train_t = train.T.tocsr()  # CSR × CSR is the faster sparse product here
    starts = range(0, test.shape[0], chunk_size)
    jobs = (delayed(_chunk_max)(test[s:s + chunk_size], train_t) for s in starts)
    # scipy's sparse product releases the GIL, so threads share the matrices without copies.
    chunks = Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(jobs)
    parts = list(tqdm(chunks, total=len(starts), desc=f"overlap {ngram}-grams", disable=not progress,
                      leave=False))
    found = pd.DataFrame({"similarity": np.concatenate([p[0] for p in parts]).astype(float),
                          "train_index": np.concatenate([p[1] for p in parts])})
    if cache is not None:
        storage.store(cache, lambda tmp: _save_npz(tmp, found))
    return found


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


def _save_npz(path: Path, found: pd.DataFrame) -> None:
    with open(path, "wb") as f:  # a file object: np.savez would append ".npz" to a bare name
        np.savez(f, similarity=found.similarity.to_numpy(), train_index=found.train_index.to_numpy())


def _cache_path(train_texts: Iterable[str], test_texts: Iterable[str], ngram: int,
                stop_words: str | list | None) -> Path:
    digest = hashlib.sha256()
    for texts in (train_texts, test_texts):  # each text with its length: no two inputs share a key
        digest.update(f"|{len(texts)}".encode())
        for text in texts:
            encoded = text.encode("utf-8", "surrogatepass")
            digest.update(f"|{len(encoded)}|".encode() + encoded)
    words = stop_words if stop_words is None or isinstance(stop_words, str) else sorted(stop_words)
    key = storage.key({"artefact": "overlap", "ngram": ngram, "stop_words": words,
                       "texts": digest.hexdigest()}, libraries=["scikit-learn", "scipy"])
    return settings.data_dir() / "overlap" / f"{key}.npz"


def fold_overlap(reviews: pd.DataFrame, ngram: int = 1, **kwargs) -> pd.DataFrame:
    """Overlap of every review with the training folds of its own CV fold (round-robin folds).

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
    folds = reviews.fold.to_numpy()
    similarity, nearest = np.zeros(len(reviews)), np.empty(len(reviews), dtype=object)
    for fold in np.unique(folds):
        train, test = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
        found = train_test_overlap(reviews.text.iloc[train], reviews.text.iloc[test], ngram,
                                   progress=False, **kwargs)
        similarity[test] = found.similarity.to_numpy()
        nearest[test] = reviews.doc_id.to_numpy()[train[found.train_index.to_numpy()]]
    return pd.DataFrame({"doc_id": reviews.doc_id.to_numpy(), "fold": folds,
                         "similarity": similarity, "nearest": nearest})


def bin_codes(similarity: np.ndarray, bins: str = "equal") -> tuple[np.ndarray, list[str]]:
    """Assign each item to one of four similarity bins; return the codes (0–3) and bin labels.

    ``equal``: [0, 0.25), [0.25, 0.5), [0.5, 0.75), [0.75, 1]; ``quartiles``: four bins with
    a quarter of the items each (ties broken by position).

    Raises
    ------
    InputError
        ``similarity`` not a non-empty 1-D array of finite numbers in [0, 1] (two items at
        least for quartiles); ``bins`` unknown.
    """
    check_choice(bins, "bins", ("equal", "quartiles"))
    similarity = check_similarities(similarity)
    if bins == "quartiles" and len(similarity) < 2:
        raise InputError("Quartile bins need at least two items; use bins='equal'.")
    if bins == "equal":
        # The top bin is closed ([0.75, 1]); clip guards against 1.0000001 from float sums.
        codes = np.minimum(np.digitize(np.clip(similarity, 0, 1), EQUAL_BINS[1:-1]), 3)
        return codes, ["[0, 0.25)", "[0.25, 0.5)", "[0.5, 0.75)", "[0.75, 1]"]
    codes = pd.qcut(pd.Series(similarity).rank(method="first"), 4, labels=False).to_numpy()
    return codes, ["Q1", "Q2", "Q3", "Q4"]


def binned_accuracy(similarity, correct, bins="equal") -> pd.DataFrame:
    """Accuracy per similarity bin, like the paper's Tables 4 and 5.

    Parameters
    ----------
    similarity : array-like
        Each test item's overlap with the training data.
    correct : array-like of bool
        Whether a system got each item right.
    bins : "equal" or "quartiles"
        ``equal``: [0, 0.25), [0.25, 0.5), [0.5, 0.75), [0.75, 1]; ``quartiles``: four bins
        with a quarter of the items each.

    Returns
    -------
    DataFrame
        One row per bin: ``bin``, ``count``, ``share``, ``accuracy``, ``min`` and ``max``
        similarity (empty bins are kept, with NaN accuracy).

    Raises
    ------
    InputError
        ``similarity`` not finite numbers in [0, 1], ``correct`` not True/False or 0/1,
        either empty, of different lengths; ``bins`` unknown.
    """
    similarity = check_similarities(similarity)
    correct = check_binary(correct, "correct").astype(float)
    check_same_length(similarity=similarity, correct=correct)
    codes, labels = bin_codes(similarity, bins)
    frame = pd.DataFrame({"code": codes, "similarity": similarity, "correct": correct})
    table = frame.groupby("code").agg(count=("correct", "size"), accuracy=("correct", "mean"),
                                      min=("similarity", "min"), max=("similarity", "max"))
    table = table.reindex(range(4))
    table["count"] = table["count"].fillna(0).astype(int)
    table.insert(0, "bin", labels)
    table.insert(2, "share", table["count"] / len(similarity))
    return table.reset_index(drop=True)
