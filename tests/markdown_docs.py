"""What the project's Markdown files say, for the tests: their commands, `kit` sub-commands and links."""

from __future__ import annotations

import argparse
import re
import shlex

_FENCE = re.compile(r"^[ \t]*```(?P<lang>[a-z]*)\n(?P<body>.*?)\n[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"(`+)(?P<body>.+?)\1", re.DOTALL)
_KIT = re.compile(r"(?:^|[\s;&|(])kit\s+(?P<command>[a-z][a-z0-9-]*)")
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*\s*$", re.MULTILINE)
_SEPARATORS = re.compile(r"&&|\|\||[;|]")
_WORD = re.compile(r"[\w.-]*\w")


def bash_blocks(text: str) -> list[str]:
    """The bodies of the ```bash code blocks, in order."""
    return [m["body"] for m in _FENCE.finditer(text) if m["lang"] == "bash"]


def commands(block: str) -> list[list[str]]:
    """The simple commands of a bash block, as words, variable assignments before them left out."""
    found = []
    for part in _SEPARATORS.split(" ".join(block.split("\\\n"))):
        words = shlex.split(part)
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            words = words[1:]
        if words:
            found.append(words)
    return found


def code(text: str) -> list[str]:
    """Every piece of code in the text: code blocks, then inline code spans."""
    blocks = [m["body"] for m in _FENCE.finditer(text)]
    return blocks + [m["body"] for m in _INLINE.finditer(_FENCE.sub("", text))]


def kit_commands(text: str) -> set[str]:
    """The sub-commands of every ``kit SUBCOMMAND`` the text's code names."""
    return {m["command"] for piece in code(text) for m in _KIT.finditer(piece)}


def parser_commands(parser: argparse.ArgumentParser) -> set[str]:
    """The sub-commands of an argparse parser."""
    return {name for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name in action.choices}


def relative_links(text: str) -> list[tuple[str, str]]:
    """Each link that is not a URL, as (path, anchor); an empty path is the file itself."""
    found = []
    for m in _LINK.finditer(_FENCE.sub("", text)):
        target = m["target"]
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        found.append((path, anchor))
    return found


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the text's headings (``## The practical's own cost`` ->
    ``the-practicals-own-cost``)."""
    titles = [m["title"] for m in _HEADING.finditer(_FENCE.sub("", text))]
    return {re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-") for title in titles}


def shared_runs(first: str, second: str, words: int) -> set[str]:
    """The runs of ``words`` consecutive words that both texts hold (code blocks left out; link
    targets, case, punctuation, Markdown marks and spacing ignored): a passage copied from one
    into the other, even with a comma or a mark changed."""
    def runs(text: str) -> set[str]:
        found = _WORD.findall(_LINK.sub("]", _FENCE.sub("", text)).lower())
        return {" ".join(found[i:i + words]) for i in range(len(found) - words + 1)}

    return runs(first) & runs(second)
