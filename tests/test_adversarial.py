"""Adversarial evaluation: sentences, the n-gram LM, every Zellig, the Claudes, the score."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from helpers import adversarial as adv
from helpers import data
from helpers.errors import InputError, KitError
from helpers.settings import REPO_ROOT
from helpers.text import tokenize

CORPUS = [s.split() for s in [
    "the film was great .", "the film was awful .", "the cast was great and the film was fun .",
    "a dull film .", "the plot was dull but the cast was great .", "great fun !",
]]
LEXICON = {"pos": frozenset({"great", "fun"}), "neg": frozenset({"awful", "dull"})}


@pytest.fixture(scope="module")
def lm() -> adv.NgramLM:
    return adv.NgramLM(order=3, min_count=1).fit(CORPUS)


def test_split_sentences_keeps_the_end_mark():
    expected = [["a", "b", "."], ["c", "!"], ["d", "..."], ["e"]]
    assert adv.split_sentences("a b . c ! d ... e".split()) == expected
    assert adv.split_sentences(("it", "ends", "!")) == [["it", "ends", "!"]]
    assert adv.split_sentences(["?", "..", "a.", "!b", ""]) == [["?"], [".."], ["a.", "!b", ""]]
    assert adv.split_sentences(["a", "!\n", "b", "\n"]) == [["a", "!\n"], ["b", "\n"]]  # as the regex's $
    assert adv.split_sentences([]) == []


def _padded_by_hand(sentences: list[list[str]], order: int, vocabulary: set[str]) -> list[str]:
    """The plain definition: each sentence after order - 1 <s> and before </s>, rare words <unk>."""
    return [token for sentence in sentences
            for token in [adv.BOS] * (order - 1) + [w if w in vocabulary else adv.UNK for w in sentence]
            + [adv.EOS]]


def test_the_counts_are_those_of_the_padded_sentences_n_grams():
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(200)]  # about 6 uses each: some under min_count
    sentences = [list(rng.choice(words, int(rng.integers(1, 9)))) for _ in range(300)]
    lm = adv.NgramLM(order=3, min_count=4).fit(sentences)
    counts = Counter(w for s in sentences for w in s)
    kept = {w for w, c in counts.items() if c >= 4}
    assert set(lm.vocab_) == kept | {adv.BOS, adv.EOS, adv.UNK} and kept != set(words)  # some words are <unk>
    padded = _padded_by_hand(sentences, 3, kept)
    unigrams = Counter(w for w in padded if w != adv.BOS)
    assert dict(zip(lm.vocab_, lm.unigram_, strict=True)) == {w: unigrams[w] for w in lm.vocab_}
    base = len(lm.vocab_)
    for n in (2, 3):
        grams = Counter(tuple(padded[i - n + 1:i + 1]) for i in range(n - 1, len(padded))
                        if padded[i] != adv.BOS)
        table = lm.tables_[n]
        found = {tuple(lm.vocab_[(key // base ** j) % base] for j in range(n - 1, -1, -1)): count
                 for key, count in zip(table["grams"], table["counts"], strict=True)}
        assert found == grams
    assert lm.mean_logprob([]).shape == (0,)


def test_words_that_numpy_stores_alike_are_counted_as_before():
    """numpy's strings drop trailing NULs: "a" and "a\\x00" share one vocabulary entry."""
    lm = adv.NgramLM(order=2, min_count=1).fit([["a", "a\x00", "b"]])
    assert lm.unigram_.sum() == 4 and lm.mean_logprob([["a", "b"]]).shape == (1,)


def test_distributions_sum_to_one(lm):
    words = [w for w in lm.vocab_ if w != adv.BOS]
    for context in [(), ("the",), ("the", "film"), ("never", "seen"), ("was",)]:
        for order in (1, 2, 3):
            assert sum(lm.score(w, context, order) for w in words) == pytest.approx(1.0)


def test_witten_bell_by_hand(lm):
    counts = Counter(w for s in CORPUS for w in s + [adv.EOS])
    n, v = sum(counts.values()), len(lm.vocab_) - 1  # <s> is never predicted
    unigram = (counts["great"] + 1) / (n + v)
    assert lm.score("great", order=1) == pytest.approx(unigram)
    after_was = Counter(s[i + 1] for s in CORPUS for i in range(len(s) - 1) if s[i] == "was")
    total, distinct = sum(after_was.values()), len(after_was)
    bigram = (after_was["great"] + distinct * unigram) / (total + distinct)
    assert lm.score("great", ("was",), order=2) == pytest.approx(bigram)
    after = Counter(s[i + 2] for s in CORPUS for i in range(len(s) - 2) if s[i:i + 2] == ["film", "was"])
    trigram = (after["great"] + len(after) * bigram) / (sum(after.values()) + len(after))
    assert lm.score("great", ("film", "was")) == pytest.approx(trigram)
    assert lm.score("great", ("unseen", "history"), order=3) == pytest.approx(lm.score("great", order=1))
    assert lm.logscore("great", ("film", "was")) == pytest.approx(np.log2(trigram))


def test_mean_logprob_matches_token_scores(lm):
    sentence = "the film was fun .".split()
    expected = np.mean([lm.logscore(w, sentence[:i]) for i, w in enumerate(sentence + [adv.EOS])])
    assert lm.mean_logprob([sentence, ["a"]])[0] == pytest.approx(expected)
    assert lm.mean_logprob([["zzz", "qqq"]]).shape == (1,)  # unknown words are <unk>, not errors
    with pytest.raises(InputError, match="order must be at most 3, not 4"):
        lm.mean_logprob([sentence], order=4)


def test_followers(lm):
    words, counts = lm.followers("was")
    found = dict(zip(words, counts, strict=True))
    expected = Counter(s[i + 1] for s in CORPUS for i in range(len(s) - 1) if s[i] == "was")
    assert found == dict(expected)


SENTENCE = "the plot was dull but the cast was great and fun .".split()


def _check_reproducible(zellig, tokens=SENTENCE):
    first = zellig.corrupt(list(tokens), np.random.default_rng(3))
    assert first == zellig.corrupt(list(tokens), np.random.default_rng(3))
    assert first != tokens
    others = {tuple(zellig.corrupt(list(tokens), np.random.default_rng(s))) for s in range(20)}
    assert len(others) > 1
    return first


def test_swap_adjacent_swaps_exactly_one_pair():
    fake = _check_reproducible(adv.SwapAdjacent())
    changed = [i for i, (a, b) in enumerate(zip(SENTENCE, fake, strict=True)) if a != b]
    assert len(changed) == 2 and changed[1] == changed[0] + 1
    assert fake[changed[0]] == SENTENCE[changed[1]] and fake[changed[1]] == SENTENCE[changed[0]]
    assert adv.SwapAdjacent().corrupt(["a", "a", "a"], np.random.default_rng(0)) is None


def test_shuffle_window_permutes_inside_one_window():
    zellig = adv.ShuffleWindow(window=4)
    fake = _check_reproducible(zellig)
    changed = [i for i, (a, b) in enumerate(zip(SENTENCE, fake, strict=True)) if a != b]
    assert changed[-1] - changed[0] < 4 and sorted(fake) == sorted(SENTENCE)
    assert zellig.corrupt(["a", "b"], np.random.default_rng(0)) is None


def test_bigram_substitute_replaces_k_words_with_observed_followers(lm):
    for k in (1, 2):
        zellig = adv.BigramSubstitute(lm, k=k)
        fake = _check_reproducible(zellig)
        changed = [i for i, (a, b) in enumerate(zip(SENTENCE, fake, strict=True)) if a != b]
        assert len(changed) == k and len(fake) == len(SENTENCE)
        for i in changed:
            followers, _ = lm.followers(fake[i - 1] if i else adv.BOS)
            assert fake[i] in followers and fake[i] not in (adv.UNK, adv.EOS)


def test_flip_sentiment_replaces_opinion_words_with_the_opposite_polarity():
    counts = {"great": 100, "fun": 60, "awful": 90, "dull": 70, "superb": 5}
    lexicon = {"pos": LEXICON["pos"] | {"superb"}, "neg": LEXICON["neg"]}
    zellig = adv.FlipSentiment(lexicon, counts, k=2, nearest=1, min_count=50)
    fake = _check_reproducible(zellig)
    changed = [i for i, (a, b) in enumerate(zip(SENTENCE, fake, strict=True)) if a != b]
    assert len(changed) == 2
    for i in changed:
        before = "pos" if SENTENCE[i] in lexicon["pos"] else "neg"
        assert fake[i] in lexicon["neg" if before == "pos" else "pos"] and fake[i] != "superb"
    # nearest=1: the opposite word closest in frequency ("great" 100 -> "awful" 90)
    nearest = adv.FlipSentiment(lexicon, counts, k=1, nearest=1)
    one = nearest.corrupt(["great", "film"], np.random.default_rng(0))
    assert one == ["awful", "film"]
    assert adv.FlipSentiment(lexicon, counts).corrupt(["a", "film"], np.random.default_rng(0)) is None


def test_make_pairs_is_per_sentence_reproducible():
    sentences = pd.DataFrame({"doc_id": ["d1", "d2", "d3"], "label": ["pos", "neg", "pos"],
                              "tokens": [SENTENCE, ["a", "a"], "the film was great .".split()]})
    pairs = adv.make_pairs(sentences, adv.SwapAdjacent(), seed=0)
    assert pairs.doc_id.tolist() == ["d1", "d3"]  # "a a" cannot be swapped
    alone = adv.make_pairs(sentences.iloc[[0]], adv.SwapAdjacent(), seed=0)
    assert alone.fake[0] == pairs.fake[0]
    with pytest.raises(KitError, match="no sentence could be corrupted"):
        adv.make_pairs(sentences.iloc[[1]], adv.SwapAdjacent())


class _Oracle:
    """Knows which is fake: plausibility 1 for real sentences."""

    name = "oracle"

    def __init__(self, real):
        self.real = {tuple(r) for r in real}

    def plausibility(self, sentences, labels=None):
        return np.array([float(tuple(s) in self.real) for s in sentences])


class _Blind:
    name = "blind"

    def plausibility(self, sentences, labels=None):
        return np.zeros(len(sentences))


def test_adversarial_score_oracle_blind_and_interval():
    real = [[f"w{i}", "x"] for i in range(400)]
    pairs = pd.DataFrame({"doc_id": range(400), "label": "pos", "real": real,
                          "fake": [list(reversed(r)) for r in real]})
    best = adv.adversarial_score(_Oracle(real), pairs)
    assert (best.S, best.ties, best.n) == (1.0, 0, 400) and best.p_value < 1e-100 and best.high == 1.0
    blind = adv.adversarial_score(_Blind(), pairs, seed=1)
    assert blind.ties == 400 and 0.4 < blind.S < 0.6 and blind.low < 0.5 < blind.high
    assert blind == adv.adversarial_score(_Blind(), pairs, seed=1)
    with pytest.raises(InputError, match="pairs must hold at least one pair"):
        adv.adversarial_score(_Blind(), pairs.iloc[:0])


def test_lm_claude_prefers_fluent_order(lm):
    claude = adv.LMClaude(lm, order=3)
    fluent, scrambled = "the film was great .".split(), ". great was film the".split()
    assert claude.plausibility([fluent])[0] > claude.plausibility([scrambled])[0]
    unigram = adv.LMClaude(lm, order=1).plausibility([fluent, scrambled])
    assert unigram[0] == pytest.approx(unigram[1])  # a unigram model cannot see word order
    assert claude.name == "3-gram LM"


def test_classifier_claude_uses_the_review_polarity():
    class Scores:
        def decision_function(self, X):
            return np.asarray(X, dtype=float)

    class Lengths:
        def transform(self, sentences):
            return [len(s) for s in sentences]

    claude = adv.ClassifierClaude(Scores(), Lengths())
    assert claude.plausibility([["a", "b"], ["a"]], ["pos", "neg"]).tolist() == [2.0, -1.0]


def test_imdb_sentences_are_held_out_test_sentences(corpora):
    sentences = adv.imdb_sentences("test", min_tokens=8, max_tokens=30)
    lengths = sentences.tokens.map(len)
    assert lengths.between(8, 30).all() and len(sentences) > 100_000
    assert set(sentences.label) == {"pos", "neg"} and sentences.doc_id.str.startswith("test_").all()


def test_imdb_sentences_read_back_from_the_cache_are_the_reviews_sentences(corpora):
    """Tokenised once and cached as word ids: what comes back, cold or warm, is every sentence
    of each review in order (tokenize, then split_sentences), with its review's id and label."""
    cache = corpora / "cache"
    first = adv.imdb_sentences("test", min_tokens=1, max_tokens=10**6)
    stored = sorted(cache.glob("imdb_sentences_test_*.pkl"))
    assert len(stored) == 1
    again = adv.imdb_sentences("test", min_tokens=1, max_tokens=10**6)
    pd.testing.assert_frame_equal(again, first)
    reviews = data.load_imdb("test").iloc[::250]  # every 250th review, by the plain definition
    expected = [(doc_id, label, sentence)
                for doc_id, label, text in zip(reviews.doc_id, reviews.label, reviews.text, strict=True)
                for sentence in adv.split_sentences(tokenize(text))]
    found = again[again.doc_id.isin(set(reviews.doc_id))]
    assert list(zip(found.doc_id, found.label, found.tokens, strict=True)) == expected
    short = adv.imdb_sentences("test", min_tokens=3, max_tokens=5)
    pd.testing.assert_frame_equal(short, first[first.tokens.map(len).between(3, 5)].reset_index(drop=True))
    none = adv.imdb_sentences("test", min_tokens=10**6, max_tokens=10**6)
    pd.testing.assert_frame_equal(none, pd.DataFrame([], columns=["doc_id", "label", "tokens"]))


def _encoded(**change) -> dict[str, np.ndarray]:
    """A valid cache of two reviews' three sentences (six words), with ``change`` applied."""
    parts = {"doc_id": np.array(["test_neg_0", "test_pos_1"], dtype=object),
             "label": np.array(["neg", "pos"], dtype=object), "review": np.array([0, 0, 1], dtype=np.int32),
             "lengths": np.array([2, 3, 1], dtype=np.int32),
             "codes": np.array([0, 1, 2, 0, 1, 1], dtype=np.int32),
             "vocabulary": np.array(["a", ".", "b"], dtype=object)}
    return {**parts, **change}


@pytest.mark.parametrize("change", [
    {}, {"codes": np.array([0, 1, 2, 0, 1, 3], dtype=np.int32)}, {"codes": np.array([0, 1], dtype=np.int32)},
    {"review": np.array([0, 0, 2], dtype=np.int32)}, {"lengths": np.array([2, 4, 0], dtype=np.int32)},
    {"lengths": np.array([2, 3, 1])}, {"label": np.array(["neg"], dtype=object)}, {"extra": np.array([1])},
    {"vocabulary": np.array(["a", 1, "b"], dtype=object)},
])
def test_a_cache_of_sentences_whose_parts_do_not_fit_is_tokenised_again(change):
    assert (adv._encoded_or_none(_encoded(**change), reviews=2) is None) == bool(change)
    assert adv._encoded_or_none(_encoded(), reviews=3) is None  # another split's, or another data set's
    assert adv._encoded_or_none([1, 2], reviews=2) is None


def _joined(text: list[list[str]]) -> str:
    """The text as one string, a line per sentence, every word between spaces."""
    return "".join(f" {' '.join(line)} \n" for line in text)


def _occurs_by_brute_force(sentence: list[str], joined: str) -> bool:
    """The plain definition: the sentence, as a string of words, inside a line of the text."""
    return f" {' '.join(sentence)} " in joined


def test_verbatim_in_finds_a_sentence_inside_a_line_or_as_a_line():
    text = [s.split() for s in ["the film was great .", "* * * / * * * * *", "i give it 1 star out of 10 ."]]
    sentences = [s.split() for s in ["the film was great .", "* * / * * * * *", "film was great",
                                     "was great .", "great . i give", "the film", "1 star out of 10 . ok",
                                     "was"]]
    found = adv.verbatim_in(sentences, text)
    assert found.tolist() == [True, True, True, True, False, True, False, True]
    assert found.tolist() == [_occurs_by_brute_force(s, _joined(text)) for s in sentences]
    assert adv.verbatim_in(sentences, text, whole=True).tolist() == [True] + [False] * 7
    assert adv.verbatim_in(sentences, []).tolist() == [False] * 8


def test_verbatim_in_agrees_with_the_plain_definition_on_random_text():
    rng = np.random.default_rng(0)
    words = ["a", "b", "c", "."]
    text = [list(rng.choice(words, rng.integers(1, 12))) for _ in range(40)]
    sentences = [list(rng.choice(words, rng.integers(1, 6))) for _ in range(200)]
    found = adv.verbatim_in(sentences, text)
    assert found.tolist() == [_occurs_by_brute_force(s, _joined(text)) for s in sentences]
    assert found.any() and not found.all()


@pytest.mark.parametrize("call, message", [
    (lambda: adv.verbatim_in("the film", [["the"]]), "list of sentences"),
    (lambda: adv.verbatim_in([], [["the"]]), "sentences is empty"),
    (lambda: adv.verbatim_in([[]], [["the"]]), r"sentences\[0\] must be a non-empty list"),
    (lambda: adv.verbatim_in([["the", 1]], [["the"]]), "not a string"),
    (lambda: adv.verbatim_in([["the"]], [["the"], "film"]), r"text\[1\] must be a non-empty list"),
    (lambda: adv.verbatim_in([["the"]], None), "list of sentences"),
    (lambda: adv.verbatim_in([["the"]], [["the"]], whole=1), "True or False"),
    (lambda: adv.held_out_sentences([["the"]], n=0), "n must be at least 1"),
    (lambda: adv.held_out_sentences([["the"]], seed=-1), "seed must be at least 0"),
    (lambda: adv.held_out_sentences("the film"), "list of sentences"),
    (lambda: adv.imdb_sentences("dev"), "split must be one of 'train', 'test', 'unsup'"),
    (lambda: adv.imdb_sentences("test", min_tokens=-1), "min_tokens must be at least 0"),
    (lambda: adv.imdb_sentences("test", min_tokens=8, max_tokens=4), "max_tokens must be at least 8"),
    (lambda: adv.NgramLM(order=0), "order must be at least 1"),
    (lambda: adv.NgramLM(min_count="2"), "min_count must be a whole number"),
    (lambda: adv.NgramLM().fit([]), "sentences is empty"),
    (lambda: adv.NgramLM(order=1).fit([["a"]]).score(3), "word must be a string"),
    (lambda: adv.NgramLM(order=1).fit([["a"]]).score("a", "b c"), "context must be a list of tokens"),
    (lambda: adv.SwapAdjacent().corrupt(["a", "b"], 0), "rng must be a numpy Generator"),
    (lambda: adv.ShuffleWindow().corrupt("a b c d", np.random.default_rng(0)), "tokens must be a list"),
])
def test_bad_arguments_are_one_clear_input_error(call, message):
    with pytest.raises(InputError, match=message):
        call()


@pytest.mark.slow
def test_no_real_test_sentence_occurs_in_the_language_model_s_training_text(corpora):
    """Notebook 09's real sentences: none is a training sentence or inside one."""
    training = adv.imdb_sentences("train", min_tokens=1, max_tokens=10**6).tokens
    kept, removed = adv.held_out_sentences(training)
    assert len(kept) + len(removed) == adv.TEST_SENTENCES and 0 < len(removed) < 50
    assert not adv.verbatim_in(kept.tokens, training).any()
    lines = {tuple(tokens) for tokens in training}
    assert not any(tuple(tokens) in lines for tokens in kept.tokens)  # independently: no whole sentence
    joined = _joined(training)
    assert all(_occurs_by_brute_force(tokens, joined) for tokens in removed.tokens)
    assert kept.tokens.map(len).between(*adv.SENTENCE_TOKENS).all()


def test_importing_adversarial_does_not_load_gensim():
    """Notebook 09 needs no Doc2Vec: its module must not pull gensim in through another one."""
    check = "import sys, helpers.adversarial; print('gensim' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", check], cwd=REPO_ROOT, capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"
