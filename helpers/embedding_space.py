"""What a vector space encodes: similarity within and across groups, and linear probes.

- ``unit_rows``, ``centered``: cosine geometry (rows of length 1; vectors relative to their
  mean, which removes the large component Doc2Vec vectors share).
- ``grouping_similarity`` against ``random_pair_similarity``: are items of a group (a film,
  a polarity) closer to each other than to others?
- Probes, logistic regressions reading a property from the vectors:
  ``order_probe`` (does training order leak into document vectors?) and
  ``word_polarity_probe`` (do word vectors separate positive from negative words?).
- ``document_word_similarity``: are documents closer to their most decisive words?
- ``tsne_map``: a 2-D t-SNE map of vectors (scikit-learn's), computed once and cached.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.manifold import TSNE
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from helpers import settings, storage
from helpers.errors import InputError, KitError
from helpers.text import tokenize
from helpers.validation import (
    MAX_DRAWS,
    check_array,
    check_int,
    check_labels,
    check_lexicon,
    check_number,
    check_same_length,
    check_texts,
)

if TYPE_CHECKING:  # for annotations only: the probes take a trained model, they never import gensim
    from gensim.models import Doc2Vec

PROBE_MAX_ITER = 2000  # enough for the probes' logistic regressions to converge
PROBE_FOLDS = 5
TSNE_PERPLEXITY = 30.0  # scikit-learn's default


def _vectors(vectors, name: str = "vectors", min_rows: int = 1) -> np.ndarray:
    return check_array(vectors, name, ndim=2, min_rows=min_rows)


def _seed(seed) -> int:
    return check_int(seed, "seed", minimum=0)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero): dot products become cosines.

    Parameters
    ----------
    vectors : array-like of shape (n, d)
        Finite numbers, n >= 1, d >= 1.

    Returns
    -------
    ndarray of shape (n, d)

    Raises
    ------
    InputError
        Not a non-empty 2-D array of finite numbers.
    """
    vectors = _vectors(vectors)
    # Each row is divided by its largest |value| first, so huge or tiny rows keep their norm finite.
    largest = np.abs(vectors).max(axis=1, keepdims=True)
    scaled = np.divide(vectors, largest, out=np.zeros_like(vectors), where=largest > 0)
    norms = np.linalg.norm(scaled, axis=1, keepdims=True)
    return np.divide(scaled, norms, out=np.zeros_like(vectors), where=norms > 0)


def grouping_similarity(vectors: np.ndarray, groups, n_anchors: int | None = None,
                        center: bool = False, seed: int = 0) -> pd.DataFrame:
    """Cosine similarity of items to a random member of their own group and of another group.

    For each anchor item that shares its group with at least one other item, draw (seeded)
    one other item of the same group and one item of a different group. The two
    similarities form a pair per anchor, so ``helpers.significance.permutation_test`` can
    test whether within-group pairs are closer than across-group pairs.

    Parameters
    ----------
    vectors : ndarray of shape (n, d)
    groups : array-like of shape (n,)
        A group label per item (film id, polarity, …); missing values (None/NaN) are left out.
    n_anchors : int, optional
        Use a random sample of this many anchors (default: all eligible items).
    center : bool
        Subtract the mean vector first: cosines then measure directions relative to the
        average document, not to the origin (see ``centered``).

    Returns
    -------
    DataFrame
        anchor (row index into ``vectors``), within, across (cosine similarities).

    Raises
    ------
    InputError
        ``vectors`` not a 2-D array of finite numbers; ``groups`` not one label per vector;
        fewer than two groups or no group with two items; ``n_anchors`` not None or a whole
        number >= 1; ``seed`` < 0.
    """
    vectors = _vectors(vectors)
    groups = pd.Series(check_labels(groups, "groups"))
    if len(groups) != len(vectors):
        raise InputError(f"{len(groups)} group labels for {len(vectors)} vectors.")
    if n_anchors is not None:
        check_int(n_anchors, "n_anchors")
    _seed(seed)
    known = groups.notna().to_numpy()
    codes = np.full(len(groups), -1)
    codes[known] = pd.factorize(groups[known])[0]
    sizes = np.bincount(codes[known])
    eligible = np.flatnonzero(known & (sizes[np.maximum(codes, 0)] >= 2))
    if len(eligible) == 0 or len(sizes) < 2:
        raise InputError("Need at least two groups and one group with two or more items.")
    rng = np.random.default_rng(seed)
    if n_anchors is not None and n_anchors < len(eligible):
        eligible = np.sort(rng.choice(eligible, n_anchors, replace=False))
    members = {g: np.flatnonzero(codes == g) for g in np.unique(codes[eligible])}
    labelled = np.flatnonzero(known)
    # per group, how many items of other groups come before each member (in ``labelled``'s
    # order): the k-th item outside the group is then found by a binary search
    before = {g: np.searchsorted(labelled, mates) - np.arange(len(mates)) for g, mates in members.items()}
    drawn = []
    for i in eligible:
        mates = members[codes[i]]
        mate = mates[mates != i][rng.integers(len(mates) - 1)]
        k = rng.integers(len(labelled) - len(mates))  # the k-th labelled item of another group
        drawn.append((mate, labelled[k + np.searchsorted(before[codes[i]], k, side="right")]))
    mates, others = np.array(drawn, dtype=np.intp).reshape(-1, 2).T
    unit, (at_anchor, at_mate, at_other) = _unit_rows_drawn(vectors, [eligible, mates, others], center)
    within = [unit[i] @ unit[j] for i, j in zip(at_anchor, at_mate, strict=True)]
    across = [unit[i] @ unit[j] for i, j in zip(at_anchor, at_other, strict=True)]
    return pd.DataFrame({"anchor": eligible, "within": within, "across": across})


def _unit_rows_drawn(vectors: np.ndarray, drawn: list[np.ndarray], center: bool
                     ) -> tuple[np.ndarray, list[np.ndarray]]:
    """``unit_rows`` of only the rows ``drawn`` names (of ``centered(vectors)`` if ``center``),
    each once, and where each of ``drawn``'s indices is among them: row by row and in the same
    memory order, so the numbers are those of scaling every row (a table has 100,000)."""
    rows, where = np.unique(np.concatenate(drawn), return_inverse=True)
    picked = vectors[rows] - vectors.mean(axis=0) if center else vectors[rows]
    if vectors.flags.f_contiguous and not vectors.flags.c_contiguous:
        picked = np.asfortranarray(picked)  # np.linalg.norm sums a row in another order
    return unit_rows(picked), np.split(where, np.cumsum([len(part) for part in drawn])[:-1])


def centered(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` minus their mean vector.

    Doc2Vec vectors share a large common component, so raw cosines between any two
    documents are high; after centring, a cosine compares how two documents *differ from
    the average* document.

    Raises
    ------
    InputError
        Not a non-empty 2-D array of finite numbers.
    """
    vectors = _vectors(vectors)
    return vectors - vectors.mean(axis=0)


def random_pair_similarity(vectors: np.ndarray, n_pairs: int = 5000, center: bool = False,
                           seed: int = 0) -> np.ndarray:
    """Cosine similarities of ``n_pairs`` random pairs of distinct items: the baseline
    (``center``: after subtracting the mean vector).

    Raises
    ------
    InputError
        ``vectors`` not a 2-D array of finite numbers with at least two rows; ``n_pairs``
        not a whole number >= 1; ``seed`` < 0.
    """
    vectors = _vectors(vectors, min_rows=2)
    check_int(n_pairs, "n_pairs", maximum=MAX_DRAWS)
    rng = np.random.default_rng(_seed(seed))
    first = rng.integers(len(vectors), size=n_pairs)
    second = (first + rng.integers(1, len(vectors), size=n_pairs)) % len(vectors)
    unit, (first, second) = _unit_rows_drawn(vectors, [first, second], center)
    return np.einsum("ij,ij->i", unit[first], unit[second])


def word_polarity_probe(model: Doc2Vec, lexicon: dict[str, frozenset[str]], seed: int = 0) -> dict:
    """Do the word vectors separate opinion-lexicon positive from negative words?

    A logistic regression on the vectors of the lexicon words in the model's vocabulary,
    stratified 5-fold cross-validated (seeded).

    Returns
    -------
    dict
        ``accuracy`` (mean CV accuracy), ``majority`` (the accuracy of always guessing the
        larger class), ``n_pos``, ``n_neg`` (lexicon words found in the vocabulary).

    Raises
    ------
    InputError
        ``lexicon`` lacks ``pos``/``neg`` word sets; ``seed`` < 0.
    KitError
        The model has no word vectors, or fewer than 5 lexicon words of a polarity.
    """
    check_lexicon(lexicon)
    _seed(seed)
    if len(model.wv) == 0 or not (model.dm or model.dbow_words):
        raise KitError("This model has no trained word vectors: use dm=1, or dbow_words=1.")
    words = [(w, label) for label in ("pos", "neg") for w in sorted(lexicon[label]) if w in model.wv]
    y = np.array([label for _, label in words])
    if min((y == "pos").sum(), (y == "neg").sum()) < 5:
        raise KitError("The probe needs at least 5 words of each polarity in the model's vocabulary.")
    X = np.vstack([model.wv[w] for w, _ in words])
    counts = pd.Series(y).value_counts()
    return {"accuracy": _probe_accuracy(X, y, seed),
            "majority": float(counts.max() / counts.sum()),
            "n_pos": int(counts.get("pos", 0)), "n_neg": int(counts.get("neg", 0))}


def document_word_similarity(doc_vectors: np.ndarray, texts, model: Doc2Vec, word_weights: dict[str, float],
                             k: int = 5, stop_words: frozenset[str] = frozenset(),
                             seed: int = 0) -> pd.DataFrame:
    """Are documents closer to their most decisive words than to random words of their own?

    For each document: its ``k`` words with the largest ``|word_weights|`` (e.g. NB
    log-odds) among its content words (alphabetic, not in ``stop_words``, known to the
    model and to ``word_weights``), and ``k`` other content words drawn (seeded) from the
    rest; the mean cosine of the document vector to each set.

    Returns
    -------
    DataFrame
        One row per document with enough words (2k known distinct words): index (row in
        ``doc_vectors``), decisive, random (mean cosines), words (the decisive words).

    Raises
    ------
    InputError
        ``doc_vectors`` not a 2-D array of finite numbers; ``texts`` not strings, one per
        vector; ``word_weights`` not a dict of finite numbers; ``k`` not a whole number >= 1;
        ``seed`` < 0.
    """
    unit_docs = unit_rows(doc_vectors)
    texts = check_texts(texts, "texts")
    check_same_length(doc_vectors=unit_docs, texts=texts)
    if not isinstance(word_weights, Mapping):
        raise InputError("word_weights must be a dict: word -> weight (e.g. NB log-odds).")
    check_array(list(word_weights.values()), "word_weights values", min_rows=0)
    check_int(k, "k")
    rng = np.random.default_rng(_seed(seed))
    rows = []
    for i, text in enumerate(texts):
        known = sorted({w for w in tokenize(text) if w.isalpha() and w not in stop_words
                        and w in model.wv and w in word_weights})
        if len(known) < 2 * k:
            continue
        ranked = sorted(known, key=lambda w: (-abs(word_weights[w]), w))
        decisive, rest = ranked[:k], ranked[k:]
        drawn = [rest[j] for j in rng.choice(len(rest), k, replace=False)]
        cosine = unit_rows(np.vstack([model.wv[w] for w in decisive + drawn])) @ unit_docs[i]
        rows.append((i, float(cosine[:k].mean()), float(cosine[k:].mean()), " ".join(decisive)))
    return pd.DataFrame(rows, columns=["index", "decisive", "random", "words"])


def _probe_accuracy(X: np.ndarray, y: np.ndarray, seed: int = 0) -> float:
    """How well a linear probe reads ``y`` from ``X``.

    A logistic regression on standardised features, stratified 5-fold cross-validated
    (seeded).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        The labels to read.
    seed : int
        Seeds the folds.

    Returns
    -------
    float
        Mean cross-validated accuracy.
    """
    probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=PROBE_MAX_ITER))
    folds = StratifiedKFold(PROBE_FOLDS, shuffle=True, random_state=seed)
    return float(cross_val_score(probe, X, y, cv=folds).mean())


def order_probe(vectors: np.ndarray, labels, seed: int = 0) -> float:
    """How well document *position* can be read from vectors: a leakage check.

    Within each class, documents are split into the first and second half of their order
    in the corpus (NLTK's order for the 2,000 reviews); a logistic regression, 5-fold
    cross-validated, tries to tell the halves apart. About 0.5 means the vectors carry no
    trace of the order; clearly more means training order leaked into them.

    Returns
    -------
    float
        Mean cross-validated accuracy.

    Raises
    ------
    InputError
        ``vectors`` not a 2-D array of finite numbers; ``labels`` not one label per vector
        (no missing ones); fewer than 5 documents in either half; ``seed`` < 0.
    """
    vectors = _vectors(vectors)
    labels = pd.Series(check_labels(labels, "labels"))
    check_same_length(vectors=vectors, labels=labels)
    if labels.isna().any():
        raise InputError("labels has missing values: give every document its class.")
    rank = labels.groupby(labels).cumcount()
    late = (rank >= labels.map(labels.value_counts()) / 2).to_numpy()
    if min(late.sum(), (~late).sum()) < PROBE_FOLDS:
        raise InputError(f"order_probe needs at least {PROBE_FOLDS} documents in each half of "
                         f"the order ({PROBE_FOLDS}-fold cross-validation); got {len(labels)} documents.")
    return _probe_accuracy(vectors, late, _seed(seed))


def tsne_map(vectors, perplexity: float = TSNE_PERPLEXITY, seed: int = 0) -> np.ndarray:
    """A 2-D t-SNE map of ``vectors``: scikit-learn's ``TSNE`` (PCA initialisation), cached.

    t-SNE keeps each point's neighbours near it and distorts distances; on a few thousand
    vectors it takes tens of seconds. The map depends only on the vectors, the perplexity and
    the seed (and scikit-learn's version), so it is stored under ``data/cache`` by their
    content, checked on every read, and read back instead of computed again.

    Parameters
    ----------
    vectors : array-like of shape (n, d)
        Finite numbers, one row per point.
    perplexity : float
        About the number of neighbours each point keeps near it; below ``n``.
    seed : int
        Seeds the optimisation.

    Returns
    -------
    ndarray of shape (n, 2)
        Each point's position on the map, in the rows' order.

    Raises
    ------
    InputError
        ``vectors`` not a 2-D array of finite numbers with at least 2 rows and 2 columns, or
        every row the same; ``perplexity`` not in (0, n); ``seed`` < 0.
    """
    vectors = np.ascontiguousarray(_vectors(vectors, min_rows=2))
    if vectors.shape[1] < 2:
        raise InputError(f"vectors needs at least 2 columns for a 2-D map, got {vectors.shape[1]}.")
    if not np.ptp(vectors, axis=0).any():  # scikit-learn's PCA start divides by their spread: 0
        raise InputError("vectors are all the same row: a map of them shows nothing.")
    perplexity = check_number(perplexity, "perplexity", low=0, high=len(vectors),
                              low_open=True, high_open=True)
    seed = _seed(seed)

    def compute() -> np.ndarray:
        tsne = TSNE(n_components=2, init="pca", perplexity=perplexity, random_state=seed)
        return tsne.fit_transform(vectors)

    return storage.cached(_tsne_path(vectors, perplexity, seed), compute, storage.write_array,
                          lambda stored: storage.read_array(stored, (len(vectors), 2)))


def _tsne_path(vectors: np.ndarray, perplexity: float, seed: int) -> Path:
    content = hashlib.sha256(vectors.tobytes()).hexdigest()
    key = storage.key({"artefact": "t-SNE map", "vectors": content, "shape": list(vectors.shape),
                       "perplexity": perplexity, "seed": seed}, libraries=["scikit-learn"])
    return settings.data_dir() / "cache" / f"tsne_{key}.npy"
