"""Bitboard geometry: one Python int per board mask.

Square (col, row) is bit ``row * stride + col`` with ``stride = size + 1``: the
extra guard column keeps east/west shifts from wrapping onto the next row.
Walls are stored as the edges they close: ``closed_north`` has a bit on every
square whose north edge is walled, ``closed_east`` on every square whose east
edge is walled (the south and west edges are the neighbours' north and east).

Wall slots are numbered ``row * (size - 1) + col`` by their lower-left square.
Their ends and midpoint are lattice points (the corners of squares), numbered
``y * (size + 1) + x``; the cycle filter in ``Game`` uses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from engine.notation import format_square


@dataclass(frozen=True, eq=False)
class Geometry:
    """Everything about an N x N board that does not depend on the position."""

    size: int
    stride: int
    board: int
    """All squares."""
    top_row: int
    last_col: int
    squares: tuple[int, ...]
    """Bit index of square number ``row * size + col``."""
    square_names: dict[int, str]
    """Bit index -> notation."""
    slots: int
    """Mask of every wall slot."""
    h_closes: tuple[int, ...]
    """Per slot: the ``closed_north`` bits a horizontal wall there sets."""
    v_closes: tuple[int, ...]
    """Per slot: the ``closed_east`` bits a vertical wall there sets."""
    h_forbids: tuple[tuple[int, int], ...]
    """Per slot: (horizontal, vertical) slots a horizontal wall there rules out."""
    v_forbids: tuple[tuple[int, int], ...]
    """Per slot: (horizontal, vertical) slots a vertical wall there rules out."""
    h_points: tuple[int, ...]
    """Per slot: the three lattice points a horizontal wall there touches."""
    v_points: tuple[int, ...]
    border_points: int
    """Lattice points on the board's edge."""
    h_names: tuple[str, ...]
    v_names: tuple[str, ...]

    def bit(self, col: int, row: int) -> int:
        return row * self.stride + col

    def coords(self, bit: int) -> tuple[int, int]:
        row, col = divmod(bit, self.stride)
        return col, row

    def slot(self, col: int, row: int) -> int:
        return row * (self.size - 1) + col

    def row_mask(self, row: int) -> int:
        return sum(1 << self.bit(col, row) for col in range(self.size))

    def col_mask(self, col: int) -> int:
        return sum(1 << self.bit(col, row) for row in range(self.size))


@cache
def geometry(size: int) -> Geometry:
    """The precomputed tables for a board size (built once per size)."""
    stride = size + 1
    walls = size - 1

    def bit(col: int, row: int) -> int:
        return row * stride + col

    def point(x: int, y: int) -> int:
        return 1 << (y * stride + x)

    squares = tuple(bit(c, r) for r in range(size) for c in range(size))
    board = sum(1 << b for b in squares)
    h_closes, v_closes, h_forbids, v_forbids, h_points, v_points = [], [], [], [], [], []
    for r in range(walls):
        for c in range(walls):
            slot = 1 << (r * walls + c)
            h_closes.append((1 << bit(c, r)) | (1 << bit(c + 1, r)))
            v_closes.append((1 << bit(c, r)) | (1 << bit(c, r + 1)))
            # Same-orientation walls overlap when their anchors differ by at most
            # one along the groove; opposite orientations cross on the same anchor.
            h_same = slot | (slot << 1 if c + 1 < walls else 0) | (slot >> 1 if c > 0 else 0)
            v_same = slot | (slot << walls if r + 1 < walls else 0) | (slot >> walls)
            h_forbids.append((h_same, slot))
            v_forbids.append((slot, v_same))
            h_points.append(point(c, r + 1) | point(c + 1, r + 1) | point(c + 2, r + 1))
            v_points.append(point(c + 1, r) | point(c + 1, r + 1) | point(c + 1, r + 2))
    border = 0
    for i in range(size + 1):
        border |= point(i, 0) | point(i, size) | point(0, i) | point(size, i)
    return Geometry(
        size=size,
        stride=stride,
        board=board,
        top_row=sum(1 << bit(c, size - 1) for c in range(size)),
        last_col=sum(1 << bit(size - 1, r) for r in range(size)),
        squares=squares,
        square_names={bit(c, r): format_square(c, r) for r in range(size) for c in range(size)},
        slots=(1 << walls * walls) - 1,
        h_closes=tuple(h_closes),
        v_closes=tuple(v_closes),
        h_forbids=tuple(h_forbids),
        v_forbids=tuple(v_forbids),
        h_points=tuple(h_points),
        v_points=tuple(v_points),
        border_points=border,
        h_names=tuple(format_square(s % walls, s // walls) + "h" for s in range(walls * walls)),
        v_names=tuple(format_square(s % walls, s // walls) + "v" for s in range(walls * walls)),
    )


def reaches(start: int, goal: int, open_north: int, open_east: int, stride: int) -> bool:
    """Flood-fill from the ``start`` mask: does it reach any square of ``goal``?

    ``open_north``/``open_east`` hold the squares whose north/east edge can be
    crossed (never the top row or last column), so every shift stays on the
    board and no masking is needed.
    """
    reach = start
    while not reach & goal:
        grown = (
            reach
            | ((reach & open_north) << stride)
            | ((reach >> stride) & open_north)
            | ((reach & open_east) << 1)
            | ((reach >> 1) & open_east)
        )
        if grown == reach:
            return False
        reach = grown
    return True


def layers(start: int, goal: int, open_north: int, open_east: int, stride: int) -> list[int]:
    """Breadth-first frontiers from ``start`` until one touches ``goal``.

    ``len(result) - 1`` is the shortest distance; an empty list means the goal
    cannot be reached.
    """
    frontier = seen = start
    result = [start]
    while not frontier & goal:
        grown = (
            ((frontier & open_north) << stride)
            | ((frontier >> stride) & open_north)
            | ((frontier & open_east) << 1)
            | ((frontier >> 1) & open_east)
        ) & ~seen
        if not grown:
            return []
        seen |= grown
        frontier = grown
        result.append(grown)
    return result


def path_edges(
    frontiers: list[int], goal: int, open_north: int, open_east: int, stride: int
) -> tuple[int, int]:
    """One shortest path through ``frontiers``, as the edges it crosses.

    Returns (north, east) masks: a vertical step between ``s`` and ``s +
    stride`` sets bit ``s`` in north; a horizontal step between ``s`` and
    ``s + 1`` sets bit ``s`` in east. A wall that closes none of these edges
    leaves this path, hence some path, intact.
    """
    north = east = 0
    target = frontiers[-1] & goal
    square = (target & -target).bit_length() - 1
    for layer in reversed(frontiers[:-1]):
        below, left = square - stride, square - 1
        if below >= 0 and (layer >> below) & (open_north >> below) & 1:
            north |= 1 << below
            square = below
        elif (layer >> (square + stride)) & (open_north >> square) & 1:
            north |= 1 << square
            square += stride
        elif left >= 0 and (layer >> left) & (open_east >> left) & 1:
            east |= 1 << left
            square = left
        else:
            east |= 1 << square
            square += 1
    return north, east
