"""Transportability of classifiers across domains (Marshall et al., "Switching Contexts:
Transportability Measures for NLP", IWCS 2021).

- ``tau_p``: a system's score in a target domain D_i relative to its source domain D_0,
  p(D_i) / p(D_0); ``mean_tau_p`` over targets; ``tau_var``: the coefficient of variation
  of the tau_p values, with the small-sample correction (1 + 1/(4n)) of the paper's eq. 3.
- Domain similarity between the source corpus and a target: ``lexical_difference`` (share
  of target word types never seen in the source; ``vocabulary_difference`` for two
  vocabularies already made with ``vocabulary``), ``domain_vector`` with
  ``cosine_distance`` and ``kl_divergence`` (Doc2Vec domain vectors).
- ``fit_decay``/``loo_mae``: the 3-parameter non-linear regression score ≈ a·exp(−b·x) + c of
  score on similarity, with leave-one-out mean absolute error.
- ``targets``: the lab's real target domains; ``scores``: each system trained once on the
  2,000 reviews and scored on every target.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeWarning, curve_fit

from helpers import data, evaluation, own_reviews
from helpers.embedding_space import unit_rows
from helpers.errors import KitError
from helpers.text import tokenize

# --------------------------------------------------------------------------- transportability


def tau_p(source_score: float, target_score):
    """p(D_i) / p(D_0): the share of its source score a system keeps in a target domain."""
    if not source_score > 0:
        raise KitError(f"The source score must be positive, not {source_score}.")
    return np.asarray(target_score, dtype=float) / source_score


def mean_tau_p(source_score: float, target_scores) -> float:
    """The mean of ``tau_p`` over the n target domains."""
    values = tau_p(source_score, target_scores)
    if values.size == 0:
        raise KitError("Give at least one target score.")
    return float(values.mean())


def tau_var(tau_values, bias_correction: bool = True) -> float:
    """The coefficient of variation of tau_p values: s / mean, s with n − 1.

    With ``bias_correction`` (the paper's eq. 3) it is multiplied by (1 + 1/(4n)), the
    usual correction for the coefficient's downward bias in small samples. The paper's
    Tables 6 and 7 print 100 × the uncorrected value.

    Parameters
    ----------
    tau_values : array-like of shape (n,), n >= 2
    """
    values = np.asarray(tau_values, dtype=float)
    if values.size < 2:
        raise KitError("tau_var needs the tau_p of at least two target domains.")
    cv = values.std(ddof=1) / values.mean()
    return float(cv * (1 + 1 / (4 * values.size)) if bias_correction else cv)


# --------------------------------------------------------------------------- domain similarity


def vocabulary(texts) -> set[str]:
    """The word types of ``texts`` (kit tokeniser, lowercase; punctuation-only tokens left out)."""
    types = set().union(*map(tokenize, texts))
    return {t for t in types if any(c.isalnum() for c in t)}


def lexical_difference(source_texts, target_texts) -> float:
    """1 − |V_i ∩ V_0| / |V_i|: the share of the target's word types never seen in the source."""
    return vocabulary_difference(vocabulary(source_texts), vocabulary(target_texts))


def vocabulary_difference(source: set[str], target: set[str]) -> float:
    """``lexical_difference`` of two vocabularies (sets of word types, as from ``vocabulary``)."""
    if not isinstance(source, (set, frozenset)) or not isinstance(target, (set, frozenset)):
        raise KitError("vocabulary_difference needs two sets of word types (see vocabulary).")
    if not target:
        raise KitError("The target texts have no words.")
    return 1 - len(target & source) / len(target)


def domain_vector(vectors: np.ndarray) -> np.ndarray:
    """A domain's vector: each document vector scaled to length 1, averaged, and the mean
    scaled to length 1 (so long documents and large norms do not dominate; a zero vector
    adds nothing)."""
    vectors = np.asarray(vectors, dtype=float)
    if vectors.ndim != 2 or len(vectors) == 0:
        raise KitError("domain_vector needs a non-empty 2-D array of document vectors.")
    mean = unit_rows(vectors).mean(axis=0)
    return mean / np.linalg.norm(mean)


def cosine_distance(u: np.ndarray, v: np.ndarray) -> float:
    """1 − cos(u, v)."""
    return float(1 - u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def kl_divergence(source: np.ndarray, target: np.ndarray, epsilon: float = 1e-3) -> float:
    """KL(target ‖ source) between two domain vectors turned into distributions.

    Vectors have negative components, so both are shifted by the same constant (minus
    their joint minimum), which keeps every difference between components; ``epsilon`` is
    then added to every component (smoothing: no zero probabilities, so the divergence is
    finite) and each vector is divided by its sum.
    """
    source, target = np.asarray(source, dtype=float), np.asarray(target, dtype=float)
    if source.shape != target.shape:
        raise KitError(f"Domain vectors of different sizes: {source.shape} and {target.shape}.")
    shift = min(source.min(), target.min())
    p, q = target - shift + epsilon, source - shift + epsilon
    p, q = p / p.sum(), q / q.sum()
    return float(np.sum(p * np.log(p / q)))


# --------------------------------------------------------------------------- regression


def decay(x, a, b, c):
    """The regression curve a·exp(−b·x) + c."""
    return a * np.exp(-b * np.asarray(x, dtype=float)) + c


def fit_decay(x, y) -> np.ndarray:
    """Least-squares fit of score y on similarity x with ``decay`` (``scipy.optimize.curve_fit``).

    Returns
    -------
    ndarray
        (a, b, c).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y) or len(x) < 4:
        raise KitError("fit_decay needs at least 4 (similarity, score) points of equal length.")
    scale = np.ptp(x) or 1.0
    start = (np.ptp(y) or 0.1, 1 / scale, y.min())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        try:
            params, _ = curve_fit(decay, x, y, p0=start, maxfev=20000)
        except RuntimeError:
            raise KitError("The exponential fit did not converge for these points.") from None
    return params


def loo_mae(x, y) -> float:
    """Leave-one-out mean absolute error of ``fit_decay``: each point predicted by the
    curve fitted to all the others."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    errors = [abs(decay(x[i], *fit_decay(np.delete(x, i), np.delete(y, i))) - y[i]) for i in range(len(x))]
    return float(np.mean(errors))


# --------------------------------------------------------------------------- the lab's domains


def targets(imdb_n: int = 1000, rt_n: int = 2000, min_product: int = 100, seed: int = 0) -> pd.DataFrame:
    """The lab's target domains, all real, as one table.

    - ``imdb``: ``data.imdb_sample(imdb_n)`` (same genre, other site and decade);
    - ``rotten_tomatoes``: a balanced, seeded sample of ``rt_n`` snippets (one sentence each);
    - ``products``: all customer-review sentences, and ``product:<name>`` for each product
      with at least ``min_product`` sentences;
    - ``deployment``: your reviews in ``data/deployment/``, if any.

    Returns
    -------
    DataFrame
        target, doc_id, label, text (a review can appear in several targets).
    """
    imdb = data.imdb_sample(imdb_n, seed)
    rt = data.load_sentence_polarity()
    rt = rt.groupby("label", group_keys=False).sample(rt_n // 2, random_state=seed).sort_index()
    products = data.load_product_reviews()
    products["doc_id"] = [f"{p}_{i}" for i, p in enumerate(products["product"])]
    parts = [imdb.assign(target="imdb"),
             rt.assign(target="rotten_tomatoes", doc_id=[f"rt_{i}" for i in rt.index]),
             products.assign(target="products")]
    sizes = products["product"].value_counts()
    for product in sorted(sizes[sizes >= min_product].index):
        parts.append(products[products["product"] == product].assign(target=f"product:{product}"))
    own = own_reviews.load_deployment()
    if own is not None:
        parts.append(own.assign(target="deployment"))
    return pd.concat([p[["target", "doc_id", "label", "text"]] for p in parts], ignore_index=True)


def scores(system, target_table: pd.DataFrame, name: str | None = None) -> pd.DataFrame:
    """Train ``system`` once on the 2,000 reviews; its accuracy on every target.

    Returns
    -------
    DataFrame
        target, accuracy, n.
    """
    unique = target_table.drop_duplicates("doc_id")
    result = evaluation.fit_predict(system, test=unique, name=name).set_index("doc_id").correct
    correct = target_table.assign(correct=result.loc[target_table.doc_id].to_numpy())
    table = correct.groupby("target", sort=False).correct.agg(accuracy="mean", n="size").reset_index()
    return table
