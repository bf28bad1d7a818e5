"""Train–test overlap: the kit's chunked, parallel max-cosine vs scikit-learn's full matrix.

1. On a size the full matrix fits (default 4,000 IMDB test reviews × 12,500 training
   reviews, unigrams): ``helpers.leakage.train_test_overlap`` against
   ``sklearn.metrics.pairwise.cosine_similarity`` on the same count vectors followed by a
   row max; time and peak memory of each (own process each) and their ratios.
2. The absolute time and peak memory of the kit on IMDB's full 25,000 × 25,000, for
   unigrams, bigrams and trigrams (skip with --skip-full).

    python benchmarks/bench_leakage.py [--test 4000 --train 12500] [--skip-full]
"""

from __future__ import annotations

import argparse

from measure import run_child

DRIVER = r"""
import json, sys, time
import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics.pairwise import cosine_similarity
from helpers import data
from helpers.leakage import train_test_overlap
method, n_test, n_train, ngram = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
train = data.load_imdb("train").text.iloc[:: max(1, 25000 // n_train)].iloc[:n_train].tolist()
test = data.load_imdb("test").text.iloc[:: max(1, 25000 // n_test)].iloc[:n_test].tolist()
start = time.perf_counter()
if method == "kit":
    mean = train_test_overlap(train, test, ngram, progress=False).similarity.mean()
else:
    vectorizer = CountVectorizer(ngram_range=(ngram, ngram), stop_words="english")
    counts = vectorizer.fit_transform(train + test)
    full = cosine_similarity(counts[len(train):], counts[: len(train)])
    mean = full.max(axis=1).mean()
print(json.dumps({"seconds": time.perf_counter() - start, "mean": float(mean)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test", type=int, default=4000)
    parser.add_argument("--train", type=int, default=12500)
    parser.add_argument("--skip-full", action="store_true")
    args = parser.parse_args()

    print(f"unigram overlap, {args.test:,} test x {args.train:,} train IMDB reviews")
    runs = {m: run_child(DRIVER, m, str(args.test), str(args.train), "1") for m in ("kit", "sklearn")}
    for method, r in runs.items():
        print(f"{method:<8} {r['seconds']:6.1f} s  peak {r['peak_gb']:.2f} GB  mean overlap {r['mean']:.4f}")
    print(f"ratio sklearn / kit: time {runs['sklearn']['seconds'] / runs['kit']['seconds']:.2f}x, "
          f"peak memory {runs['sklearn']['peak_gb'] / runs['kit']['peak_gb']:.2f}x")
    if not args.skip_full:
        for ngram, name in [(1, "unigrams"), (2, "bigrams"), (3, "trigrams")]:
            r = run_child(DRIVER, "kit", "25000", "25000", str(ngram))
            print(f"kit, 25,000 x 25,000 {name:<9} {r['seconds']:5.1f} s  peak {r['peak_gb']:.2f} GB  "
                  f"mean overlap {r['mean']:.4f}")


if __name__ == "__main__":
    main()
