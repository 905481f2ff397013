"""Where things go on a terminal of a given size: a pure function, tested at every size.

The board comes first: it gets the largest drawing style that fits with the
status panel beside it (or below it), and a small terminal drops the title
bar before it ever cuts the board. Every board size fits 80x24: an 11x11
board is drawn compact (23 rows) beside a panel of 31 columns. ``smallest`` is the
terminal a board needs at least, which a terminal too small for it is told.
"""

from __future__ import annotations

from dataclasses import dataclass

from client.render import Style, board_size

SIDE_MIN = 28
"""Columns the status panel needs beside the board."""
SIDE_LARGE = 40
"""Columns the panel keeps beside a large board (else the board stays normal)."""
BELOW_MIN = 6
"""Rows the panel needs below the board."""
CHROME = 3
"""Rows of the title bar, the rule above the prompt and the prompt."""
PANEL_ROWS = 17
"""Rows the status panel may need beside a small board: four players with their clocks and
the first moves' note (a 5x5 board of 11 rows is not what limits the screen then)."""


@dataclass(frozen=True)
class Plan:
    style: Style
    beside: bool
    """The panel beside the board (else below it)."""
    title: bool
    """Room for the title bar and the rule above the prompt (else the prompt alone)."""
    board_columns: int
    """The drawing's width and a blank column after it."""
    board_rows: int


def plan(columns: int, rows: int, size: int) -> Plan:
    """The layout for a terminal of ``columns`` x ``rows`` and a ``size`` board."""

    def make(style: Style, beside: bool, title: bool) -> Plan:
        width, height = board_size(size, style)
        return Plan(style, beside, title, width + 1, height)

    beside_styles: tuple[Style, ...] = ("large", "normal", "compact")
    for style in beside_styles:
        width, height = board_size(size, style)
        side = SIDE_LARGE if style == "large" else SIDE_MIN
        if columns >= width + 2 + side and rows >= height + CHROME:
            return make(style, True, True)
    below_styles: tuple[Style, ...] = ("normal", "compact")
    for style in below_styles:
        width, height = board_size(size, style)
        if columns >= width and rows >= height + CHROME + BELOW_MIN:
            return make(style, False, True)
    width, height = board_size(size, "compact")
    beside = columns >= width + 2 + SIDE_MIN
    return make("compact", beside, rows >= height + CHROME)


def smallest(size: int) -> tuple[int, int]:
    """The smallest terminal (columns, rows) on which a ``size`` board is drawn whole: the
    compact board with the panel beside it and the prompt under it, no title bar (a 9x9
    board needs 69x20, an 11x11 one 78x24; measured, a column or a row less is too small)."""
    width, height = board_size(size, "compact")
    return width + 2 + SIDE_MIN, max(height + 1, PANEL_ROWS)
