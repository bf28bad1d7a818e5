"""The kernel's side of a hidden check: call one of the notebook's functions, answer in plain data.

The grader (``hidden``) sends the kernel one request per call of a student's function: the
request names the function (and optionally a class to make first and a method of it), holds
the arguments (pickled by the grader, which is trusted: only the grader's data is unpickled,
in the kernel), and says what to send back. ``answer`` runs it on the notebook's names and
publishes the answer as one display message of type ``ANSWER_TYPE``: the value as plain data
(``plain.encode``), or the error the student's code raised. Nothing here is trusted by the
grader: student code can replace this module, and whatever it answers is only read as plain
data, as if the function had returned it.
"""

from __future__ import annotations

import base64
import json
import pickle
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any

from helpers.course.engine import plain
from helpers.exercises import one_line

#: The display message type that carries an answer back to the grader.
ANSWER_TYPE = "application/x-kit-hidden-answer"
#: How much of an error's message and traceback is sent back.
ERROR_CHARS = 4000


@dataclass(frozen=True)
class KernelName:
    """An argument that is one of the notebook's own names (a model the notebook trained)."""

    name: str


@dataclass(frozen=True)
class Request:
    """One call of a student's function, as the grader asks for it.

    ``name`` is the notebook's name to call; with ``method``, ``name()`` is made first and its
    ``method`` called. ``take`` is an attribute path read from the result (``"dv.vectors"``);
    with ``arguments``, the arguments are sent back too, as they are after the call.
    """

    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    method: str = ""
    take: str = ""
    arguments: bool = False

    def pack(self) -> str:
        """This request as text for the kernel."""
        return base64.b64encode(pickle.dumps(self)).decode("ascii")


def answer(packed: str) -> None:
    """Run a packed ``Request`` on the notebook's names and publish its answer (in the kernel)."""
    from IPython.display import publish_display_data

    request = pickle.loads(base64.b64decode(packed))  # the grader's own data
    publish_display_data({ANSWER_TYPE: respond(request, notebook_names())})


def notebook_names() -> dict[str, Any]:
    """The running notebook's names (its kernel's user namespace)."""
    from IPython import get_ipython

    shell = get_ipython()
    return shell.user_ns if shell is not None else vars(sys.modules["__main__"])


def respond(request: Request, names: dict[str, Any]) -> str:
    """The answer to ``request`` run on ``names``, as JSON: ``{"value": ...}`` (plain data,
    with ``"arguments"`` when asked) or ``{"error": {"name", "value", "traceback"}}``."""
    try:
        args = tuple(_resolved(a, names) for a in request.args)
        kwargs = {k: _resolved(v, names) for k, v in request.kwargs.items()}
        if request.name not in names:
            raise NameError(f"name {request.name!r} is not defined", name=request.name)
        target = names[request.name]
        if request.method:
            target = getattr(target(), request.method)
        result = target(*args, **kwargs)
        for attribute in filter(None, request.take.split(".")):
            result = getattr(result, attribute)
        body = {"value": plain.encode(result)}
        if request.arguments:
            body["arguments"] = {"list": [_plain_or_none(a) for a in args]}
        return json.dumps(body)
    except plain.PlainDataError as err:
        return _error("PlainDataError", f"{request.name} returned {err}, which is not plain data "
                      "(numbers, text, lists, dicts, numpy arrays, sparse matrices)", "")
    except BaseException as err:  # noqa: BLE001 -- the student's error, whatever it is, is the answer
        return _error(type(err).__name__, _said(err), _shown(err))


def _plain_or_none(argument: Any) -> Any:
    """An argument as plain data, or None where it is none (a random generator passed in)."""
    try:
        return plain.encode(argument)
    except plain.PlainDataError:
        return None


def _resolved(argument: Any, names: dict[str, Any]) -> Any:
    if isinstance(argument, KernelName):
        if argument.name not in names:
            raise NameError(f"name {argument.name!r} is not defined: run the cells above first",
                            name=argument.name)
        return names[argument.name]
    return argument


def _said(error: BaseException) -> str:
    try:
        return str(error)[:ERROR_CHARS]
    except BaseException:  # noqa: BLE001 -- a message that cannot be shown is said so
        return "(a message that could not be shown)"


def _shown(error: BaseException) -> str:
    """The error as the notebook shows it: the frames of the student's code (not this module's),
    then its line (one line for an unfinished exercise, as the kernel's display has it)."""
    try:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename != __file__]
        line = one_line(error) or f"{type(error).__name__}: {_said(error)}"
        return ("".join(traceback.format_list(frames)) + line)[-ERROR_CHARS:]
    except BaseException:  # noqa: BLE001
        return ""


def _error(name: str, value: str, where: str) -> str:
    return json.dumps({"error": {"name": name, "value": value, "traceback": where}})
