"""Embedding Projector export: formats, escaping, round trip, config, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import embeddings, projector
from helpers.cli import main
from helpers.errors import KitError

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
    (np.ones((3, 1)), ["a", "b", "c"], "x", "at least 2 columns"),
    (np.array([[1.0, np.nan]]), ["a"], "x", "NaN or infinite"),
    (np.eye(2), ["a", "b"], "bad name", "use letters"),
])
def test_bad_exports_are_refused_and_write_nothing(tmp_path, vectors, metadata, name, message):
    with pytest.raises(KitError, match=message):
        projector.export_projector(vectors, metadata, tmp_path / "out", name)
    assert not (tmp_path / "out").exists()


def test_kit_export_projector(corpora, tmp_path, capsys):
    assert main(["export-projector", "--docs", "50", "--words", "30", "--out", str(tmp_path)]) == 0
    assert "projector.tensorflow.org" in capsys.readouterr().out
    config = embeddings.config_for(dm=1)
    slug = config.name.replace(" ", "_")
    vectors, documents = projector.read_projector(tmp_path, f"{slug}_documents")
    assert vectors.shape == (2050, config.vector_size)
    assert list(documents.columns) == ["id", "source", "label", "rating", "movie_id", "first_words"]
    assert (documents.source == "pang_lee").sum() == 2000
    assert np.allclose(vectors[:2000], embeddings.review_vectors(config), atol=1e-4)
    words, table = projector.read_projector(tmp_path, f"{slug}_words")
    assert words.shape == (30, config.vector_size) and set(table.lexicon) <= {"pos", "neg", "none"}
    assert main(["export-projector", "--docs", "-1"]) == 1
