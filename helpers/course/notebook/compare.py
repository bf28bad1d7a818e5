"""The one comparison of a checked cell's printed output with its reference.

Numbers that depend on floating-point kernels (BLAS in gensim's Doc2Vec, numpy and scipy)
can move in their last printed digit from one CPU to another, so a checked cell may declare
a tolerance; everything else is compared exactly.

- The text is read line by line as tokens: numbers and the runs of other characters between
  them. Line breaks, words and punctuation must match exactly, and so must whether two
  tokens are glued together or separated by white space; only the *width* of white space may
  differ (a table's columns realign when one number gets wider).
- A number written with a decimal point or an exponent (``0.1824``, ``84.9``, ``1.4e-11``)
  may differ from the reference by at most ``tolerance`` units of the reference's last
  printed digit: with tolerance 3, ``0.1824`` accepts ``0.1821`` to ``0.1827``.
- A number written without one (a count, an id, ``1/5001``) must match exactly, whatever the
  tolerance.

The tolerance of a checked cell lives in its metadata, ``{"kit": {"tolerance": 3}}`` (default
0: exact), and is measured, not guessed: see ``helpers.course.notebook.tolerances``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from helpers.errors import KitError

_TOKEN = re.compile(r"(?P<space>[ \t]+)|(?P<number>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)"
                    r"|(?P<text>[^\d \t+-]+|[+-])")


@dataclass(frozen=True)
class Token:
    """One number or run of text in a line; ``glued`` when no white space precedes it."""

    kind: str
    text: str
    glued: bool


#: What every reader calls the line expected (the reference's) and the line printed.
EXPECTED, GOT = "expected (reference)", "got (your output)"
#: The two as a difference labels its lines, the values aligned.
EXPECTED_LABEL = f"{EXPECTED}:"
GOT_LABEL = f"{GOT}:".ljust(len(EXPECTED_LABEL))


@dataclass(frozen=True)
class Difference:
    """Where a checked output first departs from its reference, in words a student can read.

    ``line`` is the 1-based line of a text output (0 when the difference is not in one
    line, such as an output missing); ``kind`` the output's kind (``stdout``, ``text/plain``)
    when ``compare_outputs`` found it.
    """

    line: int
    expected: str
    got: str
    reason: str
    kind: str = ""

    def summary(self) -> str:
        """``stdout, line 3: '0.5' where '0.515' was expected`` (the reason alone without a place)."""
        place = ", ".join(part for part in (self.kind, f"line {self.line}" if self.line else "") if part)
        return f"{place}: {self.reason}" if place else self.reason

    @property
    def in_numbers(self) -> bool:
        """Whether the lines differ only in numbers (what other BLAS kernels or library
        versions can cause): same words in the same places, some number changed."""
        if not self.line:
            return False
        want, have = tokens(self.expected), tokens(self.got)
        return (len(want) == len(have) and any(w.kind == "number" for w in want)
                and all(w.kind == h.kind and (w.kind == "number" or w.text == h.text)
                        for w, h in zip(want, have, strict=True)))

    def lines(self) -> list[str]:
        """The summary, then (for a difference in a line) the line expected and the line
        printed, labelled: how every reader words a difference."""
        if not self.line:
            return [self.summary()]
        return [self.summary(), f"{EXPECTED_LABEL} {self.expected}", f"{GOT_LABEL} {self.got}"]

    def __str__(self) -> str:
        return "\n  ".join(self.lines())


def tokens(line: str) -> list[Token]:
    """Split one line into number and text tokens, remembering which are glued together.

    Parameters
    ----------
    line : str
        A line of output, without its line break.

    Returns
    -------
    list of Token
        White space is not a token; it only sets the next token's ``glued`` flag.
    """
    found: list[Token] = []
    glued = False
    for match in _TOKEN.finditer(line):
        kind = match.lastgroup
        assert kind is not None  # each alternative of _TOKEN is a named group
        if kind == "space":
            glued = False
            continue
        found.append(Token(kind, match.group(), glued and bool(found)))
        glued = True
    return found


def unit(number: str) -> Decimal:
    """Return one unit of a number's last printed digit (``"0.1824"`` → ``0.0001``)."""
    exponent = Decimal(number).as_tuple().exponent
    assert isinstance(exponent, int)  # a printed number token is finite (not NaN or infinity)
    return Decimal(1).scaleb(exponent)


def is_exact(number: str) -> bool:
    """Return True for a number printed without decimal point or exponent (compared exactly)."""
    return not any(c in number for c in ".eE")


def numbers_close(expected: str, got: str, tolerance: int) -> bool:
    """Return True if ``got`` is within ``tolerance`` last-digit units of ``expected``."""
    if is_exact(expected) or is_exact(got):
        return expected.lstrip("+") == got.lstrip("+")
    try:
        return abs(Decimal(got) - Decimal(expected)) <= tolerance * unit(expected)
    except ArithmeticError:  # e.g. 1e9999999999: too far out to be close
        return False


def check_tolerance(tolerance: Any) -> int:
    """Validate a declared tolerance (a non-negative int) and return it.

    Raises
    ------
    KitError
        If it is not a non-negative integer number of last-digit units.
    """
    if isinstance(tolerance, bool) or not isinstance(tolerance, int) or tolerance < 0:
        raise KitError(f"A check's tolerance must be a whole number of last-digit units ≥ 0, "
                       f"not {tolerance!r}.")
    return tolerance


def tolerance_of(cell: Any) -> int:
    """Return a checked cell's declared tolerance (``kit.tolerance`` in its metadata, default 0)."""
    return check_tolerance(cell.get("metadata", {}).get("kit", {}).get("tolerance", 0))


def compare_text(expected: str, got: str, tolerance: int = 0) -> Difference | None:
    """Compare a checked output with its reference; return the first difference, or None.

    Parameters
    ----------
    expected : str
        The reference output.
    got : str
        The output of the run being checked.
    tolerance : int
        Last-digit units a decimal number may move (see the module docstring).

    Returns
    -------
    Difference or None
        None when the outputs agree.
    """
    tolerance = check_tolerance(tolerance)
    expected_lines, got_lines = expected.splitlines(), got.splitlines()
    for number, (want, have) in enumerate(zip(expected_lines, got_lines, strict=False), start=1):
        reason = _line_difference(tokens(want), tokens(have), tolerance)
        if reason:
            return Difference(number, want, have, reason)
    if len(expected_lines) != len(got_lines):
        shorter = min(len(expected_lines), len(got_lines))
        return Difference(shorter + 1, _line(expected_lines, shorter), _line(got_lines, shorter),
                          f"{len(got_lines)} lines printed, {len(expected_lines)} expected")
    return None


def _line(lines: list[str], index: int) -> str:
    return lines[index] if index < len(lines) else "(nothing)"


def _line_difference(want: list[Token], have: list[Token], tolerance: int) -> str | None:
    for a, b in zip(want, have, strict=False):
        if a.kind != b.kind or a.glued != b.glued:
            return f"{b.text!r} where {a.text!r} was expected"
        if a.kind == "number":
            if not numbers_close(a.text, b.text, tolerance):
                allowed = ("must match exactly" if is_exact(a.text) or tolerance == 0
                           else f"allowed ± {tolerance * unit(a.text)}")
                return f"{b.text} where {a.text} was expected ({allowed})"
        elif a.text != b.text:
            return f"{b.text!r} where {a.text!r} was expected"
    if len(want) != len(have):
        return "the line is longer than expected" if len(have) > len(want) else \
            "the line is shorter than expected"
    return None


def compare_outputs(expected: dict[str, list[Any]], got: dict[str, list[Any]],
                    tolerance: int = 0) -> Difference | None:
    """Compare a cell's outputs, grouped by kind (``stdout``, ``text/plain``, …) with its reference.

    Parameters
    ----------
    expected, got : dict
        Output kind → the values of that kind, in order (the reference's, and the run's).
    tolerance : int
        Last-digit units for numbers in text values (see ``compare_text``).

    Returns
    -------
    Difference or None
        The first difference (expected = the reference, got = this run), or None.
    """
    if set(expected) != set(got):
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
        parts = ([f"expected output of kind {', '.join(missing)} is missing"] if missing else []) + \
                ([f"unexpected output of kind {', '.join(extra)}"] if extra else [])
        return Difference(0, "", "", "; ".join(parts))
    for kind, want in expected.items():
        have = got[kind]
        if len(want) != len(have):
            return Difference(0, "", "", f"{len(have)} outputs of kind {kind}, {len(want)} expected")
        for a, b in zip(want, have, strict=True):
            if isinstance(a, str) and isinstance(b, str):
                difference = compare_text(a, b, tolerance)
                if difference is not None:
                    return replace(difference, kind=kind)
            elif a != b:
                return Difference(0, "", "", "the output differs from the reference", kind)
    return None


#: What a checked cell's comparison leaves out: nbval's bookkeeping, pictures and widget ids
#: (as nbval without nbdime), stderr (a new library warning must not fail a cell) and HTML
#: (a pandas styling change must not either). The plain text is what is checked.
NOT_COMPARED = ("metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
                "application/vnd.jupyter.widget-view+json", "image/png", "image/jpeg", "stderr", "text/html")


def grouped(outputs: list[Any], sanitize: Callable[[Any], Any] = lambda value: value,
            skip: tuple[str, ...] = NOT_COMPARED) -> dict[str, list[Any]]:
    """A cell's outputs as they are compared: each kind's values in order, keyed by kind.

    A stream's kind is its name (``stdout``), consecutive or not (its texts are joined, as
    nbval coalesces them); a result's or a display's kinds are its MIME types (``text/plain``).

    Parameters
    ----------
    outputs : list
        The cell's outputs (nbformat's dicts).
    sanitize : callable
        Applied to each value (nbval's sanitising rules, see ``sanitizer``).
    skip : tuple of str
        The kinds and keys left out.
    """
    found: dict[str, list[Any]] = {}
    for output in outputs:
        if output.get("output_type") == "stream":
            if output["name"] in skip:
                continue
            values = found.setdefault(output["name"], [""])
            values[0] += output["text"]
            continue
        for key, value in output.items():
            if key in skip:
                continue
            items = value.items() if key == "data" else [(key, value)]
            for kind, content in items:
                if kind not in skip:
                    found.setdefault(kind, []).append(content)
    return {kind: [sanitize(value) for value in values] for kind, values in found.items()}


def sanitizer(path: Path) -> Callable[[Any], Any]:
    """nbval's sanitising rules from ``path`` (``regex:``/``replace:`` pairs) as one function
    on a value: strings have every rule applied in order, anything else is returned as is."""
    from nbval.plugin import get_sanitize_patterns  # loads pytest: only when checking live

    rules = [(re.compile(regex), replacement)
             for regex, replacement in dict(get_sanitize_patterns(Path(path).read_text())).items()]

    def sanitize(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        for pattern, replacement in rules:
            value = pattern.sub(replacement, value)
        return value

    return sanitize
