"""Names and chat lines as players see them: something visible, no pile of accents.

A name made only of characters that draw nothing (a Hangul filler U+3164, the
blank braille pattern U+2800, spaces, format characters, lone combining marks)
would show as an empty seat; hundreds of stacked combining marks ("zalgo")
draw over the lines around them. Both are refused with ``invalid_field``.
"""

from __future__ import annotations

import re
import unicodedata

MAX_MARKS = 2
"""Combining marks allowed on one character (enough for Vietnamese and Indic scripts)."""
_INVISIBLE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Mc", "Me"}
_BLANK_LETTERS = {
    "\u115f",  # Hangul choseong filler
    "\u1160",  # Hangul jungseong filler
    "\u3164",  # Hangul filler
    "\uffa0",  # halfwidth Hangul filler
    "\u2800",  # braille pattern blank
    "\u180e",  # Mongolian vowel separator
    "\u17b4",  # Khmer vowel inherent aq
    "\u17b5",  # Khmer vowel inherent aa
}
"""Characters Unicode calls letters or symbols that nonetheless draw nothing."""


_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # a control sequence: colours, cursor moves
    r"|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # an operating system command: a title
    r"|\x1b[ -/]*[0-~]"  # the other escape sequences, a final character after the ESC
)
"""Terminal escape sequences (ECMA-48), to be removed whole: removing only their ESC, a
control character, left ``"[31mred"`` of ``"\x1b[31mred"`` (an outside review)."""


def clean(text: str) -> str:
    """``text`` without terminal escape sequences, non-printable characters and surrounding
    whitespace."""
    return "".join(ch for ch in _ESCAPES.sub("", text) if ch.isprintable()).strip()


def visible(ch: str) -> bool:
    return ch not in _BLANK_LETTERS and unicodedata.category(ch) not in _INVISIBLE_CATEGORIES


def problem(text: str) -> str | None:
    """Why ``text`` (already cleaned) cannot be shown, or None when it can."""
    if not any(visible(ch) for ch in text):
        return "must have a visible character"
    marks = 0
    for ch in text:
        marks = marks + 1 if _is_mark(ch) else 0
        if marks > MAX_MARKS:
            return f"may have at most {MAX_MARKS} combining marks on one character"
    return None


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch) in ("Mn", "Mc", "Me")
