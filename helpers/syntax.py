"""Python source parsed into a tree, from any thread.

CPython 3.11 before 3.11.8 keeps the depth of the tree it is building in state shared by every
thread, and sets it afresh at the start of each ``ast.parse`` (CPython issue gh-106905). The
builder runs no Python code of its own, except when one of its allocations starts a garbage
collection: the finalizers and callbacks it runs are Python code, and another thread may take
over there. If that thread parses too, the first parse raises ``SystemError: AST constructor
recursion depth mismatch`` on valid code. ``kit grade`` grades several notebooks in threads,
each of which parses the code it grades: every parse of the kit goes through :func:`parse`,
which holds garbage collection off while it builds the tree (so no other thread runs inside it),
one parse at a time (so that no two turn collection off and on again out of step).

The protection is one way: a parse of the kit cannot be broken, but it can still break a parse
made elsewhere at the same moment without :func:`parse` (``ast.literal_eval``, or the caret
lines of a traceback formatted by Python 3.11 in another thread).
"""

from __future__ import annotations

import ast
import gc
import threading

from helpers.errors import InputError

#: What ``parse`` raises for code that does not parse: not Python (SyntaxError, a NUL byte
#: too), a lone surrogate (UnicodeEncodeError, a ValueError), nesting too deep (RecursionError,
#: MemoryError). Callers that read code they did not write catch these.
UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)

# Re-entrant: Python code that runs in this thread while it holds the lock, before the tree is
# built (an audit hook, a warning about an escape sequence), may parse too.
_PARSING = threading.RLock()


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
        As ``ast.parse``: the code does not parse (``UNPARSABLE``).
    """
    if not isinstance(source, str):
        raise InputError(f"parse: source must be a str of Python code, not {type(source).__name__}.")
    with _PARSING:
        collecting = gc.isenabled()
        try:
            gc.disable()
            return ast.parse(source)
        finally:
            if collecting:
                gc.enable()
