"""The search state: a position as a handful of ints, copied from a ``Game``.

Bit layout as in ``engine.board``: square ``(col, row)`` is bit ``row * stride +
col`` with ``stride = size + 1``; a wall slot uses the bit of its lower-left
square. Moves are small ints so they hash and compare fast:

* ``0 <= move < WALL_H``: a pawn move to the square with that bit index;
* ``WALL_H + slot``: a horizontal wall; ``WALL_V + slot``: a vertical one.

Distances come from *goal maps*: breadth-first layers grown from a seat's goal
edge over the open edges (pawns ignored). A goal map depends on the walls
only, so it is shared by every pawn placement and cached on the
``(closed_north, closed_east)`` masks; a pawn's distance is the index of the
layer holding it. A map also records its *gradient* edges (those joining two
consecutive layers): a wall that closes none of them cannot change any
distance of that seat, so the parent's map is reused as is.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.board import bits, geometry
from engine.game import Game
from engine.notation import format_square

WALL_H = 256
"""Moves from here on are horizontal walls (``WALL_H + slot``)."""
WALL_V = 512
"""Moves from here on are vertical walls (``WALL_V + slot``)."""


MAP_CACHE_LIMIT = 20_000
"""Goal maps cached (about 2.5 kB an entry), emptied past this."""


class GoalMap(NamedTuple):
    """Breadth-first layers from one seat's goal edge, for one set of walls."""

    layers: tuple[int, ...]
    """``layers[d]``: the squares at distance ``d`` from the goal edge."""
    grad_north: int
    """Squares whose north edge joins two consecutive layers."""
    grad_east: int
    """Squares whose east edge joins two consecutive layers."""
    reach: int
    """Every square that can reach the goal (the union of the layers)."""


def goal_map(goal: int, north: int, east: int, stride: int) -> GoalMap:
    """Layers of every square that can reach ``goal`` over the open edges."""
    frontier = seen = goal
    layers = [goal]
    # Squares whose north / east neighbour lies in their own layer.
    level_north, level_east = goal & (goal >> stride), goal & (goal >> 1)
    while True:
        grown = (
            ((frontier & north) << stride)
            | ((frontier >> stride) & north)
            | ((frontier & east) << 1)
            | ((frontier >> 1) & east)
        ) & ~seen
        if not grown:
            break
        seen |= grown
        layers.append(grown)
        level_north |= grown & (grown >> stride)
        level_east |= grown & (grown >> 1)
        frontier = grown
    # An open edge between two reachable squares joins equal or consecutive layers.
    grad_north = north & seen & (seen >> stride) & ~level_north
    grad_east = east & seen & (seen >> 1) & ~level_east
    return GoalMap(tuple(layers), grad_north, grad_east, seen)


def distance(layers: tuple[int, ...], square: int) -> int:
    """The layer index holding ``square`` (its distance to the goal), or -1."""
    bit = 1 << square
    for index, layer in enumerate(layers):
        if layer & bit:
            return index
    return -1


class Position:
    """A mutable copy of a game's position with make/unmake for search.

    Only what search needs: pawns, walls left, wall and forbidden-slot masks,
    the closed-edge masks and the turn. Legality of walls (no seat sealed off)
    is checked through the goal maps, which search computes anyway.
    """

    __slots__ = (
        "board",
        "ce",
        "cn",
        "east_base",
        "goals",
        "h_forbidden",
        "h_walls",
        "map_cache",
        "north_base",
        "pawns",
        "players",
        "retired",
        "size",
        "slots",
        "stride",
        "turn",
        "v_forbidden",
        "v_walls",
        "walls_left",
    )

    def __init__(self, game: Game, map_cache: dict[tuple[int, int], tuple[GoalMap, ...]]) -> None:
        geo = geometry(game.variant.size)
        snap = game.bitboards()
        self.size = geo.size
        self.stride = geo.stride
        self.board = geo.board
        self.slots = geo.slots
        self.north_base = geo.board & ~geo.top_row
        self.east_base = geo.board & ~geo.last_col
        self.players = game.variant.players
        self.goals = game.goal_masks()
        self.pawns = list(snap.pawns)
        self.walls_left = list(snap.walls_left)
        self.h_walls, self.v_walls = snap.h_walls, snap.v_walls
        self.h_forbidden, self.v_forbidden = snap.h_forbidden, snap.v_forbidden
        self.cn, self.ce = snap.closed_north, snap.closed_east
        self.turn = snap.turn
        self.retired = snap.retired
        """Bit per seat that left a four-player game: its pawn stays, its turns pass,
        and walls owe it no path."""
        self.map_cache = map_cache
        """Goal maps per ``(closed_north, closed_east)``, one per seat."""

    # -- distances ------------------------------------------------------------

    def maps(self) -> tuple[GoalMap, ...]:
        """Every seat's goal map for the walls on the board now."""
        key = (self.cn, self.ce)
        found = self.map_cache.get(key)
        if found is None:
            north, east = self.north_base & ~self.cn, self.east_base & ~self.ce
            found = tuple(goal_map(goal, north, east, self.stride) for goal in self.goals)
            self._remember(key, found)
        return found

    def maps_after_wall(
        self, parent: tuple[GoalMap, ...], closes_north: int, closes_east: int
    ) -> tuple[GoalMap, ...]:
        """The goal maps once a wall closing these edges is down (cached).

        ``parent`` are the maps without the wall; a seat whose gradient edges
        the wall misses keeps its map.
        """
        cn, ce = self.cn | closes_north, self.ce | closes_east
        key = (cn, ce)
        found = self.map_cache.get(key)
        if found is None:
            north, east = self.north_base & ~cn, self.east_base & ~ce
            stride = self.stride
            found = tuple(
                goal_map(goal, north, east, stride)
                if (old.grad_north & closes_north) or (old.grad_east & closes_east)
                else old
                for goal, old in zip(self.goals, parent, strict=True)
            )
            self._remember(key, found)
        return found

    def _remember(self, key: tuple[int, int], maps: tuple[GoalMap, ...]) -> None:
        """Cache ``maps``; the cache is emptied when full, during a search too: a 30 s
        search (``ai.seconds``) grew it to hundreds of MB, kept by the worker process."""
        if len(self.map_cache) >= MAP_CACHE_LIMIT:
            self.map_cache.clear()
        self.map_cache[key] = maps

    def distances(self) -> list[int]:
        return [distance(m.layers, pawn) for m, pawn in zip(self.maps(), self.pawns, strict=True)]

    def open_edges(self) -> tuple[int, int]:
        return self.north_base & ~self.cn, self.east_base & ~self.ce

    # -- moves ----------------------------------------------------------------

    def pawn_targets(self, seat: int) -> int:
        """Mask of the squares ``seat`` may move its pawn to (the engine's rules)."""
        north, east = self.north_base & ~self.cn, self.east_base & ~self.ce
        stride = self.stride
        here = self.pawns[seat]
        pawn = 1 << here
        occupied = 0
        for other in self.pawns:
            occupied |= 1 << other
        steps = (
            ((pawn & north) << stride)
            | ((pawn >> stride) & north)
            | ((pawn & east) << 1)
            | ((pawn >> 1) & east)
        )
        if not steps & occupied:
            return steps
        targets = steps & ~occupied
        for near in bits(steps & occupied):
            delta = near - here
            behind = _step(near, delta, north, east, stride)
            if behind >= 0 and not (occupied >> behind) & 1:
                targets |= 1 << behind
                continue
            for side in (1, -1) if delta in (stride, -stride) else (stride, -stride):
                landing = _step(near, side, north, east, stride)
                if landing >= 0 and not (occupied >> landing) & 1:
                    targets |= 1 << landing
        return targets

    def wall_edges(self, move: int) -> tuple[int, int]:
        """The (north, east) edges a wall move closes."""
        if move >= WALL_V:
            slot = 1 << (move - WALL_V)
            return 0, slot | (slot << self.stride)
        slot = 1 << (move - WALL_H)
        return slot | (slot << 1), 0

    def free_slots(self) -> tuple[int, int]:
        """Slots where a horizontal / vertical wall fits (sealing not checked)."""
        return self.slots & ~self.h_forbidden, self.slots & ~self.v_forbidden

    def next_seat(self, seat: int) -> int:
        """The seat after ``seat`` in turn order, retired seats skipped."""
        players, retired = self.players, self.retired
        seat = (seat + 1) % players
        while (retired >> seat) & 1:
            seat = (seat + 1) % players
        return seat

    def place_wall(self, move: int) -> tuple[int, ...]:
        """Put a wall down for the seat to move; returns what ``remove_wall`` needs."""
        saved = (
            self.h_walls,
            self.v_walls,
            self.h_forbidden,
            self.v_forbidden,
            self.cn,
            self.ce,
            self.turn,
        )
        stride = self.stride
        if move >= WALL_V:
            wall = 1 << (move - WALL_V)
            self.v_walls |= wall
            self.ce |= wall | (wall << stride)
            self.v_forbidden |= wall | (wall << stride) | (wall >> stride)
            self.h_forbidden |= wall
        else:
            wall = 1 << (move - WALL_H)
            self.h_walls |= wall
            self.cn |= wall | (wall << 1)
            self.h_forbidden |= wall | (wall << 1) | (wall >> 1)
            self.v_forbidden |= wall
        self.walls_left[self.turn] -= 1
        self.turn = self.next_seat(self.turn)
        return saved

    def remove_wall(self, saved: tuple[int, ...]) -> None:
        (
            self.h_walls,
            self.v_walls,
            self.h_forbidden,
            self.v_forbidden,
            self.cn,
            self.ce,
            self.turn,
        ) = saved
        self.walls_left[self.turn] += 1

    def seals(self, maps: tuple[GoalMap, ...]) -> bool:
        """Whether these maps leave some seat still playing with no way to its goal."""
        retired = self.retired
        for seat, (goal_map, pawn) in enumerate(zip(maps, self.pawns, strict=True)):
            if not (goal_map.reach >> pawn) & 1 and not (retired >> seat) & 1:
                return True
        return False

    def notation(self, move: int) -> str:
        """A move in standard notation."""
        if move < WALL_H:
            row, col = divmod(move, self.stride)
            return format_square(col, row)
        slot = move - (WALL_V if move >= WALL_V else WALL_H)
        row, col = divmod(slot, self.stride)
        return format_square(col, row) + ("v" if move >= WALL_V else "h")

    def key(self) -> tuple[int, ...]:
        """Transposition key: walls, pawns, walls left, turn."""
        return (self.h_walls, self.v_walls, self.turn, *self.pawns, *self.walls_left)


def cut_walls(
    layers: tuple[int, ...],
    pawn: int,
    north: int,
    east: int,
    stride: int,
    h_free: int,
    v_free: int,
) -> list[int]:
    """Walls that close an edge of some shortest path from ``pawn`` to its goal.

    These are the only walls that can lengthen that seat's shortest path; the
    list runs from the pawn outwards (the walls closest to it first).
    """
    dist = distance(layers, pawn)
    current = 1 << pawn
    moves: list[int] = []
    for index in range(dist - 1, -1, -1):
        layer = layers[index]
        up = current & north & (layer >> stride)
        down = (current >> stride) & north & layer
        right = current & east & (layer >> 1)
        left = (current >> 1) & east & layer
        current = (up << stride) | down | (right << 1) | left
        vertical_steps, side_steps = up | down, right | left
        h = (vertical_steps | (vertical_steps >> 1)) & h_free
        v = (side_steps | (side_steps >> stride)) & v_free
        h_free &= ~h
        v_free &= ~v
        while h:
            low = h & -h
            moves.append(WALL_H + low.bit_length() - 1)
            h ^= low
        while v:
            low = v & -v
            moves.append(WALL_V + low.bit_length() - 1)
            v ^= low
    return moves


def _step(square: int, delta: int, north: int, east: int, stride: int) -> int:
    """The neighbour ``square + delta`` when no wall or edge is in between, else -1."""
    if delta == stride:
        return square + stride if (north >> square) & 1 else -1
    if delta == -stride:
        below = square - stride
        return below if below >= 0 and (north >> below) & 1 else -1
    if delta == 1:
        return square + 1 if (east >> square) & 1 else -1
    left = square - 1
    return left if left >= 0 and (east >> left) & 1 else -1
