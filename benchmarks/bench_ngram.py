"""Trigram language model: the kit's vectorised counts vs nltk.lm, fit and scoring.

1. Side by side on a size nltk handles (default 1,000 IMDB training reviews to fit,
   2,000 test sentences to score): ``helpers.adversarial.NgramLM`` against
   ``nltk.lm.WittenBellInterpolated`` (the same smoothing family; nltk's unigram base is
   unsmoothed), each in its own process: time and peak memory, and their ratios.
2. The kit alone at the lab's size and beyond: all 25,000 training reviews, then scoring
   3,000 and 30,000 sentences (skip with --skip-full).

    python benchmarks/bench_ngram.py [--reviews 1000 --sentences 2000] [--skip-full]
"""

from __future__ import annotations

import argparse

from measure import run_child

DRIVER = r"""
import json, sys, time
import pandas as pd
from helpers import adversarial, data
from helpers.text import tokenize
method, n_reviews, n_sentences = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
texts = data.load_imdb("train").text.iloc[:: max(1, 25000 // n_reviews)].iloc[:n_reviews]
train = pd.DataFrame({"tokens": [s for t in texts for s in adversarial.split_sentences(tokenize(t))]})
test = adversarial.imdb_sentences("test").sample(n_sentences, random_state=0)
start = time.perf_counter()
if method == "kit":
    lm = adversarial.NgramLM(3).fit(train.tokens)
    fitted = time.perf_counter()
    total = float(lm.mean_logprob(test.tokens).sum())
else:
    from nltk.lm import WittenBellInterpolated
    from nltk.lm.preprocessing import padded_everygram_pipeline
    ngrams, vocabulary = padded_everygram_pipeline(3, list(train.tokens))
    lm = WittenBellInterpolated(3)
    lm.fit(ngrams, vocabulary)
    fitted = time.perf_counter()
    total = 0.0
    for tokens in test.tokens:
        padded = ["<s>", "<s>", *tokens, "</s>"]
        logs = [lm.logscore(padded[i], padded[i - 2:i]) for i in range(2, len(padded))]
        total += sum(logs) / len(logs)
end = time.perf_counter()
print(json.dumps({"fit": fitted - start, "score": end - fitted, "sentences": len(train)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=1000)
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--skip-full", action="store_true")
    args = parser.parse_args()

    runs = {m: run_child(DRIVER, m, str(args.reviews), str(args.sentences)) for m in ("kit", "nltk")}
    print(f"trigram LM fitted on {args.reviews:,} IMDB training reviews "
          f"({runs['kit']['sentences']:,} sentences), scoring {args.sentences:,} test sentences")
    for method, r in runs.items():
        print(f"{method:<5} fit {r['fit']:6.2f} s  score {r['score']:6.2f} s  peak {r['peak_gb']:.2f} GB")
    print(f"ratio nltk / kit: fit {runs['nltk']['fit'] / runs['kit']['fit']:.1f}x, "
          f"score {runs['nltk']['score'] / runs['kit']['score']:.1f}x, "
          f"peak memory {runs['nltk']['peak_gb'] / runs['kit']['peak_gb']:.2f}x")
    if not args.skip_full:
        for n in (3000, 30000):
            r = run_child(DRIVER, "kit", "25000", str(n))
            print(f"kit, all 25,000 reviews ({r['sentences']:,} sentences): fit {r['fit']:.1f} s, "
                  f"scoring {n:,} sentences {r['score']:.2f} s, peak {r['peak_gb']:.2f} GB")


if __name__ == "__main__":
    main()
