"""Bag-of-words features: unigrams, bigrams or both; counts, presence or tf-idf; stemming;
negation marking.

Documents go in as lists of tokens (``helpers.text.tokenize``), so tokenising happens once
per corpus and every feature setting agrees on what a word is. Built on scikit-learn's
``CountVectorizer`` / ``TfidfVectorizer``.
"""

from __future__ import annotations

from functools import cache

from nltk.sentiment.util import mark_negation as _nltk_mark_negation
from nltk.stem import PorterStemmer
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from helpers.errors import InputError
from helpers.validation import check_int

NGRAMS = {"unigram": (1, 1), "bigram": (2, 2), "uni+bi": (1, 2)}
_STEMMER = PorterStemmer()


@cache
def stem(token: str) -> str:
    """Porter-stem one token (cached: a corpus has far fewer types than tokens)."""
    return _STEMMER.stem(token)


def identity(tokens: list[str]) -> list[str]:
    """Return the tokens unchanged (the vectorizer's input is already tokenised)."""
    return tokens


def stem_tokens(tokens: list[str]) -> list[str]:
    """Porter-stem every token."""
    return [stem(t) for t in tokens]


def mark_negation(tokens: list[str]) -> list[str]:
    """Append ``_NEG`` to every token after a negation word, up to the next ``. : ; ! ?``.

    Das & Chen (2001) and Pang et al. (2002): in "not a good film" the features become
    ``a_NEG good_NEG film_NEG``, so NB and the SVM learn separate weights for negated words.
    NLTK's ``mark_negation`` (negation words such as *not*, *no*, *never*, *nothing* and any
    word ending in *n't*; a second negation inside the scope does not end it).

    Parameters
    ----------
    tokens : list of str
        One document's tokens (``helpers.text.tokenize``); not changed.

    Returns
    -------
    list of str
        A new list, as long as ``tokens``.

    Raises
    ------
    InputError
        ``tokens`` is a string or holds something other than strings.
    """
    if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
        raise InputError("mark_negation takes one document's tokens as a list of strings "
                         "(helpers.text.tokenize(text)).")
    return _nltk_mark_negation(list(tokens))


def make_vectorizer(ngram: str = "unigram", binary: bool = False, stemming: bool = False,
                    min_df: int = 1, max_features: int | None = None,
                    tfidf: bool = False) -> CountVectorizer:
    """Build a vectorizer over pre-tokenised documents.

    Parameters
    ----------
    ngram : {"unigram", "bigram", "uni+bi"}
        Which n-grams are features (``bigram`` means bigrams only).
    binary : bool
        Presence (1 if the feature occurs) instead of frequency (its count).
    stemming : bool
        Porter-stem tokens first (nltk).
    min_df : int
        Feature cut-off: keep features that occur in at least this many training documents.
    max_features : int, optional
        Keep only the most frequent features.
    tfidf : bool
        Weight by tf-idf (``TfidfVectorizer``; with ``binary`` the tf part is presence).

    Returns
    -------
    CountVectorizer or TfidfVectorizer
        Unfitted; ``fit_transform`` takes a list of token lists.

    Raises
    ------
    InputError
        ``ngram`` unknown; ``binary``, ``stemming``, ``tfidf`` not True or False;
        ``min_df`` not a whole number >= 1; ``max_features`` not None or a whole number >= 1.
    """
    if not isinstance(ngram, str) or ngram not in NGRAMS:
        raise InputError(f"Unknown ngram setting {ngram!r}; choose one of {sorted(NGRAMS)}.")
    for value, name in ((binary, "binary"), (stemming, "stemming"), (tfidf, "tfidf")):
        if not isinstance(value, bool):
            raise InputError(f"{name} must be True or False, not {value!r}.")
    check_int(min_df, "min_df")
    if max_features is not None:
        check_int(max_features, "max_features")
    kind = TfidfVectorizer if tfidf else CountVectorizer
    return kind(tokenizer=stem_tokens if stemming else identity, preprocessor=identity,
                lowercase=False, token_pattern=None, ngram_range=NGRAMS[ngram],
                binary=binary, min_df=min_df, max_features=max_features)
