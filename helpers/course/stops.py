"""Stops: Ctrl-C and SIGTERM end a long command alike, cleaning up on the way out.

Ctrl-C raises ``KeyboardInterrupt`` in the main thread; SIGTERM (what ``kill`` and
``timeout`` send) would end Python at once, without a ``finally`` or a context manager's exit,
leaving the processes it started and its temporary folders behind. ``sigterm_raises`` turns
SIGTERM into ``Terminated``, a ``KeyboardInterrupt``, so every clean-up written for Ctrl-C
runs for it too; ``exit_status`` is the status a shell reports for either (130 or 143).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: Exit status after Ctrl-C: 128 + SIGINT, as shells report it.
INTERRUPTED = 128 + signal.SIGINT
#: Exit status after SIGTERM: 128 + SIGTERM.
TERMINATED = 128 + signal.SIGTERM


class Interrupted(KeyboardInterrupt):
    """A stop asked for from outside (Ctrl-C or SIGTERM), with the exit status it calls for."""

    def __init__(self, status: int = INTERRUPTED) -> None:
        super().__init__()
        self.status = status


class Terminated(Interrupted):
    """SIGTERM, raised like Ctrl-C's ``KeyboardInterrupt``."""

    def __init__(self) -> None:
        super().__init__(TERMINATED)


def exit_status(stop: KeyboardInterrupt) -> int:
    """The exit status a stop calls for: 143 after SIGTERM, 130 after Ctrl-C."""
    return stop.status if isinstance(stop, Interrupted) else INTERRUPTED


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises ``Terminated`` in the main thread (Python handles
    signals there only); the previous handler is back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
