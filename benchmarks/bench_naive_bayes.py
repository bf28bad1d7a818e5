"""Multinomial Naive Bayes: the kit's from-scratch reference against scikit-learn's MultinomialNB.

Inputs, the same for both: the 2,000 movie reviews as the bag-of-words count matrix notebook
01 builds (``helpers.text.tokenized``, ``helpers.features.make_vectorizer()``: 2,000 x 48,554,
sparse int64) and their labels. Each contender fits on all 2,000 reviews with alpha = 1 and
predicts all 2,000 (timed together). Asserted: identical predictions, and log-probabilities
P(c | d) within 1e-9 of each other.

Time: one warm-up call each, then ``--repeats`` rounds in turns (kit, sklearn, sklearn, kit, ...);
median and interquartile range. Memory of fit + predict: the peak resident memory above the
baseline after loading the matrix, in a fresh process per contender, and the peak traced by
tracemalloc (``measure.memory_in_child``).

    python benchmarks/bench_naive_bayes.py [--repeats 21]
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
from measure import alternate, load_inputs, memory_in_child, report_memory, result_line
from sklearn.naive_bayes import MultinomialNB

from helpers import data
from helpers.features import make_vectorizer
from helpers.naive_bayes import NaiveBayes
from helpers.text import tokenized

ALPHA = 1.0
LOG_PROBABILITY_ATOL = 1e-9


def load():
    reviews = data.load_movie_reviews()
    return make_vectorizer().fit_transform(tokenized(reviews.text)), reviews.label.to_numpy()


def fit_predict(make, X, y):
    model = make(alpha=ALPHA).fit(X, y)
    return model, model.predict(X)


CONTENDERS = {"kit": NaiveBayes, "sklearn": MultinomialNB}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)  # 10-20 ms a call: cheap, noisy
    parser.add_argument("--memory", choices=list(CONTENDERS), help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory:  # child process of memory_in_child
        report_memory(partial(fit_predict, CONTENDERS[args.memory], *load_inputs(args.inputs)))
        return

    X, y = load()
    runs = alternate({name: partial(fit_predict, make, X, y) for name, make in CONTENDERS.items()},
                     args.repeats)
    memory = {name: memory_in_child(__file__, name, (X, y)) for name in CONTENDERS}
    (kit, kit_predictions), (sklearn, sklearn_predictions) = runs["kit"].output, runs["sklearn"].output
    difference = float(np.max(np.abs(kit.predict_log_proba(X) - sklearn.predict_log_proba(X))))
    same_predictions = bool(np.array_equal(kit_predictions, sklearn_predictions))
    equal = same_predictions and difference <= LOG_PROBABILITY_ATOL
    print(f"Naive Bayes, alpha = {ALPHA}, fit and predict the 2,000 reviews, X {X.shape[0]:,} x "
          f"{X.shape[1]:,} ({X.nnz:,} nonzero); training accuracy {np.mean(kit_predictions == y):.4f}; "
          f"predictions identical: {same_predictions}; largest log-probability difference {difference:.2g}")
    for name, run in runs.items():
        print(f"  {name:<8} {1000 * run.median:7.1f} ms (IQR {1000 * run.iqr:.2g})  "
              f"{memory[name].rss_mb:6.1f} MB (traced {memory[name].traced_mb:.1f})")
    print(result_line("nb-fit-predict", runs["kit"], "sklearn", runs["sklearn"], memory["kit"],
                      memory["sklearn"], equal, max_diff=f"{difference:.2g}"))
    assert equal, "the kit's Naive Bayes and MultinomialNB disagree"


if __name__ == "__main__":
    main()
