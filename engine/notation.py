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
        article = "an" if str(size).startswith(("8", "11", "18")) else "a"  # "an 11x11"
        raise NotationError(f"{text} is not a {what} on {article} {size}x{size} board (a1..{last})")
    return Move(col, row, orientation)


@cache
def _moves(size: int) -> dict[str, Move]:
    """Every square and wall of a board, by notation: parsing is one lookup."""
    squares = [Move(c, r, "") for r in range(size) for c in range(size)]
    walls = [Move(c, r, o) for o in "hv" for r in range(size - 1) for c in range(size - 1)]
    return {str(move): move for move in squares + walls}


def parse_record(text: str, players: int | None = None) -> list[str]:
    """Split a record into move tokens, accepting the plain and the numbered form.

    In the numbered form each round of moves starts with its number, counting
    up from 1 (``1. e2 e8 2. e3``); a round is ``players`` moves (when not
    given, the first round's length). A record is one form or the other. The
    moves themselves are checked by the game that plays them.
    """
    moves: list[str] = []
    tokens = text.split()
    numbered = bool(tokens) and _NUMBER_RE.fullmatch(tokens[0]) is not None
    number_just_seen = False
    for token in tokens:
        if _NUMBER_RE.fullmatch(token) is None:
            if numbered and not number_just_seen and players and len(moves) % players == 0:
                raise NotationError(f"a move number must come before {token}")
            number_just_seen = False
            moves.append(token)
            continue
        if players is None and numbered and token == "2.":
            players = len(moves)  # the first round shows how many play
        rounds = players or 1
        expected = len(moves) // rounds + 1
        if not numbered or number_just_seen or len(moves) % rounds or token != f"{expected}.":
            raise NotationError(
                f"move number {token} out of place: expected {expected}. before move "
                f"{(expected - 1) * rounds + 1}"
            )
        number_just_seen = True
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
