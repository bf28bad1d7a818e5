"""Hidden checks, run by the grader: the kernel is only asked to call the student's functions.

A hidden check is a solution cell between ``### BEGIN HIDDEN CHECKS`` and ``### END HIDDEN
CHECKS`` (``notebook.cells``). It never reaches the graded kernel. The grader (the nbval
plugin's process, which runs no student code) executes it with ``run``: the check draws its
inputs from ``secret_rng`` (a new secret seed each run, so inputs seen once cannot be answered
at home), calls the student's function through ``student`` (``student.nb_fit(X, y,
alpha=0.5)``), computes the kit's answer itself and prints what it compares, in stable
lines that are checked against the solution's reference output like any checked cell. A
check's ``# Intent:`` line says what it tests, never where its inputs come from.

``student.NAME(...)`` sends the kernel a ``callee.Request`` and returns the answer as plain
data (``plain``): numbers, text, containers, numpy arrays of builtin dtypes, sparse matrices,
pandas tables; nothing unpickled, no object of the student's. What the student's code raised
comes back as a ``StudentError``; ``kernel("name")`` passes one of the notebook's own names as
an argument (a model it trained), and ``Function.method``, ``returning`` and
``with_arguments`` call a method of a new instance, read attributes of the result, or send
the arguments back as the call left them.

Run outside grading (``kit references``, an instructor's Jupyter), the same cell calls the
notebook's functions in its own kernel (``local_call``), through the same plain data.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import pickle
import secrets
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np

from helpers.course.engine import callee, plain
from helpers.course.engine.callee import KernelName, Request

#: A way to have a request answered: takes a ``Request``, returns the kernel's JSON answer.
Channel = Callable[[Request], str]


class StudentError(Exception):
    """What the student's function raised (or why its answer could not be read), as data.

    Attributes
    ----------
    name, value : str
        The error's type name and message (``NotImplementedError``, ``exercise 1.1``).
    where : str
        The frames of the student's code it came through.
    """

    def __init__(self, name: str, value: str, where: str = "") -> None:
        super().__init__(f"{name}: {value}")
        self.name, self.value, self.where = name, value, where


def local_call(request: Request) -> str:
    """Answer ``request`` in this process, on the running notebook's names (no grader):
    the arguments are copied first, as sending them to a kernel would."""
    copied = pickle.loads(pickle.dumps(request))
    return callee.respond(copied, callee.notebook_names())


_channel: ContextVar[Channel] = ContextVar("channel", default=local_call)


@contextlib.contextmanager
def calling(channel: Channel) -> Iterator[None]:
    """Within this block, ``student`` sends its calls through ``channel`` (the graded kernel)."""
    token = _channel.set(channel)
    try:
        yield
    finally:
        _channel.reset(token)


@dataclasses.dataclass(frozen=True)
class Function:
    """One of the notebook's functions, called through the channel in use (``calling``)."""

    request: Request

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        request = dataclasses.replace(self.request, args=args, kwargs=kwargs)
        return answer_of(_channel.get()(request), request.name)

    def method(self, name: str) -> Function:
        """Call method ``name`` of a new instance (the notebook's class made with no arguments)."""
        return dataclasses.replace(self, request=dataclasses.replace(self.request, method=name))

    def returning(self, attributes: str) -> Function:
        """Return the result's ``attributes`` (a dotted path, ``"dv.vectors"``) instead of it."""
        return dataclasses.replace(self, request=dataclasses.replace(self.request, take=attributes))

    def with_arguments(self) -> Function:
        """Return ``(result, arguments)``: the positional arguments as the call left them (None
        for one that is not plain data)."""
        return dataclasses.replace(self, request=dataclasses.replace(self.request, arguments=True))


class Student:
    """The student's notebook, as a hidden check sees it: ``student.NAME(...)`` calls ``NAME``."""

    def __getattr__(self, name: str) -> Function:
        if name.startswith("__"):
            raise AttributeError(name)
        return Function(Request(name))


student = Student()


def kernel(name: str) -> KernelName:
    """An argument that is the notebook's own ``name`` (a model trained in the notebook)."""
    return KernelName(name)


def secret_rng() -> np.random.Generator:
    """A generator seeded from the operating system's entropy: new inputs every run."""
    return np.random.default_rng(secrets.randbits(128))


def answer_of(text: str, name: str) -> Any:
    """The value in a kernel's answer to a call of ``name``.

    Raises
    ------
    StudentError
        If the student's code raised, or its answer is not plain data.
    """
    try:
        body = plain.read(text)
        if type(body) is dict and set(body) == {"error"} and type(body["error"]) is dict:
            error = body["error"]
            said = (str(error.get(key, ""))[:callee.ERROR_CHARS] for key in ("name", "value", "traceback"))
            raise StudentError(*said)
        if type(body) is not dict or "value" not in body or set(body) - {"value", "arguments"}:
            raise plain.PlainDataError("an answer not in the plain data format")
        value = plain.decode(body["value"])
        return (value, plain.decode(body["arguments"])) if "arguments" in body else value
    except plain.PlainDataError as err:
        raise StudentError("PlainDataError", f"{name} gave {err}, which the grader cannot read") from None


def close(got: Any, expected: Any, atol: float = 0.0, rtol: float = 0.0) -> bool:
    """Whether a student's numbers (plain data) equal the kit's within ``atol + rtol·|kit|``,
    in the same shape; False (never an error) for anything else, since an answer of the wrong
    kind is a wrong answer. NaN matches NaN, and infinities of the same sign match."""
    try:
        mine, kit = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
        return mine.shape == kit.shape and bool(np.allclose(mine, kit, rtol=rtol, atol=atol, equal_nan=True))
    except (TypeError, ValueError, OverflowError):
        return False


def same(got: Any, expected: Any) -> bool:
    """Whether a student's answer (plain data) equals the kit's exactly, as text, item by item:
    arrays and lists compare by their items (``np.str_("pos")`` equals ``"pos"``), in order and
    shape; False (never an error) for anything else."""
    try:
        mine, kit = np.asarray(got, dtype=object), np.asarray(expected, dtype=object)
        return mine.shape == kit.shape and [str(v) for v in mine.ravel()] == [str(v) for v in kit.ravel()]
    except (TypeError, ValueError):
        return False


def no_answer(name: str) -> str:
    """The answer to a call that the kernel finished without answering (its way of
    answering was replaced): an error of the student's code."""
    return json.dumps({"error": {"name": "RuntimeError", "value": f"the notebook gave no answer when "
                                 f"{name} was called (was the kit's way of calling it replaced?)"}})


_recorded: ContextVar[list[str] | None] = ContextVar("recorded", default=None)


def record(value: Any) -> None:
    """Hand ``value`` (JSON data: lists, strings, numbers) to the grader that runs this check,
    beside what it prints: ``kit bakeoff`` reads the predictions it collected this way. The
    last value recorded by a check is the one kept.

    Raises
    ------
    TypeError, ValueError
        If ``value`` is not JSON data.
    """
    text = json.dumps(value)
    recorded = _recorded.get()
    if recorded is not None:
        recorded.append(text)


def run(source: str, channel: Channel | None = None, recorded: list[str] | None = None) -> str:
    """Execute a hidden check's code here, calls to ``student`` going through ``channel``
    (default: this process's notebook), and return what it printed; what it ``record``-s is
    appended to ``recorded`` as JSON text (dropped when None).

    Raises
    ------
    StudentError
        What a call of the student's code raised (the check stops there, as a cell would).
    Exception
        Whatever else the check's own code raised (an answer it could not use).
    """
    printed = io.StringIO()
    token = _recorded.set(recorded)
    try:
        with calling(channel or local_call), contextlib.redirect_stdout(printed):
            exec(compile(source, "<hidden check>", "exec"), {"__name__": "__hidden_check__"})  # noqa: S102
    finally:
        _recorded.reset(token)
    return printed.getvalue()
