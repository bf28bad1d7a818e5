"""The annotation sheet: written, protected from overwriting, read back and checked."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import annotation, data, systems
from helpers.analysis import CATEGORIES, ranked_errors
from helpers.cli import main
from helpers.errors import KitError


def _sheet(n=3) -> pd.DataFrame:
    sheet = pd.DataFrame({"doc_id": [f"cv{i}" for i in range(n)], "system": "svm-bow", "label": "pos",
                          "margin": np.linspace(1, 0.5, n), "snippet": "a, \"quoted\" snippet",
                          "suggested_category": "negation"})
    for column in annotation.ENTRY_COLUMNS:
        sheet[column] = ""
    return sheet


def test_annotation_sheet_round_trip(tmp_path):
    path = annotation.write_annotation_sheet(_sheet(), tmp_path / "errors.csv")
    assert not annotation.has_annotations(path)
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table.loc[0, ["category", "fixability", "source"]] = [" Negation", "Hard ", "features"]
    table.loc[1, ["category", "note"]] = ["sarcasm", "ironic praise"]
    table.to_csv(path, index=False)
    sheet = annotation.read_annotations(path)
    assert sheet.annotated.tolist() == [True, True, False]
    assert sheet.snippet[0] == 'a, "quoted" snippet'
    counts = annotation.annotation_counts(sheet)
    assert counts["category"].to_dict() == {"negation": 1, "sarcasm": 1}
    assert counts["fixability"].to_dict() == {"hard": 1, "(blank)": 1}
    assert annotation.suggestion_agreement(sheet) == 0.5


def test_annotated_sheet_is_never_overwritten(tmp_path):
    path = annotation.write_annotation_sheet(_sheet(), tmp_path / "errors.csv")
    annotation.write_annotation_sheet(_sheet(5), path)  # blank: replaced
    assert len(pd.read_csv(path)) == 5
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table.loc[4, "note"] = "my note"
    table.to_csv(path, index=False)
    before = path.read_bytes()
    with pytest.raises(KitError, match=r"already holds annotations in 1 row\(s\); nothing was written"):
        annotation.write_annotation_sheet(_sheet(), path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.assign(fixability=["maybe", "", ""]),
     r"fixability must be one of easy, hard, unfixable .*line 2: 'maybe'"),
    (lambda t: t.drop(columns="source"), "lacks the column"),
])
def test_bad_annotations_are_clear_errors(tmp_path, edit, message):
    path = tmp_path / "errors.csv"
    edit(_sheet()).to_csv(path, index=False)
    with pytest.raises(KitError, match=message):
        annotation.read_annotations(path)


def test_unreadable_or_missing_sheet(tmp_path):
    with pytest.raises(KitError, match="kit annotate"):
        annotation.read_annotations(tmp_path / "none.csv")
    path = tmp_path / "latin.csv"
    path.write_bytes("doc_id,note\ncv1,caf\u00e9\n".encode("latin-1"))
    with pytest.raises(KitError, match="not UTF-8"):
        annotation.read_annotations(path)
    with pytest.raises(KitError, match="not UTF-8"):  # an unreadable sheet is not overwritten either
        annotation.write_annotation_sheet(_sheet(), path)
    blank = annotation.write_annotation_sheet(_sheet(), tmp_path / "blank.csv")
    with pytest.raises(KitError, match="No annotated categories"):
        annotation.suggestion_agreement(annotation.read_annotations(blank))


def test_kit_annotate_writes_then_protects_the_sheet(corpora, tmp_path, capsys):
    path = tmp_path / "errors.csv"
    assert main(["annotate", "--system", "nb", "-n", "7", "--out", str(path)]) == 0
    sheet = annotation.read_annotations(path)
    assert len(sheet) == 7 and sheet.margin.is_monotonic_decreasing
    assert set(sheet.suggested_category) <= set(CATEGORIES)
    sheet.loc[0, "category"] = "other"
    sheet.drop(columns="annotated").to_csv(path, index=False)
    assert main(["annotate", "--system", "nb", "--out", str(path)]) == 1
    assert "nothing was written" in capsys.readouterr().err
    assert main(["annotate", "--system", "bert"]) == 1


def test_annotation_sheet_lists_the_top_errors(corpora):
    sheet = annotation.annotation_sheet("nb", n=5)
    errors = ranked_errors(systems.predictions("nb", progress=False), data.load_movie_reviews(), 5)
    assert sheet.doc_id.tolist() == errors.doc_id.tolist()
    assert list(sheet.columns) == list(annotation.SHEET_COLUMNS)
    assert (sheet[list(annotation.ENTRY_COLUMNS)] == "").all().all()
