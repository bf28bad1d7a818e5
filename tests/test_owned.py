"""Files the kit writes for people to open: its own are replaced, the user's never overwritten."""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest

from helpers import owned
from helpers.errors import KitError

STAMPED = r"grades\.\d{8}-\d{6}(-\d+)?\.csv"


def test_write_owned_writes_a_new_file_and_remembers_it(tmp_path):
    path = tmp_path / "out" / "grades.csv"
    assert owned.write_owned(path, "a,b\n") == path
    assert path.read_text() == "a,b\n"
    ledger = json.loads((path.parent / owned.LEDGER).read_text())
    assert list(ledger) == ["grades.csv"]
    assert not owned.changed_since_written(path)
    assert not owned.changed_since_written(tmp_path / "out" / "other.csv")


def test_write_owned_replaces_its_own_unchanged_file(tmp_path):
    path = tmp_path / "grades.csv"
    owned.write_owned(path, "first\n")
    assert owned.write_owned(path, "second\n") == path
    assert path.read_text() == "second\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [owned.LEDGER, "grades.csv"]


def test_write_owned_keeps_an_edited_file_and_writes_beside_it(tmp_path):
    path = tmp_path / "grades.csv"
    owned.write_owned(path, "first\n")
    path.write_text("first, edited by hand\n")
    assert owned.changed_since_written(path)
    beside = owned.write_owned(path, "second\n")
    assert re.fullmatch(STAMPED, beside.name) and beside.parent == tmp_path
    assert path.read_text() == "first, edited by hand\n"
    assert beside.read_text() == "second\n"
    # the same text again adds no copy; a new text adds one, never over the earlier copy
    assert owned.write_owned(path, "second\n") == beside
    third = owned.write_owned(path, "third\n")
    assert third not in (path, beside) and re.fullmatch(STAMPED, third.name)
    assert (beside.read_text(), third.read_text()) == ("second\n", "third\n")
    assert path.read_text() == "first, edited by hand\n"


def test_write_owned_keeps_a_file_it_did_not_write(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text("the instructor's own\n")
    assert owned.changed_since_written(path)
    beside = owned.write_owned(path, "the kit's\n")
    assert beside != path and re.fullmatch(STAMPED, beside.name)
    assert path.read_text() == "the instructor's own\n"
    assert beside.read_text() == "the kit's\n"


def test_stamped_path_never_names_an_existing_file(tmp_path):
    when = datetime(2026, 11, 23, 14, 50, 0)
    path = tmp_path / "grades.csv"
    first = owned.stamped_path(path, when)
    assert first.name == "grades.20261123-145000.csv"
    first.write_text("taken")
    second = owned.stamped_path(path, when)
    assert second.name == "grades.20261123-145000-2.csv"


def test_write_owned_takes_bytes_or_a_writer_for_large_files(tmp_path):
    path = tmp_path / "vectors.tsv"
    assert owned.write_owned(path, b"1\t2\n") == path and path.read_bytes() == b"1\t2\n"
    assert owned.write_owned(path, lambda tmp: tmp.write_text("3\t4\n")) == path
    assert path.read_text() == "3\t4\n" and not owned.changed_since_written(path)
    path.write_text("mine\n")
    beside = owned.write_owned(path, lambda tmp: tmp.write_text("5\t6\n"))
    assert beside != path and path.read_text() == "mine\n" and beside.read_text() == "5\t6\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [owned.LEDGER]


def test_a_failing_writer_leaves_nothing_behind(tmp_path):
    def fail(tmp):
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        owned.write_owned(tmp_path / "big.tsv", fail)
    assert list(tmp_path.iterdir()) == []


def test_write_owned_can_refuse_instead_of_writing_beside(tmp_path):
    path = tmp_path / "notes.txt"
    assert owned.write_owned(path, "kit\n", refuse="Move it away.") == path
    assert owned.write_owned(path, "kit, again\n", refuse="Move it away.") == path
    path.write_text("kit, again, edited\n")
    message = (rf"^{re.escape(str(path))} was changed since the kit wrote it \(or the kit did not write "
               r"it\), so it is kept as it is; nothing was written\. Move it away\.$")
    with pytest.raises(KitError, match=message):
        owned.write_owned(path, "kit, third\n", refuse="Move it away.")
    assert path.read_text() == "kit, again, edited\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [owned.LEDGER, "notes.txt"]


def test_refuse_changed_checks_every_file_before_any_is_written(tmp_path):
    ours, theirs, free = tmp_path / "a.tsv", tmp_path / "b.tsv", tmp_path / "c.tsv"
    owned.write_owned(ours, "kit\n")
    theirs.write_text("user\n")
    owned.refuse_changed([ours, free], "hint")
    with pytest.raises(KitError, match=rf"{re.escape(str(theirs))} was changed.*nothing was written\. hint"):
        owned.refuse_changed([ours, theirs, free], "hint")
