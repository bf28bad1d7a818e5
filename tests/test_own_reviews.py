"""Your own reviews: a folder or a CSV, read without modifying anything; clear errors."""

from __future__ import annotations

import pandas as pd
import pytest

from helpers import data, own_reviews
from helpers.errors import InputError, KitError


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
    table = own_reviews.load_reviews(tmp_path)
    assert table.to_dict("records") == [
        {"doc_id": "neg/b.txt", "label": "neg", "text": "Dull, dull film."},
        {"doc_id": "pos/a.txt", "label": "pos", "text": "A joy. Loved it."}]
    assert _snapshot(tmp_path) == before


def test_load_reviews_from_a_csv(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text('text,label\n"Great, truly great",POS\n"Awful",neg \n')
    table = own_reviews.load_reviews(path)
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
        own_reviews.load_reviews(folder)
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
    with pytest.raises(InputError, match=message):
        own_reviews.load_reviews(path)
    assert path.read_bytes() == content


def test_load_reviews_missing_path_says_what_to_give(tmp_path):
    with pytest.raises(KitError, match="does not exist: give a folder with pos/ and neg/"):
        own_reviews.load_reviews(tmp_path / "nowhere")


def test_load_deployment_is_none_until_reviews_are_added(tmp_path):
    (tmp_path / "README.md").write_text("how to add reviews")
    assert own_reviews.load_deployment(tmp_path) is None
    (tmp_path / "mine.csv").write_text("text,label\nLoved it,pos\n")
    assert own_reviews.load_deployment(tmp_path).label.tolist() == ["pos"]
    _write(tmp_path, "neg", "a.txt", b"Hated it")
    assert own_reviews.load_deployment(tmp_path).doc_id.tolist() == ["neg/a.txt"]


def test_load_reviews_reads_upper_case_txt_and_skips_hidden_entries(tmp_path):
    _write(tmp_path, "pos", "A.TXT", b"Loved it.")
    _write(tmp_path, "neg", "b.Txt", b"Hated it.")
    (tmp_path / "pos" / ".ipynb_checkpoints").mkdir()
    _write(tmp_path / "pos" / ".ipynb_checkpoints", "", "a.txt", b"Loved it.")
    assert own_reviews.load_reviews(tmp_path).doc_id.tolist() == ["neg/b.Txt", "pos/A.TXT"]


def test_load_reviews_csv_lines_are_counted_across_blank_lines_and_quoted_breaks(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text('text,label\n"A joy,\nreally",pos\n\nDull,neg\n\nodd,meh\n')
    with pytest.raises(InputError, match=r"line 7: 'meh'"):
        own_reviews.load_reviews(path)
    path.write_text('text,label,\n"A joy,\nreally",pos\n\nDull,neg,\nshort\n')
    table = own_reviews.read_text_csv(path)
    assert table.to_dict("records") == [{"text": "A joy,\nreally", "label": "pos"},
                                        {"text": "Dull", "label": "neg"},
                                        {"text": "short", "label": ""}]
    path.write_text('text,label\n"A joy",pos\nDull,neg\n')
    assert own_reviews.load_reviews(path).doc_id.tolist() == ["row2", "row3"]


@pytest.mark.parametrize("make, message", [
    (lambda d: (_write(d, "neg", "a.txt", b"Bad"), (d / "pos").mkdir(),
                (d / "pos" / "b.txt").symlink_to(d / "nowhere")), "pos/b.txt is a broken link"),
    (lambda d: (_write(d, "neg", "a.txt", b"Bad"), (d / "pos" / "x.txt").mkdir(parents=True)),
     r"folders inside pos/ or neg/ are not read \(pos/x.txt/\)"),
    (lambda d: (_write(d, "neg", "a.txt", b"Bad"), _write(d / "pos", "sub", "b.txt", b"Good")),
     r"not read \(pos/sub/\): move their .txt files up"),
    (lambda d: (_write(d, "neg", "a.txt", b"Bad"), (d / "pos").write_text("a file")),
     "pos must be folders"),
])
def test_load_reviews_folder_edge_cases_are_clear_errors(tmp_path, make, message):
    folder = tmp_path / "reviews"
    folder.mkdir()
    make(folder)
    with pytest.raises(InputError, match=message):
        own_reviews.load_reviews(folder)


@pytest.mark.parametrize("content, message", [
    (b"text,label\nfine,pos\ntoo,many,fields\n", r"line 3 has 3 cells but the header 2: put a text holding"),
    (b"", "is empty: its first line must name the columns"),
    (b"text,text,label\na,b,pos\n", "'text' more than once"),
    (b"id,text,label\n1,a,pos\n\n1,b,neg\n", r"ids must be unique .*line 2: '1', line 4: '1'"),
    (b"id,text,label\n,a,pos\n", "ids must be unique and non-empty"),
])
def test_load_reviews_csv_edge_cases_are_clear_errors(tmp_path, content, message):
    test_load_reviews_csv_errors(tmp_path, content, message)


def test_load_reviews_path_must_be_a_path():
    with pytest.raises(InputError, match="path must be a folder or CSV file name"):
        own_reviews.load_reviews(None)


def test_seen_in_training_finds_reviews_pasted_from_a_training_corpus(corpora):
    imdb_text = data.load_imdb("unsup").text.iloc[7]
    reviews = pd.DataFrame({"text": ["A film I saw last week: dull, then moving.",
                                     "  " + imdb_text.upper().replace(" ", "\n  ") + " ",
                                     data.load_movie_reviews().text.iloc[3]],
                            "label": ["pos", "neg", "pos"]}, index=[4, 5, 6])
    seen = own_reviews.seen_in_training(reviews)
    assert seen.tolist() == [False, True, True] and seen.index.tolist() == [4, 5, 6]


def test_seen_in_training_needs_texts():
    with pytest.raises(InputError, match="text column"):
        own_reviews.seen_in_training(pd.DataFrame({"review": ["x"]}))
