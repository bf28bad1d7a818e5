"""The kit's one channel for diagnostics: the ``kit`` logger, on stderr, between progress bars.

What the user should know while the kit works goes through ``LOGGER``: ``info`` for what it
is doing or did (preparing a notebook, a file set aside), ``warning`` for what is off while
the work goes on (a record skipped, an override that matches nothing, no sandbox). Results a
command was asked for go to stdout from the command line (``helpers.cli``), never through
here. Each message is one line, written with ``tqdm.write`` so that it does not break a
progress bar, to the ``sys.stderr`` of the moment (a test that captures stderr sees it).

The command line sets the level (``kit --quiet``: warnings only; ``kit --verbose``: debug);
elsewhere (a notebook, a script) info and above are shown.
"""

from __future__ import annotations

import logging
import sys

from tqdm import tqdm

LOGGER = logging.getLogger("kit")
#: ``kit --quiet``, the default, ``kit --verbose``.
QUIET, NORMAL, VERBOSE = logging.WARNING, logging.INFO, logging.DEBUG


class _BetweenBars(logging.Handler):
    """Each record as one line on the current ``sys.stderr``, between tqdm's bars."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # a closed stream must not turn a diagnostic into a crash
            self.handleError(record)


def set_level(level: int) -> None:
    """Show the kit's diagnostics from ``level`` up (``QUIET``, ``NORMAL`` or ``VERBOSE``)."""
    LOGGER.setLevel(level)


if not LOGGER.handlers:  # one handler, however often the module is reloaded
    LOGGER.addHandler(_BetweenBars())
    LOGGER.propagate = False  # the kit's lines are the kit's: not repeated by a root handler
    LOGGER.setLevel(NORMAL)
