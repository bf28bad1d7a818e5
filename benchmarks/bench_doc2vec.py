"""Doc2Vec training: corpus_file mode vs an iterable corpus, and the full run's time and memory.

1. Throughput: PV-DBOW (100-d, gensim's IMDB settings, all cores) on the same corpus (the
   reference profile's 10,000 IMDB reviews) and the same settings, trained from the
   LineSentence file (``corpus_file``) and from an in-memory list of TaggedDocuments;
   effective words per second of each and their ratio.
2. The full profile's training (100,000 reviews, 10 epochs, all cores) in corpus_file mode:
   wall time and peak RSS (resident memory of the training process, sampled every 0.1 s).
   Skip it with --skip-full.

Every training runs in its own process, so peak memory is measured per run.

    python benchmarks/bench_doc2vec.py [--epochs 3] [--skip-full]
"""

from __future__ import annotations

import argparse
import os

from measure import run_child

DRIVER = r"""
import json, sys, time
from gensim.models import Doc2Vec
from gensim.models.doc2vec import TaggedLineDocument
from helpers import embeddings
mode, profile, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
config = embeddings.config_for(profile, epochs=epochs)
path, _ = embeddings.corpus_file(config, progress=False)
settings = dict(dm=0, vector_size=100, window=10, min_count=2, negative=5, hs=0, sample=0,
                epochs=epochs, seed=0, workers=embeddings.os.cpu_count())
start = time.perf_counter()
if mode == "corpus_file":
    model = Doc2Vec(corpus_file=str(path), **settings)
else:
    documents = list(TaggedLineDocument(str(path)))
    start = time.perf_counter()  # time training only, not reading the file
    model = Doc2Vec(documents=documents, **settings)
seconds = time.perf_counter() - start
words = model.corpus_total_words * epochs
print(json.dumps({"seconds": seconds, "words_per_second": words / seconds}))
"""


def run(mode: str, profile: str, epochs: int) -> dict:
    """Train in a child process; return its report plus its peak RSS in GB."""
    return run_child(DRIVER, mode, profile, str(epochs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3, help="epochs for the throughput runs")
    parser.add_argument("--skip-full", action="store_true", help="skip the full-profile training")
    args = parser.parse_args()

    print(f"PV-DBOW 100-d, {args.epochs} epochs, {os.cpu_count()} workers, 10,000 IMDB reviews")
    results = {mode: run(mode, "reference", args.epochs) for mode in ("corpus_file", "iterable")}
    for mode, r in results.items():
        print(f"{mode:<12} {r['words_per_second'] / 1e6:6.2f} M words/s  {r['seconds']:6.1f} s  "
              f"peak {r['peak_gb']:.2f} GB")
    ratio = results["corpus_file"]["words_per_second"] / results["iterable"]["words_per_second"]
    print(f"ratio corpus_file / iterable: {ratio:.2f}x words per second")
    if not args.skip_full:
        full = run("corpus_file", "full", 10)
        print(f"full profile (100,000 reviews, 10 epochs): {full['seconds']:.0f} s, "
              f"{full['words_per_second'] / 1e6:.2f} M words/s, peak RSS {full['peak_gb']:.2f} GB "
              f"(Binder limit 2 GB)")


if __name__ == "__main__":
    main()
