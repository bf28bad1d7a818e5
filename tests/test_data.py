"""The corpus loaders, on the real corpora."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import data, overlap, storage
from helpers.errors import InputError, KitError


def test_movie_reviews_counts_and_folds(corpora):
    reviews = data.load_movie_reviews()
    assert len(reviews) == 2000
    assert reviews.label.value_counts().to_dict() == {"neg": 1000, "pos": 1000}
    assert list(reviews.columns) == ["doc_id", "cv", "fold", "label", "text"]
    assert reviews.doc_id.is_unique
    # round-robin, but for one copy of each of the 8 near-duplicate pairs (tests/test_folds.py)
    assert (reviews.fold != reviews.cv % 10).sum() == 8
    per_fold = reviews.groupby(["fold", "label"]).size()
    assert per_fold.between(98, 102).all() and per_fold.sum() == 2000
    assert len(per_fold) == 20
    first = reviews.iloc[0]
    assert (first.doc_id, first.cv, first.label) == ("cv000_29416", 0, "neg")
    assert first.text.startswith("plot : two teen couples go to a church party ,")


def test_movie_reviews_are_read_once_and_each_call_gets_its_own_table(corpora, monkeypatch):
    data._movie_reviews.cache_clear()
    reads = []
    real_read_text = Path.read_text

    def counted(path, *args, **kwargs):
        reads.append(path.name)
        return real_read_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)
    first = data.load_movie_reviews()
    assert sum(name.endswith(".txt") for name in reads) == 2000
    first.loc[0, "text"], first["fold"] = "changed by the caller", -1
    second = data.load_movie_reviews()
    assert sum(name.endswith(".txt") for name in reads) == 2000  # not read again
    assert second.iloc[0].text.startswith("plot : two teen couples") and second.fold.between(0, 9).all()
    assert second is not data.load_movie_reviews()


def test_near_duplicate_groups_are_read_from_their_cache_and_computed_again_when_damaged(
        corpora, tmp_path, monkeypatch, capsys):
    reviews = data.load_movie_reviews()
    texts = tuple(reviews.text)
    folder = tmp_path / "data"  # a cache of its own: the groups depend on the texts alone
    folder.mkdir()
    monkeypatch.setenv("KIT_DATA_DIR", str(folder))
    computed = overlap.similarity_groups(list(texts), **data.GROUPING)
    assert np.array_equal(data._review_groups(texts), computed)
    [cache] = (folder / "cache").glob(f"{data.GROUPS_CACHE_PREFIX}*.npy")
    monkeypatch.setattr(overlap, "similarity_groups", lambda *args, **kwargs: pytest.fail("computed again"))
    assert np.array_equal(data._review_groups(texts), computed)  # read from the cache
    monkeypatch.setattr(overlap, "similarity_groups", lambda *args, **kwargs: computed)
    for damaged in (computed[:-1], computed.astype(float)):  # another length; not whole numbers
        storage.store(cache, lambda tmp, damaged=damaged: storage.write_array(damaged, tmp))
        assert np.array_equal(data._review_groups(texts), computed)
        assert "set aside as" in capsys.readouterr().err


def test_fold_of_copies_puts_each_pair_of_near_duplicates_in_the_fold_of_its_first_copy(corpora):
    reviews = data.load_movie_reviews()
    assert np.array_equal(data.fold_of_copies(reviews.assign(fold=reviews.cv % 10)), reviews.fold)


@pytest.mark.parametrize("split,size", [("train", 25000), ("test", 25000), ("unsup", 50000)])
def test_imdb_counts(corpora, split, size):
    reviews = data.load_imdb(split)
    assert len(reviews) == size
    assert reviews.doc_id.is_unique
    assert reviews.movie_id.str.fullmatch(r"tt\d+").all()
    assert not reviews.text.str.contains("<br", regex=False).any()
    if split == "unsup":
        assert reviews.label.isna().all()
        assert (reviews.rating == 0).all()
    else:
        assert reviews.label.value_counts().to_dict() == {"neg": 12500, "pos": 12500}
        pos = reviews.label == "pos"
        assert reviews.rating[pos].between(7, 10).all()
        assert reviews.rating[~pos].between(1, 4).all()


def test_imdb_movie_ids_group_reviews_of_one_film(corpora):
    train = data.load_imdb("train").set_index("doc_id")
    # The first lines of train/urls_pos.txt are both Bromwell High's title page.
    assert train.loc["train_pos_0", "movie_id"] == train.loc["train_pos_1", "movie_id"] == "tt0453418"
    assert train.loc["train_pos_0", "rating"] == 9
    assert train.loc["train_pos_0", "text"].startswith("Bromwell High is a cartoon comedy.")
    assert train.movie_id.nunique() < len(train) / 5


def test_imdb_cache_is_reused_and_verified(corpora, monkeypatch):
    first = data.load_imdb("test")
    [cache] = [path for path in (corpora / "cache").glob("imdb_test_*.pkl") if storage.is_stored(path)]
    written = cache.stat().st_mtime_ns
    monkeypatch.setattr(data, "_read_imdb", None)  # a second load must not read the files
    assert data.load_imdb("test").equals(first)
    assert cache.stat().st_mtime_ns == written


@pytest.mark.slow
def test_a_damaged_imdb_table_is_set_aside_and_read_again(corpora, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "data"
    folder.mkdir()
    for name in ("aclImdb", "aclImdb_v1.tar.gz"):
        (folder / name).symlink_to(corpora / name)
    monkeypatch.setenv("KIT_DATA_DIR", str(folder))
    first = data.load_imdb("test")
    [cache] = (folder / "cache").glob("imdb_test_*.pkl")
    first.iloc[:10].to_pickle(cache)  # a table that unpickles, with its checksum now wrong
    assert data.load_imdb("test").equals(first)
    assert "set aside as" in capsys.readouterr().err


def test_sentence_polarity(corpora):
    snippets = data.load_sentence_polarity()
    assert snippets.label.value_counts().to_dict() == {"neg": 5331, "pos": 5331}
    assert (snippets.source == "rotten_tomatoes").all()


def test_product_reviews_signs_and_products(corpora):
    sentences = data.load_product_reviews()
    assert set(sentences.label) == {"pos", "neg"}
    assert sentences.groupby("source")["product"].nunique().to_dict() == {
        "product_reviews_1": 5, "product_reviews_2": 9}
    canon = sentences[sentences["product"] == "Canon_G3"]
    first = canon.iloc[0]
    # "canon powershot g3[+3]##i recently purchased the canon powershot g3 ..."
    assert first.label == "pos"
    assert first.text.startswith("i recently purchased the canon powershot g3")
    assert canon.text.str.contains("main dial is not backlit").any()
    assert canon[canon.text.str.contains("main dial is not backlit")].label.iloc[0] == "neg"


def test_opinion_lexicon_and_stopwords(corpora):
    lexicon = data.load_opinion_lexicon()
    assert {"good", "excellent"} <= lexicon["pos"]
    assert {"bad", "boring"} <= lexicon["neg"]
    assert not lexicon["pos"] & lexicon["neg"] - {"envious", "enviously", "enviousness"}
    assert {"the", "and", "not"} <= data.load_stopwords()


def test_missing_data_says_run_kit_fetch(empty_data_dir):
    with pytest.raises(KitError, match="kit fetch") as raised:
        data.load_movie_reviews()
    assert "kit fetch --source DIR`, DIR holding aclImdb_v1.tar.gz" in str(raised.value)
    assert "shared" not in str(raised.value)


def test_unknown_arguments_are_one_input_error_each(corpora):
    with pytest.raises(InputError, match="split must be one of 'train', 'test', 'unsup', not 'dev'"):
        data.load_imdb("dev")
    with pytest.raises(InputError, match="language must be one of .*'english'.*, not 'klingon'"):
        data.load_stopwords("klingon")
    with pytest.raises(InputError, match="n must be"):
        data.imdb_sample(1)


def test_imdb_sample_is_balanced_and_fixed(corpora):
    sample = data.imdb_sample(200)
    assert sample.label.value_counts().to_dict() == {"neg": 100, "pos": 100}
    assert sample.doc_id.str.startswith("test_").all()
    assert sample.doc_id.tolist() == data.imdb_sample(200).doc_id.tolist()
    assert sample.doc_id.tolist() != data.imdb_sample(200, seed=1).doc_id.tolist()
