"""Corpus statistics for the data tour (notebook 00): lengths, frequent and class-skewed words."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd


def review_lengths(reviews: pd.DataFrame) -> pd.DataFrame:
    """Token counts per review (the corpus's own tokens), with the label.

    Returns
    -------
    DataFrame
        Columns ``label`` and ``tokens``, one row per review.
    """
    return pd.DataFrame({"label": reviews.label, "tokens": reviews.text.str.split().str.len()})


def word_counts(reviews: pd.DataFrame) -> pd.DataFrame:
    """Count every word per class.

    Returns
    -------
    DataFrame
        Index: word; columns: one per label (``neg``, ``pos``) and ``total``.
    """
    per_label = {label: Counter(" ".join(group.text).split())
                 for label, group in reviews.groupby("label")}
    table = pd.DataFrame(per_label).fillna(0).astype(int)
    table["total"] = table.sum(axis=1)
    return table.sort_index()


def top_words(counts: pd.DataFrame, n: int = 10, exclude: frozenset[str] = frozenset(),
              alphabetic: bool = True) -> pd.Series:
    """The ``n`` most frequent words (ties broken alphabetically), optionally without some.

    Parameters
    ----------
    counts : DataFrame
        From ``word_counts``.
    exclude : set of str
        Words to leave out (e.g. stop words).
    alphabetic : bool
        Only words made of letters (no punctuation or numbers).
    """
    keep = ~counts.index.isin(list(exclude))
    if alphabetic:
        keep &= counts.index.str.fullmatch(r"[a-z]+(?:'[a-z]+)?")
    totals = counts.loc[keep, "total"]
    return totals.sort_index().sort_values(ascending=False, kind="stable").head(n)


def class_skew(counts: pd.DataFrame, positive: str = "pos", negative: str = "neg",
               min_count: int = 20) -> pd.Series:
    """Smoothed log-ratio of each word's relative frequency in two classes.

    ``skew(w) = log P(w | pos) - log P(w | neg)``, with add-one smoothing:
    ``P(w | c) = (count(w, c) + 1) / (N_c + |V|)``. Positive values lean positive.
    Words seen fewer than ``min_count`` times in all are left out (their ratios are noise).

    Returns
    -------
    Series
        Index: word; values: the log-ratio, sorted from most negative to most positive
        (ties broken alphabetically).
    """
    vocab = len(counts)
    log_p = {c: np.log(counts[c] + 1) - np.log(counts[c].sum() + vocab) for c in (positive, negative)}
    skew = (log_p[positive] - log_p[negative])[counts.total >= min_count]
    return skew.sort_index().sort_values(kind="stable")
