"""A grading record: what ``kit grade`` decided for one student's notebook, typed.

``Record`` holds who and what was graded, how the run went, the ``Problem`` that kept the
whole notebook from being graded in full (if any) and one ``verdict.Verdict`` per exercise.
It is stored as JSON (``to_json``; ``from_json`` checks every key and type and raises one
``KitError`` naming the first that is wrong), one file per student and notebook
(``gradebook.write_record``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from helpers.course.classroom.layout import check_name
from helpers.course.engine.verdict import DERIVED_KEYS, Problem, Status, Verdict
from helpers.course.notebook.compare import Difference
from helpers.course.safe_text import printable
from helpers.errors import KitError

#: The record format this kit writes and reads (1: problems as text, partial credit optional;
#: 2: exercises without their position, output difference or environments, flags as one text).
RECORD_VERSION = 3
#: What a record says of its sandbox when nothing ran.
NO_SANDBOX = "none"


def json_types(cls: type) -> dict[str, tuple[type, ...]]:
    """Each field of dataclass ``cls`` and the JSON types its value may be stored as: the
    schema of a record, derived from the class that it stores, so the two cannot drift."""
    return {name: _json_types(hint) for name, hint in typing.get_type_hints(cls).items()
            if name in {field.name for field in dataclasses.fields(cls)}}


def _json_types(hint: Any) -> tuple[type, ...]:
    if isinstance(hint, types.UnionType):
        return tuple(t for arm in typing.get_args(hint) for t in _json_types(arm))
    if hint is type(None):
        return (type(None),)
    if hint is float:
        return (int, float)
    if typing.get_origin(hint) is tuple:
        return (list,)
    if dataclasses.is_dataclass(hint):
        return (dict,)
    if isinstance(hint, type) and issubclass(hint, str):  # str and the StrEnums: Status, Problem
        return (str,)
    if hint in (int, bool):
        return (hint,)
    raise TypeError(f"no JSON type for {hint!r}")


#: The JSON keys of each exercise (``Verdict.record``) and the types each may take.
EXERCISE_KEYS: dict[str, tuple[type, ...]] = {**json_types(Verdict), **DERIVED_KEYS}
DIFFERENCE_KEYS = json_types(Difference)
#: The statuses an exercise may have, and the problems a record may have.
_STATUSES = tuple(str(status) for status in Status)
_PROBLEMS = tuple(str(problem) for problem in Problem)


@dataclass(frozen=True)
class Record:
    """What grading decided for one student's notebook.

    Parameters
    ----------
    student, notebook : str
        The student's folder and the notebook's name (``01_naive_bayes``).
    file : str or None
        The file graded (None: none was found).
    note : str
        How it was found, when not by its name.
    submission_sha256 : str or None
        The graded file's digest (None: none was found).
    solution_sha256 : str
        The digest of the solution it was graded against.
    graded_at : str
        When (ISO 8601, UTC).
    sandbox : str
        The sandbox it ran in (``sandbox.kind``), ``NO_SANDBOX`` when nothing ran.
    seconds, cpu_seconds, peak_memory_mb : float or None
        What the run used (None when nothing ran).
    problem : Problem
        What kept the whole notebook from being graded in full (``Problem.NONE``: nothing).
    problem_line : str
        The same in one line for people ("" with ``Problem.NONE``).
    exercises : tuple of Verdict
        One per exercise, in the notebook's order.

    Raises
    ------
    KitError
        If the student or notebook is not a plain name, or an exercise's points are negative
        or its partial points outside 0 to its points (0 for one that passed).
    """

    student: str
    notebook: str
    file: str | None
    solution_sha256: str
    graded_at: str
    submission_sha256: str | None = None
    note: str = ""
    sandbox: str = NO_SANDBOX
    seconds: float | None = None
    cpu_seconds: float | None = None
    peak_memory_mb: float | None = None
    problem: Problem = Problem.NONE
    problem_line: str = ""
    exercises: tuple[Verdict, ...] = ()

    def __post_init__(self) -> None:
        where = f"grading record {self.student}/{self.notebook}"
        check_name(where, "student", self.student)
        check_name(where, "notebook", self.notebook)
        for number, verdict in enumerate(self.exercises):
            at = f"{where}: exercises[{number}]"
            if verdict.points < 0:
                raise KitError(f"{at}: 'points' must not be negative, not {verdict.points:g}.")
            if not 0 <= verdict.partial <= verdict.points or (verdict.passed and verdict.partial):
                raise KitError(f"{at}: 'partial' must be from 0 to its points ({verdict.points:g}), and 0 "
                               f"when it passed, not {verdict.partial:g}.")

    @property
    def passed(self) -> int:
        """How many exercises passed."""
        return sum(verdict.passed for verdict in self.exercises)

    def to_json(self) -> dict[str, Any]:
        """The record as stored (``RECORD_KEYS``; each exercise ``Verdict.record``), every
        text ``printable``: what a student's notebook put in it can be written anywhere."""
        fields = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        return printable_json({"version": RECORD_VERSION, **fields, "problem": str(self.problem),
                               "exercises": [verdict.record() for verdict in self.exercises]})

    def as_stored(self) -> Record:
        """The record as stored and read back (``to_json``): every text ``printable``."""
        return Record.from_json(self.to_json())

    @classmethod
    def from_json(cls, data: Any) -> Record:
        """A record as ``to_json`` wrote it.

        Raises
        ------
        KitError
            Naming the first key that breaks the format: missing or of another type, another
            version, an unknown status or problem, ``passed`` at odds with ``status``, or
            what ``Record`` itself refuses.
        """
        if not isinstance(data, Mapping):
            raise KitError(f"A grading record must be a JSON object, not {type(data).__name__}.")
        data = printable_json(data)  # one written by another kit, or edited, may hold anything
        where = f"grading record {data.get('student', '?')}/{data.get('notebook', '?')}"
        _check_keys(where, data, RECORD_KEYS)
        if data["version"] != RECORD_VERSION:
            raise KitError(f"{where}: 'version' is {data['version']}; this kit reads version "
                           f"{RECORD_VERSION} (grade again with this kit).")
        if data["problem"] not in _PROBLEMS:
            raise KitError(f"{where}: 'problem' must be one of {', '.join(_PROBLEMS)}, "
                           f"not {data['problem']!r}.")
        for number, exercise in enumerate(data["exercises"]):
            _check_exercise(f"{where}: exercises[{number}]", exercise)
        fields = {name: data[name] for name in RECORD_KEYS if name not in ("version", "problem", "exercises")}
        return cls(**fields, problem=Problem(data["problem"]),
                   exercises=tuple(Verdict.from_record(entry) for entry in data["exercises"]))


#: The JSON keys of a record and the types each may take.
RECORD_KEYS: dict[str, tuple[type, ...]] = {"version": (int,), **json_types(Record)}


def printable_json(value: Any) -> Any:
    """``value`` (JSON data) with every text in it, keys too, ``printable``."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, Mapping):
        return {printable(str(key)): printable_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [printable_json(item) for item in value]
    return value


def _check_keys(where: str, value: Mapping[str, Any], keys: dict[str, tuple[type, ...]]) -> None:
    for key, allowed in keys.items():
        if key not in value:
            raise KitError(f"{where}: '{key}' is missing.")
        item = value[key]
        # bool is an int to Python, but a true/false is no number of points or seconds
        if (isinstance(item, bool) and bool not in allowed) or not isinstance(item, allowed):
            wanted = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
            raise KitError(f"{where}: '{key}' must be {wanted}, not {type(item).__name__}.")


def _check_exercise(at: str, exercise: Any) -> None:
    if not isinstance(exercise, Mapping):
        raise KitError(f"{at} must be an object, not {type(exercise).__name__}.")
    _check_keys(at, exercise, EXERCISE_KEYS)
    if exercise["difference"] is not None:
        _check_keys(f"{at}: difference", exercise["difference"], DIFFERENCE_KEYS)
        unknown = sorted(set(exercise["difference"]) - set(DIFFERENCE_KEYS))
        if unknown:
            raise KitError(f"{at}: difference: {', '.join(map(repr, unknown))} is not a key of its format.")
    for key in ("environments", "flags"):
        if not all(isinstance(item, str) for item in exercise[key]):
            raise KitError(f"{at}: '{key}' must be a list of texts.")
    if exercise["status"] not in _STATUSES:
        raise KitError(f"{at}: 'status' must be one of {', '.join(_STATUSES)}, not {exercise['status']!r}.")
    if exercise["passed"] != (exercise["status"] == Status.PASSED):
        raise KitError(f"{at}: 'passed' is {exercise['passed']} but 'status' is {exercise['status']!r}.")
