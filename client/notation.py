"""Reading notation for display: squares and wall slots as coordinates.

This is only the alphabet of the standard notation (columns ``a``.., rows
``1``.. from the bottom; a wall is the lower-left square of its 2x2 block plus
``h`` or ``v``). Whether a move is legal is never decided here.
"""

from __future__ import annotations

import re
from typing import NamedTuple

COLUMNS = "abcdefghijk"
"""Column letters for the largest board (11 x 11)."""

MOVE_RE = re.compile(r"([a-k])([1-9][0-9]?)([hv]?)")
"""A pawn destination (``e2``) or a wall (``e3h``, ``e3v``), in lower case."""


class Spot(NamedTuple):
    """A square (``orientation`` empty) or a wall slot, zero-based."""

    col: int
    row: int
    orientation: str


def parse(text: str) -> Spot | None:
    """``"e3h"`` -> ``Spot(4, 2, "h")``; None for text that is not notation."""
    match = MOVE_RE.fullmatch(text)
    if match is None:
        return None
    letter, digits, orientation = match.groups()
    return Spot(COLUMNS.index(letter), int(digits) - 1, orientation)


def is_move(text: str) -> bool:
    """Whether ``text`` looks like a move (a square or a wall), legal or not."""
    return MOVE_RE.fullmatch(text) is not None


def is_wall(text: str) -> bool:
    return is_move(text) and text[-1] in "hv"


def rounds(moves: list[str], players: int) -> list[list[str]]:
    """The moves in rounds, one move of each seat still in: the seats move in turn from seat
    0, and one that retired (``retire N``, left out here) is skipped from then on, its turn
    passing to the next if it was its turn. After a resignation in a four-player game a round
    is three moves (counted four, the list went out of step with the turns). A boxed-in seat
    that passes (PROTOCOL.md section 17) leaves no entry: the rounds after such a pass, a rare
    four-player case, are counted one off (for display only).
    """
    active = list(range(players))
    turn, last = 0, players
    grouped: list[list[str]] = []
    for move in moves:
        if move.startswith("retire "):
            seat = int(move.split()[1])
            following = _after(active, seat)
            active = [s for s in active if s != seat]
            if seat == turn:
                turn = following
            continue
        if turn <= last or not grouped:
            grouped.append([])
        grouped[-1].append(move)
        last, turn = turn, _after(active, turn)
    return grouped


def _after(active: list[int], seat: int) -> int:
    """The seat still in that moves after ``seat``."""
    later = [s for s in active if s > seat]
    return later[0] if later else active[0] if active else seat
