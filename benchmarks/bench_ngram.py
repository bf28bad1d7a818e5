"""Trigram language model: the kit's vectorised counts against nltk.lm, the same model.

``helpers.adversarial.NgramLM(3)`` is interpolated Witten-Bell over an add-one unigram base,
each sentence padded with two ``<s>`` and one ``</s>``, words seen fewer than twice mapped
to ``<unk>``. nltk.lm is configured to that very model (its stock ``WittenBellInterpolated``
with ``padded_everygram_pipeline`` is another one: an unsmoothed unigram base, which gives
-inf to any sentence with an unseen word, and two ``</s>``):

- ``nltk.lm.models.InterpolatedLanguageModel`` with ``WittenBell`` smoothing whose unigram
  score is add-one over the vocabulary without ``<s>`` (never predicted);
- ``nltk.lm.Vocabulary(unk_cutoff=2, unk_label="<unk>")`` over the training words, with
  ``<s>`` and ``</s>``;
- trained on the 1- to 3-grams that end at each predicted token of the kit's padding.

Both fit the same training sentences (default: those of 1,000 IMDB training reviews) and
score the same 2,000 IMDB test sentences: each sentence's mean log2-probability per
predicted token (``</s>`` included). Asserted: the two agree to 1e-9 on every sentence.

Time: fit and scoring each get one warm-up call per contender, then ``--repeats`` rounds in
turns (kit, nltk, kit, ...); median and interquartile range. Memory of fitting: the peak
resident memory above the baseline after loading the training sentences, in a fresh process
per contender, and the peak traced by tracemalloc (``measure.memory_in_child``).

    python benchmarks/bench_ngram.py [--reviews 1000 --sentences 2000 --repeats 5]
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import pandas as pd
from measure import alternate, load_inputs, memory_in_child, report_memory, result_line
from nltk.lm import Vocabulary
from nltk.lm.models import InterpolatedLanguageModel
from nltk.lm.smoothing import WittenBell

from helpers import adversarial, data
from helpers.adversarial import BOS, EOS, UNK, NgramLM
from helpers.text import tokenize

ORDER, MIN_COUNT = 3, 2  # NgramLM's defaults
AGREEMENT = 1e-9  # largest difference allowed in a sentence's mean log2-probability
IMDB_TRAIN = 25_000
SEED = 0


def load(n_reviews: int, n_sentences: int) -> tuple[list[list[str]], list[list[str]]]:
    """Training sentences of every (25,000 / n)-th IMDB training review; sampled test sentences."""
    texts = data.load_imdb("train").text.iloc[:: max(1, IMDB_TRAIN // n_reviews)].iloc[:n_reviews]
    train = [s for t in texts for s in adversarial.split_sentences(tokenize(t))]
    test = adversarial.imdb_sentences("test").sample(n_sentences, random_state=SEED).tokens
    return train, list(test)


class AddOneBaseWittenBell(WittenBell):
    """nltk's Witten-Bell with the kit's base: P(w) = (c(w) + 1) / (N + |V| - 1), where |V|
    counts ``<s>``, ``</s>`` and ``<unk>``, and ``<s>`` (never predicted) is left out."""

    def unigram_score(self, word):
        unigrams = self.counts.unigrams
        return (unigrams[word] + 1) / (unigrams.N() + len(self.vocab) - 1)


def predicted_ngrams(sentence: list[str]):
    """The 1- to ORDER-grams ending at each token the kit predicts: its padding is
    ORDER - 1 ``<s>`` before and one ``</s>`` after, and ``<s>`` is never predicted."""
    padded = [BOS] * (ORDER - 1) + sentence + [EOS]
    for end in range(ORDER - 1, len(padded)):
        for n in range(1, ORDER + 1):
            yield tuple(padded[end - n + 1:end + 1])


def fit_kit(train):
    return NgramLM(ORDER, MIN_COUNT).fit(train)


def fit_nltk(train):
    words = (w for s in train for w in s if w not in (BOS, EOS, UNK))
    vocabulary = Vocabulary(words, unk_cutoff=MIN_COUNT, unk_label=UNK)
    vocabulary.update([BOS, EOS] * MIN_COUNT)  # in the vocabulary, as in the kit's
    model = InterpolatedLanguageModel(AddOneBaseWittenBell, ORDER, vocabulary=vocabulary)
    model.fit(predicted_ngrams(s) for s in train)
    return model


def score_kit(model, test) -> np.ndarray:
    return model.mean_logprob(test)


def score_nltk(model, test) -> np.ndarray:
    means = []
    for tokens in test:
        padded = [BOS] * (ORDER - 1) + tokens + [EOS]
        logs = [model.logscore(padded[i], padded[i - ORDER + 1:i]) for i in range(ORDER - 1, len(padded))]
        means.append(sum(logs) / len(logs))
    return np.array(means)


FIT = {"kit": fit_kit, "nltk": fit_nltk}
SCORE = {"kit": score_kit, "nltk": score_nltk}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=1000)
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--memory", choices=list(FIT), help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory:  # child process of memory_in_child: the memory of fitting
        report_memory(partial(FIT[args.memory], load_inputs(args.inputs)))
        return
    train, test = load(args.reviews, args.sentences)

    fits = alternate({name: partial(fit, train) for name, fit in FIT.items()}, args.repeats)
    models = {name: run.output for name, run in fits.items()}
    scores = alternate({name: partial(score, models[name], test) for name, score in SCORE.items()},
                       args.repeats)
    memory = {name: memory_in_child(__file__, name, train) for name in FIT}
    difference = float(np.max(np.abs(scores["kit"].output - scores["nltk"].output)))
    equal = bool(np.all(np.isfinite(scores["kit"].output))) and difference <= AGREEMENT
    print(f"trigram LM fitted on {args.reviews:,} IMDB training reviews ({len(train):,} sentences, "
          f"vocabulary {len(models['kit'].vocab_):,} / nltk {len(models['nltk'].vocab):,}), "
          f"scoring {args.sentences:,} test sentences; mean log2-probability "
          f"{pd.Series(scores['kit'].output).mean():.6f}, largest difference {difference:.2g}")
    for name in FIT:
        print(f"  {name:<5} fit {fits[name].median:7.3f} s (IQR {fits[name].iqr:.2g})  "
              f"score {scores[name].median:7.3f} s (IQR {scores[name].iqr:.2g})  "
              f"fit memory {memory[name].rss_mb:7.1f} MB (traced {memory[name].traced_mb:.1f})")
    print(result_line("ngram-fit", fits["kit"], "nltk.lm", fits["nltk"], memory["kit"], memory["nltk"],
                      equal, max_diff=f"{difference:.2g}"))
    print(result_line("ngram-score", scores["kit"], "nltk.lm", scores["nltk"], None, None, equal,
                      max_diff=f"{difference:.2g}"))
    assert equal, f"nltk.lm and the kit disagree by {difference:.3g}"


if __name__ == "__main__":
    main()
