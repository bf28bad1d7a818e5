"""Doc2Vec training corpus, caching, determinism across processes, inferred and IMDB vectors."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from helpers import data, embeddings, leakage, settings, storage
from helpers.embeddings import Doc2VecConfig
from helpers.errors import InputError, KitError
from helpers.text import tokenize

TINY = Doc2VecConfig(n_docs=300, epochs=2, vector_size=8, min_count=2)


@pytest.fixture
def private_data_dir(corpora, tmp_path, monkeypatch) -> Path:
    """A data folder of its own (fresh models/ and corpora/) that links to the fetched data."""
    folder = tmp_path / "data"
    folder.mkdir()
    for name in ("aclImdb", "aclImdb_v1.tar.gz", "nltk_data", "cache"):
        (folder / name).symlink_to(corpora / name)
    monkeypatch.setenv("KIT_DATA_DIR", str(folder))
    return folder


def test_profiles_size_the_corpus():
    assert embeddings.config_for("quick").n_docs is embeddings.config_for("full").n_docs is None
    assert embeddings.sample_config().n_docs == embeddings.SAMPLE_DOCS
    assert embeddings.sample_config(dm=1) == Doc2VecConfig(n_docs=embeddings.SAMPLE_DOCS, dm=1)
    assert embeddings.config_for("quick").epochs == 10
    assert embeddings.config_for("full").epochs == embeddings.FULL_EPOCHS == 20
    assert embeddings.config_for("full", epochs=5).epochs == 5  # a parameter given wins
    assert embeddings.workers_for("quick") == 1


def test_keys_follow_parameters(corpora):
    assert TINY.key() == Doc2VecConfig(n_docs=300, epochs=2, vector_size=8).key()
    assert TINY.key() != Doc2VecConfig(n_docs=300, epochs=3, vector_size=8).key()
    assert TINY.corpus_key() == Doc2VecConfig(n_docs=300, dm=1).corpus_key()


@pytest.mark.parametrize("seed", ["0", "6640"])
def test_a_model_trained_with_other_string_hashing_is_cached_apart(corpora, seed):
    """A Python started with another hash seed (a Dask worker's is 6640) trains other
    initial vectors: its key differs, even once os.environ claims PYTHONHASHSEED=0."""
    script = ("import os; os.environ['PYTHONHASHSEED'] = '0'; from helpers import embeddings; "
              "print(embeddings.reference_hashing(), embeddings.config_for().key())")
    env = {"KIT_DATA_DIR": str(corpora), "PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          check=True, cwd=settings.REPO_ROOT)
    reference, key = done.stdout.split()
    assert reference == str(seed == "0")
    assert (key == embeddings.config_for().key()) is (seed == "0")


def test_training_documents_sample_extend_and_shuffle(corpora):
    ids = embeddings.training_documents(TINY)
    assert len(ids) == 300 == len(set(ids))
    assert ids == embeddings.training_documents(TINY)
    transductive = embeddings.training_documents(Doc2VecConfig(n_docs=300, transductive=True))
    assert len(transductive) == 2300 and "cv000_29416" in transductive
    ordered = embeddings.training_documents(Doc2VecConfig(n_docs=300, transductive=True, shuffle=False))
    assert ordered[-2000:][0] == "cv000_29416" and sorted(ordered) == sorted(transductive)
    assert len(embeddings.training_documents(Doc2VecConfig(exclude_deployment=False))) == 100_000


def test_no_training_corpus_holds_a_deployment_film_or_a_near_copy(corpora):
    deployment = data.imdb_sample()
    imdb = pd.concat([data.load_imdb(split) for split in data.IMDB_SPLITS]).set_index("doc_id")
    held = embeddings.held_out_reviews(progress=False)
    films = set(deployment.movie_id)
    assert set(held.doc_id[held.reason == "deployment film"]) == set(imdb.index[imdb.movie_id.isin(films)])
    near = held.doc_id[held.reason != "deployment film"]
    assert len(near) > 0
    vectors = CountVectorizer(stop_words="english").fit([*imdb.text[near], *deployment.text])
    similarity = cosine_similarity(vectors.transform(imdb.text[near]), vectors.transform(deployment.text))
    assert (similarity.max(axis=1) >= leakage.NEAR_DUPLICATE - 1e-6).all()
    for config in (embeddings.config_for("quick"), Doc2VecConfig(), Doc2VecConfig(transductive=True)):
        ids = pd.Index(embeddings.training_documents(config))
        imdb_ids = ids[ids.isin(imdb.index)]
        assert not imdb.movie_id[imdb_ids].isin(films).any()
        assert not imdb_ids.isin(held.doc_id).any()
    full = embeddings.training_documents(Doc2VecConfig())
    assert len(full) == 100_000 - len(held)
    assert Doc2VecConfig().corpus_key() != Doc2VecConfig(exclude_deployment=False).corpus_key()


def test_held_out_takes_doc_ids(corpora):
    held = embeddings.held_out_reviews(progress=False).doc_id
    assert embeddings.held_out([held.iloc[0], "cv000_29416", "no such id"]).tolist() == [True, False, False]


def test_corpus_file_lines_are_tokenised_documents(private_data_dir):
    path, ids = embeddings.corpus_file(TINY, progress=False)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(ids) == 300
    texts = embeddings.texts_by_id()
    assert lines[0] == " ".join(tokenize(texts[ids[0]]))
    assert embeddings.corpus_file(TINY, progress=False) == (path, ids)  # written once


def test_model_cache_and_corrupt_file_is_rebuilt(private_data_dir):
    model = embeddings.train(TINY, workers=1, progress=False)
    cached = embeddings.model_path(TINY)
    assert cached == private_data_dir / "models" / f"d2v_{TINY.key()}.model"
    assert cached.is_file()
    assert embeddings.model_path(replace(TINY, epochs=TINY.epochs + 1)) != cached
    again = embeddings.train(TINY, workers=1, progress=False)
    np.testing.assert_array_equal(model.dv.vectors, again.dv.vectors)
    cached.write_bytes(b"garbage")
    rebuilt = embeddings.train(TINY, workers=1, progress=False)
    np.testing.assert_array_equal(model.dv.vectors, rebuilt.dv.vectors)
    assert len(list(cached.parent.glob(f"{cached.name}.corrupt-*"))) == 1


def test_doc2vec_arguments_are_what_train_passes(private_data_dir, monkeypatch):
    passed, real = {}, embeddings.Doc2Vec

    def spy(**kwargs):
        passed.update(kwargs)
        return real(**kwargs)

    spy.load = real.load
    monkeypatch.setattr(embeddings, "Doc2Vec", spy)
    embeddings.train(TINY, workers=1, progress=False)
    expected = embeddings.doc2vec_arguments(TINY, 1)
    assert set(passed) - set(expected) == {"corpus_file", "callbacks"}
    assert {k: passed[k] for k in expected} == expected
    assert embeddings.doc2vec_arguments(TINY)["workers"] == embeddings.workers_for()


@pytest.mark.parametrize("config, workers, message", [
    ("PV-DBOW", None, "config must be a Doc2VecConfig"),
    (TINY, 0, "workers must be at least 1"),
    (TINY, 1.5, "workers must be a whole number"),
])
def test_doc2vec_arguments_are_checked(config, workers, message):
    with pytest.raises(InputError, match=message):
        embeddings.doc2vec_arguments(config, workers)


SCRIPT = """
import hashlib, sys
from helpers import embeddings
config = embeddings.Doc2VecConfig(n_docs=300, epochs=2, vector_size=8)
vectors = embeddings.review_vectors(config, workers=1, progress=False)
model = embeddings.train(config, workers=1, progress=False)
print(hashlib.sha256(vectors.tobytes() + model.dv.vectors.tobytes()).hexdigest())
"""


@pytest.mark.slow
def test_reference_training_is_identical_across_processes(corpora, tmp_path):
    digests = []
    for run in ("first", "second"):
        folder = tmp_path / run
        folder.mkdir()
        for name in ("aclImdb", "aclImdb_v1.tar.gz", "nltk_data", "cache"):
            (folder / name).symlink_to(corpora / name)
        env = {"KIT_DATA_DIR": str(folder), "PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"}
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                              text=True, check=True)
        digests.append(done.stdout.strip())
        assert (folder / "models").is_dir()  # each process trained its own model
    assert digests[0] == digests[1]


def test_doc2vec_system_in_cross_validation(private_data_dir):
    from helpers import evaluation

    system = embeddings.Doc2VecSystem((TINY,), workers=1, Cs=(0.01, 0.1))
    predictions = evaluation.cross_validate(system, "tiny", progress=False, n_jobs=1)
    assert len(predictions) == 2000 and predictions.groupby("fold").size().between(198, 202).all()
    assert 0.5 < predictions.correct.mean() < 0.9
    assert settings.data_dir() == private_data_dir


def test_doc2vec_system_represents_new_texts_after_the_reviews(private_data_dir):
    system = embeddings.Doc2VecSystem((TINY,), workers=1)
    reviews = data.load_movie_reviews()
    new = pd.DataFrame({"doc_id": ["n1", "n2"], "text": ["a truly great film", "dull and awful"]})
    both = system.represent(pd.concat([reviews, new], ignore_index=True))
    assert both.shape == (2002, 8)
    assert np.array_equal(both[:2000], embeddings.review_vectors(TINY, workers=1))
    assert np.array_equal(both[2000:], embeddings.infer_vectors(TINY, new.text, workers=1))
    assert np.array_equal(system.represent(new), both[2000:])


def test_imdb_vectors_are_the_trained_ones_with_their_metadata(private_data_dir):
    table, vectors = embeddings.imdb_vectors(TINY, progress=False)
    model = embeddings.train(TINY, workers=1, progress=False)
    _, ids = embeddings.corpus_file(TINY, progress=False)
    assert len(table) == TINY.n_docs == len(vectors)
    line = {doc_id: i for i, doc_id in enumerate(ids)}
    first = table.iloc[0]
    assert np.array_equal(vectors[0], model.dv[line[first.doc_id]])
    assert set(table.split) <= {"train", "test", "unsup"} and first.doc_id.startswith(first.split)
    assert (table.label.isna() == (table.split == "unsup")).all()


def test_imdb_vectors_are_read_back_from_their_cache_and_follow_the_model(private_data_dir, monkeypatch):
    table, vectors = embeddings.imdb_vectors(TINY, progress=False)
    digest = storage.recorded_digest(embeddings.model_path(TINY))
    cache = embeddings.document_vectors_path(TINY, digest)
    assert storage.is_stored(cache) and cache.parent == embeddings.model_path(TINY).parent
    with monkeypatch.context() as patch:  # not undo(): it would undo the private data folder too
        patch.setattr(embeddings, "train", lambda *args, **kwargs: pytest.fail("the model was loaded"))
        again, read = embeddings.imdb_vectors(TINY, progress=False)
    assert again.equals(table) and read.dtype == vectors.dtype and np.array_equal(read, vectors)
    # a model stored anew (trained again with more workers, its vectors differ; here moved by 1)
    # is another file: its vectors are read from it
    model = embeddings.train(TINY, progress=False)
    model.dv.vectors[:] += 1
    assert storage.store(embeddings.model_path(TINY), lambda tmp: embeddings._save_model(model, tmp))
    _, moved = embeddings.imdb_vectors(TINY, progress=False)
    assert np.allclose(moved, vectors + 1)
    assert storage.recorded_digest(embeddings.model_path(TINY)) != digest


def test_imdb_vectors_of_a_model_stored_while_they_were_read_are_not_named_by_the_old_one(
        private_data_dir, monkeypatch):
    _, vectors = embeddings.imdb_vectors(TINY, progress=False)
    old = storage.recorded_digest(embeddings.model_path(TINY))
    embeddings.document_vectors_path(TINY, old).unlink()
    train = embeddings.train

    def another_process_stores_a_new_model_meanwhile(config, **kwargs):
        model = train(config, **kwargs)
        model.dv.vectors[:] += 1
        assert storage.store(embeddings.model_path(config), lambda tmp: embeddings._save_model(model, tmp))
        return model

    with monkeypatch.context() as patch:
        patch.setattr(embeddings, "train", another_process_stores_a_new_model_meanwhile)
        _, read = embeddings.imdb_vectors(TINY, progress=False)
    assert np.allclose(read, vectors + 1)  # what was loaded, not kept under the old model's name
    assert not embeddings.document_vectors_path(TINY, old).exists()
    _, again = embeddings.imdb_vectors(TINY, progress=False)
    new = storage.recorded_digest(embeddings.model_path(TINY))
    assert np.array_equal(again, read) and storage.is_stored(embeddings.document_vectors_path(TINY, new))


def test_imdb_vectors_where_no_model_can_be_kept_are_read_from_the_model(private_data_dir, monkeypatch):
    embeddings.corpus_file(TINY, progress=False)  # Doc2Vec needs its corpus file
    monkeypatch.setattr(embeddings.storage, "store", lambda path, write: False)  # a full disk
    loads = []
    train = embeddings.train
    monkeypatch.setattr(embeddings, "train", lambda *args, **kw: loads.append(1) or train(*args, **kw))
    first, second = (embeddings.imdb_vectors(TINY, progress=False)[1] for _ in range(2))
    assert np.array_equal(first, second) and len(loads) == 2 and first.shape == (TINY.n_docs, 8)
    assert not list((private_data_dir / "models").glob("*_documents_*"))


def test_damaged_imdb_vectors_are_read_from_the_model_again(private_data_dir, capsys):
    _, vectors = embeddings.imdb_vectors(TINY, progress=False)
    cache = embeddings.document_vectors_path(TINY, storage.recorded_digest(embeddings.model_path(TINY)))
    np.save(cache, np.zeros_like(vectors))  # its checksum no longer matches
    _, read = embeddings.imdb_vectors(TINY, progress=False)
    assert np.array_equal(read, vectors) and "set aside" in capsys.readouterr().err
    assert storage.is_stored(cache)


def test_a_training_corpus_that_cannot_be_written_is_a_clear_error(private_data_dir, monkeypatch):
    monkeypatch.setattr(embeddings.storage, "store", lambda path, write: False)  # a full disk
    with pytest.raises(KitError, match="could not be written"):
        embeddings.corpus_file(TINY, progress=False)


def test_models_train_longest_first_so_short_ones_fill_the_other_cores():
    reference, sample = embeddings.config_for("quick"), embeddings.sample_config()
    wide, long = replace(sample, vector_size=300), replace(sample, epochs=20)
    words = replace(sample, dbow_words=1, epochs=5)
    assert embeddings.training_work(reference) == sum(data.IMDB_ROWS.values()) * 10 * 100
    assert embeddings.training_work(words) == embeddings.training_work(sample) * sample.window // 2
    order = embeddings.longest_first([sample, long, reference, replace(sample, epochs=5), wide, words])
    assert order == [reference, words, wide, long, sample, replace(sample, epochs=5)]
    twin = replace(sample, vector_size=50, epochs=20)  # the same work: the given order stays
    assert embeddings.longest_first([twin, sample]) == [twin, sample]
    dm = replace(sample, dm=1)  # PV-DM does about twice PV-DBOW's work
    assert embeddings.training_work(dm) == embeddings.PV_DM_WORK * embeddings.training_work(sample)
    assert embeddings.longest_first([sample, dm]) == [dm, sample]
    with pytest.raises(InputError, match="must be a Doc2VecConfig"):
        embeddings.training_work({"epochs": 10})


def test_a_sample_larger_than_the_corpus_is_an_input_error(corpora):
    with pytest.raises(InputError, match="n_docs must be at most"):
        embeddings.training_documents(Doc2VecConfig(n_docs=10**9))


def test_inferred_vectors_are_cached_by_model_texts_in_order_and_epochs(private_data_dir, monkeypatch):
    texts = ["a truly great film", "dull and awful", "the plot is thin"]
    embeddings.infer_vectors(TINY, texts, workers=1, progress=False)
    assert not list((private_data_dir / "models").glob("inferred_*")), "a few texts are not cached"
    monkeypatch.setattr(embeddings, "INFER_CACHE_MIN", len(texts))
    first = embeddings.infer_vectors(TINY, texts, workers=1, progress=False)
    computed = []
    real = embeddings._inferred
    monkeypatch.setattr(embeddings, "_inferred", lambda *args: computed.append(args[1]) or real(*args))
    again = embeddings.infer_vectors(TINY, pd.Series(texts), workers=1, progress=False)
    assert computed == [] and again.dtype == first.dtype and np.array_equal(again, first)
    reordered = embeddings.infer_vectors(TINY, texts[::-1], workers=1, progress=False)
    more_epochs = embeddings.infer_vectors(TINY, texts, infer_epochs=TINY.epochs + 1, progress=False)
    assert computed == [texts[::-1], texts] and reordered.shape == more_epochs.shape == (3, 8)
    assert len(list((private_data_dir / "models").glob("inferred_*.npy"))) == 3
    assert embeddings.infer_vectors(TINY, [], progress=False).shape == (0, 8)
    with pytest.raises(InputError, match=r"texts\[1\] is None"):
        embeddings.infer_vectors(TINY, ["fine", None])
    for epochs in (0, 2.5):
        with pytest.raises(InputError, match="infer_epochs must be"):
            embeddings.infer_vectors(TINY, texts, infer_epochs=epochs)
