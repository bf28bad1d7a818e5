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

import numbers
import warnings

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeWarning, curve_fit

from helpers import data, evaluation, own_reviews
from helpers.embedding_space import unit_rows
from helpers.errors import InputError
from helpers.text import tokenize
from helpers.validation import check_array, check_number, check_same_length, check_texts

DECAY_PARAMETERS = 3  # a, b, c: a fit needs at least this many distinct similarities
MIN_DECAY_POINTS = 4

# --------------------------------------------------------------------------- transportability


def tau_p(source_score: float, target_score) -> float | np.ndarray:
    """p(D_i) / p(D_0): the share of its source score a system keeps in a target domain.

    Parameters
    ----------
    source_score : float
        The system's score in its source domain, > 0.
    target_score : float or array-like of shape (n,)
        Its score in each target domain, finite and >= 0.

    Returns
    -------
    float or ndarray
        One ratio per target score (a float for a single score).

    Raises
    ------
    InputError
        A score that is not a finite number, a source score <= 0, a negative target score.
    """
    source_score = check_number(source_score, "source_score")
    if source_score <= 0:
        raise InputError(f"The source score must be positive, not {source_score}: tau_p divides by it.")
    single = isinstance(target_score, numbers.Real)
    values = check_array([target_score] if single else target_score, "target_score", min_rows=0)
    if (values < 0).any():
        raise InputError(f"Target scores must be >= 0 (scores such as accuracy), got {values.min()}.")
    with np.errstate(over="ignore"):
        ratios = values / source_score
    if not np.isfinite(ratios).all():
        raise InputError(f"target_score / source_score overflows for source score {source_score}: "
                         "give scores such as accuracies.")
    return float(ratios[0]) if single else ratios


def mean_tau_p(source_score: float, target_scores) -> float:
    """The mean of ``tau_p`` over the n target domains (see ``tau_p`` for what is refused)."""
    values = np.atleast_1d(tau_p(source_score, target_scores))
    if values.size == 0:
        raise InputError("Give at least one target score.")
    return float(values.mean())


def tau_var(tau_values, bias_correction: bool = True) -> float:
    """The coefficient of variation of tau_p values: s / mean, s with n − 1.

    With ``bias_correction`` (the paper's eq. 3) it is multiplied by (1 + 1/(4n)), the
    usual correction for the coefficient's downward bias in small samples. The paper's
    Tables 6 and 7 print 100 × the uncorrected value.

    Parameters
    ----------
    tau_values : array-like of shape (n,), n >= 2
        tau_p values: finite, >= 0, with a positive mean (the coefficient divides by it).
    bias_correction : bool

    Returns
    -------
    float

    Raises
    ------
    InputError
        Fewer than two values (s needs n − 1 >= 1), NaN, infinite or negative values, or
        all zero.
    """
    values = check_array(tau_values, "tau_values", min_rows=0)
    if values.size < 2:
        raise InputError("tau_var needs the tau_p of at least two target domains.")
    if (values < 0).any() or values.mean() == 0:
        raise InputError("tau_values must be >= 0 and not all 0 (ratios of scores, as from tau_p): "
                         "their coefficient of variation divides by their mean.")
    values = values / values.max()  # the coefficient does not change with scale; huge values stay finite
    cv = values.std(ddof=1) / values.mean()
    return float(cv * (1 + 1 / (4 * values.size)) if bias_correction else cv)


# --------------------------------------------------------------------------- domain similarity


def vocabulary(texts) -> set[str]:
    """The word types of ``texts`` (kit tokeniser, lowercase; punctuation-only tokens left out).

    Raises
    ------
    InputError
        ``texts`` is a single string, empty, or holds something that is not a string.
    """
    types = set().union(*map(tokenize, check_texts(texts, "texts")))
    return {t for t in types if any(c.isalnum() for c in t)}


def lexical_difference(source_texts, target_texts) -> float:
    """1 − |V_i ∩ V_0| / |V_i|: the share of the target's word types never seen in the source."""
    return vocabulary_difference(vocabulary(source_texts), vocabulary(target_texts))


def vocabulary_difference(source: set[str], target: set[str]) -> float:
    """``lexical_difference`` of two vocabularies (sets of word types, as from ``vocabulary``)."""
    if not isinstance(source, (set, frozenset)) or not isinstance(target, (set, frozenset)):
        raise InputError("vocabulary_difference needs two sets of word types (see vocabulary).")
    if not target:
        raise InputError("The target texts have no words.")
    return 1 - len(target & source) / len(target)


def domain_vector(vectors: np.ndarray) -> np.ndarray:
    """A domain's vector: each document vector scaled to length 1, averaged, and the mean
    scaled to length 1 (so long documents and large norms do not dominate; a zero vector
    adds nothing).

    Raises
    ------
    InputError
        Not a non-empty 2-D array of finite numbers, or vectors with no common direction
        (all zero, or cancelling out).
    """
    vectors = check_array(vectors, "vectors", ndim=2)
    mean = unit_rows(vectors).mean(axis=0)
    norm = np.linalg.norm(mean)
    if norm == 0:
        raise InputError("The document vectors have no common direction (all zero, or they cancel "
                         "out): a domain vector needs documents with non-zero vectors.")
    return mean / norm


def _direction(vector, name: str) -> np.ndarray:
    vector = check_array(vector, name)
    if not np.any(vector):
        raise InputError(f"{name} is a zero vector: it has no direction to compare.")
    return vector


def cosine_distance(u: np.ndarray, v: np.ndarray) -> float:
    """1 − cos(u, v).

    Raises
    ------
    InputError
        ``u`` or ``v`` not a 1-D array of finite numbers, zero, or of different lengths.
    """
    u, v = _direction(u, "u"), _direction(v, "v")
    check_same_length(u=u, v=v)
    # Scaling first keeps the norms of very large or very small vectors from overflowing.
    u, v = u / np.abs(u).max(), v / np.abs(v).max()
    return float(np.clip(1 - u @ v / (np.linalg.norm(u) * np.linalg.norm(v)), 0, 2))


def kl_divergence(source: np.ndarray, target: np.ndarray, epsilon: float = 1e-3) -> float:
    """KL(target ‖ source) between two domain vectors turned into distributions.

    Vectors have negative components, so both are shifted by the same constant (minus
    their joint minimum), which keeps every difference between components; ``epsilon`` is
    then added to every component (smoothing: no zero probabilities, so the divergence is
    finite) and each vector is divided by its sum. Negative components are expected
    (domain vectors are directions, not distributions); a zero vector is refused.

    Raises
    ------
    InputError
        ``source`` or ``target`` not a 1-D array of finite numbers, zero, or of different
        sizes; ``epsilon`` not a finite number > 0.
    """
    source, target = _direction(source, "source"), _direction(target, "target")
    if source.shape != target.shape:
        raise InputError(f"Domain vectors of different sizes: {source.shape} and {target.shape}.")
    epsilon = check_number(epsilon, "epsilon", low=0, low_open=True)
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

    Raises
    ------
    InputError
        ``x``, ``y`` not 1-D arrays of finite numbers, of different lengths, fewer than 4
        points, or fewer than 3 distinct x (three parameters cannot be told apart).
        Also when the fit does not converge.
    """
    x, y = _decay_points(x, y, MIN_DECAY_POINTS, DECAY_PARAMETERS)
    scale = np.ptp(x) or 1.0
    start = (np.ptp(y) or 0.1, 1 / scale, y.min())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                params, _ = curve_fit(decay, x, y, p0=start, maxfev=20000)
        except (RuntimeError, ValueError):
            params = np.full(DECAY_PARAMETERS, np.nan)
    if not np.isfinite(params).all():
        raise InputError("The exponential fit did not converge for these points: check that the "
                         "scores fall (or rise) with similarity.")
    return params


def _decay_points(x, y, minimum: int, distinct: int) -> tuple[np.ndarray, np.ndarray]:
    x, y = check_array(x, "x", min_rows=0), check_array(y, "y", min_rows=0)
    check_same_length(x=x, y=y)
    if len(x) < minimum or len(np.unique(x)) < distinct:
        raise InputError(f"Give at least {minimum} (similarity, score) points with at least "
                         f"{distinct} distinct similarities, got {len(x)} points "
                         f"({len(np.unique(x))} distinct).")
    return x, y


def loo_mae(x, y) -> float:
    """Leave-one-out mean absolute error of ``fit_decay``: each point predicted by the
    curve fitted to all the others.

    Raises
    ------
    InputError
        As ``fit_decay``, with at least 5 points and 4 distinct similarities (each fit
        leaves one out).
    """
    x, y = _decay_points(x, y, MIN_DECAY_POINTS + 1, DECAY_PARAMETERS + 1)
    with np.errstate(over="ignore", invalid="ignore"):
        errors = [abs(decay(x[i], *fit_decay(np.delete(x, i), np.delete(y, i))) - y[i])
                  for i in range(len(x))]
    if not np.isfinite(errors).all():
        raise InputError("A left-out point's prediction overflows: its similarity lies far outside the "
                         "others' range, where the fitted curve has no finite value.")
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
