"""Commands printed to be copied: broken over rows as a shell reads them back."""

from __future__ import annotations

import shlex

from client.printed import command_rows, shell_words
from client.width import columns


def test_a_long_command_breaks_between_words_never_inside_quotes() -> None:
    """An outside review pasted ``--name '👾 \\`` / ``Zörg ...' join ...``, broken inside the
    quoted name, and came back as another player: the continuation within quotes is part of
    the word."""
    name = "👾 Zörg 你好世界 long name here xx"
    command = f"quoridor --server ws://127.0.0.1:18951 --name {shlex.quote(name)} join dejwa8tnxv"
    for width in (30, 48, 60, 80):
        rows = command_rows(command, width)
        pasted = "\n".join(rows)
        assert shlex.split(pasted.replace("\\\n", " ")) == shlex.split(command)
        for row in rows[:-1]:
            assert row.endswith(" \\")
            assert row.count("'") % 2 == 0  # every row's quotes closed on it
        # A row of several words fits; a word wider than the terminal stands alone.
        several = [row for row in rows if len(shell_words(row.removesuffix(" \\"))) > 1]
        assert all(columns(row) <= width for row in several), rows


def test_shell_words_keep_their_quotes() -> None:
    quoted = shlex.quote("it's")
    assert shell_words(f"quoridor --name {quoted}  join x") == [
        "quoridor",
        "--name",
        quoted,
        "join",
        "x",
    ]
