"""The storage layer: one key, atomic writes, a checksum verified on every read, one rule for bad files."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import files, settings, storage
from helpers.errors import InputError


def _write_text(text: str):
    return lambda tmp: tmp.write_text(text)


def _read_text(path: Path) -> str:
    return path.read_text()


def test_sha256sum_matches_hashlib(tmp_path):
    blob = bytes(range(256)) * 10000
    (tmp_path / "f").write_bytes(blob)
    assert files.sha256sum(tmp_path / "f") == hashlib.sha256(blob).hexdigest()


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "sub" / "table.csv"

    def half_then_fail(tmp: Path) -> None:
        tmp.write_text("half a tab")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        files.atomic_write(target, half_then_fail)
    assert list(target.parent.iterdir()) == []
    files.atomic_write(target, lambda tmp: tmp.write_text("whole"))
    assert target.read_text() == "whole" and len(list(target.parent.iterdir())) == 1


def test_a_stored_artefact_reads_back(tmp_path):
    path = tmp_path / "cache" / "a.txt"
    assert storage.load(path, _read_text) is None
    assert storage.store(path, _write_text("value"))
    assert storage.load(path, _read_text) == "value"
    assert storage.is_stored(path)


def test_recorded_digest_is_the_sidecar_s_checksum_and_none_without_one(tmp_path):
    path = tmp_path / "a.txt"
    assert storage.recorded_digest(path) is None
    storage.store(path, _write_text("value"))
    assert storage.recorded_digest(path) == hashlib.sha256(b"value").hexdigest()
    path.write_text("changed")  # not read: a name for what was stored, verified when loaded
    assert storage.recorded_digest(path) == hashlib.sha256(b"value").hexdigest()
    for text in ("", "not a digest", "A" * 64, "0" * 63):
        (tmp_path / "a.txt.sha256").write_text(text)
        assert storage.recorded_digest(path) is None, text


@pytest.mark.parametrize("damage", ["flipped", "truncated", "emptied", "no checksum", "unreadable",
                                    "does not fit"])
def test_a_bad_artefact_is_set_aside_with_one_line_and_computed_again(tmp_path, capsys, damage):
    path = tmp_path / "a.csv"
    storage.store(path, _write_text("doc,correct\\nd1,False\\n"))
    read = _read_text
    if damage == "flipped":
        path.write_text(path.read_text().replace("False", "True!"))
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:7])
    elif damage == "emptied":
        path.write_text("")
    elif damage == "no checksum":
        path.with_name(path.name + storage.SIDECAR).unlink()
    elif damage == "unreadable":
        def read(found):
            raise ValueError("not a table")
    else:
        def read(found):
            return None
    assert storage.load(path, read) is None
    assert not path.exists()
    aside = list(tmp_path.glob("a.csv.corrupt-*"))
    assert len(aside) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"set aside as {aside[0].name}, and computed again" in err
    fresh = storage.cached(path, lambda: "fresh", lambda value, tmp: tmp.write_text(value), _read_text)
    assert fresh == "fresh"
    assert storage.load(path, _read_text) == "fresh"


def test_cached_computes_once(tmp_path):
    calls = []

    def compute() -> str:
        calls.append(1)
        return "v"

    for _ in range(3):
        assert storage.cached(tmp_path / "x", compute, lambda v, tmp: tmp.write_text(v), _read_text) == "v"
    assert len(calls) == 1


#: A process that asks for one artefact: it says it is asking (``asking-<name>``), and each
#: computation, noted in ``computed.log``, lasts until both processes are asking and 2 s more.
_ASK = """
import sys, time
from pathlib import Path
from helpers import storage

folder = Path(sys.argv[1])

def compute():
    with open(folder / "computed.log", "a") as log:
        log.write(sys.argv[2] + "\\n")
    deadline = time.monotonic() + 60
    while len(list(folder.glob("asking-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2.0)
    return "value of " + sys.argv[2]

(folder / f"asking-{sys.argv[2]}").touch()

print(storage.cached(folder / "artefact.txt", compute, lambda v, tmp: tmp.write_text(v),
                     lambda p: p.read_text()))
"""


def test_two_processes_that_need_one_artefact_compute_it_once(tmp_path):
    asks = [subprocess.Popen([sys.executable, "-c", _ASK, str(tmp_path), name], stdout=subprocess.PIPE,
                             text=True) for name in ("one", "two")]
    answers = [ask.communicate(timeout=120)[0].strip() for ask in asks]
    computed = (tmp_path / "computed.log").read_text().split()
    assert len(computed) == 1, computed  # the second process waited and read the first one's
    assert answers == [f"value of {computed[0]}"] * 2
    assert storage.artefact_of(tmp_path / ".artefact.txt.computing") == tmp_path / "artefact.txt"


def test_a_computation_that_refuses_its_input_leaves_no_folder_it_made(tmp_path):
    def refuse() -> str:
        raise InputError("found only once the work began")

    io = {"write": lambda v, tmp: tmp.write_text(v), "read": _read_text}
    with pytest.raises(InputError):
        storage.cached(tmp_path / "new" / "deeper" / "x.txt", refuse, **io)
    assert not (tmp_path / "new").exists()
    (tmp_path / "kept").mkdir()
    with pytest.raises(InputError):
        storage.cached(tmp_path / "kept" / "x.txt", refuse, **io)
    assert (tmp_path / "kept").is_dir()  # not made by it


@pytest.mark.skipif(os.name != "posix", reason="fork is POSIX")
def test_a_process_forked_while_a_lock_is_held_does_not_keep_it(tmp_path):
    lock = tmp_path / ".x.lock"
    with files.file_lock(lock):
        child = os.fork()
        if child == 0:  # holds a copy of the lock's descriptor until it exits
            time.sleep(300)
            os._exit(0)
    try:
        taken = threading.Event()

        def take() -> None:
            with files.file_lock(lock):
                taken.set()

        threading.Thread(target=take, daemon=True).start()
        assert taken.wait(60), "the lock stayed held by the forked child"
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


def test_a_folder_that_cannot_be_written_costs_the_cache_not_the_result(tmp_path, capsys, monkeypatch):
    def no_space(path, write):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(storage, "atomic_write", no_space)
    assert storage.store(tmp_path / "x", _write_text("v")) is False
    assert "was computed but not kept as a cache (No space left on device)" in capsys.readouterr().err
    monkeypatch.setenv(settings.STRICT_CACHE_ENV, "1")
    with pytest.raises(OSError):
        storage.store(tmp_path / "x", _write_text("v"))


def test_a_bad_artefact_in_a_read_only_folder_is_left_unused(tmp_path, capsys, monkeypatch):
    path = tmp_path / "a.txt"
    storage.store(path, _write_text("good"))
    path.write_text("bad")

    def read_only(self, target):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(Path, "rename", read_only)
    assert storage.load(path, _read_text) is None
    assert path.read_text() == "bad" and "it is not used" in capsys.readouterr().err


@pytest.mark.parametrize("flock", [True, False], ids=["flock", "without fcntl (filelock)"])
def test_concurrent_writers_never_pair_one_file_with_the_others_checksum(tmp_path, monkeypatch, flock):
    if not flock:  # as on native Windows
        monkeypatch.setattr(files, "fcntl", None)
    path = tmp_path / "shared.txt"
    errors = []

    def writer(text: str) -> None:
        try:
            for i in range(40):
                storage.store(path, _write_text(f"{text} {i} " * 1000))
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("one", "two", "three")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and storage.is_stored(path)
    assert storage.load(path, _read_text).startswith(("one 39", "two 39", "three 39"))
    assert (tmp_path / ".shared.txt.lock").exists()


def test_a_lock_file_that_cannot_be_created_runs_the_block_unlocked(tmp_path, monkeypatch):
    (tmp_path / "a file").write_text("")
    for hidden in (False, True):
        if hidden:
            monkeypatch.setattr(files, "fcntl", None)
        with files.file_lock(tmp_path / "a file" / "x.lock") as held:
            assert held is False
        with files.file_lock(tmp_path / "x.lock", shared=True) as held:
            assert held is True


def test_keys_follow_parameters_data_libraries_and_the_cache_version(corpora, monkeypatch):
    base = storage.key({"a": 1})
    assert base == storage.key({"a": 1}) and len(base) == storage.KEY_CHARS
    assert base != storage.key({"a": 2})
    assert base != storage.key({"a": 1}, datasets=["movie_reviews"])
    assert base != storage.key({"a": 1}, libraries=["numpy"])
    monkeypatch.setattr(storage, "CACHE_VERSION", storage.CACHE_VERSION + 1)
    assert base != storage.key({"a": 1})


def test_a_bad_file_replaced_meanwhile_by_another_process_is_not_set_aside(tmp_path):
    path = tmp_path / "a.txt"
    storage.store(path, _write_text("good, stored by another process after our read"))
    storage._set_aside_if_unchanged(path, "the digest of what we read", "was bad")
    assert storage.load(path, _read_text).startswith("good")
    storage._set_aside_if_unchanged(tmp_path / "gone.txt", None, "was bad")  # set aside by another reader


def test_content_digest_says_which_rows_and_values_a_table_holds():
    import pandas as pd

    table = pd.DataFrame({"label": ["pos", "neg"], "text": ["ab", "c"]})
    digest = storage.content_digest(table, ["label", "text"])
    assert len(digest) == 64 and digest == storage.content_digest(table.copy(), ["label", "text"])
    shifted = pd.DataFrame({"label": ["pos", "neg"], "text": ["a", "bc"]})  # the same characters
    assert storage.content_digest(shifted, ["label", "text"]) != digest
    assert storage.content_digest(table.iloc[::-1], ["label", "text"]) != digest  # order matters
    assert storage.content_digest(table, ["text", "label"]) != digest
    lone = pd.DataFrame({"label": ["pos"], "text": ["\ud800"]})  # not valid UTF-8: hashed as it is
    assert storage.content_digest(lone, ["label", "text"]) != storage.content_digest(table, ["label", "text"])
    with pytest.raises(InputError, match="no column 'rating'"):
        storage.content_digest(table, ["rating"])


def test_every_file_a_stored_artefact_makes_belongs_to_it(tmp_path):
    path = tmp_path / "results" / "d2v_1.model"
    assert storage.store(path, lambda tmp: tmp.write_text("model"))
    assert storage.cached(path, lambda: "other", lambda value, tmp: tmp.write_text(value),
                          lambda stored: stored.read_text()) == "model"
    made = sorted(path.parent.iterdir())
    assert len(made) == 3, made  # the artefact, its checksum and its lock file
    assert {storage.artefact_of(found) for found in made} == {path}
    assert storage.artefact_of(tmp_path / ".hidden.csv") == tmp_path / ".hidden.csv"  # no lock: its own


def test_arrays_are_stored_as_npy_and_read_back_as_they_were_never_unpickled(tmp_path):
    values = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    path = tmp_path / "a.npy"
    io = {"write": storage.write_array, "read": lambda stored: storage.read_array(stored, (4, 3))}
    assert storage.cached(path, lambda: values, **io) is values
    found = storage.cached(path, lambda: pytest.fail("computed again"), **io)
    assert found.dtype == np.float32 and np.array_equal(found, values)
    assert storage.read_array(path, (3, 4)) is None  # another shape: not these vectors
    for unfit in (np.where(values > 1, np.nan, values), np.arange(12).reshape(4, 3)):
        storage.write_array(unfit, tmp_path / "unfit.npy")
        assert storage.read_array(tmp_path / "unfit.npy", (4, 3)) is None  # NaN, or not floats
    whole = np.arange(12).reshape(4, 3)
    storage.write_array(whole, tmp_path / "whole.npy")
    assert np.array_equal(storage.read_array(tmp_path / "whole.npy", (4, 3), kind="i"), whole)
    assert storage.read_array(path, (4, 3), kind="i") is None  # floats where whole numbers must be
    with pytest.raises(ValueError, match="pickle"):
        storage.write_array(np.array([{"a": 1}], dtype=object), tmp_path / "objects.npy")
    np.save(tmp_path / "pickled.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="pickle"):
        storage.read_array(tmp_path / "pickled.npy", (1,))


def test_a_file_is_hashed_once_per_version_and_a_change_is_seen_whatever_its_times_say(tmp_path, monkeypatch):
    path = tmp_path / "a.csv"
    storage.store(path, _write_text("doc,correct\\nd1,False\\n"))
    hashed = []
    monkeypatch.setattr(storage, "sha256sum", lambda found: hashed.append(found) or files.sha256sum(found))
    for _ in range(3):
        assert storage.load(path, _read_text) == "doc,correct\\nd1,False\\n"
    assert hashed == [path]
    info = path.stat()
    path.write_text(path.read_text().replace("False", "Fakes"))  # in place, the same size
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # and its modification time put back
    assert path.stat().st_size == info.st_size and path.stat().st_mtime_ns == info.st_mtime_ns
    assert storage.load(path, _read_text) is None  # hashed again: set aside
    assert list(tmp_path.glob("a.csv.corrupt-*"))
