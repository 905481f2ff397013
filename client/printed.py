"""Free text printed on the terminal outside the full screen: after it, and by the commands
that have none (the resume question, errors, hints).

A terminal breaks a long line at its last column, mid-word: "within sec" / "onds", and a
command to copy split across rows (a newcomer review). Prose is wrapped here at spaces to the
terminal's width, measured in columns (``client.width``: a CJK name's characters take two
each), and each command stands alone on an indented row; one wider than the terminal goes on
over more rows, broken between words with a shell's line continuation (``command_rows``), as
the full screen shows it: kept on one row, the terminal broke it mid-word, which a second
review read as broken ("anal" / "yse 1 --replay").
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from typing import TextIO

from client.width import columns, wrap

INDENT = "  "


class Command(str):
    """A command to copy: printed alone on an indented row and never broken."""


class ProseAndCommand(str):
    """A sentence ending in a command to copy: one line for a file or a pipe (what a script
    reads: "... joins with: quoridor join k3m9qr2xvb"), and on a terminal the prose wrapped
    with the command on rows of its own (``client.plain``)."""

    prose: str
    command: str

    def __new__(cls, prose: str, command: str) -> ProseAndCommand:
        said = super().__new__(cls, f"{prose} {command}")
        said.prose, said.command = prose, command
        return said


def rows(parts: Iterable[str], width: int | None) -> list[str]:
    """``parts`` as printed rows: prose wrapped between words to ``width`` columns (a word wider
    than that, a URL say, stays whole; None: not wrapped), each ``Command`` on an indented
    row of its own."""
    printed: list[str] = []
    for part in parts:
        if isinstance(part, Command):
            fits = width is None or columns(INDENT + part) <= width
            printed += [INDENT + part] if fits else command_rows(part, width or 0)
            continue
        for line in part.split("\n"):
            if width is None:
                printed.append(line)
                continue
            printed += wrap(line, max(width, 20), indent="", cut=False)
    return printed


def command_rows(command: str, width: int) -> list[str]:
    """A command to type, indented, on rows of ``width`` columns: broken between words with
    a shell's line continuation, so that the rows typed or pasted are the one command (the
    log broke "quoridor --server" / "ws://...:9000 join" / "k3m9qr2xvb" as prose). Never
    inside a quoted word: a continuation within quotes is part of the word (an outside review
    pasted ``--name '👾 \\`` / ``Zörg ...'`` and came back as another name)."""
    limit = max(12, width - 4)
    rows: list[str] = []
    row = ""
    for word in shell_words(command):
        longer = f"{row} {word}" if row else word
        if row and columns(longer) > (limit if not rows else limit - len(INDENT)):
            rows.append(row)
            row = word
        else:
            row = longer
    rows.append(row)
    rows = rows[:1] + [INDENT + row for row in rows[1:]]
    return [f"  {row} \\" for row in rows[:-1]] + [f"  {rows[-1]}"]


def shell_words(command: str) -> list[str]:
    """The words of a command as a shell splits them, each with its quotes kept (quoted by
    ``shlex.quote``: single quotes, a quote within as ``'"'"'``). Not ``shlex.split(...,
    posix=False)``, which keeps the quotes but splits that one word in three."""
    words: list[str] = []
    word, quote = "", ""
    for char in command:
        if quote:
            word += char
            quote = "" if char == quote else quote
        elif char in "'\"":
            word += char
            quote = char
        elif char == " ":
            if word:
                words.append(word)
            word = ""
        else:
            word += char
    if word:
        words.append(word)
    return words


def as_lines(parts: Iterable[str]) -> list[str]:
    """``parts`` one a line, commands indented (still ``Command``s: a view that wraps lines
    itself breaks them as ``command_rows`` does), for a log that wraps lines itself."""
    return [Command(INDENT + part) if isinstance(part, Command) else part for part in parts]


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
