"""The one comparison of checked outputs: numbers within a declared tolerance, text exactly."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.course import config
from helpers.course.notebook import compare
from helpers.course.notebook.compare import tolerance_of
from helpers.errors import KitError


def test_identical_text_has_no_difference():
    text = "probe accuracy 0.744 against 0.676\np = 0.1822\n"
    assert compare.compare_text(text, text) is None


@pytest.mark.parametrize(("expected", "got", "tolerance", "same"), [
    ("p = 0.1824", "p = 0.1822", 2, True),
    ("p = 0.1824", "p = 0.1822", 1, False),
    ("p = 0.1824", "p = 0.1827", 3, True),
    ("p = 0.1824", "p = 0.1828", 3, False),
    ("gap 0.19", "gap 0.18", 1, True),
    ("MAE 15.3", "MAE 15.1", 1, False),
    ("tiny 1.4e-11", "tiny 1.5e-11", 1, True),
    ("tiny 1.4e-11", "tiny 1.4e-10", 3, False),
    ("zero -0.00", "zero 0.00", 0, True),
])
def test_decimal_numbers_move_within_last_digit_units(expected, got, tolerance, same):
    assert (compare.compare_text(expected, got, tolerance) is None) is same


@pytest.mark.parametrize(("expected", "got"), [
    ("1367 positive words", "1368 positive words"),  # a count
    ("p = 1/5001", "p = 2/5001"),  # an exact fraction
    ("review cv571_29292", "review cv571_29293"),  # an id
    ("accuracy 84.9", "accuracy 85"),  # a decimal printed as an integer
])
def test_numbers_without_decimals_are_exact_whatever_the_tolerance(expected, got):
    assert compare.compare_text(expected, got, tolerance=1000) is not None


@pytest.mark.parametrize(("expected", "got"), [
    ("same polarity 0.154", "same polarity  0.154 extra"),
    ("same polarity 0.154", "opposite polarity 0.154"),
    ("84.9 %", "84.9%"),  # glued vs separated
    ("a\nb", "a b"),  # line breaks count
    ("a\nb", "a\nb\nc"),
    ("True", "False"),
])
def test_all_other_text_is_exact(expected, got):
    assert compare.compare_text(expected, got, tolerance=5) is not None


def test_only_the_width_of_white_space_may_differ():
    expected = "system  mae\n  nb  9.9\n svm 10.0"
    got = "system   mae\n  nb   10.1\n svm   10.0"
    assert compare.compare_text(expected, got, tolerance=2) is None


def test_a_difference_is_labelled_for_a_student():
    difference = compare.compare_text("x\np = 0.1824", "x\np = 0.1900", tolerance=3)
    assert difference.line == 2
    text = str(difference)
    assert "expected (reference): p = 0.1824" in text and "got (your output):    p = 0.1900" in text
    assert "0.1900 where 0.1824 was expected (allowed ± 0.0003)" in text


def test_missing_lines_are_reported():
    difference = compare.compare_text("a\nb", "a")
    assert difference.line == 2 and difference.got == "(nothing)"


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, None])
def test_a_tolerance_must_be_a_whole_number_of_units(bad):
    with pytest.raises(KitError, match="whole number of last-digit units"):
        compare.compare_text("1.0", "1.0", bad)


@given(st.integers(min_value=-10**6, max_value=10**6), st.integers(min_value=1, max_value=5),
       st.integers(min_value=0, max_value=9), st.integers(min_value=-20, max_value=20))
def test_a_move_passes_exactly_when_within_the_tolerance(mantissa, decimals, tolerance, move):
    expected = Decimal(mantissa).scaleb(-decimals)
    got = expected + Decimal(move).scaleb(-decimals)
    same = compare.compare_text(f"x = {expected:.{decimals}f}", f"x = {got:.{decimals}f}", tolerance) is None
    assert same is (abs(move) <= tolerance)


def test_outputs_of_different_kinds_are_compared_by_kind():
    expected = {"stdout": ["p = 0.18\n"], "text/plain": ["'ok'"]}
    assert compare.compare_outputs(expected, {"stdout": ["p = 0.19\n"], "text/plain": ["'ok'"]}, 1) is None
    missing = compare.compare_outputs(expected, {"stdout": ["p = 0.18\n"]})
    assert (missing.line, missing.reason) == (0, "expected output of kind text/plain is missing")
    assert str(missing) == missing.summary() == "expected output of kind text/plain is missing"
    moved = compare.compare_outputs(expected, {"stdout": ["p = 0.21\n"], "text/plain": ["'ok'"]}, 1)
    assert (moved.kind, moved.line, moved.expected, moved.got) == ("stdout", 1, "p = 0.18", "p = 0.21")
    assert str(moved).startswith("stdout, line 1: 0.21 where 0.18 was expected")
    assert "expected (reference): p = 0.18" in str(moved)


def test_tolerance_is_read_from_cell_metadata():
    cell = nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(1.0)", metadata={"kit": {"tolerance": 4}})
    assert tolerance_of(cell) == 4
    assert tolerance_of(nbformat.v4.new_code_cell("print(1)")) == 0


def _checked_notebook(path: Path, printed: str, reference: str, tolerance: int | None) -> Path:
    cell = nbformat.v4.new_code_cell(f"# NBVAL_CHECK_OUTPUT\nprint({printed!r})", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=reference + "\n")]
    if tolerance is not None:
        cell.metadata["kit"] = {"tolerance": tolerance}
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["kit"] = {"reference_env": {"blas": "openblas 0.0 SomeOtherCPU (1 threads)"}}
    nbformat.write(nb, path)
    return path


def _nbval(path: Path) -> subprocess.CompletedProcess:
    (path.parent / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(path), "-c", str(path.parent / "pytest.ini"),
         "-p", config.PLUGIN, "-q", "-p", "no:cacheprovider"],
        capture_output=True, text=True, cwd=path.parent, env=config.reference_environ())


@pytest.mark.kernel
@pytest.mark.slow
@pytest.mark.parametrize(("printed", "tolerance", "passes"), [
    ("p = 0.1822", 3, True),
    ("p = 0.1822", None, False),
    ("p = 0.1830", 3, False),
    ("q = 0.1824", 3, False),
])
def test_nbval_uses_the_kit_comparison(tmp_path, printed, tolerance, passes):
    result = _nbval(_checked_notebook(tmp_path / "n.ipynb", printed, "p = 0.1824", tolerance))
    assert (result.returncode == 0) is passes, result.stdout
    if not passes:
        assert "expected (reference): p = 0.1824" in result.stdout
        # the libraries are named where they may explain it: a difference in numbers only
        named = "reference outputs written with: openblas 0.0 SomeOtherCPU" in result.stdout
        assert named is printed.startswith("p = ")


def test_a_difference_in_numbers_only_is_told_apart_from_one_in_words():
    assert compare.compare_text("p = 0.1824\n", "p = 0.19\n").in_numbers
    assert compare.compare_text("accuracy 81.0 %\n", "accuracy 81.5 %\n").in_numbers
    assert not compare.compare_text("winner: nb\n", "winner: svm\n").in_numbers
    assert not compare.compare_text("p = 0.18\n", "q = 0.19\n").in_numbers
    assert not compare.compare_text("a\nb\n", "a\n").in_numbers  # a line missing
