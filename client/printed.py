"""Free text printed on the terminal outside the full screen: after it, and by the commands
that have none (the resume question, errors, hints).

A terminal breaks a long line at its last column, mid-word: "within sec" / "onds", and a
command to copy split across rows (a newcomer review). Prose is wrapped here at spaces to the
terminal's width, measured in columns (``client.width``: a CJK name's characters take two
each), and each command stands alone on an indented row, whole even if wider.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from typing import TextIO

from client.width import wrap

INDENT = "  "


class Command(str):
    """A command to copy: printed alone on an indented row and never broken."""


def rows(parts: Iterable[str], width: int | None) -> list[str]:
    """``parts`` as printed rows: prose wrapped between words to ``width`` columns (a word wider
    than that, a URL say, stays whole; None: not wrapped), each ``Command`` on an indented
    row of its own."""
    printed: list[str] = []
    for part in parts:
        if isinstance(part, Command):
            printed.append(INDENT + part)
            continue
        for line in part.split("\n"):
            if width is None:
                printed.append(line)
                continue
            printed += wrap(line, max(width, 20), indent="", cut=False)
    return printed


def as_lines(parts: Iterable[str]) -> list[str]:
    """``parts`` one a line, commands indented, for a log that wraps lines itself."""
    return [INDENT + part if isinstance(part, Command) else part for part in parts]


def terminal_width(out: TextIO) -> int | None:
    """The columns of the terminal ``out`` shows on (``COLUMNS`` if set); None when it is a
    file or a pipe: what reads it gets each paragraph on one line."""
    try:
        if not out.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    return shutil.get_terminal_size().columns


def say(out: TextIO, *parts: str, width: int | None = None, end: str = "\n") -> None:
    """Print ``parts`` wrapped to ``width`` (by default the terminal's, if ``out`` is one);
    ``end`` after the last row (a space after a question, for the answer)."""
    out.write("\n".join(rows(parts, width or terminal_width(out))) + end)
    out.flush()
