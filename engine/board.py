"""Bitboard geometry: one Python int per board mask.

Square (col, row) is bit ``row * stride + col`` with ``stride = size + 1``: the
extra guard column keeps east/west shifts from wrapping onto the next row.

A wall slot is named by the lower-left square of the 2x2 block around its
midpoint and uses that square's bit, so wall masks line up with square masks
and whole sets of walls are tested with a few shifts:

* a horizontal wall on slot ``k`` closes the north edges of squares ``k`` and
  ``k + 1``; a vertical one closes the east edges of ``k`` and ``k + stride``;
* walls are stored as the edges they close: ``closed_north`` has a bit on
  every square whose north edge is walled, ``closed_east`` likewise (south and
  west edges are the neighbours' north and east);
* the lattice points where square corners meet, (x, y) for x, y in 0..size,
  are bits ``y * stride + x``. A horizontal wall on slot ``k`` touches points
  ``k + stride + {0, 1, 2}``, a vertical one ``k + 1 + stride * {0, 1, 2}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from engine.notation import format_square

NameTable = tuple[tuple[tuple[str, ...], ...], ...]
"""``table[row][bits]``: the names of the slots set in one row's ``bits``."""


@dataclass(frozen=True, eq=False)
class Geometry:
    """Everything about an N x N board that does not depend on the position."""

    size: int
    stride: int
    board: int
    """All squares."""
    top_row: int
    last_col: int
    slots: int
    """Every wall slot (squares in columns and rows 1..size-1)."""
    border_points: int
    """Lattice points on the board's edge."""
    square_names: dict[int, str]
    """Bit index -> notation."""
    h_names: NameTable
    v_names: NameTable
    packed_index: dict[int, int]
    """Slot bit -> its bit in ``pack_slots``'s horizontal half (the vertical half is the
    same plus ``(size - 1) ** 2``)."""

    def bit(self, col: int, row: int) -> int:
        return row * self.stride + col

    def coords(self, bit: int) -> tuple[int, int]:
        row, col = divmod(bit, self.stride)
        return col, row

    def row_mask(self, row: int) -> int:
        return sum(1 << self.bit(col, row) for col in range(self.size))

    def col_mask(self, col: int) -> int:
        return sum(1 << self.bit(col, row) for row in range(self.size))

    def slot_names(self, mask: int, horizontal: bool) -> list[str]:
        """Notation of every wall slot in ``mask``, in bit order."""
        table = self.h_names if horizontal else self.v_names
        width, stride = self.size - 1, self.stride
        row_bits = (1 << width) - 1
        names: list[str] = []
        for row, row_table in enumerate(table):
            names += row_table[(mask >> (row * stride)) & row_bits]
        return names

    def pack_slots(self, horizontal: int, vertical: int) -> int:
        """Two slot masks as one dense int: bit ``row * (size - 1) + col`` for the
        horizontal wall at (col, row), the same plus ``(size - 1) ** 2`` for the vertical.
        """
        width, stride = self.size - 1, self.stride
        row_bits = (1 << width) - 1
        packed = 0
        for row in reversed(range(width)):
            shift = row * stride
            packed = (packed << width) | ((horizontal >> shift) & row_bits)
        for row in reversed(range(width)):
            shift = row * stride
            packed |= ((vertical >> shift) & row_bits) << (width * (width + row))
        return packed

    def repack(self, packed: int, horizontal: int, vertical: int) -> int:
        """``packed`` (``pack_slots``) with the slots in ``horizontal`` and ``vertical`` flipped.

        From one move to the next only a few slots change, so flipping those costs far
        less than packing every row again."""
        index, offset = self.packed_index, (self.size - 1) ** 2
        for slot in bits(horizontal):
            packed ^= 1 << index[slot]
        for slot in bits(vertical):
            packed ^= 1 << (index[slot] + offset)
        return packed


@cache
def geometry(size: int) -> Geometry:
    """The precomputed tables for a board size (built once per size)."""
    stride = size + 1

    def bit(col: int, row: int) -> int:
        return row * stride + col

    def mask(cells: list[tuple[int, int]]) -> int:
        return sum(1 << bit(c, r) for c, r in set(cells))  # a set: corners repeat

    every = range(size)
    border = [(i, 0) for i in range(size + 1)] + [(i, size) for i in range(size + 1)]
    border += [(0, i) for i in range(size + 1)] + [(size, i) for i in range(size + 1)]
    return Geometry(
        size=size,
        stride=stride,
        board=mask([(c, r) for r in every for c in every]),
        top_row=mask([(c, size - 1) for c in every]),
        last_col=mask([(size - 1, r) for r in every]),
        slots=mask([(c, r) for r in range(size - 1) for c in range(size - 1)]),
        border_points=mask(border),
        square_names={bit(c, r): format_square(c, r) for r in every for c in every},
        h_names=_name_table(size, "h"),
        v_names=_name_table(size, "v"),
        packed_index={bit(c, r): r * (size - 1) + c for r in every[:-1] for c in every[:-1]},
    )


def _name_table(size: int, orientation: str) -> NameTable:
    width = size - 1
    return tuple(
        tuple(
            tuple(format_square(c, row) + orientation for c in range(width) if bits >> c & 1)
            for bits in range(1 << width)
        )
        for row in range(width)
    )


def wall_points(wall: int, horizontal: bool, stride: int) -> int:
    """The three lattice points a wall on the slot ``wall`` (a one-bit mask) touches."""
    if horizontal:
        return (wall | (wall << 1) | (wall << 2)) << stride
    return (wall | (wall << stride) | (wall << 2 * stride)) << 1


def joined(parts: list[int], points: int) -> list[int]:
    """``parts`` (masks of lattice points, each a group linked by walls or board edge) with
    a wall touching ``points`` added: the groups it touches and its points become one."""
    merged, rest = points, []
    for part in parts:
        if part & points:
            merged |= part
        else:
            rest.append(part)
    rest.append(merged)
    return rest


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


def goal_field(goal: int, open_north: int, open_east: int, stride: int) -> list[int]:
    """The start of a distance field from ``goal`` for ``field_distance``: the squares a
    step can enter but not reached yet, then the frontiers found so far (the goal)."""
    unseen = (open_north | open_east | (open_north << stride) | (open_east << 1)) & ~goal
    return [unseen, goal]


def field_distance(
    field: list[int], square: int, open_north: int, open_east: int, stride: int
) -> int:
    """The distance from ``square`` (a mask of one square) to the goal of ``field``
    (``goal_field``), or -1 when the goal cannot be reached.

    The frontiers of a breadth-first search from the goal are kept in ``field`` and
    grown only as far as a square asked for needs, so while no wall is placed each
    pawn step looks its distance up instead of searching again.
    """
    for index in range(1, len(field)):
        if field[index] & square:
            return index - 1
    unseen, frontier = field[0], field[-1]
    while frontier:
        frontier = (
            ((frontier & open_north) << stride)
            | ((frontier >> stride) & open_north)
            | ((frontier & open_east) << 1)
            | ((frontier >> 1) & open_east)
        ) & unseen
        unseen ^= frontier
        if frontier:
            field.append(frontier)
            if frontier & square:
                break
    field[0] = unseen
    return len(field) - 2 if frontier else -1


def field_cut(field: list[int], closes_north: int, closes_east: int, stride: int) -> bool:
    """Whether closing these edges (bits as in ``path_edges``) changes the distances
    ``field`` (``goal_field``) holds so far.

    Only an edge between two squares of consecutive layers can lengthen a distance found
    so far: one within a layer is on no shortest path, and one from the last layer out
    is crossed only when the field grows, with the edges of that time. Neighbours' layers
    differ by at most one, so consecutive means of different parity.
    """
    even = odd = 0
    for index in range(1, len(field), 2):
        even |= field[index]
    for index in range(2, len(field), 2):
        odd |= field[index]
    from_even = ((closes_north & even) << stride) | ((closes_east & even) << 1)
    from_odd = ((closes_north & odd) << stride) | ((closes_east & odd) << 1)
    return bool(from_even & odd or from_odd & even)


def field_layer(field: list[int], square: int, near: int) -> int:
    """The distance of ``square`` in ``field`` when it is ``near - 1``, ``near`` or ``near +
    1`` (a step from a square at distance ``near``), else -1, with at most three looks."""
    for index in (near, near + 1, near + 2):
        if 0 < index < len(field) and field[index] & square:
            return index - 1
    return -1


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
    square = 1 << ((target & -target).bit_length() - 1)
    for layer in reversed(frontiers[:-1]):
        # Step back to any neighbour in the previous layer, trying each side.
        if (below := (square >> stride) & open_north & layer) != 0:
            north |= below
            square = below
        elif (above := square & open_north) and (square << stride) & layer:
            north |= above
            square <<= stride
        elif (left := (square >> 1) & open_east & layer) != 0:
            east |= left
            square = left
        else:
            east |= square
            square <<= 1
    return north, east


def bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, lowest first."""
    result = []
    while mask:
        low = mask & -mask
        result.append(low.bit_length() - 1)
        mask ^= low
    return result
