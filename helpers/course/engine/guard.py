"""Keep a graded kernel's hidden checks out of the student code's reach.

A hidden check has to call the student's functions, so it runs in the kernel their code
controls. Two things keep its code out of that code's hands:

- **Sealed cells.** The grader (``nbval_plugin --kit-guard``) sends each hidden check to the
  kernel sealed: the cell holds only its markers, its ``# Intent:`` line and
  ``sys.audit("kit.hidden", "<sealed code>")``, encrypted with a key made for the run. The
  kernel's audit hook (``install``), which holds the key and nothing else can reach, opens it
  and runs it in a copy of the notebook's names, under a file name no ``linecache``,
  ``In`` or history entry knows. The plain code never enters the kernel's input.
- **An audit hook** (``sys.addaudithook``: it cannot be removed) that refuses, with one
  clear ``PermissionError``, what would reach the hidden check's code while it runs: a frame
  (``sys._getframe``, ``inspect``, a traceback's ``tb_frame``, ``sys._current_frames``) taken
  by student code, at any time a tracer or profiler (``sys.settrace``, ``sys.setprofile``), a
  generator's frame, ``gc``'s object walks, ``ctypes`` and ``/proc`` (the process's memory and
  first environment, where the key's file name was), and code compiled under a library's file
  name (which would pass for library code).

What is the student's: the frame that asked, past the standard modules that ask for a caller
(``inspect``, ``traceback``, ``logging``, ``ctypes``, ``pathlib``...), when its file is not in
the standard library, the installed packages or the kit. Libraries keep their own uses
(pandas' warnings, ``namedtuple``, threadpoolctl's ``ctypes``).
"""

from __future__ import annotations

import base64
import builtins
import functools
import hashlib
import os
import re
import secrets
import sys
import sysconfig
import types
from pathlib import Path
from typing import Any, TextIO

from helpers.course.notebook.cells import hidden_block
from helpers.errors import KitError

#: The audit event a sealed hidden check raises with its sealed code.
HIDDEN_EVENT = "kit.hidden"
#: The environment variable naming the file that holds the run's key (read once, then deleted).
KEY_FILE_ENV = "KIT_GUARD_KEY_FILE"
KEY_BYTES, NONCE_BYTES = 32, 16
#: Events refused to student code while a hidden check runs: they hand out frames.
WHILE_HIDDEN = frozenset({"sys._getframe", "sys._current_frames"})
#: Events refused to student code at any time: a frame kept for later, a tracer that sees
#: every frame, a walk over every object (the hook's own key), raw memory.
ALWAYS = frozenset({"sys.settrace", "sys.setprofile", "gc.get_objects", "gc.get_referrers",
                    "gc.get_referents"})
#: Attributes whose reading hands out a frame (``object.__getattr__`` events).
FRAME_ATTRIBUTES = {"tb_frame": "always", "f_code": "while", "gi_frame": "always", "cr_frame": "always",
                    "ag_frame": "always"}
#: Standard modules that ask for frames, memory or files on their caller's behalf: the frame
#: that called them is the one that asked.
ON_BEHALF = ("inspect", "traceback", "logging", "dis", "bdb", "pdb", "cgitb", "ctypes", "pathlib",
             "shutil", "linecache", "tokenize", "codecs", "fileinput", "io", "_pyio")
#: How the hook tells the grader what it refused: a line on the running cell's stderr (the
#: stream ``install`` was given, held where student code cannot replace it), read by ``refusals``.
REFUSED = "kit guard refused: "
#: File name the opened hidden checks run under (not in ``linecache``).
HIDDEN_FILE = "<hidden check>"
_PROC = re.compile(r"^/proc/(self|thread-self|\d+)(/|$)")


def _tell(why: str, stream: TextIO | None) -> None:
    """Say on ``stream`` (else file descriptor 2) what was refused: caught or not, the grader sees it."""
    line = f"\n{REFUSED}{why}\n"
    try:
        if stream is None:
            os.write(2, line.encode("utf-8", "replace"))
        else:
            stream.write(line)
            stream.flush()
    except (OSError, ValueError):  # closed: the refusal itself still stands
        pass


def refusals(text: str) -> list[str]:
    """What the guard refused, from the stderr a cell showed (``REFUSED`` lines), each once."""
    found = [line.split(REFUSED, 1)[1].strip() for line in text.splitlines() if REFUSED in line]
    return list(dict.fromkeys(why[:80] for why in found if why))


def new_key() -> bytes:
    """A fresh random key for one run."""
    return secrets.token_bytes(KEY_BYTES)


def seal(code: str, key: bytes) -> str:
    """``code`` encrypted with ``key`` (SHAKE-256 keystream, a random nonce), as base64 text."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    data = code.encode("utf-8")
    return base64.b64encode(nonce + _xor(data, _stream(key, nonce, len(data)))).decode("ascii")


def unseal(sealed: str, key: bytes) -> str:
    """The code ``seal`` encrypted."""
    raw = base64.b64decode(sealed.encode("ascii"), validate=True)
    nonce, data = raw[:NONCE_BYTES], raw[NONCE_BYTES:]
    return _xor(data, _stream(key, nonce, len(data))).decode("utf-8")


def _stream(key: bytes, nonce: bytes, length: int) -> bytes:
    return hashlib.shake_256(key + nonce).digest(length)


def _xor(data: bytes, stream: bytes) -> bytes:
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")


def sealed_source(source: str, key: bytes) -> str:
    """A hidden-check cell's source as the kernel receives it: every line outside the hidden
    block, the block's markers and its ``# Intent:`` line, and the block's code sealed
    (``cells.hidden_block`` cuts it; a KitError without both markers)."""
    head, intent, code, tail = hidden_block(source)
    call = f'__import__("sys").audit({HIDDEN_EVENT!r}, {seal(chr(10).join(code), key)!r})'
    return "\n".join([*head, *intent, call, *tail])


def read_key() -> bytes:
    """The run's key, from the file ``KIT_GUARD_KEY_FILE`` names; the file and the variable
    are gone afterwards, before any student code runs."""
    path = os.environ.pop(KEY_FILE_ENV, "")
    if not path:
        raise KitError(f"{KEY_FILE_ENV} is not set: the guarded kernel runs only for grading.")
    key = Path(path).read_bytes()
    Path(path).unlink()
    if len(key) != KEY_BYTES:
        raise KitError(f"{path}: a guard key has {KEY_BYTES} bytes, not {len(key)}.")
    return key


def library_prefixes() -> tuple[str, ...]:
    """Where trusted code lives: the standard library, installed packages, the kit."""
    paths = sysconfig.get_paths()
    import helpers

    found = {paths[name] for name in ("stdlib", "platstdlib", "purelib", "platlib") if name in paths}
    found.add(str(Path(helpers.__file__).resolve().parent))
    found |= {str(Path(p).resolve()) for p in list(found)}
    return tuple(sorted(p.rstrip("/") + "/" for p in found)) + ("<frozen ",)


def _on_behalf_files() -> tuple[str, ...]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return tuple(str(stdlib / name) for name in ON_BEHALF)


def install(key: bytes, report: TextIO | None = None) -> None:
    """Add the audit hook that opens sealed hidden checks with ``key`` and refuses what would
    reach them (see the module docstring), saying so on ``report`` (the kernel's stderr
    stream; default file descriptor 2). Call it once, before any student code runs.

    Everything the hook uses is bound here, in its closure: student code that replaces this
    module's names, ``builtins`` or ``sys``'s functions changes nothing it does.
    """
    library, on_behalf = library_prefixes(), _on_behalf_files()
    always, while_hidden, attributes = ALWAYS, WHILE_HIDDEN, dict(FRAME_ATTRIBUTES)
    opened, tell, proc, hidden_event, hidden_file = unseal, _tell, _PROC, HIDDEN_EVENT, HIDDEN_FILE
    getframe, fsdecode, realpath, join, getcwd = sys._getframe, os.fsdecode, os.path.realpath, \
        os.path.join, os.getcwd
    compile_, exec_, dict_, str_, isinstance_, len_ = compile, exec, dict, str, isinstance, len
    type_, list_, issubclass_, next_ = type, list, issubclass, next
    function_, method_, partial_ = types.FunctionType, types.MethodType, functools.partial
    module_ = types.ModuleType
    module_dict = types.ModuleType.__dict__["__dict__"].__get__  # past any __dict__ a subclass defines
    modules, builtin_names = sys.modules, frozenset(vars(builtins))
    state = {"hidden": 0, "busy": False}

    def is_library(filename: str) -> bool:
        return str_.startswith(filename, library)

    def asker(frame: Any) -> Any:
        """The frame that asked: past the modules that ask on their caller's behalf."""
        while frame is not None and str_.startswith(frame.f_code.co_filename, on_behalf):
            frame = frame.f_back
        return frame

    def students(depth: int) -> bool:
        """Whether the frame ``depth`` levels up (past those asking on behalf) is student code."""
        frame = asker(getframe(depth))
        return frame is not None and not is_library(frame.f_code.co_filename)

    def proc_path(args: tuple) -> str:
        """The path an ``open`` event opens, resolved (``..``, links, the working folder),
        when it is in ``/proc``; else ""."""
        if not args or not isinstance_(args[0], str_ | bytes):
            return ""
        try:
            path = realpath(join(getcwd(), fsdecode(args[0])))
        except (OSError, ValueError):  # no working folder, a NUL in the name: open says so itself
            return ""
        return path if proc.match(path) else ""

    def refusal(event: str, args: tuple) -> str:
        if event == "sys.addaudithook":  # a hook of theirs would see the checks' code compiled
            return event
        if event in always or (event in while_hidden and state["hidden"]):
            return event if students(3) else ""
        if event == "object.__getattr__" and len_(args) == 2 and args[1] in attributes:
            when = attributes[args[1]]
            return args[1] if (when == "always" or state["hidden"]) and students(3) else ""
        if str_.startswith(event, "ctypes."):
            return "ctypes" if students(3) else ""
        path = proc_path(args) if event == "open" else ""
        if path:
            return path if students(3) else ""
        if event in ("compile", "code.__new__") and len_(args) >= 2 and type(args[1]) is str_ \
                and is_library(args[1]) and students(3):
            return f"a library's file name ({args[1]}) for its own code"
        return ""

    def students_code(value: Any) -> bool:
        """Whether ``value`` is a function (or a method or partial of one) compiled from the
        student's code; exact types only, so that no code of theirs runs."""
        if type_(value) is partial_:
            value = value.func
        if type_(value) is method_:
            value = value.__func__
        if type_(value) is not function_:
            return False
        filename = value.__code__.co_filename
        if filename == "<string>":  # exec'd: libraries do it too, under their module's name
            module = value.__module__  # settable to anything: compared only once known to be a str
            return type_(module) is not str_ or module in ("__main__", "builtins")
        return not is_library(filename)

    def replaced(names: dict) -> str:
        """The first library attribute that holds the student's code (``module.name``), or "".
        Keys are read only when they are exact strings: a key of theirs compares with their code."""
        found = [*list_(modules.items()), *list_(names.items())]
        for name, module in found:
            if type_(name) is not str_ or name in ("__main__", "__mp_main__") \
                    or not issubclass_(type_(module), module_):
                continue
            members = [(key, value) for key, value in list_(module_dict(module).items())
                       if type_(key) is str_]
            origin = next_((value for key, value in members if key == "__file__"), None)
            if type_(origin) is str_ and not is_library(origin):
                continue  # a module of the student's own
            for attribute, value in members:
                if students_code(value):
                    return f"{name}.{attribute}"
        return ""

    def run_hidden(sealed: Any) -> None:
        code = compile_(opened(str_(sealed), key), hidden_file, "exec")
        state["hidden"] += 1  # from here on, whatever the copy below runs of theirs is watched
        try:
            state["busy"] = True
            try:
                cell = getframe(2)
                names = {name: value for name, value in list_(dict_(cell.f_globals).items())
                         if type_(name) is str_ and name not in builtin_names}
                swapped = replaced(names)
            finally:
                state["busy"] = False
            if swapped:
                tell(f"{swapped} replaced", report)
                raise PermissionError(f"grading: student code replaced {swapped}, which the checks may "
                                      "use: the hidden check does not run")
            exec_(code, names)  # noqa: S102 - the grader's sealed check, in a copy of the names
        finally:
            state["hidden"] -= 1

    def hook(event: str, args: tuple) -> None:
        if event == hidden_event:
            run_hidden(args[0] if args else "")
            return
        if state["busy"]:
            return
        state["busy"] = True
        try:
            why = refusal(event, args)
        finally:
            state["busy"] = False
        if why:
            tell(why, report)
            raise PermissionError(f"grading: student code may not use {why} (it could reach the "
                                  "checks that grade it)")

    sys.addaudithook(hook)
