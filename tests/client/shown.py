"""What a terminal shows, read back: the commands that ``client.printed`` broke over rows."""

from __future__ import annotations

from client.width import columns

CONTINUED = " \\"


def unbroken(rows: list[str], width: int) -> list[str]:
    """``rows`` as printed to a terminal of ``width`` columns, each checked to fit, with every
    command broken over rows (``  first \\``, ``    next \\``, ``    last``) read back as the
    one indented row a shell would read it as."""
    for row in rows:
        assert columns(row) <= width, row
    read: list[str] = []
    words: list[str] = []
    for row in rows:
        if words:  # a command goes on: its rows are indented further
            assert row.startswith("    "), row
        if row.endswith(CONTINUED):
            words.append(row.removesuffix(CONTINUED).strip())
            continue
        if words:
            read.append("  " + " ".join([*words, row.strip()]))
            words = []
            continue
        read.append(row)
    assert not words, "a command's last row is missing"
    return read
