"""Embedding Projector export: formats, escaping, round trip, config, errors."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from helpers import embeddings, owned, projector
from helpers.cli import main
from helpers.errors import InputError, KitError

NASTY = ["tab\there", "new\nline", "cr\rreturn", "back\\slash", "literal \\t stays", "ünïcødé ★",
         'quote "x"', ""]


def test_several_columns_round_trip_with_a_header(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(NASTY), 3))
    ratings = [1, 2, 3, 4, 7, 8, 9, None]
    metadata = pd.DataFrame({"text": NASTY, "label": ["pos", "neg"] * 4, "rating": ratings})
    paths = projector.export_projector(vectors, metadata, tmp_path / "out", "docs")
    lines = paths["metadata"].read_text(encoding="utf-8").split("\n")
    assert lines[0] == "text\tlabel\trating" and lines[-1] == ""
    assert len(lines) == len(NASTY) + 2  # header, rows, final newline: one line per point
    assert all(line.count("\t") == 2 for line in lines[:-1])
    assert all(line.count("\t") == 2 for line in paths["vectors"].read_text().splitlines())
    back_vectors, back = projector.read_projector(tmp_path / "out", "docs")
    assert back_vectors.shape == vectors.shape and np.allclose(back_vectors, vectors, rtol=1e-5)
    assert back.text.tolist() == NASTY[:-1] + [projector.EMPTY]
    assert back.label.tolist() == metadata.label.tolist()
    assert back.rating.tolist() == ["1.0", "2.0", "3.0", "4.0", "7.0", "8.0", "9.0", projector.EMPTY]


def test_one_column_has_no_header(tmp_path):
    words = ["good", "bad\tword", "ok"]
    paths = projector.export_projector(np.eye(3), pd.Series(words, name="word"), tmp_path, "words")
    assert paths["metadata"].read_text().split("\n")[0] == "good"
    _, back = projector.read_projector(tmp_path, "words")
    assert back.label.tolist() == words
    projector.export_projector(np.eye(3), words, tmp_path, "list")
    assert projector.read_projector(tmp_path, "list")[1].label.tolist() == words


def test_config_lists_every_export(tmp_path):
    projector.export_projector(np.eye(2), ["a", "b"], tmp_path, "first")
    projector.export_projector(np.eye(2), ["a", "b"], tmp_path, "second")
    config = (tmp_path / projector.CONFIG).read_text()
    assert config.count("embeddings {") == 2
    assert 'tensor_path: "first_vectors.tsv"' in config and 'metadata_path: "second_metadata.tsv"' in config


@pytest.mark.parametrize("vectors, metadata, name, message", [
    (np.eye(3), ["a", "b"], "x", "3 vectors but 2 metadata rows"),
    (np.eye(2), ["a", "b", "c"], "x", "2 vectors but 3 metadata rows"),
    (np.ones((3, 1)), ["a", "b", "c"], "x", "at least 1 row and 2 columns"),
    (np.ones(3), ["a", "b", "c"], "x", "2-D array"),
    (np.empty((0, 2)), [], "x", r"not shape \(0, 2\)"),
    ([], [], "x", r"not shape \(0,\)"),
    ([["1.5", "2"], ["3", "4"]], ["a", "b"], "x", "must hold numbers, not strings"),
    ([[1.0, "2"], [3.0, 4.0]], ["a", "b"], "x", "must hold numbers, not strings"),
    ([[1.0, None], [3.0, 4.0]], ["a", "b"], "x", "must hold numbers, not values of type object"),
    ([[1.0, 2.0], [3.0]], ["a", "b"], "x", "rows of different lengths"),
    (np.array([[1.0, np.nan]]), ["a"], "x", "NaN or infinite"),
    (np.array([[1.0, np.inf]]), ["a"], "x", "NaN or infinite"),
    (np.eye(2), ["a", "b"], "bad name", "use letters"),
])
def test_bad_exports_are_refused_and_write_nothing(tmp_path, vectors, metadata, name, message):
    with pytest.raises(InputError, match=message):
        projector.export_projector(vectors, metadata, tmp_path / "out", name)
    assert not (tmp_path / "out").exists()


def test_the_kits_own_export_is_replaced(tmp_path):
    first = projector.export_projector(np.eye(2), ["a", "b"], tmp_path, "docs")
    again = projector.export_projector(2 * np.eye(3), ["a", "b", "c"], tmp_path, "docs")
    assert again == first and len(projector.read_projector(tmp_path, "docs")[0]) == 3


@pytest.mark.parametrize("kind", ["vectors", "metadata"])
def test_tsv_files_that_are_not_the_kits_own_are_refused_before_writing(tmp_path, kind):
    paths = projector.export_projector(np.eye(2), ["a", "b"], tmp_path, "docs")
    paths[kind].write_text(paths[kind].read_text() + "my own line\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    message = (rf"^{re.escape(str(paths[kind]))} was changed since the kit wrote it .*; nothing was "
               r"written\. Export under another name or into another folder, or move it away\.$")
    with pytest.raises(KitError, match=message):
        projector.export_projector(np.eye(3), ["a", "b", "c"], tmp_path, "docs")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    (tmp_path / "mine_vectors.tsv").write_text("1\t2\n")  # exported by hand, never by the kit
    with pytest.raises(KitError, match="mine_vectors.tsv was changed"):
        projector.export_projector(np.eye(2), ["a", "b"], tmp_path, "mine")
    assert not (tmp_path / "mine_metadata.tsv").exists()


def test_kit_embeddings_are_refused_before_any_model_work(tmp_path):
    (tmp_path / "my_model_words_metadata.tsv").write_text("mine\n")
    with pytest.raises(KitError, match="my_model_words_metadata.tsv was changed"):
        projector.export_kit_embeddings(SimpleNamespace(name="my model"), out_dir=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["my_model_words_metadata.tsv"]


def test_a_hand_written_config_is_kept_and_the_kits_goes_beside(tmp_path):
    (tmp_path / projector.CONFIG).write_text('embeddings {\n  tensor_path: "mine.tsv"\n  sprite {}\n}\n')
    before = (tmp_path / projector.CONFIG).read_bytes()
    paths = projector.export_projector(np.eye(2), ["a", "b"], tmp_path, "docs")
    assert re.fullmatch(r"projector_config\.\d{8}-\d{6}(-\d+)?\.pbtxt", paths["config"].name)
    assert 'tensor_path: "docs_vectors.tsv"' in paths["config"].read_text()
    assert (tmp_path / projector.CONFIG).read_bytes() == before
    (tmp_path / projector.CONFIG).unlink()
    assert projector.write_config(tmp_path) == tmp_path / projector.CONFIG  # free again: written


def test_kit_export_projector_says_where_the_config_went(monkeypatch, tmp_path, capsys):
    def export(config, n_docs, n_words, out_dir):
        return {"documents": projector.export_projector(np.eye(2), ["a", "b"], out_dir, "docs")}

    monkeypatch.setattr(projector, "export_kit_embeddings", export)
    (tmp_path / projector.CONFIG).write_text("# mine\n")
    assert main(["export-projector", "--out", str(tmp_path)]) == 0
    written = next(tmp_path.glob("projector_config.*.pbtxt"))
    assert (f"{tmp_path / projector.CONFIG} was changed since the kit wrote it (or the kit did not write "
            f"it), so it is kept as it is; the TensorBoard config written to {written} instead\n"
            ) in capsys.readouterr().out
    assert owned.changed_since_written(tmp_path / projector.CONFIG)


def test_kit_export_projector(corpora, tmp_path, capsys):
    assert main(["export-projector", "--docs", "50", "--words", "30", "--out", str(tmp_path)]) == 0
    assert "projector.tensorflow.org" in capsys.readouterr().out
    config = embeddings.sample_config(dm=1)
    slug = config.name.replace(" ", "_")
    vectors, documents = projector.read_projector(tmp_path, f"{slug}_documents")
    assert vectors.shape == (2050, config.vector_size)
    assert list(documents.columns) == ["id", "source", "label", "rating", "movie_id", "first_words"]
    assert (documents.source == "pang_lee").sum() == 2000
    assert np.allclose(vectors[:2000], embeddings.review_vectors(config), atol=1e-4)
    words, table = projector.read_projector(tmp_path, f"{slug}_words")
    assert words.shape == (30, config.vector_size) and set(table.lexicon) <= {"pos", "neg", "none"}
    assert main(["export-projector", "--docs", "-1"]) == 1
