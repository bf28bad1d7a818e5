"""What a vector space encodes: groupings, random pairs, centring, the probes."""

from __future__ import annotations

import numpy as np
import pytest
from gensim.models import Doc2Vec

from helpers import embedding_space
from helpers.errors import InputError, KitError


def test_order_probe_detects_position_and_not_noise():
    rng = np.random.default_rng(0)
    labels = np.repeat(["neg", "pos"], 200)
    noise = rng.normal(size=(400, 5))
    assert 0.35 < embedding_space.order_probe(noise, labels) < 0.65
    position = np.tile(np.linspace(-1, 1, 200), 2)[:, None]
    assert embedding_space.order_probe(np.hstack([noise, position]), labels) > 0.9


def test_grouping_similarity_pairs_each_anchor_within_and_across():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 20))
    groups = np.array([0] * 10 + [1] * 10 + [2] * 10 + [None], dtype=object)
    vectors = np.vstack([centres[g] + 0.1 * rng.normal(size=20) if g is not None else rng.normal(size=20)
                         for g in groups])
    pairs = embedding_space.grouping_similarity(vectors, groups, seed=1)
    assert pairs.anchor.tolist() == list(range(30))  # the unlabelled item is never an anchor
    assert (pairs.within > 0.9).all() and pairs.within.mean() > pairs.across.mean() + 0.5
    assert pairs.equals(embedding_space.grouping_similarity(vectors, groups, seed=1))
    assert len(embedding_space.grouping_similarity(vectors, groups, n_anchors=7)) == 7


def test_grouping_similarity_draws_a_mate_and_an_item_of_another_group_from_all_of_them():
    """Each pair's partners, found by their cosines: a mate of the anchor's own group, and any
    labelled item of another group (groups interleaved, unlabelled items among them)."""
    rng = np.random.default_rng(0)
    groups = np.array(["a", "b", None, "c", "a", "b", "b", None, "c", "a", "c", "b"], dtype=object)
    vectors = rng.normal(size=(len(groups), 6))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit @ unit.T
    drawn: dict[int, set[int]] = {}
    for seed in range(300):
        pairs = embedding_space.grouping_similarity(vectors, groups, seed=seed)
        for anchor, within, across in pairs.itertuples(index=False):
            mate = int(np.argmin(np.abs(cosines[anchor] - within) + (np.arange(len(groups)) == anchor)))
            other = int(np.argmin(np.abs(cosines[anchor] - across)))
            assert np.isclose(cosines[anchor, mate], within) and np.isclose(cosines[anchor, other], across)
            assert groups[mate] == groups[anchor] and mate != anchor
            assert groups[other] is not None and groups[other] != groups[anchor]
            drawn.setdefault(anchor, set()).add(other)
    for anchor, others in drawn.items():
        assert others == {j for j, g in enumerate(groups) if g is not None and g != groups[anchor]}


def test_grouping_similarity_singletons_and_errors():
    vectors = np.eye(4)
    pairs = embedding_space.grouping_similarity(vectors, ["a", "a", "b", "c"])
    assert pairs.anchor.tolist() == [0, 1] and pairs.within.tolist() == [0.0, 0.0]
    with pytest.raises(KitError, match="at least two groups"):
        embedding_space.grouping_similarity(vectors, ["a", "b", "c", "d"])
    with pytest.raises(KitError, match="3 group labels for 4 vectors"):
        embedding_space.grouping_similarity(vectors, ["a", "a", "b"])


def test_random_pairs_are_distinct_items():
    similarity = embedding_space.random_pair_similarity(np.eye(5), n_pairs=200, seed=0)
    assert similarity.shape == (200,) and (similarity == 0).all()  # never an item with itself


def test_unit_rows_keeps_zero_rows():
    unit = embedding_space.unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
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
    found = embedding_space.word_polarity_probe(model, lexicon)
    assert (found["n_pos"], found["n_neg"]) == (6, 6) and found["majority"] == 0.5
    assert found["accuracy"] >= 0.8
    with pytest.raises(KitError, match="at least 5 words of each polarity"):
        embedding_space.word_polarity_probe(model, {"pos": frozenset(GOOD[:3]), "neg": frozenset(BAD)})


def test_document_word_similarity_picks_decisive_words(toy_model):
    model, documents = toy_model
    weights = {"film": 0.1, "plot": -0.1, "cast": 0.05}
    weights.update({w: 3.0 - 0.1 * i for i, w in enumerate(GOOD)})
    weights.update({w: -3.0 + 0.1 * i for i, w in enumerate(BAD)})
    texts = [" ".join(d.words) for d in documents[:20]]
    found = embedding_space.document_word_similarity(model.dv.vectors[:20], texts, model, weights, k=1,
                                                stop_words=frozenset({"cast"}), seed=0)
    assert found["index"].tolist() == list(range(20))
    for row in found.itertuples():
        words = set(texts[row.index].split()) - {"cast"}
        assert row.words == sorted(words, key=lambda w: (-abs(weights[w]), w))[0]
        assert -1 <= row.decisive <= 1 and -1 <= row.random <= 1
    again = embedding_space.document_word_similarity(model.dv.vectors[:20], texts, model, weights, k=1,
                                                stop_words=frozenset({"cast"}), seed=0)
    assert found.equals(again)
    dbow = Doc2Vec(documents, dm=0, vector_size=10, min_count=1, epochs=1, workers=1, seed=0)
    with pytest.raises(KitError, match="no trained word vectors"):
        embedding_space.word_polarity_probe(dbow, {"pos": frozenset(GOOD), "neg": frozenset(BAD)})


def test_centering_removes_the_shared_direction():
    rng = np.random.default_rng(0)
    vectors = np.array([5.0, 5.0]) + rng.normal(size=(200, 2))
    assert np.allclose(embedding_space.centered(vectors).mean(axis=0), 0)
    assert embedding_space.random_pair_similarity(vectors).mean() > 0.9  # all point the same way
    assert abs(embedding_space.random_pair_similarity(vectors, center=True).mean()) < 0.15
    groups = np.arange(200) % 2
    raw = embedding_space.grouping_similarity(vectors, groups)
    centred = embedding_space.grouping_similarity(vectors, groups, center=True)
    assert raw.within.mean() > 0.9 and abs(centred.within.mean() - centred.across.mean()) < 0.2


@pytest.mark.parametrize("call, message", [
    (lambda: embedding_space.unit_rows([1.0, 2.0]), "2-D"),
    (lambda: embedding_space.unit_rows([[1.0, np.nan]]), "NaN"),
    (lambda: embedding_space.unit_rows(np.empty((0, 3))), "at least 1"),
    (lambda: embedding_space.centered([["a", "b"]]), "numbers only"),
    (lambda: embedding_space.grouping_similarity(np.eye(4), "aabb"), "list of labels"),
    (lambda: embedding_space.grouping_similarity(np.eye(4), [[0], [1], [0], [1]]), "one label"),
    (lambda: embedding_space.grouping_similarity(np.eye(4), list("aabb"), n_anchors=0), "n_anchors"),
    (lambda: embedding_space.grouping_similarity(np.eye(4), list("aabb"), seed=-1), "seed"),
    (lambda: embedding_space.random_pair_similarity(np.eye(1)), "at least 2"),
    (lambda: embedding_space.random_pair_similarity(np.eye(3), n_pairs=0), "n_pairs"),
    (lambda: embedding_space.order_probe(np.eye(4), list("abab")), "at least 5 documents"),
    (lambda: embedding_space.order_probe(np.eye(4), list("abc")), "equal length"),
    (lambda: embedding_space.order_probe(np.eye(2), ["a", None]), "missing"),
])
def test_bad_arguments_are_one_clear_input_error(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_unit_rows_of_huge_and_tiny_rows_have_length_one():
    unit = embedding_space.unit_rows([[3e300, 4e300], [3e-300, 4e-300]])
    assert np.allclose(unit, [[0.6, 0.8], [0.6, 0.8]])


def test_probe_arguments_are_checked(toy_model):
    model, documents = toy_model
    vectors, texts = model.dv.vectors[:3], [" ".join(d.words) for d in documents[:3]]
    with pytest.raises(InputError, match="equal length"):
        embedding_space.document_word_similarity(vectors, texts[:2], model, {"film": 1.0})
    with pytest.raises(InputError, match=r"texts\[1\] is None"):
        embedding_space.document_word_similarity(vectors, [texts[0], None, texts[2]], model, {})
    with pytest.raises(InputError, match="k must be at least 1"):
        embedding_space.document_word_similarity(vectors, texts, model, {"film": 1.0}, k=0)
    with pytest.raises(InputError, match="word_weights must be a dict"):
        embedding_space.document_word_similarity(vectors, texts, model, [("film", 1.0)])
    with pytest.raises(InputError, match="NaN"):
        embedding_space.document_word_similarity(vectors, texts, model, {"film": np.nan})
    with pytest.raises(InputError, match="'pos' and 'neg'"):
        embedding_space.word_polarity_probe(model, {"positive": frozenset(GOOD)})


@pytest.fixture
def one_thread():
    """Native libraries on one thread for the test (t-SNE's Barnes-Hut sums in OpenMP threads,
    whose order of adding differs from run to run on more than two)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


@pytest.mark.usefixtures("one_thread")
def test_tsne_map_is_scikit_learn_s_computed_once_and_read_back_verified(empty_data_dir, monkeypatch):
    from sklearn.manifold import TSNE

    points = np.random.default_rng(3).normal(size=(60, 5)).astype(np.float32)
    expected = TSNE(n_components=2, init="pca", perplexity=10, random_state=4)
    expected = expected.fit_transform(points.astype(float))
    runs = []
    real_tsne = embedding_space.TSNE

    def counted(**kwargs):
        runs.append(kwargs)
        return real_tsne(**kwargs)

    monkeypatch.setattr(embedding_space, "TSNE", counted)
    first = embedding_space.tsne_map(points, perplexity=10, seed=4)
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(embedding_space.tsne_map(points.tolist(), perplexity=10, seed=4), expected)
    assert len(runs) == 1  # the second call read the cache
    stored, = (empty_data_dir / "cache").glob("tsne_*.npy")

    stored.write_bytes(stored.read_bytes()[:-8] + b"\0" * 8)  # damaged: set aside, computed again
    np.testing.assert_array_equal(embedding_space.tsne_map(points, perplexity=10, seed=4), expected)
    assert len(runs) == 2 and list((empty_data_dir / "cache").glob("tsne_*.npy.corrupt-*"))

    for other in ({"perplexity": 12, "seed": 4}, {"perplexity": 10, "seed": 5}):
        embedding_space.tsne_map(points, **other)
    embedding_space.tsne_map(points[::-1], perplexity=10, seed=4)  # other points, same shape
    assert len(runs) == 5 and len(list((empty_data_dir / "cache").glob("tsne_*.npy"))) == 4


@pytest.mark.parametrize(("vectors", "perplexity", "seed", "named"), [
    (np.zeros(10), 3, 0, "vectors"),
    ([[0.0, 1.0], [np.nan, 0.0], [1.0, 1.0]], 1, 0, "vectors"),
    (np.zeros((1, 3)), 0.5, 0, "vectors"),
    (np.arange(6.0).reshape(6, 1), 2, 0, "2 columns"),
    (np.ones((6, 3)), 2, 0, "all the same row"),
    (np.eye(5), 5, 0, "perplexity"),
    (np.eye(5), 0, 0, "perplexity"),
    (np.eye(5), "30", 0, "perplexity"),
    (np.eye(5), 2, -1, "seed"),
])
def test_tsne_map_refuses_bad_input_before_any_work(empty_data_dir, vectors, perplexity, seed, named):
    with pytest.raises(InputError, match=named):
        embedding_space.tsne_map(vectors, perplexity=perplexity, seed=seed)
    assert not (empty_data_dir / "cache").exists()
