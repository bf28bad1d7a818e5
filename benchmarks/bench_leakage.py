"""Train–test overlap: the kit's ``train_test_overlap`` against a plain chunked scikit-learn loop.

The peer (``sklearn-chunked``) is what a careful student would write: scikit-learn's
``CountVectorizer`` (float32 counts, English stop words), every row normalised once, then the
cosines of 1,000 test rows at a time against every training row (scikit-learn's sparse
product, what ``cosine_similarity`` runs after normalising both sides, which per chunk would
normalise all the training rows again), single-threaded, keeping each row's maximum and its
first argmax. It computes the same thing in the same float32 arithmetic, so its results must
be, and are asserted to be, bit-identical to the kit's (similarities and nearest training
rows, every run). The kit (``helpers.overlap.train_test_overlap``, no cache, one thread)
counts n-grams exactly without building n-gram strings and runs scikit-learn's sparse product
into one reused buffer (see ``helpers/overlap.py``).

Each run is a fresh process; loading the reviews and importing the libraries are not
counted. One warm-up round, then
``--repeats`` alternated rounds; wall time, CPU time (all threads) and the work's own peak
memory (``benchmarks/cost.py``); one ``RESULT`` line per n-gram size.

    python benchmarks/bench_leakage.py [--test 25000 --train 25000] [--ngrams 1 2 3] [--repeats 5]

The default is notebook 08's own workload: IMDB's 25,000 test reviews against its 25,000
training reviews (about 15 minutes on 2 cores for the three n-gram sizes).
"""

from __future__ import annotations

import argparse

import cost

CONTENDERS = ("kit", "sklearn-chunked")
PEER_CHUNK = 1000


def reviews(n_train: int, n_test: int) -> tuple[list[str], list[str]]:
    """The first ``n_train`` IMDB training and ``n_test`` test reviews, every k-th for a spread."""
    from helpers import data

    train, test = data.load_imdb("train").text, data.load_imdb("test").text
    return (train.iloc[:: max(1, len(train) // n_train)].iloc[:n_train].tolist(),
            test.iloc[:: max(1, len(test) // n_test)].iloc[:n_test].tolist())


def kit(train: list[str], test: list[str], ngram: int):
    from helpers.overlap import train_test_overlap

    found = train_test_overlap(train, test, ngram, progress=False, use_cache=False)
    return found.similarity.to_numpy(), found.train_index.to_numpy()


def sklearn_chunked(train: list[str], test: list[str], ngram: int):
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.preprocessing import normalize
    from sklearn.utils.extmath import safe_sparse_dot

    counts = CountVectorizer(ngram_range=(ngram, ngram), stop_words="english",
                             dtype=np.float32).fit_transform(train + test)
    unit = normalize(counts)  # once: cosine_similarity would normalise all training rows per chunk
    train_unit, test_unit = unit[: len(train)], unit[len(train):]
    best, where = [], []
    for start in range(0, len(test), PEER_CHUNK):
        similarity = safe_sparse_dot(test_unit[start:start + PEER_CHUNK], train_unit.T, dense_output=True)
        index = similarity.argmax(axis=1)
        best.append(similarity[np.arange(len(index)), index])
        where.append(index)
    return np.concatenate(best).astype(float), np.concatenate(where)


def child(contender: str, args: argparse.Namespace) -> None:
    # Imported before the timing starts, so that neither side's clock counts an import.
    import sklearn.feature_extraction.text  # noqa: F401
    import sklearn.preprocessing  # noqa: F401
    import sklearn.utils.extmath  # noqa: F401

    import helpers.overlap  # noqa: F401

    train, test = reviews(args.train, args.test)
    work = {"kit": kit, "sklearn-chunked": sklearn_chunked}[contender]
    cost.report(lambda: work(train, test, args.ngram),
                lambda found: {"digest": cost.digest(*found), "mean": float(found[0].mean())})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test", type=int, default=25000)
    parser.add_argument("--train", type=int, default=25000)
    parser.add_argument("--ngrams", type=int, nargs="+", default=[1, 2, 3], choices=[1, 2, 3])
    parser.add_argument("--repeats", type=int, default=cost.MIN_REPEATS)
    parser.add_argument("--child", choices=CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--ngram", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args)
        return

    for ngram in args.ngrams:
        print(f"{ngram}-gram overlap, {args.test:,} test x {args.train:,} train IMDB reviews", flush=True)
        runs = cost.compare(__file__, CONTENDERS, ["--test", str(args.test), "--train", str(args.train),
                                                   "--ngram", str(ngram)], repeats=args.repeats)
        equal = cost.same_digest(runs)
        print(cost.result_line(f"overlap-{ngram}gram", runs["kit"], "sklearn-chunked",
                               runs["sklearn-chunked"], equal, mean=f"{runs['kit'].median('mean'):.6f}"),
              flush=True)
        if not equal:
            raise SystemExit("the kit's overlap differs from scikit-learn's")


if __name__ == "__main__":
    main()
