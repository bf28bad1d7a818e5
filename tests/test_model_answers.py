"""Model answers are true to their notebook: every number one quotes is printed above it.

A model answer that quotes a number its notebook does not print (or prints differently) tells
the instructor, and every student who compares, something false. So each number a model
answer quotes (a decimal, a percentage, or an integer of 10 or more) must be one that the
notebook's outputs print, at the precision quoted (0.968 printed may be quoted as 0.97 or
96.8; a quoted "−4.2" must be printed with its sign, an unsigned "4.2" may be printed -4.2).

Two kinds of number are not printed, and each is listed below, never waved through:

- ``DERIVED``: arithmetic on printed numbers (a difference, a split of ties, a sign test's
  p-value). Its formula is evaluated, must give the quoted number, and may use only printed
  or stated numbers and small integers.
- ``STATED``: figures the notebook states in its own text outside the model answers (the
  full profile's table in 04, the corpus sizes). They must appear there.
"""

from __future__ import annotations

import math
import re
from functools import cache
from pathlib import Path

import nbformat
import pytest
from nbformat import NotebookNode
from scipy.stats import binomtest

from helpers.course import answers
from helpers.significance import reviews_needed

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"
MINUS = "−"  # the typographic minus the answers use
# A number: an optional sign at a word's start, digits (thousands may be comma-grouped),
# decimals, an exponent, and a percent sign; never part of a name such as cv571_29292 or 100d.
NUMBER = re.compile(
    r"(?<![\w.,/])(?P<sign>[−+-]?)"
    r"(?P<value>\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?(?:e[−+-]?\d+)?)(?![\w])(?P<percent>\s?%)?")
# What looks like a number but names something: an exercise (7.1, 5.d), a notebook, a table,
# the paper's equation.
REFERENCE = re.compile(r"\b(?:notebooks?|Exercise|Tables?|eq\.)\s+\d+(?:\.\d+)?(?:\s*(?:–|-|and|,)\s*\d+)*"
                       r"|\b\d+\.[a-z]\b")
SMALLEST_QUOTED_INTEGER = 10  # below it, integers are counts in prose ("two", "3 pairs")
SMALL_INTEGERS = {str(n) for n in range(SMALLEST_QUOTED_INTEGER)}
PERCENT = 100  # a share to points
FORMULA_FUNCTIONS = {"sqrt": math.sqrt, "ceil": math.ceil, "abs": abs,
                     "binom_p": lambda k, n: binomtest(k, n).pvalue, "reviews_needed": reviews_needed}

# Per answer: quoted number -> the formula, over printed or stated numbers, that gives it.
DERIVED = {
    "1.b": {"+1.3": "82.6 - 81.3", "−0.3": "81.0 - 81.3", "+2.7": "84.0 - 81.3",
            "+1.9": "83.2 - 81.3", "+4.3": "85.6 - 81.3"},
    # The course's sign test gives half of the ties (rounded up) to each side.
    "1.d": {"179": "47 + 132", "2001": "2 * ceil(1821 / 2) + 47 + 132", "911": "ceil(1821 / 2)",
            "958": "ceil(1821 / 2) + 47", "4.3": "100 * (132 - 47) / 2000",
            "1.9": "(132 - 47) / 2 / (sqrt(2 * ceil(1821 / 2) + 47 + 132) / 2)"},
    "2.a": {"+0.4": "85.8 - 85.4"},
    "2.c": {"120": "6 / 100 * (1667 + 105 + 228)"},  # a 6-point gap on the 2,000 reviews
    "2.d": {"834": "ceil(1667 / 2)", "2001": "2 * ceil(1667 / 2) + 105 + 228",
            "939": "ceil(1667 / 2) + 105",
            "0.47": "(ceil(1667 / 2) + 105) / (2 * ceil(1667 / 2) + 105 + 228)",
            "333": "105 + 228", "2,000": "1667 + 105 + 228", "6.7": "(228 - 105) / sqrt(105 + 228)",
            "1e-11": "binom_p(105, 105 + 228)"},
    "3.a": {"1.3": "82.6 - 81.3"},
    "3.b": {"1.3": "82.6 - 81.3", "0.49": "(1868 / 2 + 53) / 2000", "132": "53 + 79",
            "0.029": "binom_p(53, 53 + 79)", "2000": "2 * (1868 / 2) + 53 + 79",
            "934": "1868 / 2", "987": "1868 / 2 + 53"},
    # What a 2-point gap would look like on 2,000 items with 15 % of them discordant.
    "3.c": {"170": "(15 / 100 * 2000 + 2 / 100 * 2000) / 2", "130": "(15 / 100 * 2000 - 2 / 100 * 2000) / 2"},
    "3.d": {"0.36": "1 - 63.7 / 100"},
    "4.c": {"3.4": "87.4 - 84.0"},
    "4.d": {"1,766": "2000 - (138 + 96)", "234": "138 + 96"},
    "5.c": {"−1.0": "83.0 - 84.0"},
    "5.e": {"236": "reviews_needed(0.81, 0.05)", "656": "reviews_needed(0.81, 0.03)"},
    "5.g": {"39": "60 - 21", "58": "68 - 10"},
    "7.a": {"−4.4": "76.9 - 81.3", "−6.3": "81.1 - 87.4", "−1.0": "83.0 - 84.0", "−10.9": "70.4 - 81.3",
            "−22.8": "64.6 - 87.4", "−16.0": "68.0 - 84.0", "−22.2": "59.1 - 81.3",
            "−29.0": "58.4 - 87.4", "−24.3": "59.7 - 84.0"},
    # (1 + 1/(4n)) for the 3 main targets and for all 17.
    "7.f": {"1.083": "1 + 1 / (4 * 3)", "1.015": "1 + 1 / (4 * 17)"},
}
# Per answer: numbers the notebook states in its own text (outside the model answers).
STATED = {
    "1.d": {"2,000"},
    "3.b": {"2,000", "5000"},
    "3.c": {"2,000"},
    "3.d": {"2,000"},
    # The full profile's figures: notebook 04's table of the full corpus and 4.d's prompt.
    "4.a": {"50"},
    "4.b": {"50", "89.6 %", "89.2 %", "10.8 %", "10.4 %"},
    "4.d": {"89.6 %", "89.2 %", "0.0074", "0.36"},
    "8.b": {"25,000"},
}


def quoted_numbers(text: str) -> list[re.Match]:
    """The numbers a text quotes: decimals, percentages and integers from 10 up."""
    found = []
    for number in NUMBER.finditer(REFERENCE.sub(lambda m: " " * len(m.group()), text)):
        value = number["value"].replace(",", "")
        if re.fullmatch(r"\d+", value) and not number["percent"] and int(value) < SMALLEST_QUOTED_INTEGER:
            continue
        found.append(number)
    return found


def _float(number: re.Match) -> float:
    return float(number["sign"].replace(MINUS, "-") + number["value"].replace(",", "").replace(MINUS, "-"))


def _decimals(value: str) -> int:
    """How many decimal places a quoted value gives (negative for 1e-11: its mantissa's place)."""
    mantissa, _, exponent = value.replace(MINUS, "-").partition("e")
    return len(mantissa.partition(".")[2]) - int(exponent or 0)


def agrees(number: re.Match, value: float) -> bool:
    """Whether ``value`` (or 100 × it, or it / 100) rounds to the quoted ``number``.

    Half-way cases round either way (printing rounds half to even, prose half up); a quoted
    sign must match, an unsigned quote matches either sign.
    """
    quoted = _float(number)
    half = 0.5 * 10 ** -_decimals(number["value"].replace(",", ""))
    for candidate in (value, 100 * value, value / 100):
        if not number["sign"]:
            candidate = abs(candidate)
        if abs(candidate - quoted) <= half * (1 + 1e-9):
            return True
    return False


def printed_text(nb: NotebookNode) -> str:
    """What the notebook's cells print: stdout and each result's text (not stderr's progress bars)."""
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.output_type == "stream" and output.name == "stdout":
                parts.append(output.text)
            elif "data" in output:
                parts.append(output.data.get("text/plain", ""))
    return "\n".join(parts).replace("_", " ")  # product names: Nikon_coolpix_4300 reads "4300"


def stated_text(nb: NotebookNode) -> str:
    """The notebook's own text: every cell's source with the model answers taken out."""
    return "\n".join(answers.blank_answers(cell.source) for cell in nb.cells)


def printed_values(text: str) -> list[float]:
    return [_float(number) for number in NUMBER.finditer(text)]


def unprinted(answer: str, printed: list[float]) -> list[str]:
    """The numbers ``answer`` quotes that no printed value agrees with."""
    return [number.group().strip() for number in quoted_numbers(answer)
            if not any(agrees(number, value) for value in printed)]


@cache
def solution(path: Path) -> NotebookNode:
    return nbformat.read(path, as_version=4)


def model_answers() -> list[tuple[Path, str, str]]:
    return [(path, question, model) for path in sorted(SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))
            for question, (_, model, _) in answers.questions(solution(path), path.stem).items()]


ANSWERS = model_answers()


def _plain(quoted: str) -> str:
    return quoted.replace(" %", "%")


def _listed(question: str) -> set[str]:
    return set(DERIVED.get(question, {})) | STATED.get(question, set())


@pytest.mark.parametrize("path, question, model", ANSWERS, ids=[question for _, question, _ in ANSWERS])
def test_every_number_a_model_answer_quotes_is_printed_in_its_notebook(path, question, model):
    listed = {_plain(number) for number in _listed(question)}
    missing = [quoted for quoted in unprinted(model, printed_values(printed_text(solution(path))))
               if _plain(quoted) not in listed]
    assert not missing, (f"{path.name}, answer {question} quotes numbers its outputs do not print: "
                         f"{missing}; fix the answer, or list a derived or stated number above")


def _formula_cases():
    where = {question: path for path, question, _ in ANSWERS}
    return [(where[question], question, quoted, formula)
            for question, formulas in DERIVED.items() for quoted, formula in formulas.items()]


@pytest.mark.parametrize("path, question, quoted, formula", _formula_cases(),
                         ids=[f"{q}:{n}" for _, q, n, _ in _formula_cases()])
def test_a_derived_number_follows_from_printed_numbers(path, question, quoted, formula):
    nb = solution(path)
    number = NUMBER.fullmatch(quoted)
    assert agrees(number, eval(formula, {"__builtins__": {}}, FORMULA_FUNCTIONS)), (quoted, formula)  # noqa: S307
    sources = printed_values(printed_text(nb)) + printed_values(stated_text(nb))
    for operand in NUMBER.finditer(formula):
        if operand.group() in SMALL_INTEGERS or float(operand.group()) == PERCENT:
            continue
        assert any(agrees(operand, value) for value in sources), f"{formula}: {operand.group()} not printed"


@pytest.mark.parametrize("path, question, quoted", [
    (path, question, quoted) for path, question, _ in ANSWERS for quoted in STATED.get(question, ())])
def test_a_stated_number_is_in_the_notebooks_own_text(path, question, quoted):
    assert quoted in stated_text(solution(path)), f"{path.name} states no {quoted!r} outside its answers"


def test_every_listed_number_is_quoted_by_its_answer():
    quoted = {question: {n.group().strip() for n in quoted_numbers(model)} for _, question, model in ANSWERS}
    stale = [(question, number) for question in DERIVED.keys() | STATED.keys()
             for number in _listed(question) if number not in quoted.get(question, set())]
    assert not stale, f"listed but no longer quoted (remove them): {stale}"


@pytest.mark.parametrize("text, expected", [
    ("NB 76.9 % (−4.4), p = 0.0048, 15 of 51 tests", ["76.9 %", "−4.4", "0.0048", "15", "51"]),
    ("intervals 74.2–79.4 and 80.5-85.2", ["74.2", "79.4", "80.5", "85.2"]),
    ("3 pairs, cv571_29292, PV-DBOW 100d, answer 5.d, Exercise 7.1, notebooks 01–04", []),
    ("2,000 reviews, p ≈ 1e-11.", ["2,000", "1e-11"]),
])
def test_quoted_numbers_are_the_numbers_a_reader_sees(text, expected):
    assert [number.group().strip() for number in quoted_numbers(text)] == expected


@pytest.mark.parametrize("quoted, value, expected", [
    ("0.968", 0.968, True), ("96.8", 0.968, True), ("0.97", 0.968, True), ("97", 0.968, True),
    ("0.96", 0.968, False), ("99.97", 1.0, False),
    ("−4.2", -4.2, True), ("−4.2", 4.2, False), ("4.2", -4.2, True), ("+116.96", 116.96, True),
    ("2,000", 2000.0, True), ("1e-11", 1.36e-11, True), ("1e-11", 2.6e-11, False),
])
def test_a_quoted_number_agrees_with_a_printed_value_at_its_precision(quoted, value, expected):
    assert agrees(NUMBER.fullmatch(quoted), value) is expected


def test_the_old_answer_7g_fails_against_its_notebook():
    """7.g once gave the paper's source scores as '98.7 to 99.97', where the table prints
    0.968 to 1.000: the check must catch that, and pass the corrected sentence."""
    nb = solution(SOLUTIONS / "07_transportability.ipynb")
    printed = printed_values(printed_text(nb))
    assert unprinted("the score on the *training* split (98.7 to 99.97: a model graded", printed) == ["99.97"]
    assert unprinted("the score on the *training* split (0.968 to 1.000 in the table above", printed) == []
