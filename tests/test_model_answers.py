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

Every written answer also gives its points and a marking scheme (``kit.points``,
``kit.marking``): one line per mark, "<marks>: <what earns them>", the marks adding up to the
points; a number a scheme quotes is printed, stated or quoted by its model answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat import NotebookNode
from scipy.stats import binomtest

from helpers.course.classroom import answers
from helpers.course.notebook import cells, release
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
    "1.b": {"+1.4": "82.4 - 81.0", "+0.1": "81.1 - 81.0", "+1.0": "82.0 - 81.0", "+2.8": "83.8 - 81.0",
            "+2.1": "83.1 - 81.0", "+4.3": "85.3 - 81.0"},
    # The course's sign test gives half of the ties (rounded up) to each side.
    "1.d": {"178": "46 + 132", "2000": "2 * ceil(1822 / 2) + 46 + 132", "911": "ceil(1822 / 2)",
            "957": "ceil(1822 / 2) + 46", "86": "132 - 46", "4.3": "100 * (132 - 46) / 2000",
            "1.9": "(132 - 46) / 2 / (sqrt(2 * ceil(1822 / 2) + 46 + 132) / 2)"},
    "2.a": {"+0.8": "87.6 - 86.8", "+0.3": "85.8 - 85.5"},
    "2.e": {"120": "6 / 100 * (1671 + 98 + 231)"},  # a 6-point gap on the 2,000 reviews
    "2.f": {"836": "ceil(1671 / 2)", "2001": "2 * ceil(1671 / 2) + 98 + 231",
            "934": "ceil(1671 / 2) + 98",
            "0.47": "(ceil(1671 / 2) + 98) / (2 * ceil(1671 / 2) + 98 + 231)",
            "3.0": "((2 * ceil(1671 / 2) + 98 + 231) / 2 - (ceil(1671 / 2) + 98))"
                   " / (sqrt(2 * ceil(1671 / 2) + 98 + 231) / 2)",
            "329": "98 + 231", "2,000": "1671 + 98 + 231", "7.3": "(231 - 98) / sqrt(98 + 231)",
            "2e-13": "binom_p(98, 98 + 231)"},
    "3.a": {"30": "81.0 - 51.0", "1.4": "82.4 - 81.0"},
    # The course's sign test gives half of the ties (rounded up) to each side.
    "3.b": {"125": "49 + 76", "0.020": "binom_p(49, 49 + 76)", "2001": "2 * ceil(1875 / 2) + 49 + 76",
            "938": "ceil(1875 / 2)", "987": "ceil(1875 / 2) + 49",
            "0.49": "(ceil(1875 / 2) + 49) / (2 * ceil(1875 / 2) + 49 + 76)"},
    # What a 2-point gap would look like on 2,000 items with 15 % of them discordant.
    "3.c": {"170": "(15 / 100 * 2000 + 2 / 100 * 2000) / 2", "130": "(15 / 100 * 2000 - 2 / 100 * 2000) / 2"},
    # β = 1 − power; the Monte Carlo standard error of p = 0.0214 at R = 5000.
    "3.d": {"0.999": "1 - 0.1 / 100", "0.39": "1 - 61.2 / 100", "1.4": "82.4 - 81.0",
            "0.002": "sqrt(0.0214 * (1 - 0.0214) / 5000)"},
    # Differences between rows of 04's table of settings, and the transductive model's gain.
    "4.d": {"5.9": "83.8 - 77.9", "1.0": "84.8 - 83.8", "8.5": "86.6 - 78.1", "4.5": "88.3 - 83.8",
            "2.8": "86.6 - 83.8"},
    "4.e": {"2.3": "86.1 - 83.8"},
    "5.e": {"236": "reviews_needed(0.81, 0.05)", "656": "reviews_needed(0.81, 0.03)"},
    "5.g": {"37": "56 - 19", "59": "71 - 12"},
    # NB's and SVM-BOW's source accuracies; the single products where SVM-BOW loses most.
    "7.a": {"6.6": "87.6 - 81.0", "12": "14 - 2"},
    # The majority label's share where the overview prints the positive share.
    "7.h": {"73 %": "100 - 27", "56 %": "100 - 44"},
    # (1 + 1/(4n)) for the 3 main targets and for all 17.
    "7.d": {"1.083": "1 + 1 / (4 * 3)", "1.015": "1 + 1 / (4 * 17)"},
    # Bonferroni's threshold for three systems.
    "8.d": {"0.0167": "0.05 / 3"},
    "8.f": {"0.0167": "0.05 / 3"},
    "9.b": {"20": "1 / (1 - 95 / 100)"},  # a 95 % interval misses once in 20
}
# Per answer: numbers the notebook states in its own text (outside the model answers).
STATED = {
    "1.d": {"2,000"},
    "3.b": {"2,000"},
    "3.c": {"2,000"},
    "3.d": {"2,000", "5000"},
    # Notebook 04: the dimensions its prompt lists, and a fold's 200 reviews as its text gives them.
    "4.b": {"50"},
    "4.c": {"200"},
    "4.d": {"50"},
    "7.b": {"5000"},
    "8.b": {"25,000"},
    # The paper's Tables 4 and 5 (SST-2) and Table 3 (AIMed), as notebook 08 states them.
    "8.d": {"85.0 %", "96.8 %", "1.1 %", "3.5 %", "92.9 %", "92.8 %", "0.05"},
    "8.h": {"10", "96.95"},
    # NBSVM's fixed β, as notebook 10 states it.
    "10.c": {"0.25"},
}


@dataclass(frozen=True)
class Claim:
    """A comparison a model answer makes in words, and the check of it against a printed table.

    ``phrase`` must occur in the answer (so the claim and its check stay together when the
    answer is reworded); ``holds`` gets the table its notebook prints under the line
    ``table`` (``printed_table``) and must return True.
    """

    phrase: str
    table: str
    holds: Callable[[pd.DataFrame], bool]


LOSS_07 = "change from the source accuracy (points):"  # notebook 07: target x system, points
TAU_07 = "system nb svm-bow svm-doc2vec"  # 07's transportability table (its header is its first line)
MAIN_07 = ["imdb", "rotten tomatoes", "products"]
TAU_MAIN_07 = [f"tau p {target}" for target in MAIN_07]
SYSTEMS = {"NB": "nb", "SVM-BOW": "svm-bow", "SVM-Doc2Vec": "svm-doc2vec"}  # as answers name them


def _loses_most(system: str, targets: list[str] | None = None, count: int | None = None):
    """Check: ``system`` has the largest loss on each of ``targets`` (or on exactly ``count``)."""
    def check(loss: pd.DataFrame) -> bool:
        most = loss.idxmin(axis=1)
        if count is not None:
            return int((most == system).sum()) == count
        return bool((most[targets] == system).all())
    return check


def _loses_more(system: str, than: str, targets: list[str]):
    return lambda loss: bool((loss.loc[targets, system] < loss.loc[targets, than]).all())


# Per answer: comparative claims ("loses most on every target") that no number check can see.
CLAIMS = {
    "7.a": [
        Claim("SVM-BOW loses most on 15 of the 17 targets", LOSS_07,
              lambda loss: len(loss) == 17 and _loses_most("svm-bow", count=15)(loss)),
        Claim("IMDB, Rotten Tomatoes, all products and 12 of the 14 single products", LOSS_07,
              _loses_most("svm-bow", MAIN_07)),
        Claim("NB on the Apex DVD player", LOSS_07,
              _loses_more("nb", "svm-bow", ["product:apex ad2600 progressive scan dvd player"])),
        Claim("and on the Diaper Champ (−39.0 against −35.8)", LOSS_07,
              _loses_more("nb", "svm-bow", ["product:diaper champ"])),
        Claim("SVM-Doc2Vec loses least on IMDB and on all products", LOSS_07,
              lambda loss: (loss.loc[["imdb", "products"]].idxmax(axis=1) == "svm-doc2vec").all()),
        Claim("NB least on the snippets", LOSS_07,
              lambda loss: loss.loc["rotten tomatoes"].idxmax() == "nb"),
    ],
    "7.c": [
        Claim("SVM-BOW, within a point of SVM-Doc2Vec in-domain, keeps the smallest share on every main "
              "target", TAU_07, lambda tau: (tau.loc[TAU_MAIN_07].idxmin(axis=1) == "svm-bow").all()),
        Claim("keeps more than SVM-BOW on every main target", TAU_07,
              lambda tau: (tau.loc[TAU_MAIN_07, "nb"] > tau.loc[TAU_MAIN_07, "svm-bow"]).all()),
    ],
}
# Claims found in any answer's words: "<system>[, ...,] loses most|least on every target" is
# checked against the loss table of a notebook that prints one, whichever answer says it.
EVERY_TARGET = re.compile(r"(?P<system>SVM-Doc2Vec|SVM-BOW|NB)(?:,[^,.;]{1,60},)?\s+loses\s+"
                          r"(?P<extreme>most|least)\s+on\s+every\s+target")


def _words(text: str) -> str:
    return " ".join(text.split())


def printed_table(nb: NotebookNode, title: str) -> pd.DataFrame:
    """The table a notebook prints under the line ``title`` (or headed by it), as numbers.

    A title ending in ":" is a caption and the table's header follows it; any other title is
    the header itself, its first word the columns' name. A line holding only the index's name
    may follow the header; rows run to the first blank or unreadable line. Row labels are
    lowercased, with "_" read as a space (``printed_text`` reads them so).
    """
    wanted = _words(title)
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.output_type != "stream" or output.name != "stdout":
                continue
            lines = output.text.splitlines()
            for at, line in enumerate(lines):
                if _words(line) == wanted:
                    return _table_from(lines, at, caption=wanted.endswith(":"))
    raise AssertionError(f"no printed table {title!r}")


def _table_from(lines: list[str], at: int, caption: bool) -> pd.DataFrame:
    header = (lines[at + 1] if caption else lines[at]).split()
    columns = header if caption else header[1:]
    rows = {}
    for line in lines[at + (2 if caption else 1):]:
        words = line.split()
        if len(words) == 1 and not rows:  # the index's name
            continue
        try:
            values = [float(word) for word in words[len(words) - len(columns):]]
        except ValueError:
            break
        if len(words) <= len(columns):
            break
        rows[" ".join(words[:len(words) - len(columns)]).lower().replace("_", " ")] = values
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns)


def spoken_claims(answer: str) -> list[Claim]:
    """The ``EVERY_TARGET`` claims an answer makes, each with its check over the loss table."""
    claims = []
    for match in EVERY_TARGET.finditer(_words(answer)):
        system, extreme = SYSTEMS[match["system"]], match["extreme"]
        pick = "idxmin" if extreme == "most" else "idxmax"  # losses are negative changes
        claims.append(Claim(match.group(), LOSS_07,
                            lambda loss, s=system, p=pick: bool((getattr(loss, p)(axis=1) == s).all())))
    return claims


def claim_failures(answer: str, claims: list[Claim], nb: NotebookNode) -> list[str]:
    """The claims (listed, or spoken in ``answer``) that the answer does not make or its tables refute."""
    failures = []
    for claim in claims + spoken_claims(answer):
        if _words(claim.phrase) not in _words(answer):
            failures.append(f"no longer says {claim.phrase!r}")
        elif not claim.holds(printed_table(nb, claim.table)):
            failures.append(f"{claim.phrase!r} is not what the table {claim.table!r} shows")
    return failures


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
    return "\n".join(release.blank_answers(cell.source) for cell in nb.cells)


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
    return [(path, question, asked.model) for path in sorted(SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))
            for question, asked in answers.questions(solution(path), path.stem).items()]


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


@pytest.mark.parametrize("path, question, model", ANSWERS, ids=[question for _, question, _ in ANSWERS])
def test_a_comparative_claim_holds_in_the_table_it_compares(path, question, model):
    failures = claim_failures(model, CLAIMS.get(question, []), solution(path))
    assert not failures, f"{path.name}, answer {question}: {failures}"


def test_every_claim_belongs_to_an_answer():
    assert set(CLAIMS) <= {question for _, question, _ in ANSWERS}


def test_the_old_answer_7a_fails_against_its_table():
    """7.a once said SVM-BOW 'loses most on every target', where the table shows another system
    losing more on some targets (NB on Apex and on the Diaper Champ, before the re-run): the
    check must catch that sentence, and pass the corrected one."""
    nb = solution(SOLUTIONS / "07_transportability.ipynb")
    old = ("So SVM-BOW, the in-domain winner, loses\nmost on every target, SVM-Doc2Vec least on IMDB "
           "and NB least on the snippets and the\nproducts: the in-domain ranking does not carry over.")
    refuted = "'SVM-BOW, the in-domain winner, loses most on every target'"
    assert claim_failures(old, [], nb) == [f"{refuted} is not what the table {LOSS_07!r} shows"]
    new = {question: model for _, question, model in ANSWERS}["7.a"]
    assert claim_failures(new, CLAIMS["7.a"], nb) == []
    assert claim_failures(old, CLAIMS["7.a"], nb)[0].startswith("no longer says")


def test_printed_table_reads_a_captioned_and_a_headed_table():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output(
        "stream", name="stdout", text="loss:\n      a    b\ntarget\nx_y  -1.0  2.5\nz    3.0 -4.0\n\n"
                                      "system    a    b\ntau p x   0.9  0.8\ndone\n")])])
    loss = printed_table(nb, "loss:")
    assert loss.to_dict() == {"a": {"x y": -1.0, "z": 3.0}, "b": {"x y": 2.5, "z": -4.0}}
    assert printed_table(nb, "system a b").loc["tau p x"].tolist() == [0.9, 0.8]
    with pytest.raises(AssertionError, match="no printed table"):
        printed_table(nb, "nothing:")


def test_the_old_answer_7e_fails_against_its_notebook():
    """7.e once gave the paper's source scores as '98.7 to 99.97', where the table prints
    0.968 to 1.000: the check must catch that, and pass the corrected sentence."""
    nb = solution(SOLUTIONS / "07_transportability.ipynb")
    printed = printed_values(printed_text(nb))
    assert unprinted("the score on the *training* split (98.7 to 99.97: a model graded", printed) == ["99.97"]
    assert unprinted("the score on the *training* split (0.968 to 1.000 in the table above", printed) == []


def test_answer_ids_run_in_order_in_every_notebook():
    for path in sorted(SOLUTIONS.glob("[0-9][0-9]_*.ipynb")):
        ids = list(answers.questions(solution(path), path.stem))
        number = str(int(path.name[:2]))
        assert ids == [f"{number}.{chr(ord('a') + i)}" for i in range(len(ids))], f"{path.name}: {ids}"


def _answer_cells(path: Path) -> list[NotebookNode]:
    return cells.answer_cells(solution(path), path.stem)


def leading_marks(line: str) -> float:
    """The marks a marking-scheme line gives: the number before its first colon."""
    marks, colon, criterion = line.partition(":")
    assert colon and criterion.strip(), f"{line!r} is not '<marks>: <what earns them>'"
    try:
        value = float(marks.strip())
    except ValueError:
        raise AssertionError(f"{line!r} does not start with its marks") from None
    assert value > 0, f"{line!r} gives no marks"
    return value


@pytest.mark.parametrize("path, question", [(path, question) for path, question, _ in ANSWERS],
                         ids=[question for _, question, _ in ANSWERS])
def test_every_written_answer_has_points_and_a_marking_scheme_that_adds_up_to_them(path, question):
    cell = next(cell for cell in _answer_cells(path) if cells.answer_id(cell) == question)
    kit = cells.kit_metadata(cell)
    assert "points" in kit, f"{path.name}, answer {question} gives no points"
    points = cells.answer_points(cell, path.stem)
    scheme = cells.marking_scheme(cell)
    assert scheme and len(scheme) == len(kit.get("marking", [])), (
        f"{path.name}, answer {question} has no marking scheme (a list of text)")
    marks = [leading_marks(line) for line in scheme]
    assert math.isclose(sum(marks), points), (f"{path.name}, answer {question}: the marking scheme's marks "
                                              f"{marks} add up to {sum(marks):g}, not its {points:g} points")


@pytest.mark.parametrize("path, question, model", ANSWERS, ids=[question for _, question, _ in ANSWERS])
def test_every_number_a_marking_scheme_quotes_is_printed_or_in_its_model_answer(path, question, model):
    nb = solution(path)
    known = printed_values(printed_text(nb)) + printed_values(model) + printed_values(stated_text(nb))
    scheme = answers.questions(nb, path.stem)[question].marking
    missing = [quoted for line in scheme for quoted in unprinted(line.partition(":")[2], known)]
    assert not missing, (f"{path.name}, answer {question}: its marking scheme quotes {missing}, which "
                         "neither its outputs, its own text nor its model answer give")


@pytest.mark.parametrize("line, marks", [("1: names the winner", 1.0),
                                         ("0.5: p = 0.05: not significant", 0.5)])
def test_leading_marks_are_the_number_before_the_first_colon(line, marks):
    assert leading_marks(line) == marks


@pytest.mark.parametrize("line", ["names the winner: 1", "1 names the winner", "0: nothing", "1:  "])
def test_a_marking_line_without_its_marks_first_is_refused(line):
    with pytest.raises(AssertionError):
        leading_marks(line)


# --------------------------------------------------------------------------- 07: how close a target is
# Notebook 07's answers say where a target stands by a similarity measure ("Rotten Tomatoes is 4th of
# 17 by OOV rate", "the OOV rate puts IMDB closest", "close by both measures"): each is checked
# against the similarity table 07 prints, whose column names are several words long.
SIMILARITY_07 = "domain similarity to the 2,000 reviews (like the paper's Tables 4 and 5):"
SIMILARITY_MEASURES_07 = ("lexical difference", "OOV rate", "cosine distance", "KL divergence")
# "Both measures" in 07 are Exercise 7.2's two: the lexical difference and the OOV rate.
BOTH_MEASURES_07 = ("lexical difference", "OOV rate")
# The targets as 07's answers name them, and their rows in the table.
TARGETS_07 = {
    "IMDB": "imdb", "Rotten Tomatoes": "rotten tomatoes", "all products": "products",
    "the Apex DVD player": "product:apex ad2600 progressive scan dvd player",
    "the Canon G3": "product:canon g3",
    "the Canon PowerShot SD500": "product:canon powershot sd500", "the Canon S100": "product:canon s100",
    "the Creative Labs Nomad": "product:creative labs nomad jukebox zen xtra 40gb",
    "the Diaper Champ": "product:diaper champ", "Diaper Champ": "product:diaper champ",
    "the Hitachi router": "product:hitachi router", "the Linksys router": "product:linksys router",
    "the MicroMP3": "product:micromp3", "the Nikon Coolpix 4300": "product:nikon coolpix 4300",
    "the Nokia 6600": "product:nokia 6600", "the Nokia 6610": "product:nokia 6610",
    "the iPod": "product:ipod", "Norton": "product:norton",
}
_TARGET_07 = "(?P<target>" + "|".join(sorted(map(re.escape, TARGETS_07), key=len, reverse=True)) + ")"
_MEASURE_07 = "(?P<measure>" + "|".join(SIMILARITY_MEASURES_07) + ")"
# "<target> is 14th of 17 by (the) lexical difference"; 1st is the closest (the smallest value).
RANK_07 = re.compile(_TARGET_07 + r",? (?:is |comes |ranks )?(?P<rank>\d+)(?:st|nd|rd|th) of (?P<of>\d+) by "
                     r"(?:the |its )?" + _MEASURE_07)
# "the <measure> puts <target> closest" / "farthest"
EXTREME_07 = re.compile(r"[Tt]he " + _MEASURE_07 + r" puts " + _TARGET_07
                        + r" (?:\([^)]*\) )?(?P<end>closest|farthest)")
# "<target> is close by both measures": among the closer half of the targets by each of the two.
BOTH_07 = re.compile(_TARGET_07 + r" (?:is|are|lies|sits) close by both measures")


def similarity_table_07(nb: NotebookNode) -> pd.DataFrame:
    """07's printed similarity table: one row per target (as ``printed_table`` names rows), one column
    per measure (``SIMILARITY_MEASURES_07``)."""
    printed = [output.text.splitlines() for cell in nb.cells if cell.cell_type == "code"
               for output in cell.get("outputs", [])
               if output.output_type == "stream" and output.name == "stdout"]
    for lines in printed:
        for at, line in enumerate(lines):
            if _words(line) != _words(SIMILARITY_07):
                continue
            assert _words(lines[at + 1]) == " ".join(SIMILARITY_MEASURES_07), lines[at + 1]
            rows = {}
            for row in lines[at + 2:]:
                words = row.split()
                if len(words) == 1 and not rows:  # the index's name
                    continue
                if len(words) <= len(SIMILARITY_MEASURES_07):
                    break
                rows[" ".join(words[:-4]).lower().replace("_", " ")] = [float(w) for w in words[-4:]]
            return pd.DataFrame.from_dict(rows, orient="index", columns=list(SIMILARITY_MEASURES_07))
    raise AssertionError(f"no printed table {SIMILARITY_07!r}")


def closeness_failures(answer: str, table: pd.DataFrame) -> list[str]:
    """The closeness claims of ``answer`` that ``table`` (``similarity_table_07``) refutes."""
    text, failures = _words(answer), []
    ranks = table.rank(method="min")  # 1: the closest
    for match in RANK_07.finditer(text):
        row, measure = TARGETS_07[match["target"]], match["measure"]
        if int(match["of"]) != len(table) or ranks.loc[row, measure] != int(match["rank"]):
            failures.append(f"{match.group()!r}: the table ranks it "
                            f"{ranks.loc[row, measure]:.0f} of {len(table)}")
    for match in EXTREME_07.finditer(text):
        row, measure = TARGETS_07[match["target"]], match["measure"]
        extreme = table[measure].idxmin() if match["end"] == "closest" else table[measure].idxmax()
        if row != extreme:
            failures.append(f"{match.group()!r}: the {match['end']} by the {measure} is {extreme}")
    for match in BOTH_07.finditer(text):
        row = TARGETS_07[match["target"]]
        far = [m for m in BOTH_MEASURES_07 if ranks.loc[row, m] > len(table) / 2]
        if far:
            failures.append(f"{match.group()!r}: not in the closer half by the {', '.join(far)}")
    return failures


def test_where_07_says_a_target_stands_by_a_measure_the_table_shows_it():
    nb = solution(SOLUTIONS / "07_transportability.ipynb")
    table = similarity_table_07(nb)
    assert len(table) >= 16 and set(TARGETS_07.values()) <= set(table.index)
    spoken = [(question, model) for path, question, model in ANSWERS if path.name.startswith("07_")]
    failures = {question: closeness_failures(model, table) for question, model in spoken}
    assert not any(failures.values()), failures
    said = sum(len(list(p.finditer(_words(m)))) for _, m in spoken for p in (RANK_07, EXTREME_07, BOTH_07))
    assert said >= 3, "07's answers no longer place a target by a measure: the check has nothing to read"


def test_the_old_answer_7f_fails_against_the_similarity_table():
    """7.f once said Rotten Tomatoes 'is close by both measures', where the table ranks it 14th of 17
    by the lexical difference: the check must catch that, and the other readings of the table."""
    table = similarity_table_07(solution(SOLUTIONS / "07_transportability.ipynb"))
    old = "a page or more: Rotten Tomatoes is close by both measures, 0.1545 and 0.0382, yet costs"
    assert closeness_failures(old, table) == [
        "'Rotten Tomatoes is close by both measures': not in the closer half by the lexical difference"]
    assert closeness_failures("the OOV rate puts IMDB closest (0.0266)", table) == []
    wrong = closeness_failures("the lexical difference puts IMDB closest", table)
    assert wrong == ["'the lexical difference puts IMDB closest': the closest by the lexical difference "
                     "is product:diaper champ"]
    assert closeness_failures("Rotten Tomatoes is 14th of 17 by the lexical difference", table) == []
    assert closeness_failures("Rotten Tomatoes is 2nd of 17 by the lexical difference", table) != []


# --------------------------------------------------------------------------- claims of equivalence (K26)
# "No significant difference" is not "as good": a model answer that calls two systems equal
# ("matches", "as good as", "equivalent", "no better", "level with", ...) must say within what
# margin (±m points), quote the interval of the difference, and a printed two one-sided tests'
# verdict for that margin must say equivalent: in its own notebook, else in notebook 04, where
# the systems' in-domain comparison is printed (``significance.paired_difference``).
EQUIVALENCE_CLAIM = re.compile(r"\b(?:match(?:es|ed)?|as good as|as accurate as|equivalent|equally good|"
                               r"no better|level with|on a par|indistinguishable)\b", re.IGNORECASE)
# A claim word inside quotation marks is named, not claimed ("no significant difference" is not
# "equally good"); so is one that a negation shortly before denies ("does not mean equally good").
QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
NEGATION = re.compile(r"\b(?:not|no|never|cannot|nor)\b|n't\b", re.IGNORECASE)
NEGATION_REACH = 4  # words before a claim word that a negation denies it from
MARGIN = re.compile(r"(?:±|\+/-)\s?(?P<margin>\d+(?:\.\d+)?)\s*(?:points|%)")
INTERVAL = re.compile(r"interval[^.;]{0,80}?[−+-]?\d+(?:\.\d+)?\s*(?:%|points)?\s*(?:to|–|and)\s*"
                      r"[−+-]?\d+(?:\.\d+)?")
TOST_VERDICT = re.compile(r"equivalent within ±(?P<margin>\d+(?:\.\d+)?) points \(TOST, α = [\d.]+\): "
                          r"(?P<verdict>True|False)")
EQUIVALENCE_HOME = SOLUTIONS / "04_doc2vec.ipynb"


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.;:!?])\s+(?=[A-Z\"“(])", _words(text)) if s]


def equivalence_claims(answer: str) -> list[str]:
    """The sentences of ``answer`` that claim two things equal (not those that name or deny it)."""
    claims = []
    for sentence in _sentences(answer):
        unquoted = QUOTED.sub(lambda m: " " * len(m.group()), sentence)
        for match in EQUIVALENCE_CLAIM.finditer(unquoted):
            before = unquoted[:match.start()].split()[-NEGATION_REACH:]
            if not any(NEGATION.search(word) for word in before):
                claims.append(sentence)
                break
    return claims


def tost_verdicts(nb: NotebookNode) -> dict[float, bool]:
    """Each margin (points) a notebook's printed TOST verdicts name, and whether one says equivalent."""
    verdicts: dict[float, bool] = {}
    for match in TOST_VERDICT.finditer(printed_text(nb).replace("_", " ")):
        margin = float(match["margin"])
        verdicts[margin] = verdicts.get(margin, False) or match["verdict"] == "True"
    return verdicts


def equivalence_failures(answer: str, nb: NotebookNode) -> list[str]:
    """Why the equivalence claims of ``answer`` are unsupported by ``nb``'s (else 04's) outputs."""
    failures = []
    verdicts = tost_verdicts(nb) or tost_verdicts(solution(EQUIVALENCE_HOME))
    for claim in equivalence_claims(answer):
        margins = {float(m["margin"]) for m in MARGIN.finditer(claim)}
        if not margins:
            failures.append(f"{claim!r} names no margin (±m points) within which the two are equal")
        elif not INTERVAL.search(_words(answer)):
            failures.append(f"{claim!r}: the answer quotes no interval of the difference")
        elif not any(verdicts.get(margin) for margin in margins):
            failures.append(f"{claim!r}: no printed TOST says equivalent within ±{max(margins):g} points "
                            f"(printed: {verdicts or 'none'})")
    return failures


@pytest.mark.parametrize("path, question, model", ANSWERS, ids=[question for _, question, _ in ANSWERS])
def test_a_claim_of_equivalence_comes_with_its_interval_margin_and_test(path, question, model):
    failures = equivalence_failures(model, solution(path))
    assert not failures, f"{path.name}, answer {question}: {failures}"


def _notebook_printing(text: str) -> NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output(
        "stream", name="stdout", text=text)])])


def test_the_old_answer_4e_fails_and_a_claim_needs_a_verdict_that_says_equivalent():
    """4.e once said "Doc2Vec trained on 100,000 reviews matches the best bag-of-words SVM here"
    from a permutation p of 0.77: no margin, no interval, no test of equivalence."""
    old = ("A report should claim only what the test shows: Doc2Vec trained on 100,000 reviews matches "
           "the best bag-of-words SVM here, and beats Naive Bayes.")
    said = "equivalent within ±2 points (TOST, α = 0.05): {}\n"
    unsupported = equivalence_failures(old, _notebook_printing(said.format("True")))
    assert unsupported[0].endswith("names no margin (±m points) within which the two are equal")
    claim = ("The two are equivalent within ±2 points: the paired 95 % interval runs from −0.9 to +1.4 "
             "points.")
    assert equivalence_failures(claim, _notebook_printing(said.format("True"))) == []
    assert "no printed TOST says equivalent" in equivalence_failures(claim, _notebook_printing(
        said.format("False")))[0]
    assert "no printed TOST" in equivalence_failures(claim.replace("±2", "±1"), _notebook_printing(
        said.format("True")))[0]
    assert "quotes no interval" in equivalence_failures("They match within ±2 points.", _notebook_printing(
        said.format("True")))[0]


@pytest.mark.parametrize("text, claims", [
    ("\"No significant difference\" is not \"equally good\": a 0.3-point gap says nothing.", 0),
    ("No significant difference does not mean equally good.", 0),
    ("SVM-Doc2Vec matches SVM-BOW.", 1),
    ("NB is no better than a coin here. It is level with it.", 2),
    ("The sample model is not as good as SVM-BOW, and the two are not equivalent.", 0),
])
def test_a_claim_of_equivalence_is_told_from_one_named_or_denied(text, claims):
    assert len(equivalence_claims(text)) == claims


# --- K26: one significance level, rankings by a paired test, p-values read as what they are ------

#: How a model answer may not read a p-value: as the probability that the result is chance (or
#: that H0 is true); a p-value is the probability, were H0 true, of a result at least as extreme.
P_VALUE_MISREADINGS = re.compile(
    r"unlikely to be (?:due to )?chance|probability (?:that )?(?:the|this|a) (?:difference|result|gap) "
    r"(?:is|was) (?:due to )?chance|chance that the (?:difference|result) is real|"
    r"probability (?:that )?H0 is (?:true|false)", re.IGNORECASE)
#: Notebook 09's table of paired tests: one row per comparison of two Claudes on one Zellig.
PAIRED_09 = "paired permutation tests on the same pairs"
_PAIRED_ROW = re.compile(r"^\s*(?P<zellig>.+?)\s+(?P<a>\d-gram LM|sentiment classifier)\s+"
                         r"(?P<b>\d-gram LM|sentiment classifier)\s+"
                         r"(?P<found_a>[\d.]+)\s+(?P<found_b>[\d.]+)\s+"
                         r"(?P<plus>\d+)\s+(?P<minus>\d+)\s+(?P<p>[\d.e-]+)\s+(?P<holm>[\d.e-]+)\s+"
                         r"(?P<better>True|False)\s*$")


def _paired_09(nb: NotebookNode) -> dict[tuple[str, str, str], dict]:
    """Notebook 09's paired tests as printed: (Zellig, a, b) -> found shares, counts, p, Holm p, verdict."""
    text = printed_text(nb)
    at = text.index(PAIRED_09)
    rows = {}
    for line in text[at:].splitlines()[2:]:
        match = _PAIRED_ROW.match(line)
        if match is None:
            break
        rows[match["zellig"].strip(), match["a"], match["b"]] = {
            "found": (float(match["found_a"]), float(match["found_b"])), "p": float(match["p"]),
            "holm": float(match["holm"]), "better": match["better"] == "True"}
    return rows


def test_no_model_answer_reads_a_p_value_as_the_probability_of_chance():
    misread = [(question, match.group()) for _, question, model in ANSWERS
               for match in P_VALUE_MISREADINGS.finditer(_words(model))]
    assert not misread, f"a p-value is not the probability that a result is chance: {misread}"
    assert P_VALUE_MISREADINGS.search("so it is unlikely to be chance at α = 0.05")  # the old 3.d
    assert not P_VALUE_MISREADINGS.search("were the systems interchangeable, a gap this large would be rare")


def test_notebook_09_judges_at_the_course_s_level():
    from helpers import settings

    nb = solution(SOLUTIONS / "09_adversarial.ipynb")
    alpha = settings.alpha()
    printed = printed_text(nb)
    assert f"not better than chance (binomial test, p >= α = {alpha:g}):" in printed
    assert f"(adjusted p >= {alpha:g}):" in printed and f"at α = {alpha:g}:" in printed
    source = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    assert "settings.alpha()" in source and ">= 0.01" not in source and "< 0.01" not in source
    assert "level 0.01" not in stated_text(nb) and "at 0.01" not in stated_text(nb)


def test_answer_9b_ranks_claudes_only_by_the_paired_test_it_quotes():
    from helpers import settings

    nb = solution(SOLUTIONS / "09_adversarial.ipynb")
    model = _words({question: model for _, question, model in ANSWERS}["9.b"])
    paired, alpha = _paired_09(nb), settings.alpha()
    substitution = "bigram substitution (k=1)"
    assert "unigram (0.542) < bigram (0.716) < trigram (0.781) holds by the paired test" in model
    assert paired[substitution, "2-gram LM", "1-gram LM"]["better"]
    assert paired[substitution, "3-gram LM", "2-gram LM"]["better"]
    assert "with intervals that do not overlap" not in model  # the old reason for a ranking
    assert "the intervals do not overlap is not the evidence" in model
    # the trigram's edge on the order Zelligs: below α alone, not after Holm's correction
    assert "not after Holm's correction for the six comparisons" in model
    for zellig in ("swap adjacent words", "shuffle a 4-word window"):
        row = paired[zellig, "3-gram LM", "2-gram LM"]
        assert row["p"] < alpha <= row["holm"] and not row["better"]
    assert "the bigram LM alone finds 755 fakes against the classifier's 182" in model
    assert paired["flip opinion words (k=1)", "2-gram LM", "sentiment classifier"]["better"]
    assert len(paired) == 6 and all(row["holm"] >= row["p"] for row in paired.values())


def test_answer_9b_calls_the_coins_significance_a_type_i_error_at_the_course_s_level():
    from helpers import settings

    model = _words({question: model for _, question, model in ANSWERS}["9.b"])
    alpha = settings.alpha()
    assert f"p = 0.0135, below α = {alpha:g}" in model and 0.0135 < alpha
    assert "false positive (a type I error)" in model
    assert "After Holm's correction for the 16 tests it is not better than chance (0.0539)" in model
    assert 0.0539 >= alpha
    assert (f"better than chance at α = {alpha:g}, before Holm's correction (p = 0.0089) and after it "
            "(0.0443)") in model and 0.0443 < alpha


# --- K26: notebook 02's grids of C are wide enough, and its answers say how often each C was chosen ----

#: Notebook 02's table of SVM features (02-010): its header, and a row as printed.
SVM_TABLE_02 = "C chosen (folds)"
_SVM_ROW_02 = re.compile(r"^(?P<name>[a-z+ -]+?)\s+(?P<accuracy>\d+\.\d)\s+(?P<std>\d+\.\d)\s+"
                         r"(?P<low>\S+) to (?P<high>\S+)\s+(?P<chosen>\S+×\d+(?:, \S+×\d+)*)\s+"
                         r"(?P<edge>\d+) of (?P<folds>\d+) folds\s*$")
#: Notebook 02's nested choices (02-017): a caption, then one line per (setting, C) chosen.
NESTED_02 = "what the nested CV chose (setting, C), in how many of the 10 outer folds:"
_NESTED_ROW_02 = re.compile(r"^\s+(?P<name>[a-z+ -]+), C = (?P<C>\S+): (?P<folds>\d+)"
                            r"(?P<edge> \(an edge of its grid\))?$")


def _svm_rows_02(nb: NotebookNode) -> dict[str, dict]:
    """02's SVM table as printed: feature -> grid, chosen C (C -> folds), folds at an edge, folds."""
    lines = printed_text(nb).splitlines()
    at = next(i for i, line in enumerate(lines) if SVM_TABLE_02 in line and "at an edge" in line)
    rows = {}
    for line in lines[at + 1:]:
        if line.strip() == "system":
            continue
        match = _SVM_ROW_02.match(line)
        if match is None:
            break
        chosen = {float(C): int(n) for C, n in (part.split("×") for part in match["chosen"].split(", "))}
        rows[match["name"]] = {"grid": (float(match["low"]), float(match["high"])), "chosen": chosen,
                               "edge": int(match["edge"]), "folds": int(match["folds"])}
    return rows


def _nested_02(nb: NotebookNode) -> dict[tuple[str, float], tuple[int, bool]]:
    """02's nested choices as printed: (setting, C) -> (outer folds, marked as an edge of its grid)."""
    lines = printed_text(nb).splitlines()
    at = lines.index(NESTED_02)
    chosen = {}
    for line in lines[at + 1:]:
        match = _NESTED_ROW_02.match(line)
        if match is None:
            break
        chosen[match["name"], float(match["C"])] = (int(match["folds"]), bool(match["edge"]))
    return chosen


def test_no_svm_feature_of_02_chooses_an_edge_of_its_grid_in_most_folds():
    from helpers import systems

    rows = _svm_rows_02(solution(SOLUTIONS / "02_svm.ipynb"))
    assert set(rows) == set(systems.SVM_FEATURES)
    for name, row in rows.items():
        grid = systems.SVM_FEATURES[name].Cs
        assert row["grid"] == (min(grid), max(grid)) and set(row["chosen"]) <= set(grid), name
        assert sum(row["chosen"].values()) == row["folds"] == 10, name
        edge = sum(n for C, n in row["chosen"].items() if C in (min(grid), max(grid)))
        assert row["edge"] == edge, name
        assert 2 * edge <= row["folds"], f"{name}: C at an edge of its grid in {edge} of {row['folds']} folds"


def test_02_prints_the_nested_choice_of_every_outer_fold():
    from helpers import systems

    chosen = _nested_02(solution(SOLUTIONS / "02_svm.ipynb"))
    assert sum(folds for folds, _ in chosen.values()) == 10
    for (name, C), (_, edge) in chosen.items():
        grid = systems.SVM_FEATURES[name].Cs
        assert C in grid and edge == (C in (min(grid), max(grid))), (name, C)


def test_answers_2a_to_2c_count_the_chosen_c_as_the_tables_print_them():
    from helpers import systems

    nb = solution(SOLUTIONS / "02_svm.ipynb")
    rows, nested = _svm_rows_02(nb), _nested_02(nb)
    model = {question: _words(text) for path, question, text in ANSWERS if path.name.startswith("02_")}
    top = max(systems.SVM_FEATURES["uni+bi tf-idf"].Cs)
    assert f"the top of the grid ({top:g}) in 5 of 10 folds" in model["2.a"]
    assert f"Uni+bi tf-idf chose the top of its grid, C = {top:g}, in 5 of 10 folds" in model["2.b"]
    assert rows["uni+bi tf-idf"]["chosen"][top] == rows["uni+bi tf-idf"]["edge"] == 5
    assert "(10 in 6 of 10 folds)" in model["2.a"] and rows["unigram tf-idf"]["chosen"][10.0] == 6
    assert "0.001 or 0.01 for frequency and presence in every fold" in model["2.a"]
    assert all(set(rows[name]["chosen"]) == {0.001, 0.01} for name in rows if "tf-idf" not in name)
    assert "chose uni+bi presence in all 10 outer folds, with C = 0.001 in 4 and 0.01 in 6" in model["2.c"]
    assert nested == {("uni+bi presence", 0.001): (4, False), ("uni+bi presence", 0.01): (6, False)}
    assert rows["uni+bi presence"]["chosen"] == {0.001: 4, 0.01: 6}


def test_03_s_question_quotes_the_gaps_its_table_prints():
    nb = solution(SOLUTIONS / "03_significance.ipynb")
    accuracy = {}
    for line in printed_text(nb).splitlines():
        row = re.match(r"^\s*(nb|nb-presence)\s+(nb-unsmoothed|nb-presence|svm-bow)\s+"
                       r"(\d+\.\d)\s+(\d+\.\d)\s", line)
        if row:
            accuracy[row[1]], accuracy[row[2]] = float(row[3]), float(row[4])
    question = _words(nb.cells[0].source)
    assert f"SVM-BOW beats NB by {accuracy['svm-bow'] - accuracy['nb']:.1f} points" in question
    assert f"presence beats frequency by {accuracy['nb-presence'] - accuracy['nb']:.1f} points" in question
