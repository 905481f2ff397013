"""Standard Quoridor notation (the one quoridorstrats and Wikipedia use).

Columns are letters ``a``.. left to right, rows are numbers ``1``.. bottom to
top. A pawn move is its destination square (``e2``). A wall is the lower-left
square of the 2x2 block around its midpoint plus ``h`` or ``v``: ``e3h``
separates e3/e4 and f3/f4; ``e3v`` separates e3/f3 and e4/f4. On an N x N
board squares use columns/rows 1..N and walls 1..N-1.

A record is the moves in order separated by spaces (``e2 e8 e3h``), or the
numbered form where each number starts a round of every player's move
(``1. e2 e8 2. e3h e7``).
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from engine.errors import NotationError

COLUMNS = "abcdefghijk"
"""Column letters for the largest supported board (11 x 11)."""

_MOVE_RE = re.compile(r"([a-k])([1-9][0-9]?)([hv]?)")
_NUMBER_RE = re.compile(r"([1-9][0-9]*)\.")


class Move(NamedTuple):
    """A parsed move: a pawn destination, or a wall when ``orientation`` is set."""

    col: int
    """Zero-based column (``a`` is 0)."""
    row: int
    """Zero-based row (``1`` is 0)."""
    orientation: str
    """``""`` for a pawn move, ``"h"`` or ``"v"`` for a wall."""

    @property
    def is_wall(self) -> bool:
        return self.orientation != ""

    def __str__(self) -> str:
        return format_square(self.col, self.row) + self.orientation


def format_square(col: int, row: int) -> str:
    """``(4, 1)`` -> ``"e2"``."""
    return f"{COLUMNS[col]}{row + 1}"


def parse_move(text: str, size: int = 9) -> Move:
    """Parse ``"e2"``, ``"e3h"`` or ``"e3v"`` for a board of ``size`` squares a side.

    Raises NotationError for anything that is not a square or wall slot of
    that board.
    """
    move = _moves(size).get(text)
    if move is not None:
        return move
    match = _MOVE_RE.fullmatch(text)
    if match is None:
        raise NotationError(f"{text!r} is not a move: expected a square like e2 or a wall like e3h")
    letter, digits, orientation = match.groups()
    col, row = COLUMNS.index(letter), int(digits) - 1
    limit = size - 1 if orientation else size
    if col >= limit or row >= limit:
        what = "wall" if orientation else "square"
        last = format_square(limit - 1, limit - 1)
        raise NotationError(f"{text} is not a {what} on a {size}x{size} board (a1..{last})")
    return Move(col, row, orientation)


@cache
def _moves(size: int) -> dict[str, Move]:
    """Every square and wall of a board, by notation: parsing is one lookup."""
    squares = [Move(c, r, "") for r in range(size) for c in range(size)]
    walls = [Move(c, r, o) for o in "hv" for r in range(size - 1) for c in range(size - 1)]
    return {str(move): move for move in squares + walls}


def parse_record(text: str) -> list[str]:
    """Split a record into move tokens, accepting the plain and the numbered form.

    Move numbers must count up from 1 (``1. e2 e8 2. e3``); the moves
    themselves are checked by the game that plays them, not here.
    """
    moves: list[str] = []
    expected = 1
    for token in text.split():
        number = _NUMBER_RE.fullmatch(token)
        if number is None:
            moves.append(token)
            continue
        if int(number.group(1)) != expected:
            raise NotationError(f"move number {token} out of order: expected {expected}.")
        expected += 1
    return moves


def format_record(moves: list[str], players: int = 2, numbered: bool = False) -> str:
    """Join moves into a record; ``numbered`` prefixes each round of ``players`` moves."""
    if not numbered:
        return " ".join(moves)
    parts: list[str] = []
    for index, move in enumerate(moves):
        if index % players == 0:
            parts.append(f"{index // players + 1}.")
        parts.append(move)
    return " ".join(parts)
