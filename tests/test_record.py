"""Saved verdicts and grading records come back whole: ``from_record(record(v)) == v`` and
``Record.from_json(to_json(r)) == r`` for any verdict and record (hypothesis draws them)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.course.classroom.record import DIFFERENCE_KEYS, EXERCISE_KEYS, Record
from helpers.course.engine.verdict import DERIVED_KEYS, Problem, Status, Verdict
from helpers.course.notebook.compare import Difference
from helpers.errors import KitError

#: Texts that ``printable`` keeps as they are (letters, digits, punctuation, symbols, spaces,
#: line breaks): what a record holds after ``to_json``.
TEXT = st.text(st.characters(categories=("L", "N", "P", "S", "Zs"), include_characters="\n\t"), max_size=20)
POINTS = st.floats(0, 100, allow_nan=False)
OPTIONAL_NUMBER = st.none() | st.floats(0, 1e6, allow_nan=False)
DIFFERENCES = st.none() | st.builds(Difference, line=st.integers(0, 10_000), expected=TEXT, got=TEXT,
                                    reason=TEXT, kind=TEXT)


@st.composite
def verdicts(draw: st.DrawFn, text: st.SearchStrategy[str] = TEXT) -> Verdict:
    status = draw(st.sampled_from(Status))
    points = draw(POINTS)
    partial = 0.0 if status is Status.PASSED else draw(st.floats(0, 1)) * points
    return Verdict(exercise=draw(text), status=status, reason=draw(text), title=draw(text), where=draw(text),
                   position=draw(st.none() | st.integers(0, 50)), points=points, partial=partial,
                   expected=draw(text), got=draw(text), difference=draw(DIFFERENCES),
                   environments=tuple(draw(st.lists(text, max_size=3))), hidden=draw(st.booleans()),
                   traceback=draw(text), flags=tuple(draw(st.lists(text, max_size=3))),
                   awarded=draw(st.none() | POINTS), comment=draw(text), stopped=draw(st.booleans()),
                   note=draw(text))


@st.composite
def records(draw: st.DrawFn) -> Record:
    name = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
    found = draw(st.booleans())
    return Record(student=draw(name), notebook=draw(name), file=draw(TEXT) if found else None,
                  solution_sha256=draw(TEXT), graded_at=draw(TEXT),
                  submission_sha256=draw(TEXT) if found else None, note=draw(TEXT), sandbox=draw(TEXT),
                  seconds=draw(OPTIONAL_NUMBER), cpu_seconds=draw(OPTIONAL_NUMBER),
                  peak_memory_mb=draw(OPTIONAL_NUMBER), problem=draw(st.sampled_from(Problem)),
                  problem_line=draw(TEXT), exercises=tuple(draw(st.lists(verdicts(), max_size=4))))


@given(verdicts(text=st.text(max_size=20)))  # any text: a verdict's record is plain JSON
@settings(max_examples=300, deadline=None)
def test_a_verdict_saved_as_json_reads_back_equal(verdict):
    assert Verdict.from_record(json.loads(json.dumps(verdict.record()))) == verdict


@given(records())
@settings(max_examples=200, deadline=None)
def test_a_grading_record_saved_as_json_reads_back_equal(record):
    assert Record.from_json(json.loads(json.dumps(record.to_json()))) == record


def test_the_schema_is_the_verdict_s_fields_and_the_derived_keys():
    fields = set(Verdict.__dataclass_fields__)
    assert set(EXERCISE_KEYS) == fields | set(DERIVED_KEYS)
    assert set(DIFFERENCE_KEYS) == set(Difference.__dataclass_fields__)


def _stored(**exercise_changes) -> dict:
    verdict = Verdict("1.1", Status.FAILED, reason="AssertionError", points=2.0, flags=("reads a file",),
                      difference=Difference(3, "0.5", "0.7", "0.7 where 0.5 was expected", "stdout"))
    record = Record(student="alice", notebook="01_naive_bayes", file="01_naive_bayes.ipynb",
                    solution_sha256="5" * 64, graded_at="2026-11-27T18:00:00+00:00", exercises=(verdict,))
    stored = record.to_json()
    stored["exercises"][0].update(exercise_changes)
    return stored


@pytest.mark.parametrize(("change", "message"), [
    ({"flags": "reads a file"}, "'flags' must be list"),
    ({"flags": [3]}, "'flags' must be a list of texts"),
    ({"difference": {"line": 3}}, "difference: 'expected' is missing"),
    ({"difference": {"line": 3, "expected": "", "got": "", "reason": "", "kind": "", "extra": 1}},
     "difference: 'extra' is not a key of its format"),
    ({"position": "0"}, "'position' must be int or null"),
    ({"awarded": True}, "'awarded' must be int or float or null"),
])
def test_a_record_whose_exercise_breaks_the_schema_is_refused_by_name(change, message):
    with pytest.raises(KitError, match=message):
        Record.from_json(_stored(**change))
