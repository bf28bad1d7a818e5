"""A written answer's text: what a student wrote in an answer cell, apart from the question.

Kept free of imports, so that ``kit check``'s table (``student.progress``), which loads no
notebook library, and the answer sheets (``classroom.answers``) read answers one way.
"""

from __future__ import annotations

#: What the release puts where a written answer goes (``release``).
ANSWER_PLACEHOLDER = "YOUR ANSWER HERE"


def written_answer(source: str, released: str) -> str:
    """What the student wrote in an answer cell: its text without the question around the
    placeholder, and without the placeholder itself ('' for a cell left as released)."""
    before, _, after = (part.strip() for part in released.partition(ANSWER_PLACEHOLDER))
    text = source.strip()
    if before and text.startswith(before):
        text = text[len(before):]
    if after and text.endswith(after):
        text = text[:-len(after)]
    return text.replace(ANSWER_PLACEHOLDER, "").strip()
