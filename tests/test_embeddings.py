"""Doc2Vec training corpus, caching, determinism across processes, and the order probe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from gensim.models import Doc2Vec

from helpers import data, embeddings, settings
from helpers.embeddings import Doc2VecConfig
from helpers.errors import KitError
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
    assert embeddings.config_for("reference").n_docs == embeddings.REFERENCE_DOCS
    assert embeddings.config_for("full").n_docs is None
    assert embeddings.workers_for("reference") == 1


def test_keys_follow_parameters(corpora):
    assert TINY.key() == Doc2VecConfig(n_docs=300, epochs=2, vector_size=8).key()
    assert TINY.key() != Doc2VecConfig(n_docs=300, epochs=3, vector_size=8).key()
    assert TINY.corpus_key() == Doc2VecConfig(n_docs=300, dm=1).corpus_key()


def test_training_documents_sample_extend_and_shuffle(corpora):
    ids = embeddings.training_documents(TINY)
    assert len(ids) == 300 == len(set(ids))
    assert ids == embeddings.training_documents(TINY)
    transductive = embeddings.training_documents(Doc2VecConfig(n_docs=300, transductive=True))
    assert len(transductive) == 2300 and "cv000_29416" in transductive
    ordered = embeddings.training_documents(Doc2VecConfig(n_docs=300, transductive=True, shuffle=False))
    assert ordered[-2000:][0] == "cv000_29416" and sorted(ordered) == sorted(transductive)
    assert len(embeddings.training_documents(Doc2VecConfig())) == 100_000


def test_corpus_file_lines_are_tokenised_documents(private_data_dir):
    path, ids = embeddings.corpus_file(TINY, progress=False)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(ids) == 300
    texts = embeddings.texts_by_id()
    assert lines[0] == " ".join(tokenize(texts[ids[0]]))
    assert embeddings.corpus_file(TINY, progress=False) == (path, ids)  # written once


def test_model_cache_and_corrupt_file_is_rebuilt(private_data_dir):
    model = embeddings.train(TINY, workers=1, progress=False)
    cached = private_data_dir / "models" / f"d2v_{TINY.key()}.model"
    assert cached.is_file()
    again = embeddings.train(TINY, workers=1, progress=False)
    np.testing.assert_array_equal(model.dv.vectors, again.dv.vectors)
    cached.write_bytes(b"garbage")
    rebuilt = embeddings.train(TINY, workers=1, progress=False)
    np.testing.assert_array_equal(model.dv.vectors, rebuilt.dv.vectors)
    assert (private_data_dir / "models" / f"{cached.name}.corrupt").is_file()


SCRIPT = """
import hashlib, sys
from helpers import embeddings
config = embeddings.Doc2VecConfig(n_docs=300, epochs=2, vector_size=8)
vectors = embeddings.review_vectors(config, workers=1, progress=False)
model = embeddings.train(config, workers=1, progress=False)
print(hashlib.sha256(vectors.tobytes() + model.dv.vectors.tobytes()).hexdigest())
"""


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


def test_order_probe_detects_position_and_not_noise():
    rng = np.random.default_rng(0)
    labels = np.repeat(["neg", "pos"], 200)
    noise = rng.normal(size=(400, 5))
    assert 0.35 < embeddings.order_probe(noise, labels) < 0.65
    position = np.tile(np.linspace(-1, 1, 200), 2)[:, None]
    assert embeddings.order_probe(np.hstack([noise, position]), labels) > 0.9


def test_doc2vec_system_in_cross_validation(private_data_dir):
    from helpers import evaluation

    system = embeddings.Doc2VecSystem((TINY,), workers=1, Cs=(0.01, 0.1))
    predictions = evaluation.cross_validate(system, "tiny", progress=False, n_jobs=1)
    assert len(predictions) == 2000 and predictions.groupby("fold").size().eq(200).all()
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


# --------------------------------------------------------------------------- what the space encodes


def test_grouping_similarity_pairs_each_anchor_within_and_across():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 20))
    groups = np.array([0] * 10 + [1] * 10 + [2] * 10 + [None], dtype=object)
    vectors = np.vstack([centres[g] + 0.1 * rng.normal(size=20) if g is not None else rng.normal(size=20)
                         for g in groups])
    pairs = embeddings.grouping_similarity(vectors, groups, seed=1)
    assert pairs.anchor.tolist() == list(range(30))  # the unlabelled item is never an anchor
    assert (pairs.within > 0.9).all() and pairs.within.mean() > pairs.across.mean() + 0.5
    assert pairs.equals(embeddings.grouping_similarity(vectors, groups, seed=1))
    assert len(embeddings.grouping_similarity(vectors, groups, n_anchors=7)) == 7


def test_grouping_similarity_singletons_and_errors():
    vectors = np.eye(4)
    pairs = embeddings.grouping_similarity(vectors, ["a", "a", "b", "c"])
    assert pairs.anchor.tolist() == [0, 1] and pairs.within.tolist() == [0.0, 0.0]
    with pytest.raises(KitError, match="at least two groups"):
        embeddings.grouping_similarity(vectors, ["a", "b", "c", "d"])
    with pytest.raises(KitError, match="3 group labels for 4 vectors"):
        embeddings.grouping_similarity(vectors, ["a", "a", "b"])


def test_random_pairs_are_distinct_items():
    similarity = embeddings.random_pair_similarity(np.eye(5), n_pairs=200, seed=0)
    assert similarity.shape == (200,) and (similarity == 0).all()  # never an item with itself


def test_unit_rows_keeps_zero_rows():
    unit = embeddings.unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert np.allclose(unit, [[0.6, 0.8], [0.0, 0.0]])


GOOD = ["great", "superb", "lovely", "moving", "brilliant", "charming"]
BAD = ["awful", "dreadful", "boring", "dull", "tedious", "clumsy"]


@pytest.fixture(scope="module")
def toy_model():
    from gensim.models.doc2vec import TaggedDocument

    rng = np.random.default_rng(0)
    documents = []
    for i in range(300):
        words = list(rng.choice(GOOD if i % 2 else BAD, 6)) + list(rng.choice(["film", "plot", "cast"], 6))
        documents.append(TaggedDocument(words, [i]))
    return Doc2Vec(documents, dm=1, vector_size=10, min_count=1, epochs=20, workers=1, seed=0), documents


def test_word_polarity_probe_on_a_toy_space(toy_model):
    model, _ = toy_model
    lexicon = {"pos": frozenset(GOOD + ["unseen"]), "neg": frozenset(BAD)}
    found = embeddings.word_polarity_probe(model, lexicon)
    assert (found["n_pos"], found["n_neg"]) == (6, 6) and found["majority"] == 0.5
    assert found["accuracy"] >= 0.8
    with pytest.raises(KitError, match="at least 5 words of each polarity"):
        embeddings.word_polarity_probe(model, {"pos": frozenset(GOOD[:3]), "neg": frozenset(BAD)})


def test_document_word_similarity_picks_decisive_words(toy_model):
    model, documents = toy_model
    weights = {"film": 0.1, "plot": -0.1, "cast": 0.05}
    weights.update({w: 3.0 - 0.1 * i for i, w in enumerate(GOOD)})
    weights.update({w: -3.0 + 0.1 * i for i, w in enumerate(BAD)})
    texts = [" ".join(d.words) for d in documents[:20]]
    found = embeddings.document_word_similarity(model.dv.vectors[:20], texts, model, weights, k=1,
                                                stop_words=frozenset({"cast"}), seed=0)
    assert found["index"].tolist() == list(range(20))
    for row in found.itertuples():
        words = set(texts[row.index].split()) - {"cast"}
        assert row.words == sorted(words, key=lambda w: (-abs(weights[w]), w))[0]
        assert -1 <= row.decisive <= 1 and -1 <= row.random <= 1
    again = embeddings.document_word_similarity(model.dv.vectors[:20], texts, model, weights, k=1,
                                                stop_words=frozenset({"cast"}), seed=0)
    assert found.equals(again)
    dbow = Doc2Vec(documents, dm=0, vector_size=10, min_count=1, epochs=1, workers=1, seed=0)
    with pytest.raises(KitError, match="no trained word vectors"):
        embeddings.word_polarity_probe(dbow, {"pos": frozenset(GOOD), "neg": frozenset(BAD)})


def test_centering_removes_the_shared_direction():
    rng = np.random.default_rng(0)
    vectors = np.array([5.0, 5.0]) + rng.normal(size=(200, 2))
    assert np.allclose(embeddings.centered(vectors).mean(axis=0), 0)
    assert embeddings.random_pair_similarity(vectors).mean() > 0.9  # all point the same way
    assert abs(embeddings.random_pair_similarity(vectors, center=True).mean()) < 0.15
    groups = np.arange(200) % 2
    raw = embeddings.grouping_similarity(vectors, groups)
    centred = embeddings.grouping_similarity(vectors, groups, center=True)
    assert raw.within.mean() > 0.9 and abs(centred.within.mean() - centred.across.mean()) < 0.2


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
