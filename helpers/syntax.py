"""Python source parsed into a tree, from any thread.

CPython 3.11 before 3.11.8 keeps the depth of the tree it is building in state shared by every
thread, and sets it afresh at the start of each ``ast.parse`` (CPython issue gh-106905). The
builder runs no Python code of its own, except when one of its allocations starts a garbage
collection: the finalizers and callbacks that runs are Python code, and another thread may take
over there. If that thread parses too, the first parse raises ``SystemError: AST constructor
recursion depth mismatch`` on valid code. ``kit grade`` grades several notebooks in threads,
each of which parses the code it grades: every parse of the kit goes through :func:`parse`,
which holds garbage collection off while it builds the tree (so no other thread runs inside it),
one parse at a time (so that no two turn collection off and on again out of step).
"""

from __future__ import annotations

import ast
import gc
import threading

from helpers.errors import InputError

_PARSING = threading.Lock()


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, safe to call from several threads at once.

    Parameters
    ----------
    source : str
        Python code.

    Returns
    -------
    ast.Module

    Raises
    ------
    InputError
        ``source`` is not a string.
    SyntaxError, ValueError, RecursionError, MemoryError
        As ``ast.parse``: the code does not parse (a NUL byte, too deeply nested).
    """
    if not isinstance(source, str):
        raise InputError(f"parse: source must be a str of Python code, not {type(source).__name__}.")
    with _PARSING:
        collecting = gc.isenabled()
        gc.disable()
        try:
            return ast.parse(source)
        finally:
            if collecting:
                gc.enable()
