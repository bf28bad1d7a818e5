"""Unfinished exercises in a notebook: one line that says so, instead of a traceback.

A released exercise is a stub that raises ``NotImplementedError("exercise N.M")``. In the
kit's kernel (``helpers.course.student.kernel``, which ``kit lab``, Binder, grading and the
kit's runs start; ``show_unfinished_briefly`` does the same in any IPython kernel) that error
shows as the single line ``NotImplementedError: exercise N.M not done yet``, and a later
cell that misses a name the stopped cell was to define says so (``NameError: name 'x' is not
defined: the cell that defines it stopped on exercise N.M, not done yet when it ran; ...``).
The kit's own errors (``KitError``, ``InputError``), whose message says what to fix, are one
line too. Every other error keeps its usual traceback, and so does any error if working this
out fails.

An error raised while importing a module of the kit's library (a ``SyntaxError`` in an
edited ``helpers/text.py``) keeps its traceback, and a later cell that misses a name the
stopped cell was to define names it (``NameError: name 'X_train' is not defined: the cell
that defines it stopped on SyntaxError in the kit's library (helpers/text.py, line 12:
invalid syntax)``), which grading and ``kit check`` show as that exercise's error.

The released notebooks tag the cells from the first exercise on ``raises-exception``, so
JupyterLab's Run All goes on past these errors to the end; grading removes that tag, so a
check that fails here still fails there.
"""

from __future__ import annotations

import ast
import json
import linecache
import re
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any, TypeGuard, cast

from helpers import syntax
from helpers.errors import KitError

NOT_DONE = "not done yet"
STUB_MESSAGE = re.compile(r"exercise (?P<exercise>\d+\.\d+)")
#: How ``missing_because`` names the exercise a missing name waits for (grading reads it).
STOPPED_ON = re.compile(rf"stopped on exercise (?P<exercise>\d+\.\d+), {NOT_DONE}")

_needs: dict[str, str] = {}  # a name a cell stopped on a stub before defining -> that exercise
#: The kit's library: the folder of this package.
LIBRARY = Path(__file__).resolve().parent
#: The most characters of an error of the library that ``library_error`` keeps.
LIBRARY_ERROR_CHARS = 80

_broken: dict[str, str] = {}  # a name a cell stopped on an error of the library before defining -> it
#: The saved notebook this kernel runs for in the lab, when the kit's kernel knows it
#: (``helpers.course.student.kernel``): a missing name one of its cells defines gets a hint.
lab_notebook: Path | None = None


def unfinished(error: BaseException) -> str | None:
    """The exercise a stub's error names (``"1.1"``), or None for any other error."""
    if type(error) is not NotImplementedError:
        return None
    found = STUB_MESSAGE.fullmatch(str(error))
    return found["exercise"] if found else None


def not_done(exercise: str) -> str:
    """The line a stub's error shows: ``NotImplementedError: exercise N.M not done yet``."""
    return f"NotImplementedError: exercise {exercise} {NOT_DONE}"


def defined_names(source: str) -> set[str]:
    """The names a cell's code defines at its top level: assigned, imported, ``def``, ``class``.

    Names local to a function, class or comprehension are not the cell's; a cell that does
    not parse defines nothing.
    """
    try:
        tree = syntax.parse(source)
    except syntax.UNPARSABLE:
        return set()
    names: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif not isinstance(node, _OWN_SCOPES):
            pending.extend(ast.iter_child_nodes(node))
    return names


_OWN_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def missing_because(error: BaseException, needs: dict[str, str]) -> str | None:
    """The line for a ``NameError`` on a name a cell stopped on a stub before defining, else None.

    Parameters
    ----------
    error : BaseException
        What a cell raised.
    needs : dict
        Name -> the unfinished exercise that stopped the cell meant to define it.
    """
    name = getattr(error, "name", None) if type(error) is NameError else None
    if not isinstance(name, str) or name not in needs:
        return None
    return (f"NameError: name {name!r} is not defined: the cell that defines it stopped on "
            f"exercise {needs[name]}, {NOT_DONE} when it ran; run that cell again once it is done")


def defined_in_notebook(name: str, notebook: Path, running: str) -> str | None:
    """The first line of the cell above the running one, in the saved ``notebook``, that
    defines ``name`` at its top level.

    Parameters
    ----------
    name : str
        A name the running cell did not find.
    notebook : Path
        The notebook's saved file (the lab's, whose kernel this is).
    running : str
        The running cell's code: it must be in the saved file, so that "above" means something,
        and must not define ``name`` itself (a name used before it is assigned is the
        student's own slip).

    Returns
    -------
    str or None
        That cell's first line; None when no cell above defines it, the running cell is not
        in the saved file (not saved yet) or the file cannot be read (a hint only).
    """
    if not isinstance(name, str) or not isinstance(running, str) or name in defined_names(running):
        return None
    try:
        cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
        code = ["".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                for cell in cells if cell.get("cell_type") == "code"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    sources = [source.strip() for source in code]  # IPython keeps a cell with a final newline
    if running.strip() not in sources:
        return None
    above = code[:sources.index(running.strip())]
    return next((source.strip().splitlines()[0] for source in above if name in defined_names(source)), None)


def defined_above(error: BaseException, notebook: Path | None, running: str,
                  tb: TracebackType | None = None) -> str | None:
    """The line for a ``NameError`` raised at the running cell's top level on a name that a
    cell above it defines (``defined_in_notebook``): the kernel has not run that cell, or was
    restarted since; else None (the usual traceback, which shows where a name in a function
    was missed).

    Parameters
    ----------
    error : BaseException
        What the cell raised.
    notebook : Path or None
        The lab's saved notebook (``lab_notebook``); None outside the lab.
    running : str
        The running cell's code.
    tb : traceback, optional
        The error's traceback: its innermost frame must be the cell's own top level.
    """
    name = getattr(error, "name", None) if type(error) is NameError else None
    frames = list(traceback.walk_tb(tb))
    in_a_function = bool(frames) and frames[-1][0].f_code.co_name != "<module>"
    if notebook is None or not isinstance(name, str) or in_a_function:
        return None
    first_line = defined_in_notebook(name, notebook, running)
    if first_line is None:
        return None
    return (f"NameError: name {name!r} is not defined: the cell above that starts `{first_line[:60]}` "
            "defines it; run the cells above first (a restarted kernel has forgotten them)")


def one_line(error: BaseException) -> str | None:
    """The one line a notebook shows for ``error`` in this kernel (an unfinished exercise, or a
    name a cell stopped on one before defining), else None (the usual traceback)."""
    exercise = unfinished(error)
    return not_done(exercise) if exercise else missing_because(error, _needs)


def waits_for(error: BaseException) -> str | None:
    """For a ``NameError`` on a name a cell stopped on a stub before defining (in this
    kernel), the exercise that stopped it; else None."""
    name = getattr(error, "name", None) if type(error) is NameError else None
    return _needs.get(name) if isinstance(name, str) else None


def library_error(error: BaseException, tb: TracebackType | None) -> str | None:
    """What and where, for an error raised while importing a module of the kit's library (one
    that does not compile, or whose top-level code raised), else None.

    Parameters
    ----------
    error : BaseException
        What a cell raised.
    tb : traceback or None
        Its traceback.

    Returns
    -------
    str or None
        ``SyntaxError in the kit's library (helpers/text.py, line 12: invalid syntax)``.
    """
    if isinstance(error, SyntaxError) and _in_library(error.filename):
        filename, line, detail = error.filename, error.lineno, error.msg
    else:
        places = [(frame.f_code.co_filename, line) for frame, line in traceback.walk_tb(tb)
                  if frame.f_code.co_name == "<module>" and _in_library(frame.f_code.co_filename)]
        if not places:
            return None
        (filename, line), detail = places[-1], str(error)
    where = Path(filename).resolve().relative_to(LIBRARY.parent).as_posix()
    return (f"{type(error).__name__} in the kit's library ({where}, line {line}: "
            f"{detail[:LIBRARY_ERROR_CHARS]})")


def _in_library(filename: str | None) -> TypeGuard[str]:
    if not filename:
        return False
    return Path(filename).resolve().is_relative_to(LIBRARY)


def missing_from_library(error: BaseException, broken: dict[str, str]) -> str | None:
    """The line for a ``NameError`` on a name a cell stopped on an error of the kit's library
    before defining, else None.

    Parameters
    ----------
    error : BaseException
        What a cell raised.
    broken : dict
        Name -> the error of the library (``library_error``) that stopped the cell meant to
        define it.
    """
    name = getattr(error, "name", None) if type(error) is NameError else None
    if not isinstance(name, str) or name not in broken:
        return None
    return f"NameError: name {name!r} is not defined: the cell that defines it stopped on {broken[name]}"


def _cell_source(tb: TracebackType | None) -> str:
    """The source of the notebook cell a traceback started in (IPython keeps it in linecache)."""
    while tb is not None and tb.tb_frame.f_code.co_name != "<module>":
        tb = tb.tb_next
    return "".join(linecache.getlines(tb.tb_frame.f_code.co_filename)) if tb is not None else ""


def _show(shell: Any, etype: type, value: BaseException, tb: TracebackType | None,
          tb_offset: int | None = None) -> None:
    try:
        lines = _lines(shell, etype, value, tb, tb_offset)
    except Exception:  # never lose the error: IPython would then show it as plain text only
        lines = None
    if lines is not None:
        cast(Any, value)._render_traceback_ = lambda: lines  # IPython shows these lines instead of its own
    # as IPython's own run_code does: a SyntaxError raised in running code (an import) keeps its frames
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)


def _lines(shell: Any, etype: type, value: BaseException, tb: TracebackType | None,
           tb_offset: int | None) -> list[str] | None:
    """What to show for an error: one line for an unfinished exercise or a kit error, else
    None (the usual)."""
    if isinstance(value, KitError):
        return [f"{type(value).__name__}: {value}"]
    cause = library_error(value, tb)
    if cause is not None:  # its traceback names the file; what the cell defines needs it
        _broken.update(dict.fromkeys(defined_names(_cell_source(tb)), cause))
        return None
    exercise = unfinished(value)
    line = not_done(exercise) if exercise else missing_because(value, _needs)
    if line is None:
        return _missing_from_library(value, tb) or _defined_above(value, tb)
    if exercise is None:
        # missing_because gave a line: only for a NameError on a name in _needs
        assert isinstance(value, NameError) and value.name is not None
        exercise = _needs[value.name]  # this cell stopped too: what it defines needs it as well
    _needs.update(dict.fromkeys(defined_names(_cell_source(tb)), exercise))
    return [line]


def _defined_above(value: BaseException, tb: TracebackType | None) -> list[str] | None:
    line = defined_above(value, lab_notebook, _cell_source(tb), tb)
    return [line] if line else None


def _missing_from_library(value: BaseException, tb: TracebackType | None) -> list[str] | None:
    """The line for a name an error of the library left undefined; what this cell defines
    then waits for that error too."""
    line = missing_from_library(value, _broken)
    if line is None:
        return None
    # missing_from_library gave a line: only for a NameError on a name in _broken
    assert isinstance(value, NameError) and value.name is not None
    _broken.update(dict.fromkeys(defined_names(_cell_source(tb)), _broken[value.name]))
    return [line]


def ipython_shell() -> Any | None:
    """The running IPython shell (a notebook's kernel), or None outside IPython."""
    ipython = sys.modules.get("IPython")  # not loaded: not a notebook, and too slow to load
    return ipython.get_ipython() if ipython is not None else None


def show_unfinished_briefly() -> bool:
    """In an IPython kernel, show stub errors as one line (see the module); True if installed."""
    shell = ipython_shell()
    if shell is None:
        return False
    # SyntaxError and ImportError: raised in importing the library, they stop a cell
    shell.set_custom_exc((NotImplementedError, NameError, KitError, SyntaxError, ImportError), _show)
    return True
