"""Doc2Vec's input: ``corpus_file`` (what the kit trains from) against an iterable corpus.

The same model (the kit's settings, ``embeddings.doc2vec_arguments``: PV-DBOW, 100-d,
10 epochs), the same corpus (by default the seeded 10,000-review sample of notebook 04's
comparison of settings, ``embeddings.SAMPLE_DOCS``; ``--docs 0`` for the whole corpus; the
LineSentence file the kit writes) and the same threads (``--workers``, 2 by default: what a student's
full profile gets on Binder's 2 cores), trained

- ``corpus_file``: ``Doc2Vec(corpus_file=...)``, gensim's reader in C, each worker reading its
  own share of the file;
- ``iterable``: ``Doc2Vec(documents=TaggedLineDocument(...))``, the same file read by one
  Python thread that feeds the workers (tags are the line numbers in both).

Multi-threaded training is not reproducible bit for bit, so what is asserted equal is the
input: the same vocabulary (every word and its count), the same number of documents and of
words. The output is compared downstream: the accuracy of the kit's SVM (standardised vectors,
C by inner CV, ``helpers.evaluation.fit_svm``) trained on the vectors of the IMDB *train*
reviews in the corpus and tested on those of the *test* reviews; the two modes' median
accuracies must lie within ``ACCURACY_TOLERANCE`` (1.5 points: about two standard errors of
an accuracy on the corpus's ~2,500 test reviews). Timed: ``Doc2Vec(...)`` given the corpus,
that is the vocabulary pass and the training, as the kit's ``embeddings.train`` runs them
(the corpus file is written and checked before), each run in a fresh process, one warm-up
round and ``--repeats`` alternated rounds (``benchmarks/cost.py``).

    python benchmarks/bench_doc2vec.py [--workers 2] [--profile reference] [--repeats 5] [--docs N]

``--docs N`` trains on a seeded sample of N reviews instead (a small N: a quick check of the script).
"""

from __future__ import annotations

import argparse

import cost

CONTENDERS = ("corpus_file", "iterable")
ACCURACY_TOLERANCE = 0.015


def labelled_vectors(vectors, ids: list[str]):
    """The trained vectors and labels of the corpus's IMDB train and test reviews (by doc id)."""
    import numpy as np
    import pandas as pd

    from helpers import data

    line = pd.Series(np.arange(len(ids)), index=ids)
    split = {}
    for name in ("train", "test"):
        imdb = data.load_imdb(name)
        imdb = imdb[imdb.doc_id.isin(line.index)]
        split[name] = (vectors[line[imdb.doc_id].to_numpy()], (imdb.label == "pos").to_numpy())
    return split["train"], split["test"]


def svm_accuracy(train, test) -> float:
    """The kit's SVM (as in ``Doc2VecSystem``): standardised vectors, C by inner CV."""
    from sklearn.preprocessing import StandardScaler

    from helpers.evaluation import C_GRID, fit_svm

    scaler = StandardScaler().fit(train[0])
    model, _ = fit_svm(scaler.transform(train[0]), train[1], C_GRID)
    return float(model.score(scaler.transform(test[0]), test[1]))


def vocabulary_digest(model) -> str:
    """Every word of the model's vocabulary with its count, in the model's order."""
    import numpy as np

    words = "\n".join(model.wv.index_to_key).encode()
    return cost.digest(np.frombuffer(words, dtype=np.uint8), model.wv.expandos["count"])


def train(mode: str, path, arguments: dict):
    """``Doc2Vec`` built and trained from the corpus file at ``path`` in one mode."""
    from gensim.models import Doc2Vec
    from gensim.models.doc2vec import TaggedLineDocument

    if mode == "corpus_file":
        return Doc2Vec(corpus_file=str(path), **arguments)
    return Doc2Vec(documents=TaggedLineDocument(str(path)), **arguments)


def child(mode: str, args: argparse.Namespace) -> None:
    import gensim.models.doc2vec  # noqa: F401  imported before the timing starts

    from helpers import embeddings

    n_docs = embeddings.SAMPLE_DOCS if args.docs is None else args.docs
    config = embeddings.config_for(args.profile, n_docs=n_docs or None)
    path, ids = embeddings.corpus_file(config, progress=False)  # written once, before any timing
    arguments = embeddings.doc2vec_arguments(config, args.workers)

    def summarise(model) -> dict:
        return {"vocabulary": vocabulary_digest(model), "documents": model.corpus_count,
                "words": model.corpus_total_words, "epochs": model.epochs,
                "accuracy": svm_accuracy(*labelled_vectors(model.dv.vectors, ids))}

    cost.report(lambda: train(mode, path, arguments), summarise)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--profile", choices=["quick", "full"], default="quick")
    parser.add_argument("--docs", type=int, default=None,
                        help="a seeded sample of this many reviews (default: embeddings.SAMPLE_DOCS; 0: all)")
    parser.add_argument("--repeats", type=int, default=cost.MIN_REPEATS)
    parser.add_argument("--child", choices=CONTENDERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args)
        return

    print(f"PV-DBOW 100-d, {args.workers} workers, the {args.profile} profile's corpus", flush=True)
    child_args = ["--workers", str(args.workers), "--profile", args.profile]
    if args.docs is not None:
        child_args += ["--docs", str(args.docs)]
    runs = cost.compare(__file__, CONTENDERS, child_args, repeats=args.repeats)
    inputs = {(r["vocabulary"], r["documents"], r["words"]) for found in runs.values() for r in found.runs}
    accuracy = {mode: found.median("accuracy") for mode, found in runs.items()}
    close = abs(accuracy["corpus_file"] - accuracy["iterable"]) <= ACCURACY_TOLERANCE
    for mode, found in runs.items():
        print(f"{mode:<12} accuracy {', '.join(f'{a:.4f}' for a in found.values('accuracy'))}")
    [(_, documents, words)] = inputs if len(inputs) == 1 else [(None, 0, 0)]
    epochs = runs["corpus_file"].runs[0]["epochs"]
    rate = {mode: f"{words * epochs / found.median('wall_s'):.4g}" for mode, found in runs.items()}
    print(cost.result_line(
        f"doc2vec-input-{args.workers}w", runs["corpus_file"], "iterable", runs["iterable"],
        len(inputs) == 1 and close, asserted="vocabulary+documents+words,svm_accuracy_1.5pt",
        kit_acc=f"{accuracy['corpus_file']:.4f}", peer_acc=f"{accuracy['iterable']:.4f}",
        kit_words_per_s=rate["corpus_file"], peer_words_per_s=rate["iterable"], documents=documents,
        epochs=epochs), flush=True)
    if len(inputs) != 1:
        raise SystemExit("the two modes did not train on the same vocabulary and corpus")


if __name__ == "__main__":
    main()
