"""helpers.syntax: a parse that no other thread's parse can break."""

from __future__ import annotations

import ast
import gc
import sys
import threading
from collections.abc import Callable

import pytest

from helpers import syntax
from helpers.errors import InputError

SOURCE = "\n".join(f"def f{i}(a, b):\n    return [x + y * {i} for x in a for y in b if x]" for i in range(50))
#: A literal as large, for ``ast.literal_eval``.
LITERAL = repr([[i, str(i), (i, i + 1.5)] for i in range(200)])
#: How long a paused parse waits at most for the other thread's: far longer than a parse takes,
#: even on a busy machine, so that the other one has finished when the first goes on, unless a
#: lock holds it back (then the wait ends here, not in a deadlock). Passing runs never wait it.
PAUSE_SECONDS = 30.0
#: The collection inside ``ast.parse`` that pauses it: one well inside the building of the tree
#: (the first ones come before it).
PAUSE_AT = 10
#: The first CPython 3.11 release whose tree builder keeps its count per call (gh-106905).
RACE_FIXED_IN = (3, 11, 8)
#: How many Python calls deeper the other thread parses (CPython 3.11 before 3.11.8 starts the
#: count of the tree being built from the calling thread's depth).
DEEPER = 10


def _deeper(depth: int, then: Callable[[], object]) -> object:
    return then() if depth == 0 else _deeper(depth - 1, then)


def _parse_while_another_thread_parses(parse: Callable[[str], object], other_parse: Callable[[str], object],
                                       other_source: str = SOURCE) -> tuple[list[BaseException], bool]:
    """Parse ``SOURCE`` here with ``parse``, collecting garbage at every allocation; the
    ``PAUSE_AT``-th collection that starts inside ``ast.parse`` lets another thread call
    ``other_parse(other_source)`` (deeper in its stack) and waits for it. Returns what either
    raised, and whether the first parse paused."""
    started, finished = threading.Event(), threading.Event()
    raised: list[BaseException] = []
    inside = []

    def pause(phase: str, info: dict) -> None:
        if phase == "start" and sys._getframe(1).f_code is ast.parse.__code__:
            inside.append(phase)
            if len(inside) == PAUSE_AT:
                started.set()
                finished.wait(PAUSE_SECONDS)

    def other() -> None:
        started.wait()
        try:
            _deeper(DEEPER, lambda: other_parse(other_source))
        except BaseException as err:  # noqa: BLE001 - the test reports it
            raised.append(err)
        finally:
            finished.set()

    thread = threading.Thread(target=other)
    thread.start()
    threshold = gc.get_threshold()
    gc.collect()
    gc.callbacks.append(pause)
    gc.set_threshold(1)
    try:
        parse(SOURCE)
    except BaseException as err:  # noqa: BLE001
        raised.append(err)
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(pause)
        started.set()
        thread.join()
    return raised, len(inside) >= PAUSE_AT


def test_the_test_pauses_a_plain_parse_and_breaks_it_where_python_has_the_race():
    raised, paused = _parse_while_another_thread_parses(ast.parse, ast.parse)
    assert paused, "no garbage collection started inside ast.parse"
    if sys.version_info < RACE_FIXED_IN:
        assert [type(err) for err in raised] == [SystemError]


@pytest.mark.parametrize(("other_parse", "other_source"),
                         [(syntax.parse, SOURCE), (ast.parse, SOURCE), (ast.literal_eval, LITERAL)],
                         ids=["kit", "ast.parse", "literal_eval"])
def test_a_parse_builds_its_tree_whatever_another_thread_parses_meanwhile(other_parse, other_source):
    """Collection held off keeps a plain parse elsewhere out of it; the lock alone would not."""
    raised, paused = _parse_while_another_thread_parses(syntax.parse, other_parse, other_source)
    assert raised == []
    assert not paused


def test_parse_returns_what_ast_parse_returns_and_raises_what_it_raises():
    assert ast.dump(syntax.parse(SOURCE)) == ast.dump(compile(SOURCE, "<unknown>", "exec", ast.PyCF_ONLY_AST))
    with pytest.raises(SyntaxError):
        syntax.parse("def (")
    for unparsable in ("def (", "x = 1\0", "x = '\ud800'", "-" * 100_000 + "1", "a" + ".b" * 200_000):
        with pytest.raises(syntax.UNPARSABLE):
            syntax.parse(unparsable)
    with pytest.raises(InputError, match="must be a str"):
        syntax.parse(b"x = 1")


def test_parse_leaves_garbage_collection_as_it_found_it():
    assert gc.isenabled()
    syntax.parse(SOURCE)
    assert gc.isenabled()
    gc.disable()
    try:
        syntax.parse(SOURCE)
        assert not gc.isenabled()
    finally:
        gc.enable()
