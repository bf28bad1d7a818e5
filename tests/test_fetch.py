"""Fetching: checksums, moving corrupt files aside, verified folders and their manifests."""

from __future__ import annotations

import os
import re
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from helpers import data, fetch, files, settings
from helpers.errors import InputError, KitError

SMALL = "opinion_lexicon"  # the smallest archive, for tests that fetch into a tmp folder


def test_fetch_verifies_and_is_idempotent(source, empty_data_dir):
    assert _fetched_from_local_copy(source)
    assert fetch.is_verified(SMALL, empty_data_dir)
    archive = empty_data_dir / fetch.DATASETS[SMALL].archive
    mtime = archive.stat().st_mtime_ns
    assert fetch.fetch([SMALL], source=source, progress=False) == {SMALL: fetch.PRESENT}
    assert archive.stat().st_mtime_ns == mtime
    assert data.load_opinion_lexicon()["pos"]


def test_corrupt_archive_in_data_dir_is_moved_aside_and_refetched(source, empty_data_dir):
    fetch.fetch([SMALL], source=source, progress=False)
    archive = empty_data_dir / fetch.DATASETS[SMALL].archive
    archive.write_bytes(b"not the zip you are looking for")
    assert not fetch.is_verified(SMALL, empty_data_dir)
    assert _fetched_from_local_copy(source)
    assert fetch.is_verified(SMALL, empty_data_dir)
    aside = list(archive.parent.glob(f"{archive.name}.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == b"not the zip you are looking for"


def test_corrupt_source_copy_is_refused_and_never_used(source, tmp_path, empty_data_dir):
    bad_source = tmp_path / "source"
    zipped = bad_source / fetch.DATASETS[SMALL].archive
    zipped.parent.mkdir(parents=True)
    original = source / fetch.DATASETS[SMALL].archive
    zipped.write_bytes(original.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(KitError, match="sha256"):
        fetch.fetch([SMALL], source=bad_source, progress=False)
    archive = empty_data_dir / fetch.DATASETS[SMALL].archive
    assert not archive.exists()
    assert not (empty_data_dir / fetch.DATASETS[SMALL].folder).exists()
    assert len(list(archive.parent.glob("*.corrupt-*"))) == 1
    with pytest.raises(KitError, match="kit fetch"):
        data.load_opinion_lexicon()


def test_source_lacking_a_file_is_a_clear_error(tmp_path, empty_data_dir):
    with pytest.raises(KitError, match="has no nltk_data/corpora/opinion_lexicon.zip") as raised:
        fetch.fetch([SMALL], source=tmp_path, progress=False)
    # the layout a user can build, not a path only this course's machines have
    assert "aclImdb_v1.tar.gz and nltk_data/corpora/<corpus>.zip" in str(raised.value)
    assert "shared" not in str(raised.value)


def test_unknown_data_set_is_a_clear_error(source, empty_data_dir):
    with pytest.raises(InputError, match="data set must be one of .*, not 'wikipedia'"):
        fetch.fetch(["wikipedia"], source=source, progress=False)


def test_failed_extraction_leaves_nothing_half_written(source, empty_data_dir, monkeypatch):
    def disk_full(self, member, path=None, pwd=None):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(zipfile.ZipFile, "extract", disk_full)
    with pytest.raises(KitError, match="Free some disk space"):
        fetch.fetch([SMALL], source=source, progress=False)
    corpora_dir = empty_data_dir / "nltk_data" / "corpora"
    # The verified archive may stay (it is whole); no extraction, temp file or folder does.
    assert sorted(p.name for p in corpora_dir.iterdir()) == [f"{SMALL}.zip"]
    monkeypatch.undo()
    monkeypatch.setenv("KIT_DATA_DIR", str(empty_data_dir))
    assert fetch.fetch([SMALL], source=source, progress=False)[SMALL].startswith("extracted again")


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
        fetch.fetch([SMALL], source=source, progress=False)
    corpora_dir = empty_data_dir / "nltk_data" / "corpora"
    assert list(corpora_dir.iterdir()) == []


def test_stale_extraction_is_replaced(source, empty_data_dir):
    fetch.fetch([SMALL], source=source, progress=False)
    folder = empty_data_dir / fetch.DATASETS[SMALL].folder
    (folder / fetch.STAMP).unlink()
    shutil.rmtree(folder)
    folder.mkdir()
    (folder / "half-written.txt").write_text("x")
    again = fetch.fetch([SMALL], source=source, progress=False)[SMALL]
    assert again.startswith("extracted again from its verified archive (")  # not fetched: no origin
    assert not (folder / "half-written.txt").exists()
    assert (folder / "positive-words.txt").is_file()


def test_stamp_is_the_verified_archive_checksum(corpora):
    archive = corpora / fetch.DATASETS["movie_reviews"].archive
    assert fetch.stamp("movie_reviews") == files.sha256sum(archive)
    assert fetch.stamp("movie_reviews") in fetch.DATASETS["movie_reviews"].sha256


@pytest.mark.parametrize("name, kind", [("../outside.txt", "file"), ("/abs.txt", "file"),
                                        ("aclImdb/link", "symlink")])
def test_unsafe_tar_members_are_refused_on_every_python(tmp_path, name, kind):
    member = tarfile.TarInfo(name)
    if kind == "symlink":
        member.type, member.linkname = tarfile.SYMTYPE, "/etc/passwd"
    with pytest.raises(tarfile.TarError, match="unsafe"):
        fetch._checked(member)
    safe = tarfile.TarInfo("aclImdb/train/pos/0_9.txt")
    assert fetch._checked(safe) is safe


def test_without_an_offline_copy_the_suite_uses_the_verified_data_folder(corpora, monkeypatch, tmp_path):
    import conftest

    monkeypatch.delenv("KIT_DATA_SOURCE", raising=False)
    monkeypatch.setattr(conftest, "REPO", tmp_path / "repo")  # no ../shared/data beside it
    assert conftest._source() == corpora


def _fetched_from_local_copy(source) -> bool:
    return fetch.fetch([SMALL], source=source, progress=False)[SMALL].startswith(
        f"fetched from local copy {source}, ")


# --- extracted files checked against their manifest ----------------------------------------------


@pytest.fixture
def reviews_copy(source, empty_data_dir) -> Path:
    """A data folder of its own holding the 2,000 movie reviews, fetched and verified."""
    fetch.fetch(["movie_reviews"], source=source, progress=False)
    fetch._intact.clear()  # each test starts as a new process would
    return empty_data_dir / fetch.DATASETS["movie_reviews"].folder


def test_edited_or_deleted_reviews_are_caught_and_repaired_by_fetch(reviews_copy, source, capsys):
    edited, deleted = reviews_copy / "pos" / "cv000_29590.txt", reviews_copy / "neg" / "cv001_19502.txt"
    original = edited.read_bytes()
    edited.write_text("a review i rewrote")
    deleted.unlink()
    assert not fetch.is_verified("movie_reviews")
    changes = r"2 file\(s\) differ .*neg/cv001_19502.txt missing, pos/cv000_29590.txt changed"
    with pytest.raises(KitError, match=rf"changed since it was fetched: {changes}.*kit fetch"):
        data.load_movie_reviews()
    status = fetch.fetch(["movie_reviews"], source=source, progress=False)
    assert status["movie_reviews"].startswith("extracted again from its verified archive")
    assert "2 file(s) differ" in capsys.readouterr().err
    assert edited.read_bytes() == original and deleted.is_file()
    assert len(data.load_movie_reviews()) == data.MOVIE_REVIEWS


def test_an_added_file_counts_as_a_change(reviews_copy):
    (reviews_copy / "pos" / "cv999_extra.txt").write_text("planted")
    assert fetch.changed_files(reviews_copy) == {"pos/cv999_extra.txt": "added"}


def test_same_size_same_time_edit_is_caught_by_verify(reviews_copy, source):
    target = reviews_copy / "pos" / "cv000_29590.txt"
    before = target.stat()
    text = target.read_bytes()
    target.write_bytes(bytes([text[0] ^ 1]) + text[1:])  # one flipped bit, same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert fetch.changed_files(reviews_copy) == {}  # the cheap check trusts size and time
    assert fetch.changed_files(reviews_copy, full=True) == {"pos/cv000_29590.txt": "changed"}
    status = fetch.fetch(["movie_reviews"], source=source, progress=False, verify=True)
    assert status["movie_reviews"].startswith("extracted again")
    assert target.read_bytes() == text


def test_a_copy_with_new_times_but_the_same_bytes_is_intact(reviews_copy):
    target = reviews_copy / "neg" / "cv002_17424.txt"
    target.write_bytes(target.read_bytes())  # a new modification time, the same content
    assert fetch.changed_files(reviews_copy) == {}


def test_a_folder_without_a_manifest_asks_for_a_fetch(reviews_copy):
    (reviews_copy / fetch.MANIFEST).unlink()
    with pytest.raises(KitError, match="no manifest.*Run `kit fetch`"):
        data.load_movie_reviews()


def test_kit_info_and_fetch_verify_name_a_changed_corpus(reviews_copy, source, capsys):
    from helpers.cli import main

    (reviews_copy / "neg" / "cv001_19502.txt").write_text("edited")
    main(["info"])
    shown = capsys.readouterr().out
    assert re.search(r"movie_reviews\s+present but NOT verified", shown)
    assert re.search(r"profile\s+quick \(Doc2Vec trains 10 epochs on one core.*KIT_PROFILE chooses\)", shown)
    assert main(["fetch", "--only", "movie_reviews", "--verify", "--source", str(source)]) in (0, None)
    assert "neg/cv001_19502.txt changed" in capsys.readouterr().err


def test_an_interrupted_fetch_leaves_nothing_behind_once_fetch_runs_again(source, empty_data_dir):
    corpora_dir = empty_data_dir / "nltk_data" / "corpora"
    half = corpora_dir / f".{SMALL}.k1ll3d"  # what kill -9 mid-extraction leaves
    (half / SMALL).mkdir(parents=True)
    (half / SMALL / "positive-words.txt").write_text("half")
    partial = corpora_dir / f".{SMALL}.zip.k1ll3d.part"  # ... and mid-copy
    partial.write_bytes(b"part of a zip")
    fetch.fetch([SMALL], source=source, progress=False)
    assert sorted(p.name for p in corpora_dir.iterdir()) == [SMALL, f"{SMALL}.zip"]
    assert settings.data_dir() == empty_data_dir


def test_a_download_that_breaks_off_is_a_download_error_not_a_disk_one(tmp_path, monkeypatch):
    class Dropped:
        headers = {"Content-Length": "10"}

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self, size):
            raise ConnectionResetError(104, "Connection reset by peer")

    monkeypatch.setattr(fetch.urllib.request, "urlopen", lambda url, timeout: Dropped())
    with pytest.raises(KitError, match="broke off.*Run `kit fetch` again"):
        fetch._download("https://example.org/a.tar.gz", tmp_path / "a.part", progress=False)
