"""Text measured in terminal columns, not characters: a CJK character or an emoji takes two.

``str.ljust``, ``len`` and ``textwrap`` count characters, so a name or a chat line with wide
characters overflowed its column and was wrapped mid-word by the terminal, its continuation
without the indent. prompt_toolkit's ``get_cwidth`` knows each character's width.
"""

from __future__ import annotations

import re

from prompt_toolkit.utils import get_cwidth

_TOKENS = re.compile(r" +|[^ ]")


def columns(text: str) -> int:
    return get_cwidth(text)


def clip(text: str, width: int, ellipsis: str = "…") -> str:
    """``text`` cut to ``width`` columns, ending with ``ellipsis`` when cut."""
    if get_cwidth(text) <= width:
        return text
    room = max(0, width - get_cwidth(ellipsis))
    kept, used = [], 0
    for char in text:
        used += get_cwidth(char)
        if used > room:
            break
        kept.append(char)
    return "".join(kept) + ellipsis


_NUMBERED = re.compile(r"^(.*?)( \(\d+\))$")
"""A name's number mark: the server tells a room's computer seats apart by it ("Computer L3
(2)", PROTOCOL.md section 17a)."""


def clip_name(name: str, width: int, ellipsis: str = "…") -> str:
    """A player's name cut to ``width`` columns, keeping its number mark: "Computer L3 (2)"
    in 11 columns is "Comput… (2)", not "Computer L…", the same as its seat's neighbours."""
    numbered = _NUMBERED.match(name)
    if get_cwidth(name) <= width or numbered is None:
        return clip(name, width, ellipsis)
    head, mark = numbered.groups()
    if get_cwidth(mark) + get_cwidth(ellipsis) >= width:
        return clip(name, width, ellipsis)
    return clip(head, width - get_cwidth(mark), ellipsis) + mark


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` columns (``ljust`` by display width)."""
    return text + " " * max(0, width - get_cwidth(text))


def wrap(text: str, width: int, indent: str = "  ", cut: bool = True) -> list[str]:
    """``text`` in rows of ``width`` columns at most, broken between words (and between
    wide characters, which are written without spaces), each row after a paragraph's first
    starting with ``indent``; a word longer than a row is cut where the row ends, or with
    ``cut`` false has a row of its own, whole (a URL to copy)."""
    rows: list[str] = []
    for paragraph in text.split("\n"):
        rows += _wrap_paragraph(paragraph, max(width, get_cwidth(indent) + 2), indent, cut)
    return rows


def _wrap_paragraph(paragraph: str, width: int, indent: str, cut: bool) -> list[str]:
    rows: list[str] = []
    row, space = "", ""
    for word in _words(paragraph):
        if word.startswith(" "):
            space = word
            continue
        if get_cwidth(row + space + word) <= width:
            row += space + word
        elif not row.strip():
            row += word  # the row holds nothing yet: the word is cut below (with `cut`)
        else:
            rows.append(row)
            row = indent + word
        space = ""
        while cut and get_cwidth(row) > width:  # a word wider than the row
            head = clip(row, width, ellipsis="")
            rows.append(head)
            row = indent + row[len(head) :]
    rows.append(row)
    return rows


def _words(text: str) -> list[str]:
    """Runs of spaces, words, and each wide character alone (a place to break)."""
    words: list[str] = []
    for token in _TOKENS.findall(text):
        narrow = not token.startswith(" ") and get_cwidth(token) == 1
        if narrow and words and not words[-1].startswith(" ") and get_cwidth(words[-1][-1]) == 1:
            words[-1] += token
        else:
            words.append(token)
    return words
