"""The annotation sheet: written, protected from overwriting, read back and checked."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import annotation, data, systems
from helpers.analysis import CATEGORIES, ranked_errors
from helpers.cli import main
from helpers.errors import InputError, KitError


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


def _table(path):
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _note_in_last_row(path):
    table = _table(path)
    table.loc[len(table) - 1, "note"] = "my note"
    table.to_csv(path, index=False)


def _extra_column(path):
    _table(path).assign(my_notes=["irony", "", ""]).to_csv(path, index=False)


def _renamed_header(path):
    _table(path).rename(columns={"category": "my category"}).assign(**{"my category": "sarcasm"}).to_csv(
        path, index=False)


def _suggested_category(path):
    _table(path).assign(suggested_category=["sarcasm", "negation", "negation"]).to_csv(path, index=False)


def _semicolons(path):  # a spreadsheet in a locale whose list separator is ";"
    _table(path).to_csv(path, index=False, sep=";")


def _byte_order_mark(path):  # Excel's "CSV UTF-8": the same text in another encoding
    path.write_bytes(path.read_text(encoding="utf-8").encode("utf-8-sig"))


def _crlf(path):
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))


def test_the_kits_own_unchanged_sheet_is_replaced(tmp_path):
    path = annotation.write_annotation_sheet(_sheet(), tmp_path / "errors.csv")
    assert annotation.write_annotation_sheet(_sheet(5), path) == path
    assert len(pd.read_csv(path)) == 5 and not annotation.has_annotations(path)


@pytest.mark.parametrize("edit", [_note_in_last_row, _extra_column, _renamed_header, _suggested_category,
                                  _semicolons, _byte_order_mark, _crlf])
def test_a_changed_sheet_is_kept_and_the_new_one_goes_beside(tmp_path, edit):
    path = annotation.write_annotation_sheet(_sheet(), tmp_path / "errors.csv")
    edit(path)
    before = path.read_bytes()
    assert annotation.has_annotations(path)
    written = annotation.write_annotation_sheet(_sheet(5), path)
    assert written != path and written.parent == tmp_path and written.name.startswith("errors.")
    assert path.read_bytes() == before
    assert len(annotation.read_annotations(written)) == 5
    assert annotation.write_annotation_sheet(_sheet(5), path) == written  # no second copy


def test_a_sheet_the_kit_did_not_write_is_kept(tmp_path):
    path = tmp_path / "errors.csv"
    _sheet().to_csv(path, index=False)  # byte for byte a blank sheet, but not written by the kit
    written = annotation.write_annotation_sheet(_sheet(5), path)
    assert written != path and len(pd.read_csv(path)) == 3


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


def test_a_bad_entry_is_named_by_the_line_an_editor_shows(tmp_path):
    path = tmp_path / "errors.csv"
    _sheet().assign(fixability=["", "", "maybe"]).to_csv(path, index=False)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "", lines[1], "", lines[2], lines[3]]) + "\n")  # blank lines
    with pytest.raises(KitError, match=r"line 6: 'maybe'"):
        annotation.read_annotations(path)


def test_unreadable_or_missing_sheet(tmp_path):
    with pytest.raises(KitError, match="kit annotate"):
        annotation.read_annotations(tmp_path / "none.csv")
    path = tmp_path / "latin.csv"
    path.write_bytes("doc_id,note\ncv1,caf\u00e9\n".encode("latin-1"))
    with pytest.raises(KitError, match="not UTF-8"):
        annotation.read_annotations(path)
    assert annotation.write_annotation_sheet(_sheet(), path) != path  # nor is it overwritten
    blank = annotation.write_annotation_sheet(_sheet(), tmp_path / "blank.csv")
    with pytest.raises(KitError, match="No annotated categories"):
        annotation.suggestion_agreement(annotation.read_annotations(blank))


def test_kit_annotate_writes_then_protects_the_sheet(corpora, tmp_path, capsys):
    path = tmp_path / "errors.csv"
    assert main(["annotate", "--system", "nb", "-n", "7", "--out", str(path)]) == 0
    assert f"the 7 most confident errors of nb written to {path}\n" in capsys.readouterr().out
    sheet = annotation.read_annotations(path)
    assert len(sheet) == 7 and sheet.margin.is_monotonic_decreasing
    assert set(sheet.suggested_category) <= set(CATEGORIES)
    assert main(["annotate", "--system", "bert"]) == 1


def test_kit_annotate_says_it_kept_a_changed_sheet(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(annotation, "annotation_sheet", lambda system, n: _sheet(n))
    path = tmp_path / "errors.csv"
    assert main(["annotate", "-n", "3", "--out", str(path)]) == 0
    _semicolons(path)
    before = path.read_bytes()
    capsys.readouterr()
    assert main(["annotate", "-n", "4", "--out", str(path)]) == 0
    first, second = capsys.readouterr().out.splitlines()
    written = next(p for p in tmp_path.glob("errors.*.csv"))
    assert first == (f"{path} was changed since the kit wrote it (or the kit did not write it), so it is "
                     f"kept as it is; the 4 most confident errors of svm-bow written to {written} instead")
    assert second.startswith("Fill in category")
    assert path.read_bytes() == before and len(pd.read_csv(written)) == 4


def test_annotation_sheet_lists_the_top_errors(corpora):
    sheet = annotation.annotation_sheet("nb", n=5)
    errors = ranked_errors(systems.predictions("nb", progress=False), data.load_movie_reviews(), 5)
    assert sheet.doc_id.tolist() == errors.doc_id.tolist()
    assert list(sheet.columns) == list(annotation.SHEET_COLUMNS)
    assert (sheet[list(annotation.ENTRY_COLUMNS)] == "").all().all()


def test_annotated_categories_need_enough_rows_with_a_category():
    sheet = _sheet(25)
    sheet.loc[:18, "category"] = "negation"
    sheet.loc[0, "category"] = " "
    with pytest.raises(InputError, match="18 of 25 rows .* at least 20"):
        annotation.annotated_categories(sheet)
    sheet.loc[19:21, "category"] = "sarcasm"
    categories = annotation.annotated_categories(sheet)
    assert categories.value_counts().to_dict() == {"negation": 18, "sarcasm": 3}
    assert categories.index[0] == "cv1"
    assert annotation.annotated_categories(sheet, minimum=21).size == 21
    with pytest.raises(InputError, match="read_annotations"):
        annotation.annotated_categories(sheet.drop(columns="category"))
