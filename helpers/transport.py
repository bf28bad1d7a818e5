"""Transportability of classifiers across domains (Marshall et al., "Switching Contexts:
Transportability Measures for NLP", IWCS 2021).

- ``tau_p``: a system's score in a target domain D_i relative to its source domain D_0,
  p(D_i) / p(D_0); ``mean_tau_p`` over targets; ``tau_var``: the coefficient of variation
  of the tau_p values, with the small-sample correction (1 + 1/(4n)) of the paper's eq. 3.
- ``PAPER_TABLES``: the paper's published scores and transportability (Tables 2, 3, 6, 7);
  ``published_transportability`` puts Tables 6 and 7 side by side.
- Domain similarity between the source corpus and a target: ``lexical_difference`` (share
  of target word types never seen in the source; ``vocabulary_difference`` for two
  vocabularies already made with ``vocabulary``), ``oov_rate`` (share of target word
  tokens never seen, from ``word_tokens``), ``domain_vector`` with ``cosine_distance`` and
  ``kl_divergence`` (Doc2Vec domain vectors).
- ``fit_decay``/``loo_mae``: the 3-parameter non-linear regression score ≈ a·exp(−b·x) + c of
  score on similarity, with leave-one-out mean absolute error.
- ``rejoin_contractions``: the customer reviews' tokenisation splits contractions off ("does
  n't", "it 's"), the 2,000 movie reviews' keeps them whole ("doesn't", "it's"); rejoined,
  both sides agree. ``split_negations`` counts the texts that still hold a split-off "n't".
- ``shared_films``: how many films of a test set an IMDB training corpus has reviews of.
- ``targets``: the lab's real target domains; ``correctness``: each system trained once on
  the 2,000 reviews, right or wrong on every target item; ``accuracies`` per target;
  ``paired_tests``: the paired permutation test of two systems on each target's items.
"""

from __future__ import annotations

import numbers
import re
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeWarning, curve_fit

from helpers import data, evaluation, own_reviews, significance
from helpers.embedding_space import unit_rows
from helpers.errors import InputError
from helpers.text import tokenize
from helpers.validation import (
    check_array,
    check_binary,
    check_choice,
    check_int,
    check_number,
    check_same_length,
    check_table,
    check_texts,
)

DECAY_PARAMETERS = 3  # a, b, c: a fit needs at least this many distinct similarities
MIN_DECAY_POINTS = 4
TARGET_COLUMNS = ("target", "doc_id", "label", "text")
CORRECTNESS_COLUMNS = ("target", "doc_id", "correct")
PERCENT = 100  # the paper prints scores in percent and tau_var as 100 x the coefficient
#: The negation clitic as the customer reviews' tokenisation splits it off ("does n't", "ca n't").
SPLIT_NEGATION = "n't"
#: A clitic split off the word before it ("does n't", "it 's", "i 've", "can 't"): whitespace
#: after a word character, then the clitic as a whole token (not the start of a quotation).
_SPLIT_CLITIC = re.compile(r"(?<=\w)\s+(n't|'(?:s|m|d|ll|re|ve|t))(?![\w'])", re.IGNORECASE)

#: Marshall et al. (2021), "Switching Contexts: Transportability Measures for NLP" (IWCS),
#: as printed. Table 2: NER F1 of models trained on the CoNLL-2003 training split; Table 3:
#: NLI accuracy of BERT trained on each corpus's training split (rows) on every split
#: (columns); Tables 6 and 7: their transportability, tau_p truncated to 3 decimals and
#: 100 x tau_var *without* the bias correction (recomputed from Tables 2 and 3 with the
#: training split as the source and the other corpora's splits as the targets; SNLI's
#: 15.22 recomputes to 15.256, the one value that does not reproduce).
PAPER_TABLES = {
    2: {"Stanford": {"CoNLL-2003 Train": 98.69, "CoNLL-2003 Dev": 93.22, "CoNLL-2003 Test": 88.78,
                     "Wiki": 66.31, "WNUT Train": 51.63, "WNUT Dev": 53.59, "WNUT Test": 47.11},
        "SpaCy": {"CoNLL-2003 Train": 99.32, "CoNLL-2003 Dev": 81.56, "CoNLL-2003 Test": 88.11,
                  "Wiki": 52.14, "WNUT Train": 27.03, "WNUT Dev": 32.23, "WNUT Test": 26.28},
        "ELMo": {"CoNLL-2003 Train": 99.97, "CoNLL-2003 Dev": 98.17, "CoNLL-2003 Test": 93.79,
                 "Wiki": 79.4, "WNUT Train": 36.3, "WNUT Dev": 48.8, "WNUT Test": 58.1}},
    3: {"SNLI": {"SNLI Train": 96.81, "SNLI Dev": 90.83, "SNLI Test": 90.40, "MultiNLI Train": 72.51,
                 "MultiNLI Dev": 72.29, "SciTail Train": 54.04, "SciTail Dev": 61.34, "SciTail Test": 52.72},
        "MultiNLI": {"SNLI Train": 77.13, "SNLI Dev": 79.05, "SNLI Test": 79.31, "MultiNLI Train": 97.78,
                     "MultiNLI Dev": 83.50, "SciTail Train": 66.52, "SciTail Dev": 67.79,
                     "SciTail Test": 67.26},
        "SciTail": {"SNLI Train": 42.68, "SNLI Dev": 44.36, "SNLI Test": 44.20, "MultiNLI Train": 47.49,
                    "MultiNLI Dev": 44.49, "SciTail Train": 99.88, "SciTail Dev": 94.78,
                    "SciTail Test": 93.08}},
    6: {"Stanford": {"tau_p(wiki)": 0.671, "tau_p(wnut)": 0.514, "tau_p(wnut & wiki)": 0.553,
                     "tau_var": 15.051},
        "SpaCy": {"tau_p(wiki)": 0.524, "tau_p(wnut)": 0.287, "tau_p(wnut & wiki)": 0.346, "tau_var": 35.171},
        "ELMo": {"tau_p(wiki)": 0.794, "tau_p(wnut)": 0.477, "tau_p(wnut & wiki)": 0.556, "tau_var": 32.666}},
    7: {"SNLI": {"tau_p": 0.646, "tau_var": 15.22},
        "MultiNLI": {"tau_p": 0.744, "tau_var": 8.582},
        "SciTail": {"tau_p": 0.446, "tau_var": 3.921}},
}

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


def paper_scores(system: str) -> tuple[float, dict[str, float]]:
    """One of the paper's systems: its source score and its scores in its target domains.

    The source score is the one on the training split (Table 2 or 3, in percent); the
    targets are the other corpora's splits, each a domain: for NER, Wiki and the three WNUT
    splits; for NLI, every split of the two corpora the system was not trained on (its own
    Dev and Test splits are not targets). From these, ``tau_p`` and ``tau_var`` (without
    the correction) reproduce Tables 6 and 7.

    Parameters
    ----------
    system : str
        Stanford, SpaCy or ELMo (NER); SNLI, MultiNLI or SciTail (NLI, by training corpus).

    Returns
    -------
    (float, dict)
        The source score, and target split -> score.

    Raises
    ------
    InputError
        ``system`` is none of the six.
    """
    check_choice(system, "system", [*PAPER_TABLES[2], *PAPER_TABLES[3]])
    corpus, scores = (("CoNLL-2003", PAPER_TABLES[2][system]) if system in PAPER_TABLES[2]
                      else (system, PAPER_TABLES[3][system]))
    targets = {split: score for split, score in scores.items() if not split.startswith(corpus)}
    return scores[f"{corpus} Train"], targets


def published_transportability() -> pd.DataFrame:
    """The paper's Tables 6 and 7 as one table, one row per system.

    Returns
    -------
    DataFrame
        task (NER or NLI), system, source (the score on the training split, as a share),
        targets (how many target domains), mean tau_p (over all of them: Table 6's
        "wnut & wiki" row) and 100 x tau_var (uncorrected), as printed in the paper.
    """
    rows = []
    for task, table, mean_key in (("NER", 6, "tau_p(wnut & wiki)"), ("NLI", 7, "tau_p")):
        for system, printed in PAPER_TABLES[table].items():
            source, targets = paper_scores(system)
            rows.append({"task": task, "system": system, "source": source / PERCENT, "targets": len(targets),
                         "mean tau_p": printed[mean_key], "100 x tau_var": printed["tau_var"]})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- domain similarity


def word_tokens(texts) -> list[str]:
    """The word tokens of ``texts`` in order, repeats kept (kit tokeniser, lowercase;
    punctuation-only tokens left out).

    Raises
    ------
    InputError
        ``texts`` is a single string, empty, or holds something that is not a string.
    """
    return [token for text in check_texts(texts, "texts") for token in tokenize(text)
            if any(c.isalnum() for c in token)]


def vocabulary(texts) -> set[str]:
    """The word types of ``texts``: the set of ``word_tokens`` (see there for what is refused)."""
    return set(word_tokens(texts))


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


def oov_rate(source: set[str], target_tokens: Sequence[str]) -> float:
    """The out-of-vocabulary rate: the share of the target's word *tokens* whose type the
    source never has.

    Unlike ``vocabulary_difference``, which counts each type once, every occurrence counts:
    a frequent unseen word weighs as often as it is used, a name seen once barely at all.

    Parameters
    ----------
    source : set of str
        The source's word types (``vocabulary``).
    target_tokens : list of str
        The target's word tokens, repeats kept (``word_tokens``).

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    InputError
        ``source`` not a set; ``target_tokens`` a single string, empty, or holding
        something that is not a string.
    """
    if not isinstance(source, (set, frozenset)):
        raise InputError(f"oov_rate needs the source's word types as a set (see vocabulary), "
                         f"not {type(source).__name__}.")
    tokens = check_texts(target_tokens, "target_tokens")
    return sum(token not in source for token in tokens) / len(tokens)


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


def loo_mae(x, y, bounds: tuple[float, float] | None = None) -> float:
    """Leave-one-out mean absolute error of ``fit_decay``: each point predicted by the
    curve fitted to all the others.

    Parameters
    ----------
    x, y : array-like
        Similarities and scores, one per target.
    bounds : (low, high), optional
        The range a score can take, e.g. (0, 1) for accuracy: a prediction outside it is
        clipped to it. A curve fitted to the others can run far outside the scores when the
        left-out similarity lies beyond theirs, and one such prediction would swamp the mean.

    Raises
    ------
    InputError
        As ``fit_decay``, with at least 5 points and 4 distinct similarities (each fit
        leaves one out); ``bounds`` not two finite numbers, low below high.
    """
    x, y = _decay_points(x, y, MIN_DECAY_POINTS + 1, DECAY_PARAMETERS + 1)
    if bounds is not None:
        if not isinstance(bounds, tuple) or len(bounds) != 2:
            raise InputError(f"bounds must be (low, high) or None, not {bounds!r}.")
        low, high = check_number(bounds[0], "bounds[0]"), check_number(bounds[1], "bounds[1]")
        if not low < high:
            raise InputError(f"bounds must have low < high, not {bounds!r}.")
    with np.errstate(over="ignore", invalid="ignore"):
        predicted = np.array([decay(x[i], *fit_decay(np.delete(x, i), np.delete(y, i)))
                              for i in range(len(x))])
    if bounds is not None:
        predicted = np.clip(predicted, low, high)  # an infinite prediction becomes the bound
    errors = np.abs(predicted - y)
    if not np.isfinite(errors).all():
        raise InputError("A left-out point's prediction overflows: its similarity lies far outside the "
                         "others' range, where the fitted curve has no finite value.")
    return float(np.mean(errors))


# --------------------------------------------------------------------------- tokenisation across corpora


def rejoin_contractions(text: str) -> str:
    """Join contractions split off by a tokeniser back onto their word, as the movie reviews write them.

    The customer reviews (``data.load_product_reviews``) come tokenised in the Penn Treebank
    way, with clitics split off: "does n't", "ca n't", "it 's", "i 've". The 2,000 movie
    reviews keep them whole ("doesn't", "can't", "it's"), so without this every product
    negation would be a word the classifiers never saw in training. Only a clitic right after
    a word is joined ("n't", "'s", "'m", "'d", "'ll", "'re", "'ve", and "'t" as in "can 't");
    a quotation mark before a word ("the 'zen", "the 's' key") is left alone.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
        ``text`` with the whitespace before each such clitic removed.

    Raises
    ------
    InputError
        ``text`` is not a string.

    Examples
    --------
    >>> rejoin_contractions("it does n't work , and it 's loud ; i ca n't return it")
    "it doesn't work , and it's loud ; i can't return it"
    """
    if not isinstance(text, str):
        raise InputError(f"text must be a string, not {type(text).__name__} ({text!r:.40}).")
    return _SPLIT_CLITIC.sub(r"\1", text)


def split_negations(texts) -> int:
    """How many of ``texts`` hold the token "n't" on its own (a negation split off its verb).

    The movie reviews never do, so such a token is out of the classifiers' vocabulary.

    Parameters
    ----------
    texts : list of str

    Returns
    -------
    int

    Raises
    ------
    InputError
        ``texts`` a single string, empty, or holding something that is not a string.
    """
    return sum(SPLIT_NEGATION in tokenize(text) for text in check_texts(texts, "texts"))


# --------------------------------------------------------------------------- the embedding's corpus


def shared_films(training_ids: Sequence[str], test_ids: Sequence[str]) -> int:
    """How many films of the test reviews also have a review among the training reviews.

    Both are IMDB doc ids (``train_pos_123``); a review's film is its ``movie_id``
    (``data.load_imdb``, from IMDB's ``urls_*.txt``). A model trained on other reviews of a
    test review's film has seen its title, cast and plot: 0 means the test is film-disjoint.

    Raises
    ------
    InputError
        Either argument not a sequence of IMDB doc ids, or an id that is not one.
    """
    given = {"training_ids": training_ids, "test_ids": test_ids}
    for name, ids in given.items():
        if isinstance(ids, str) or not isinstance(ids, Sequence | pd.Series | pd.Index | np.ndarray):
            raise InputError(f"{name} must be a sequence of IMDB doc ids, not {type(ids).__name__}.")
    films = pd.concat([data.load_imdb(split)[["doc_id", "movie_id"]] for split in data.IMDB_SPLITS],
                      ignore_index=True).set_index("doc_id").movie_id
    chosen = {}
    for name, ids in given.items():
        unknown = pd.Index(ids).difference(films.index)
        if len(unknown):
            raise InputError(f"{name} holds {len(unknown)} id(s) that name no IMDB review, "
                             f"e.g. {unknown[0]!r}.")
        chosen[name] = set(films.loc[list(ids)].dropna())
    return len(chosen["training_ids"] & chosen["test_ids"])


# --------------------------------------------------------------------------- the lab's domains


def targets(imdb_n: int = 1000, rt_n: int = 2000, min_product: int = 100, seed: int = 0) -> pd.DataFrame:
    """The lab's target domains, all real, as one table.

    - ``imdb``: ``data.imdb_sample(imdb_n)`` (same genre, other site and decade);
    - ``rotten_tomatoes``: a balanced, seeded sample of ``rt_n`` snippets (one sentence each);
    - ``products``: all customer-review sentences, and ``product:<name>`` for each product
      with at least ``min_product`` sentences, their contractions rejoined
      (``rejoin_contractions``) so that they are tokenised as the movie reviews are;
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
    products["text"] = products["text"].map(rejoin_contractions)
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


def correctness(system, target_table: pd.DataFrame, name: str | None = None) -> pd.DataFrame:
    """Train ``system`` once on the 2,000 reviews; whether it labels each target item right.

    An item in several targets (a product's sentence is also in ``products``) is labelled
    once, so it is right or wrong in all of them alike.

    Parameters
    ----------
    system : System
        A system of ``helpers.evaluation`` (e.g. ``helpers.systems.system("nb")``).
    target_table : DataFrame
        target, doc_id, label, text: one row per item of each target (as from ``targets``).
    name : str, optional
        The system's name for ``evaluation.fit_predict`` (default: its key).

    Returns
    -------
    DataFrame
        target, doc_id, correct: one row per row of ``target_table``, in its order.

    Raises
    ------
    InputError
        ``target_table`` not a DataFrame with those columns and at least one row, an item
        twice in one target, or one doc_id with two different texts or labels.
    """
    target_table = check_table(target_table, "target_table", TARGET_COLUMNS)
    if target_table.duplicated(["target", "doc_id"]).any():
        raise InputError("target_table holds an item twice in one target: each item is one row per target.")
    unique = target_table.drop_duplicates("doc_id")
    if len(target_table.drop_duplicates(["doc_id", "label", "text"])) != len(unique):
        raise InputError("target_table gives one doc_id two different texts or labels: "
                         "an id must name one item.")
    result = evaluation.fit_predict(system, test=unique, name=name).set_index("doc_id").correct
    return pd.DataFrame({"target": target_table.target.to_numpy(), "doc_id": target_table.doc_id.to_numpy(),
                         "correct": result.loc[target_table.doc_id].to_numpy()})


def _check_correctness(table, name: str) -> pd.DataFrame:
    table = check_table(table, name, CORRECTNESS_COLUMNS)
    return table.assign(correct=check_binary(table.correct.to_numpy(), f"{name}.correct"))


def accuracies(correct: pd.DataFrame) -> pd.DataFrame:
    """Each target's accuracy, from a ``correctness`` table.

    Returns
    -------
    DataFrame
        target, accuracy, n: one row per target, in the order they first appear.

    Raises
    ------
    InputError
        ``correct`` not a DataFrame with columns target, doc_id and correct (True/False or
        0/1) and at least one row.
    """
    correct = _check_correctness(correct, "correct")
    return correct.groupby("target", sort=False).correct.agg(accuracy="mean", n="size").reset_index()


def paired_tests(correct: Mapping[str, pd.DataFrame], pairs: list[tuple[str, str]],
                 n_resamples: int = 5000, seed: int = 0) -> pd.DataFrame:
    """The paired permutation test of two systems on each target's items, for every pair.

    Within a target both systems label the same items, so the test is paired
    (``significance.permutation_test``, two-sided, statistic |acc_a − acc_b|). Every test
    uses the same ``seed``. With many targets and pairs some p-values fall below any α by
    chance: correct them for the number of tests (e.g. ``significance.holm``).

    Parameters
    ----------
    correct : dict
        System name -> its ``correctness`` table; all on the same items in the same order.
    pairs : list of (name_a, name_b)
    n_resamples : int
        R, the Monte Carlo resamples of each test.
    seed : int

    Returns
    -------
    DataFrame
        One row per target and pair (targets in order of appearance, pairs as given):
        target, a, b, n, acc_a, acc_b, difference (acc_a − acc_b), p.

    Raises
    ------
    InputError
        ``correct`` not a non-empty dict of correctness tables, tables on other items or in
        another order, a pair naming a system without a table, ``n_resamples`` < 1, ``seed`` < 0.
    """
    if not isinstance(correct, Mapping) or not correct:
        raise InputError("correct must be a non-empty dict: system name -> its correctness table.")
    check_int(n_resamples, "n_resamples")
    check_int(seed, "seed", minimum=0)
    tables = {name: _check_correctness(table, f"correct[{name!r}]") for name, table in correct.items()}
    items = next(iter(tables.values()))[["target", "doc_id"]].to_numpy()
    for name, table in tables.items():
        if table.shape[0] != len(items) or (table[["target", "doc_id"]].to_numpy() != items).any():
            raise InputError(f"correct[{name!r}] is not on the same items in the same order as the others: "
                             "give every system's correctness on one target table.")
    rows = []
    for target in pd.unique(items[:, 0]):
        positions = np.flatnonzero(items[:, 0] == target)
        subset = {name: table.correct.to_numpy()[positions] for name, table in tables.items()}
        found = significance.compare(subset, pairs, n_resamples=n_resamples, seed=seed, progress=False)
        rows.append(found.assign(target=target, n=len(positions)))
    table = pd.concat(rows, ignore_index=True)
    table = table.assign(difference=table.acc_a - table.acc_b, p=table.perm_p)
    return table[["target", "a", "b", "n", "acc_a", "acc_b", "difference", "p"]]
