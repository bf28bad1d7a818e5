"""Text from a student made safe to write: the one boundary every such text crosses.

A student's notebook may hold anything: a lone surrogate (``"\\ud800"``) that no UTF-8 file
or terminal takes, a file or folder name whose bytes are not UTF-8 (Python reads them as
surrogates, ``os.fsdecode``), terminal escape sequences that clear the instructor's screen or
retitle the window, a carriage return that overwrites a line, a bell, bidirectional overrides
that show text in another order than it is. Every name, cell id, answer, output and error the
kit writes into a file (grading records, feedback, CSV tables, answer sheets) or prints
passes through ``printable`` first, so no such input stops a class's grading or reaches an
instructor's screen raw.
"""

from __future__ import annotations

import re

#: What stands for a character no file can hold (a lone surrogate, an undecodable byte).
REPLACEMENT = "\ufffd"
#: Terminal escape sequences, removed whole: CSI (colours, cursor moves, clearing the screen;
#: ``ESC [`` or the 8-bit ``\x9b``), OSC (window titles, hyperlinks), DCS, SOS, PM and APC
#: strings (up to a bell, ``ESC \`` or the line's end), and the two-character escapes. Any
#: other C1 character goes alone, with the control characters.
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
                      r"|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?"
                      r"|\x1b[ -~]?")
#: Control characters but the tab and the line feed: C0, DEL and C1 (the carriage return,
#: the bell and backspace among them).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: Characters that reorder how text is shown (bidirectional marks, embeddings, overrides and
#: isolates): text that reads one way and is another.
_REORDERING = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def printable(text: str | bytes) -> str:
    """``text`` as it may be written to a UTF-8 file or a terminal.

    Lone surrogates (and the surrogates that stand for undecodable bytes in a file name)
    become ``REPLACEMENT``, as do bytes that are not UTF-8; terminal escape sequences,
    control characters and bidirectional reordering characters are removed. Tabs and line
    breaks are kept: a traceback or an answer keeps its lines.

    Parameters
    ----------
    text : str or bytes
        Any text from a student (bytes are read as UTF-8).

    Returns
    -------
    str
        The text without what a file or terminal cannot take or would act on.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = _SURROGATES.sub(REPLACEMENT, text)
    return _REORDERING.sub("", _CONTROLS.sub("", _ESCAPES.sub("", text)))
