"""NBSVM on IMDB: Wang and Manning's protocol, beside their reported accuracies.

Wang and Manning (*Baselines and Bigrams*, ACL 2012, Table 2) report NBSVM with unigrams
88.29 % and with unigrams and bigrams 91.22 % on the Large Movie Review Dataset's 25,000 train /
25,000 test split (``helpers.nbsvm.PAPER_ACCURACY``). Here the kit's NBSVM (``helpers.nbsvm``:
their C = 1, beta = 0.25, alpha = 1; presence features from the kit's tokeniser) is trained on
IMDB's train reviews and scored on its test reviews, twice:

- ``split=imdb``: all 25,000 / 25,000, the paper's protocol;
- ``split=corpus``: only the labelled reviews the kit's Doc2Vec corpus holds (every review but
  ``embeddings.held_out_reviews()``), the train and test sets of
  ``bench_doc2vec_imdb.py``'s PV-DBOW, so that the two contenders are scored on the same
  reviews.

Each run is a fresh process (its peak memory is its own): accuracy, seconds (counting,
features, training and prediction) and the process's peak resident memory.

    python benchmarks/bench_nbsvm_imdb.py [--ngram uni+bi|unigram]
"""

from __future__ import annotations

import argparse
import json

import cost

SPLITS = ("imdb", "corpus")


def child(args: argparse.Namespace) -> None:
    from helpers import data, embeddings, evaluation
    from helpers.evaluation import BowSystem

    train, test = data.load_imdb("train"), data.load_imdb("test")
    if args.split == "corpus":
        held = set(embeddings.held_out_reviews().doc_id)
        train, test = train[~train.doc_id.isin(held)], test[~test.doc_id.isin(held)]
    system = BowSystem("nbsvm", ngram=args.ngram, binary=True)
    found, costs = cost.measure(lambda: evaluation.fit_predict(system, train, test, name="nbsvm",
                                                               use_cache=False))
    print(json.dumps({**costs, "train_docs": len(train), "test_docs": len(test),
                      "accuracy": float(found.correct.mean()), "process_peak_mb": cost.peak_mb()}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ngram", choices=["uni+bi", "unigram"], default="uni+bi")
    parser.add_argument("--split", choices=SPLITS, help=argparse.SUPPRESS)
    parser.add_argument("--child", choices=["fit"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    from helpers.nbsvm import PAPER_ACCURACY

    paper = PAPER_ACCURACY[("IMDB", "NBSVM-bi" if args.ngram == "uni+bi" else "NBSVM-uni")]
    for split in SPLITS:
        found = cost.run_child(__file__, "fit", ["--ngram", args.ngram, "--split", split])
        print(cost.summary_line({
            "name": f"nbsvm-imdb-{args.ngram}", "split": split, "train_docs": found["train_docs"],
            "test_docs": found["test_docs"], "accuracy_pct": f"{100 * found['accuracy']:.2f}",
            "paper_pct": paper, "wall_s": f"{found['wall_s']:.4g}", "cpu_s": f"{found['cpu_s']:.4g}",
            "process_peak_mb": f"{found['process_peak_mb']:.4g}"}), flush=True)


if __name__ == "__main__":
    main()
