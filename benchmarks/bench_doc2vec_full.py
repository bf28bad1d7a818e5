"""Notebook 04's full-profile table: the kit's Doc2Vec models on every IMDB review, measured.

What the notebook's *Full profile* cell runs (``KIT_PROFILE=full``), one model at a time
through the kit's own code: ``embeddings.train`` with every core (the model is cached under
``data/models/``, as a student's would be), then ``evaluation.cross_validate`` of
``Doc2VecSystem``: the 2,000 Pang & Lee reviews' vectors inferred from the model, 10-fold CV
of the SVM. Rows: PV-DBOW and PV-DM at the full profile's 20 epochs (gensim's), their
concatenation, and PV-DBOW at the quick profile's 10 (what the 20 epochs buy). For each
single model also the public IMDB protocol's error (as
``bench_doc2vec_imdb.py``: a logistic regression on the trained vectors of the train
reviews, error on the test reviews), so that every trained model is a second sample of that
error.

Training time (``embeddings.train``: the vocabulary pass, the training and saving the model),
CPU time and the training's own peak memory (models train one after another in this
process, so a later one may reuse memory an earlier one freed) are printed only for a model
trained in this run (``cached`` otherwise: point ``KIT_DATA_DIR`` at a folder without models
to time them all), with ``rss_mb``, the process's resident memory after the row (what the
notebook prints). One ``RESULT`` line per row.

    PYTHONHASHSEED=0 KIT_PROFILE=full python benchmarks/bench_doc2vec_full.py
"""

from __future__ import annotations

import os

import cost
import psutil
from bench_doc2vec import labelled_vectors, svm_accuracy
from bench_doc2vec_imdb import logistic_error

PROFILE = "full"


def configs():
    """The notebook's rows (name, models) and a PV-DBOW at the quick profile's 10 epochs."""
    from helpers import embeddings

    dbow, dm = embeddings.config_for(PROFILE), embeddings.config_for(PROFILE, dm=1)
    return {"PV-DBOW": (dbow,), "PV-DM": (dm,), "PV-DBOW + PV-DM": (dbow, dm),
            "PV-DBOW 10 epochs": (embeddings.config_for(PROFILE, epochs=10),)}


def train(config) -> dict:
    """Train (or load) one model; its costs if it was trained now, and the IMDB protocol's errors."""
    from helpers import embeddings, storage

    cached = storage.is_stored(embeddings.model_path(config))
    _, ids = embeddings.corpus_file(config, progress=False)  # written before the timing starts
    workers = embeddings.workers_for(PROFILE)
    model, costs = cost.measure(lambda: embeddings.train(config, workers, progress=False))
    train_set, test_set = labelled_vectors(model.dv.vectors, ids)
    found = {"imdb_error_logreg": f"{logistic_error(train_set, test_set):.4f}",
             "imdb_error_svm": f"{1 - svm_accuracy(train_set, test_set):.4f}"}
    if cached:
        return {**found, "train_s": "cached"}
    words_per_s = model.corpus_total_words * config.epochs / costs["wall_s"]
    return {**found, "train_s": f"{costs['wall_s']:.4g}", "train_cpu_s": f"{costs['cpu_s']:.4g}",
            "words_per_s_with_vocabulary": f"{words_per_s:.4g}", "train_mb": f"{costs['work_mb']:.4g}"}


def main() -> None:
    from helpers import evaluation, settings
    from helpers.embeddings import Doc2VecSystem, reference_hashing

    if settings.profile() != PROFILE:
        raise SystemExit("Run with KIT_PROFILE=full: this is the notebook's full-profile cell.")
    if not reference_hashing():  # other initial vectors: not the models a student's `kit lab` caches
        raise SystemExit("Run with PYTHONHASHSEED=0, as `kit lab` starts the notebooks.")
    print(f"data folder {settings.data_dir()}, {os.cpu_count()} cores", flush=True)
    trained = {}
    for name, models in configs().items():
        for config in models:
            if config not in trained:
                trained[config] = train(config)
        result = evaluation.summarize(evaluation.cross_validate(Doc2VecSystem(models), name, progress=False))
        fields = {"name": name.replace(" ", "_"), "cv_accuracy": f"{result['accuracy']:.4f}",
                  "cv_std": f"{result['std']:.4f}", **(trained[models[0]] if len(models) == 1 else {}),
                  "rss_mb": f"{psutil.Process().memory_info().rss / 2**20:.4g}"}
        print(cost.summary_line(fields), flush=True)


if __name__ == "__main__":
    main()
