"""Adversarial evaluation (Smith, "Adversarial Evaluation for Models of Natural Language").

A corrupter, *Zellig*, turns a real sentence x into a fake y; a model of language, *Claude*,
is shown the pair in random order and says which one is fake. Claude's score is the share
of pairs it gets right, S = mean 1{z_n = y_n}: 0.5 is chance, and better models of
language should score higher, with no human labels needed.

- ``verbatim_in``: whether sentences occur word for word in a training text;
  ``held_out_sentences``: the lab's real sentences, sampled from IMDB's test reviews, without
  any that the language model's training text holds verbatim.
- ``Zellig`` and ``Claude``: what a corrupter and a model of language provide (Protocols:
  any object with these members takes part, e.g. a Zellig of your own).
- Zelligs (seeded, deterministic): ``SwapAdjacent``, ``ShuffleWindow``,
  ``BigramSubstitute`` (samples replacements from a bigram model of the corpus),
  ``FlipSentiment`` (replaces opinion words with opposite-polarity ones).
- ``NgramLM``: count-based n-gram language model with interpolated Witten-Bell smoothing
  over an add-one unigram base, nltk.lm-like (``score``, ``logscore``), vectorised with numpy
  so that it fits IMDB's 25,000 training reviews in seconds.
- Claudes: ``LMClaude`` (per-token log-probability) and ``ClassifierClaude`` (a sentiment
  classifier, told the review's polarity).
- ``adversarial_score``: S with a 95 % Wilson interval and a binomial test against 0.5.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, repeat
from typing import Any, Protocol

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from helpers import data, settings, storage
from helpers.errors import InputError, KitError
from helpers.significance import accuracy_interval
from helpers.text import tokenize
from helpers.validation import check_choice, check_int

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
TEST_SENTENCES = 3000  # the lab's sample of real sentences, before any found in training are removed
SENTENCE_TOKENS = (8, 30)  # the lab's real sentences: from 8 to 30 tokens
_SENTENCE_END = re.compile(r"^(?:[.!?]|\.{2,})$")
#: A token's last character if it may end a sentence (the regex's $ also matches before a final newline).
_END_CHARACTERS = frozenset(".!?\n")


# --------------------------------------------------------------------------- sentences


def split_sentences(tokens: list[str]) -> list[list[str]]:
    """Split a token list after each ".", "!", "?" or "..." (kept with its sentence)."""
    tokens = list(tokens)
    # the last character first: most tokens end no sentence, and a regex per token is slow
    ends = [i + 1 for i, token in enumerate(tokens)
            if token[-1:] in _END_CHARACTERS and _SENTENCE_END.match(token)]
    bounds = zip([0, *ends], [*ends, len(tokens)], strict=True)
    return [tokens[start:end] for start, end in bounds if end > start]


def imdb_sentences(split: str, min_tokens: int = 8, max_tokens: int = 30) -> pd.DataFrame:
    """Every sentence of an IMDB split with ``min_tokens``–``max_tokens`` tokens.

    Each split is tokenised once (``tokenize``, ``split_sentences``) and kept in the data
    folder's ``cache/``, every sentence as word ids.

    Returns
    -------
    DataFrame
        doc_id, label (the review's), tokens (a list of lowercase tokens).

    Raises
    ------
    InputError
        ``split`` not one of IMDB's, ``min_tokens`` not a whole number >= 0, ``max_tokens``
        not a whole number >= ``min_tokens``.
    """
    check_choice(split, "split", data.IMDB_SPLITS)
    check_int(min_tokens, "min_tokens", minimum=0)
    check_int(max_tokens, "max_tokens", minimum=min_tokens)
    key = storage.key({"artefact": "imdb sentences", "split": split}, datasets=["imdb"], libraries=["pandas"])
    stored = storage.cached(settings.data_dir() / "cache" / f"imdb_sentences_{split}_{key}.pkl",
                            lambda: _encoded_sentences(split), lambda value, tmp: pd.to_pickle(value, tmp),
                            lambda path: _encoded_or_none(pd.read_pickle(path), data.IMDB_ROWS[split]))
    lengths = stored["lengths"]
    kept = (lengths >= min_tokens) & (lengths <= max_tokens)
    words = stored["vocabulary"][stored["codes"]].tolist()
    ends = np.cumsum(lengths)[kept].tolist()
    tokens = [words[end - n:end] for end, n in zip(ends, lengths[kept].tolist(), strict=True)]
    reviews = stored["review"][kept]
    rows = zip(stored["doc_id"][reviews].tolist(), stored["label"][reviews].tolist(), tokens, strict=True)
    return pd.DataFrame(list(rows), columns=["doc_id", "label", "tokens"])  # rows: columns typed as ever


#: What the cache of a split's sentences holds: per review, its doc_id and label; per
#: sentence, its review (a row of ``data.load_imdb``) and length; the words, as codes into
#: the vocabulary (32-bit: half the file of 64-bit ids, and a split has 7 million words).
_ENCODED = {"doc_id", "label", "review", "lengths", "codes", "vocabulary"}


def _encoded_sentences(split: str) -> dict[str, np.ndarray]:
    reviews = data.load_imdb(split)
    review, lengths, words = [], [], []
    for row, text in enumerate(reviews.text):
        for sentence in split_sentences(tokenize(text)):
            review.append(row)
            lengths.append(len(sentence))
            words += sentence
    codes, vocabulary = pd.factorize(np.array(words, dtype=object))
    return {"doc_id": reviews.doc_id.to_numpy(dtype=object), "label": reviews.label.to_numpy(dtype=object),
            "review": np.array(review, dtype=np.int32), "lengths": np.array(lengths, dtype=np.int32),
            "codes": codes.astype(np.int32), "vocabulary": np.asarray(vocabulary, dtype=object)}


def _encoded_or_none(stored: object, reviews: int) -> dict[str, np.ndarray] | None:
    """The cached sentences if they are of ``reviews`` reviews and their parts fit together,
    else None (tokenised again)."""
    if not (isinstance(stored, dict) and set(stored) == _ENCODED
            and all(isinstance(part, np.ndarray) and part.ndim == 1 for part in stored.values())
            and all(stored[name].dtype == np.int32 for name in ("review", "lengths", "codes"))):
        return None

    def within(ids: np.ndarray, size: int) -> bool:
        return not len(ids) or (0 <= ids.min() and ids.max() < size)

    fits = (len(stored["doc_id"]) == len(stored["label"]) == reviews
            and len(stored["review"]) == len(stored["lengths"])
            and all(map(isinstance, stored["vocabulary"], repeat(str)))
            and within(stored["lengths"] - 1, len(stored["codes"]))
            and int(stored["lengths"].sum()) == len(stored["codes"])
            and within(stored["review"], len(stored["doc_id"]))
            and within(stored["codes"], len(stored["vocabulary"])))
    return stored if fits else None


def _token_problem(tokens, allow_empty: bool) -> str | None:
    """What is wrong with ``tokens`` as a list of string tokens (None: nothing)."""
    listed = type(tokens) is list or (isinstance(tokens, (Sequence, np.ndarray))
                                      and not isinstance(tokens, (str, bytes))
                                      and not (isinstance(tokens, np.ndarray) and tokens.ndim != 1))
    if not listed or not (allow_empty or len(tokens)):
        what = "a list of tokens" if allow_empty else "a non-empty list of tokens"
        return f"must be {what}, not {tokens!r:.60}."
    # map keeps the check in C: a training text has millions of tokens
    if not all(map(isinstance, tokens, repeat(str))):
        return f"holds a token that is not a string: {list(tokens)!r:.60}."
    return None


def _tokens(tokens, name: str, allow_empty: bool = True) -> list[str]:
    """``tokens`` as a list of strings (non-empty unless ``allow_empty``), or an InputError."""
    problem = _token_problem(tokens, allow_empty)
    if problem:
        raise InputError(f"{name} {problem}")
    return list(tokens)


def _corrupting(tokens, rng) -> tuple[list[str], np.random.Generator]:
    """A Zellig's arguments checked: a list of string tokens and a numpy Generator."""
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"rng must be a numpy Generator (np.random.default_rng(seed)), "
                         f"not {type(rng).__name__}.")
    return _tokens(tokens, "tokens"), rng


def _token_lists(sentences, name: str) -> list[list[str]]:
    """``sentences`` as a list of token lists, each a non-empty list of strings, or an InputError."""
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, (Sequence, pd.Series, np.ndarray)) \
            or (isinstance(sentences, np.ndarray) and sentences.ndim == 0):
        raise InputError(f"{name} must be a list of sentences, each a list of tokens, "
                         f"not {type(sentences).__name__}.")
    # non-empty lists of strings, checked in C (a training text has millions of tokens); else
    # sentence by sentence, to name the first that is not
    plain = ({*map(type, sentences)} <= {list} and all(sentences)
             and all(map(isinstance, chain.from_iterable(sentences), repeat(str))))
    for i, tokens in enumerate([] if plain else sentences):
        problem = _token_problem(tokens, allow_empty=False)
        if problem:
            raise InputError(f"{name}[{i}] {problem}")
    return [tokens if type(tokens) is list else list(tokens) for tokens in sentences]  # read, never changed


def verbatim_in(sentences, text, whole: bool = False) -> np.ndarray:
    """Whether each sentence occurs word for word in ``text``.

    A sentence occurs in ``text`` when its tokens appear, in order and next to each other,
    inside one of ``text``'s sentences (``whole=False``), or when it *is* one of them
    (``whole=True``). A language model trained on ``text`` has seen every n-gram of such a
    sentence, so it is no test of the model.

    Every run of k tokens of ``text`` (k: the shortest sentence's length) is looked up
    among the sentences' first k tokens, and each hit is compared in full: one pass over
    ``text``.

    Parameters
    ----------
    sentences : list of list of str
        The sentences to look for, each a non-empty list of tokens.
    text : list of list of str
        The text to look in, as sentences of tokens (e.g. a language model's training
        sentences); it may be empty.
    whole : bool
        Count only a sentence of ``text`` equal to the sentence, not one that contains it.

    Returns
    -------
    ndarray of bool, shape (len(sentences),)

    Raises
    ------
    InputError
        ``sentences`` or ``text`` not a list of token lists, a sentence empty or holding a
        token that is not a string, ``sentences`` empty, ``whole`` not a bool.
    """
    sentences = _token_lists(sentences, "sentences")
    if not sentences:
        raise InputError("sentences is empty: give at least one sentence to look for.")
    if not isinstance(whole, bool):
        raise InputError(f"whole must be True or False, not {whole!r}.")
    return _verbatim_in(sentences, _token_lists(text, "text"), whole)


def _verbatim_in(sentences: list[list[str]], text: list[list[str]], whole: bool) -> np.ndarray:
    """``verbatim_in`` on arguments already checked."""
    if whole:
        lengths = {len(tokens) for tokens in sentences}  # only lines of these lengths can be one
        seen = {tuple(line) for line in text if len(line) in lengths}
        return np.array([tuple(tokens) in seen for tokens in sentences], dtype=bool)
    k = min(len(tokens) for tokens in sentences)
    by_start: dict[tuple[str, ...], list[int]] = {}
    for i, tokens in enumerate(sentences):
        by_start.setdefault(tuple(tokens[:k]), []).append(i)
    found = np.zeros(len(sentences), dtype=bool)
    for line in text:
        for start in range(len(line) - k + 1):
            for i in by_start.get(tuple(line[start:start + k]), ()):
                found[i] |= line[start:start + len(sentences[i])] == sentences[i]
    return found


def held_out_sentences(training, n: int = TEST_SENTENCES, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The lab's real sentences: a seeded sample of IMDB test sentences that the language
    model's training text does not hold verbatim.

    ``n`` sentences of 8–30 tokens are sampled from IMDB's test reviews (``imdb_sentences``);
    those that occur word for word in ``training`` (``verbatim_in``: a review line quoted
    in another review, a stock phrase such as "i give this movie 1 star out of 10 .") are
    removed, since a model that has seen a sentence is not tested by it.

    Parameters
    ----------
    training : list of list of str
        The language model's training sentences.
    n : int
        How many sentences to sample before removing.
    seed : int
        The sample's ``random_state``.

    Returns
    -------
    (DataFrame, DataFrame)
        The sentences kept and those removed (doc_id, label, tokens; each indexed from 0).

    Raises
    ------
    InputError
        ``training`` not a list of token lists; ``n`` not a whole number from 1 to the
        number of test sentences; ``seed`` not a whole number >= 0.
    """
    check_int(n, "n")
    check_int(seed, "seed", minimum=0)
    training = _token_lists(training, "training")
    pool = imdb_sentences("test", *SENTENCE_TOKENS)
    check_int(n, "n", maximum=len(pool))
    sample = pool.sample(n, random_state=seed).reset_index(drop=True)
    seen = _verbatim_in(list(sample.tokens), training, whole=False)
    return sample[~seen].reset_index(drop=True), sample[seen].reset_index(drop=True)


# --------------------------------------------------------------------------- language model


def _distinct_tokens(sentences: list[list[str]]) -> tuple[np.ndarray, list[str]]:
    """Every token of ``sentences`` as a code into the list of distinct tokens (pandas' hash
    table: a training text has millions of tokens, a few thousand of them distinct)."""
    codes, distinct = pd.factorize(np.fromiter(chain.from_iterable(sentences), dtype=object,
                                               count=sum(map(len, sentences))))
    return codes, distinct.tolist()


class NgramLM:
    """An n-gram language model with interpolated Witten-Bell smoothing.

    P(w | h) = (c(h w) + N1+(h) P(w | h')) / (c(h) + N1+(h)), where h' drops the oldest
    word of the history h, c(h) = sum_w c(h w), and N1+(h) is the number of distinct words
    seen after h; a history never seen falls back to P(w | h') entirely. The base is
    add-one: P(w) = (c(w) + 1) / (N + |V|). Sentences are padded with ``order - 1`` ``<s>``
    on the left and one ``</s>``; words seen fewer than ``min_count`` times become ``<unk>``.

    Parameters
    ----------
    order : int
        The highest n (1 unigram, 2 bigram, 3 trigram, …); lower orders can be used when
        scoring (``order=`` arguments).
    min_count : int
        Vocabulary cut-off.
    """

    def __init__(self, order: int = 3, min_count: int = 2) -> None:
        self.order, self.min_count = check_int(order, "order"), check_int(min_count, "min_count")

    def fit(self, sentences) -> NgramLM:
        """Count every n-gram up to ``order`` in ``sentences`` (lists of tokens)."""
        sentences = _token_lists(sentences, "sentences")
        if not sentences:
            raise InputError("sentences is empty: give at least one sentence to count.")
        codes, distinct = _distinct_tokens(sentences)
        counts = np.bincount(codes, minlength=len(distinct)).tolist()
        words = sorted(w for w, c in zip(distinct, counts, strict=True)
                       if c >= self.min_count and w not in (BOS, EOS, UNK))
        self.vocab_ = np.array([BOS, EOS, UNK, *words])
        self.index_ = {w: i for i, w in enumerate(self.vocab_)}
        flat = self._padded(sentences, self._ids(codes, distinct))
        predicted = np.flatnonzero(flat != 0)
        self.unigram_ = np.bincount(flat[predicted], minlength=len(self.vocab_)).astype(float)
        self.tables_ = {n: self._table(self._keys(flat, predicted, n)) for n in range(2, self.order + 1)}
        return self

    # -- internals: an n-gram is one int64 key, sum_j id(w_{t-j}) * V^j (base-V digits)

    def _encode(self, tokens) -> list[int]:
        unk = self.index_[UNK]
        return [self.index_.get(w, unk) for w in tokens]

    def _ids(self, codes: np.ndarray, distinct: list[str]) -> np.ndarray:
        """The ids of tokens given as ``_distinct_tokens`` gives them: each distinct one looked up once."""
        return np.array(self._encode(distinct), dtype=np.int64)[codes]

    def _padded(self, sentences: list[list[str]], ids: np.ndarray) -> np.ndarray:
        """Every sentence's ids (``ids``: its words', in order) in one array, each after
        ``order - 1`` ``<s>`` (id 0) and before one ``</s>`` (id 1); built with numpy, since a
        training text has millions of words."""
        lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
        spans = lengths + self.order  # the padding, the words and </s>
        ends = np.cumsum(spans)
        flat = np.zeros(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
        flat[ends - 1] = 1
        words_before = np.cumsum(lengths) - lengths
        where = np.arange(lengths.sum()) + np.repeat(ends - spans + self.order - 1 - words_before, lengths)
        flat[where] = ids
        return flat

    def _keys(self, flat: np.ndarray, positions: np.ndarray, n: int) -> np.ndarray:
        base = len(self.vocab_)
        if base ** n >= 2**62:
            raise KitError(f"Vocabulary of {base} words too large for {n}-gram keys; raise min_count.")
        keys = np.zeros(len(positions), dtype=np.int64)
        for j in range(n - 1, -1, -1):
            keys = keys * base + flat[positions - j]
        return keys

    def _table(self, keys: np.ndarray) -> dict[str, np.ndarray]:
        grams, counts = np.unique(keys, return_counts=True)
        contexts, starts, followers = np.unique(grams // len(self.vocab_), return_index=True,
                                                return_counts=True)
        return {"grams": grams, "counts": counts.astype(float), "contexts": contexts,
                "totals": np.add.reduceat(counts, starts).astype(float), "followers": followers.astype(float)}

    @staticmethod
    def _lookup(sorted_keys: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
        where = np.minimum(np.searchsorted(sorted_keys, queries), len(sorted_keys) - 1)
        return np.where(sorted_keys[where] == queries, values[where], 0.0)

    def _probabilities(self, flat: np.ndarray, positions: np.ndarray, order: int) -> np.ndarray:
        ids = flat[positions]
        p = (self.unigram_[ids] + 1) / (self.unigram_.sum() + len(self.vocab_) - 1)  # <s> is never predicted
        for n in range(2, order + 1):
            table, keys = self.tables_[n], self._keys(flat, positions, n)
            contexts = keys // len(self.vocab_)
            gram = self._lookup(table["grams"], table["counts"], keys)
            total = self._lookup(table["contexts"], table["totals"], contexts)
            followers = self._lookup(table["contexts"], table["followers"], contexts)
            p = np.where(total > 0, (gram + followers * p) / np.maximum(total + followers, 1), p)
        return p

    def _order(self, order: int | None) -> int:
        return self.order if order is None else check_int(order, "order", minimum=1, maximum=self.order)

    # -- nltk.lm-like interface

    def score(self, word: str, context=(), order: int | None = None) -> float:
        """P(word | context) (the last ``order - 1`` context words are used)."""
        if not isinstance(word, str):
            raise InputError(f"word must be a string, not {type(word).__name__}.")
        context = _tokens(context, "context")
        order = self._order(order)
        tail = self.order - 1
        history = ([BOS] * tail + list(context))[-tail:] if tail else []
        flat = np.array(self._encode([*history, word]), dtype=np.int64)
        return float(self._probabilities(flat, np.array([len(flat) - 1]), order)[0])

    def logscore(self, word: str, context=(), order: int | None = None) -> float:
        """log2 P(word | context), as nltk.lm's ``logscore``."""
        return float(np.log2(self.score(word, context, order)))

    def mean_logprob(self, sentences, order: int | None = None) -> np.ndarray:
        """Each sentence's mean log2-probability per predicted token (``</s>`` included)."""
        order = self._order(order)
        sentences = _token_lists(sentences, "sentences")
        if not sentences:
            return np.zeros(0)
        flat = self._padded(sentences, self._ids(*_distinct_tokens(sentences)))
        positions = np.flatnonzero(flat != 0)
        logp = np.log2(self._probabilities(flat, positions, order))
        lengths = np.array([len(s) + 1 for s in sentences])
        return np.add.reduceat(logp, np.concatenate([[0], np.cumsum(lengths)[:-1]])) / lengths

    def followers(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        """Words seen right after ``word`` and how often (the bigram counts), as two arrays."""
        if self.order < 2:
            raise KitError("A unigram model has no bigram counts.")
        table, base = self.tables_[2], len(self.vocab_)
        context = self.index_.get(word, self.index_[UNK])
        lo, hi = np.searchsorted(table["grams"], [context * base, (context + 1) * base])
        return self.vocab_[table["grams"][lo:hi] % base], table["counts"][lo:hi]


# --------------------------------------------------------------------------- Zelligs


class Zellig(Protocol):
    """A corrupter: makes a fake sentence from a real one (``make_pairs``)."""

    @property
    def name(self) -> str:
        """What the corruption does, for tables and messages."""

    def corrupt(self, tokens: list[str], rng: np.random.Generator) -> list[str] | None:
        """The fake made from ``tokens``, drawing any randomness from ``rng``; None when the
        corruption does not apply to this sentence."""


class SwapAdjacent:
    """Swap one random pair of adjacent, different tokens."""

    name = "swap adjacent words"

    def corrupt(self, tokens: list[str], rng: np.random.Generator) -> list[str] | None:
        """The fake sentence, or None when every adjacent pair is identical."""
        tokens, rng = _corrupting(tokens, rng)
        candidates = [i for i in range(len(tokens) - 1) if tokens[i] != tokens[i + 1]]
        if not candidates:
            return None
        i = candidates[rng.integers(len(candidates))]
        fake = list(tokens)
        fake[i], fake[i + 1] = fake[i + 1], fake[i]
        return fake


@dataclass(frozen=True)
class ShuffleWindow:
    """Shuffle the tokens inside one random window of ``window`` consecutive tokens."""

    window: int = 4

    @property
    def name(self) -> str:
        return f"shuffle a {self.window}-word window"

    def corrupt(self, tokens: list[str], rng: np.random.Generator) -> list[str] | None:
        """The fake sentence (always a different order), or None if no window has two distinct tokens."""
        tokens, rng = _corrupting(tokens, rng)
        starts = [i for i in range(len(tokens) - self.window + 1) if len(set(tokens[i:i + self.window])) > 1]
        if not starts:
            return None
        start = starts[rng.integers(len(starts))]
        part = tokens[start:start + self.window]
        shuffled = part
        while shuffled == part:  # a window with two distinct tokens has a different order
            shuffled = [part[j] for j in rng.permutation(self.window)]
        return tokens[:start] + shuffled + tokens[start + self.window:]


@dataclass(frozen=True)
class BigramSubstitute:
    """Replace ``k`` random, non-adjacent words with words sampled from a bigram model: each
    replacement is drawn in proportion to how often it followed the preceding word in the
    corpus (never the original word, never ``<unk>``/``</s>``). The edit distance is exactly k."""

    lm: NgramLM
    k: int = 1

    @property
    def name(self) -> str:
        return f"bigram substitution (k={self.k})"

    def corrupt(self, tokens: list[str], rng: np.random.Generator) -> list[str] | None:
        """The fake sentence, or None if fewer than k positions have a possible replacement."""
        tokens, rng = _corrupting(tokens, rng)
        fake, changed = list(tokens), set()
        for i in rng.permutation(len(tokens)):
            if i - 1 in changed or i + 1 in changed:  # keep every left neighbour original
                continue
            words, counts = self.lm.followers(tokens[i - 1] if i > 0 else BOS)
            allowed = (words != tokens[i]) & (words != UNK) & (words != EOS)
            if not allowed.any():
                continue
            weights = counts[allowed] / counts[allowed].sum()
            fake[i] = str(words[allowed][rng.choice(allowed.sum(), p=weights)])
            changed.add(i)
            if len(changed) == self.k:
                return fake
        return None


@dataclass(frozen=True)
class FlipSentiment:
    """Replace ``k`` opinion words with opinion words of the opposite polarity.

    Each replacement is drawn from the ``nearest`` opposite-polarity words closest in corpus
    frequency to the word it replaces (log counts), so that a fake is not given away by a
    rare word: what changes is the sentiment, as far as possible.

    Parameters
    ----------
    lexicon : dict
        ``{"pos": words, "neg": words}`` (the opinion lexicon).
    counts : dict
        Corpus frequency of each word; replacements come from words seen at least
        ``min_count`` times.
    """

    lexicon: dict
    counts: dict
    k: int = 1
    nearest: int = 20
    min_count: int = 50

    @property
    def name(self) -> str:
        return f"flip opinion words (k={self.k})"

    @cached_property
    def _pools(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """For a word of each polarity: the opposite-polarity candidates (alphabetical) and
        their log counts, built once per Zellig."""
        pools = {}
        for polarity, other in (("pos", "neg"), ("neg", "pos")):
            words = sorted(w for w in self.lexicon[other] if self.counts.get(w, 0) >= self.min_count)
            pools[polarity] = (words, np.log(np.array([self.counts[w] for w in words], dtype=float)))
        return pools

    def _replacements(self, word: str, polarity: str) -> list[str]:
        words, logs = self._pools[polarity]
        distance = np.abs(logs - np.log(self.counts.get(word, 1)))
        return [words[j] for j in np.argsort(distance, kind="stable")[:self.nearest]]  # ties: alphabetical

    def corrupt(self, tokens: list[str], rng: np.random.Generator) -> list[str] | None:
        """The fake sentence, or None if it has fewer than k opinion words."""
        tokens, rng = _corrupting(tokens, rng)
        polarity = {i: p for i, t in enumerate(tokens) for p in ("pos", "neg") if t in self.lexicon[p]}
        if len(polarity) < self.k:
            return None
        fake = list(tokens)
        for i in sorted(rng.choice(sorted(polarity), self.k, replace=False)):
            choices = self._replacements(tokens[i], polarity[i])
            if not choices:
                return None
            fake[i] = choices[rng.integers(len(choices))]
        return fake


def make_pairs(sentences: pd.DataFrame, zellig: Zellig, seed: int = 0) -> pd.DataFrame:
    """Corrupt every sentence with ``zellig``; keep those it applies to.

    Sentence i uses its own generator, seeded by (seed, i): the result for a sentence does
    not depend on the others.

    Parameters
    ----------
    sentences : DataFrame
        doc_id, label, tokens (``imdb_sentences``).
    zellig : Zellig
    seed : int

    Returns
    -------
    DataFrame
        doc_id, label, real, fake (token lists).
    """
    rows = []
    for i, (doc_id, label, tokens) in enumerate(zip(sentences.doc_id, sentences.label, sentences.tokens,
                                                    strict=True)):
        fake = zellig.corrupt(list(tokens), np.random.default_rng([seed, i]))
        if fake is not None:
            rows.append((doc_id, label, list(tokens), fake))
    if not rows:
        raise KitError(f"{zellig.name}: no sentence could be corrupted.")
    return pd.DataFrame(rows, columns=["doc_id", "label", "real", "fake"])


# --------------------------------------------------------------------------- Claudes and the score


class Claude(Protocol):
    """A model of language judging pairs (``adversarial_score``): of a real and a fake
    sentence, it calls the less plausible one the fake."""

    @property
    def name(self) -> str:
        """The model, for tables and messages."""

    def plausibility(self, sentences: list[list[str]], labels: pd.Series) -> np.ndarray:
        """A score per sentence, higher for more plausible; ``labels`` are the polarities of the
        reviews the sentences come from (a Claude may ignore them)."""


@dataclass(frozen=True)
class LMClaude:
    """Calls the sentence with the lower per-token log-probability the fake."""

    lm: NgramLM
    order: int | None = None

    @property
    def name(self) -> str:
        return f"{self.order or self.lm.order}-gram LM"

    def plausibility(self, sentences, labels=None) -> np.ndarray:
        """Mean log2-probability per token of each sentence (``labels`` are ignored)."""
        return self.lm.mean_logprob(sentences, self.order)


class _Scorer(Protocol):
    """What ``ClassifierClaude`` needs of a classifier."""

    def decision_function(self, X: Any) -> np.ndarray:
        """A score per row of ``X``: positive means ``pos``."""


class _Featurizer(Protocol):
    """What ``ClassifierClaude`` needs of a vectorizer."""

    def transform(self, documents: list[list[str]]) -> Any:
        """The features of each token list, a row each."""


@dataclass(frozen=True)
class ClassifierClaude:
    """A sentiment classifier as Claude, told the polarity of the review each pair came from:
    the sentence whose score points *less* towards that polarity is called the fake.

    ``model`` has ``decision_function`` (positive means ``pos``) over ``vectorizer``'s features
    (a vectorizer taking token lists).
    """

    model: _Scorer
    vectorizer: _Featurizer
    name: str = "sentiment classifier"

    def plausibility(self, sentences, labels) -> np.ndarray:
        """The classifier's score signed towards each sentence's review polarity."""
        scores = self.model.decision_function(self.vectorizer.transform(list(sentences)))
        return np.where(np.asarray(labels) == "pos", scores, -scores)


@dataclass(frozen=True)
class AdversarialResult:
    """Claude's score S over n pairs, with its 95 % Wilson interval and the two-sided
    binomial test of S = 0.5; ``ties``: pairs Claude could not separate (decided by a coin)."""

    S: float
    low: float
    high: float
    p_value: float
    n: int
    ties: int


def adversarial_score(claude: Claude, pairs: pd.DataFrame, seed: int = 0) -> AdversarialResult:
    """Show Claude each (real, fake) pair in a random (seeded) order and score its guesses.

    Claude calls the less plausible sentence of a pair the fake; exact ties are decided
    by a fair coin (seeded), so a Claude that cannot tell scores 0.5 in expectation.

    Parameters
    ----------
    claude : Claude
    pairs : DataFrame
        label, real, fake (``make_pairs``).
    seed : int
        Seeds the order of each pair and the coins.

    Returns
    -------
    AdversarialResult
    """
    if len(pairs) == 0:
        raise InputError("pairs must hold at least one pair to score, not none.")
    rng = np.random.default_rng(seed)
    n = len(pairs)
    real_first = rng.random(n) < 0.5
    coin = rng.random(n) < 0.5
    first = [r if f else z for r, z, f in zip(pairs.real, pairs.fake, real_first, strict=True)]
    second = [z if f else r for r, z, f in zip(pairs.real, pairs.fake, real_first, strict=True)]
    p_first, p_second = claude.plausibility(first, pairs.label), claude.plausibility(second, pairs.label)
    tie = np.isclose(p_first, p_second, rtol=1e-9, atol=0)  # equal up to summation order
    says_first_fake = np.where(tie, coin, p_first < p_second)
    correct = says_first_fake == ~real_first
    score, low, high = accuracy_interval(correct)
    p_value = float(binomtest(int(correct.sum()), n).pvalue)
    return AdversarialResult(S=score, low=low, high=high, p_value=p_value, n=n, ties=int(tie.sum()))
