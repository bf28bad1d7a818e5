"""The data layer: loaders on the real corpora, and fetch's checksums and atomic writes."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from helpers import data
from helpers.errors import KitError

SMALL = "opinion_lexicon"  # the smallest archive, for tests that fetch into a tmp folder


# ----------------------------------------------------------------------------- loaders


def test_movie_reviews_counts_and_folds(corpora):
    reviews = data.load_movie_reviews()
    assert len(reviews) == 2000
    assert reviews.label.value_counts().to_dict() == {"neg": 1000, "pos": 1000}
    assert list(reviews.columns) == ["doc_id", "cv", "fold", "label", "text"]
    assert reviews.doc_id.is_unique
    assert (reviews.fold == reviews.cv % 10).all()
    per_fold = reviews.groupby(["fold", "label"]).size()
    assert set(per_fold) == {100}
    assert len(per_fold) == 20
    first = reviews.iloc[0]
    assert (first.doc_id, first.cv, first.label) == ("cv000_29416", 0, "neg")
    assert first.text.startswith("plot : two teen couples go to a church party ,")


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


def test_imdb_cache_is_reused(corpora):
    first = data.load_imdb("test")
    caches = list((corpora / "cache").glob("imdb_test_*.pkl"))
    assert len(caches) == 1
    assert data.load_imdb("test").equals(first)


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
    with pytest.raises(KitError, match="kit fetch"):
        data.load_movie_reviews()


def test_unknown_split_is_a_clear_error(corpora):
    with pytest.raises(KitError, match="choose one of"):
        data.load_imdb("dev")


# ----------------------------------------------------------------------------- fetch


def test_fetch_verifies_and_is_idempotent(source, empty_data_dir):
    assert data.fetch([SMALL], source=source, progress=False) == {SMALL: "fetched"}
    assert data.is_verified(SMALL, empty_data_dir)
    archive = empty_data_dir / data.DATASETS[SMALL].archive
    mtime = archive.stat().st_mtime_ns
    assert data.fetch([SMALL], source=source, progress=False) == {SMALL: "present"}
    assert archive.stat().st_mtime_ns == mtime
    assert data.load_opinion_lexicon()["pos"]


def test_corrupt_archive_in_data_dir_is_moved_aside_and_refetched(source, empty_data_dir):
    data.fetch([SMALL], source=source, progress=False)
    archive = empty_data_dir / data.DATASETS[SMALL].archive
    archive.write_bytes(b"not the zip you are looking for")
    assert not data.is_verified(SMALL, empty_data_dir)
    assert data.fetch([SMALL], source=source, progress=False) == {SMALL: "fetched"}
    assert data.is_verified(SMALL, empty_data_dir)
    aside = list(archive.parent.glob(f"{archive.name}.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == b"not the zip you are looking for"


def test_corrupt_source_copy_is_refused_and_never_used(source, tmp_path, empty_data_dir):
    bad_source = tmp_path / "source"
    zipped = bad_source / data.DATASETS[SMALL].archive
    zipped.parent.mkdir(parents=True)
    original = source / data.DATASETS[SMALL].archive
    zipped.write_bytes(original.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(KitError, match="sha256"):
        data.fetch([SMALL], source=bad_source, progress=False)
    archive = empty_data_dir / data.DATASETS[SMALL].archive
    assert not archive.exists()
    assert not (empty_data_dir / data.DATASETS[SMALL].folder).exists()
    assert len(list(archive.parent.glob("*.corrupt-*"))) == 1
    with pytest.raises(KitError, match="kit fetch"):
        data.load_opinion_lexicon()


def test_source_lacking_a_file_is_a_clear_error(tmp_path, empty_data_dir):
    with pytest.raises(KitError, match="has no nltk_data/corpora/opinion_lexicon.zip"):
        data.fetch([SMALL], source=tmp_path, progress=False)


def test_unknown_data_set_is_a_clear_error(source, empty_data_dir):
    with pytest.raises(KitError, match="Unknown data set"):
        data.fetch(["wikipedia"], source=source, progress=False)


def test_failed_extraction_leaves_nothing_half_written(source, empty_data_dir, monkeypatch):
    def disk_full(self, member, path=None, pwd=None):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(zipfile.ZipFile, "extract", disk_full)
    with pytest.raises(KitError, match="Free some disk space"):
        data.fetch([SMALL], source=source, progress=False)
    corpora_dir = empty_data_dir / "nltk_data" / "corpora"
    # The verified archive may stay (it is whole); no extraction, temp file or folder does.
    assert sorted(p.name for p in corpora_dir.iterdir()) == [f"{SMALL}.zip"]
    monkeypatch.undo()
    monkeypatch.setenv("KIT_DATA_DIR", str(empty_data_dir))
    assert data.fetch([SMALL], source=source, progress=False) == {SMALL: "fetched"}


def test_failed_copy_leaves_no_partial_archive(source, empty_data_dir, monkeypatch):
    real_open = open

    class FailingWriter:
        def __init__(self, f):
            self.f = f

        def write(self, chunk):
            raise OSError(28, "No space left on device")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def fake_open(path, mode="r", *args, **kwargs):
        f = real_open(path, mode, *args, **kwargs)
        return FailingWriter(f) if "w" in mode and str(path).endswith(".part") else f

    monkeypatch.setattr("builtins.open", fake_open)
    with pytest.raises(KitError, match="Free some disk space"):
        data.fetch([SMALL], source=source, progress=False)
    corpora_dir = empty_data_dir / "nltk_data" / "corpora"
    assert list(corpora_dir.iterdir()) == []


def test_sha256sum_matches_hashlib(tmp_path):
    import hashlib

    blob = bytes(range(256)) * 10000
    (tmp_path / "f").write_bytes(blob)
    assert data.sha256sum(tmp_path / "f") == hashlib.sha256(blob).hexdigest()


def test_stale_extraction_is_replaced(source, empty_data_dir):
    data.fetch([SMALL], source=source, progress=False)
    folder = empty_data_dir / data.DATASETS[SMALL].folder
    (folder / data.STAMP).unlink()
    shutil.rmtree(folder)
    folder.mkdir()
    (folder / "half-written.txt").write_text("x")
    assert data.fetch([SMALL], source=source, progress=False) == {SMALL: "fetched"}
    assert not (folder / "half-written.txt").exists()
    assert (folder / "positive-words.txt").is_file()


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "sub" / "table.csv"

    def half_then_fail(tmp: Path) -> None:
        tmp.write_text("half a tab")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        data.atomic_write(target, half_then_fail)
    assert list(target.parent.iterdir()) == []
    data.atomic_write(target, lambda tmp: tmp.write_text("whole"))
    assert target.read_text() == "whole" and len(list(target.parent.iterdir())) == 1


def test_stamp_is_the_verified_archive_checksum(corpora):
    archive = corpora / data.DATASETS["movie_reviews"].archive
    assert data.stamp("movie_reviews") == data.sha256sum(archive)
    assert data.stamp("movie_reviews") in data.DATASETS["movie_reviews"].sha256


# --------------------------------------------------------------------------- your own reviews


def _write(folder, label, name, content: bytes):
    (folder / label).mkdir(parents=True, exist_ok=True)
    (folder / label / name).write_bytes(content)


def _snapshot(folder):
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_load_reviews_from_a_folder(tmp_path):
    _write(tmp_path, "pos", "a.txt", b"A joy.<br /><br />Loved   it.")
    _write(tmp_path, "neg", "b.txt", "\ufeffDull, dull film.".encode())
    (tmp_path / "pos" / "notes.md").write_text("ignored: not a .txt file")
    before = _snapshot(tmp_path)
    table = data.load_reviews(tmp_path)
    assert table.to_dict("records") == [
        {"doc_id": "neg/b.txt", "label": "neg", "text": "Dull, dull film."},
        {"doc_id": "pos/a.txt", "label": "pos", "text": "A joy. Loved it."}]
    assert _snapshot(tmp_path) == before


def test_load_reviews_from_a_csv(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text('text,label\n"Great, truly great",POS\n"Awful",neg \n')
    table = data.load_reviews(path)
    assert table.doc_id.tolist() == ["row2", "row3"]
    assert table.label.tolist() == ["pos", "neg"]
    assert table.text.tolist() == ["Great, truly great", "Awful"]


@pytest.mark.parametrize("make, message", [
    (lambda d: d.mkdir(), "holds no reviews"),
    (lambda d: _write(d, "neutral", "x.txt", b"meh"), "subfolders must be named pos and neg"),
    (lambda d: _write(d, "pos", "bad.txt", "caf\u00e9".encode("latin-1")), "bad.txt is not UTF-8"),
    (lambda d: (_write(d, "pos", "a.txt", b"Same  text"), _write(d, "neg", "b.txt", b"Same text")),
     "neg/b.txt = pos/a.txt"),
    (lambda d: _write(d, "pos", "empty.txt", b"  \n"), "empty review"),
])
def test_load_reviews_folder_errors(tmp_path, make, message):
    folder = tmp_path / "reviews"
    make(folder)
    before = _snapshot(folder)
    with pytest.raises(KitError, match=message):
        data.load_reviews(folder)
    assert _snapshot(folder) == before


@pytest.mark.parametrize("content, message", [
    (b"text,label\nfine,pos\nodd,meh\n", r"labels must be pos or neg .*line 3: 'meh'"),
    (b"review,label\nfine,pos\n", "needs the columns text and label"),
    (b"text,label\n", "holds no reviews"),
    ("text,label\ncaf\u00e9,pos\n".encode("latin-1"), "not UTF-8"),
    (b"text,label\nsame,pos\nsame,neg\n", "row2 = row3"),
])
def test_load_reviews_csv_errors(tmp_path, content, message):
    path = tmp_path / "mine.csv"
    path.write_bytes(content)
    with pytest.raises(KitError, match=message):
        data.load_reviews(path)
    assert path.read_bytes() == content


def test_load_reviews_missing_path_says_what_to_give(tmp_path):
    with pytest.raises(KitError, match="does not exist: give a folder with pos/ and neg/"):
        data.load_reviews(tmp_path / "nowhere")


def test_load_deployment_is_none_until_reviews_are_added(tmp_path):
    (tmp_path / "README.md").write_text("how to add reviews")
    assert data.load_deployment(tmp_path) is None
    (tmp_path / "mine.csv").write_text("text,label\nLoved it,pos\n")
    assert data.load_deployment(tmp_path).label.tolist() == ["pos"]
    _write(tmp_path, "neg", "a.txt", b"Hated it")
    assert data.load_deployment(tmp_path).doc_id.tolist() == ["neg/a.txt"]


def test_imdb_sample_is_balanced_and_fixed(corpora):
    sample = data.imdb_sample(200)
    assert sample.label.value_counts().to_dict() == {"neg": 100, "pos": 100}
    assert sample.doc_id.str.startswith("test_").all()
    assert sample.doc_id.tolist() == data.imdb_sample(200).doc_id.tolist()
    assert sample.doc_id.tolist() != data.imdb_sample(200, seed=1).doc_id.tolist()
