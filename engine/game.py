"""A game of Quoridor: the position, the rules, and the record.

The rules (seeds 000 and 001, settled by issue 2):

- One action per turn, no pass: step the pawn or place a wall.
- A step is one square orthogonally, never through a wall, off the board or
  onto a pawn.
- An orthogonally adjacent pawn with no wall between may be jumped straight
  over when the square behind it is on the board, not walled off and empty.
- Only when that straight jump is blocked (wall, board edge, or in the
  four-player game another pawn) may the jumper land beside the jumped pawn,
  perpendicular to the jump, on an empty square not walled off from it. Only
  one pawn is ever jumped.
- A wall spans two squares; walls may not overlap or cross at their midpoint,
  and may not leave any player, the placer included, without a route to its
  goal edge (pawns ignored).
- The game ends the moment a pawn reaches its goal edge.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any, NamedTuple, cast

from engine.board import (
    Geometry,
    bits,
    field_cut,
    field_distance,
    field_layer,
    geometry,
    goal_field,
    joined,
    path_edges,
    reaches,
    wall_points,
)
from engine.errors import IllegalMove, NotationError
from engine.notation import COLUMNS, Move, format_record, format_square, parse_move, parse_record
from engine.variant import Variant

NORTH, EAST, SOUTH, WEST = range(4)
_PERPENDICULAR = ((EAST, WEST), (NORTH, SOUTH), (EAST, WEST), (NORTH, SOUTH))


class _Snapshot(NamedTuple):
    """Everything ``undo`` restores; all of it is immutable ints and tuples."""

    pawns: tuple[int, ...]
    walls_left: tuple[int, ...]
    h_walls: int
    v_walls: int
    h_forbidden: int
    v_forbidden: int
    closed_north: int
    closed_east: int
    points: int
    routes: tuple[tuple[int, int] | None, ...]
    turn: int
    winner: int | None
    retired: int


_Entry = tuple[int | str | None, ...]
"""A ``Game._history`` entry (see ``Game._entry``)."""


def _entry_size(players: int) -> int:
    """How many items ``Game._entry`` makes: the pawns, the walls left, ten scalars and the
    action."""
    return 2 * players + 11


def _unpack(entry: _Entry, players: int) -> tuple[_Snapshot, str]:
    """``Game._entry`` backwards: the snapshot and the action."""
    flat = cast(tuple[Any, ...], entry)
    pawns, walls_left = flat[:players], flat[players : 2 * players]
    scalars = flat[2 * players : -1]
    routes = (None,) * players  # not kept: walked again when needed
    (h_walls, v_walls, h_forbidden, v_forbidden, north, east, points, turn, winner, retired) = (
        scalars
    )
    snap = _Snapshot(
        pawns, walls_left, h_walls, v_walls, h_forbidden, v_forbidden, north, east, points,
        routes, turn, winner, retired,
    )  # fmt: skip
    return snap, flat[-1]


class Game:
    """A Quoridor game from its start, with its full record.

    >>> game = Game()
    >>> game.play("e2"); game.play("e8"); game.play("e3h")
    >>> game.moves
    ['e2', 'e8', 'e3h']
    """

    def __init__(self, players: int = 2, size: int = 9, walls: int | None = None) -> None:
        self.variant = Variant.of(players, size, walls)
        """The parameters this game is played with."""
        self._geo: Geometry = geometry(self.variant.size)
        geo = self._geo
        self._goals = _goal_masks(self.variant.players, self.variant.size)
        self._pawns = [geo.bit(*self.variant.start(seat)) for seat in range(self.variant.players)]
        self._walls_left = [self.variant.walls] * self.variant.players
        self._h_walls = self._v_walls = 0
        self._h_forbidden = self._v_forbidden = 0
        self._closed_north = self._closed_east = 0
        self._points = geo.border_points
        self._open_edges = self._find_open()
        """The squares whose north / east edge a pawn can cross (``_find_open``)."""
        self._routes: list[tuple[int, int] | None] = [None] * self.variant.players
        """Per seat, the (north, east) edges of some walk from its pawn to its goal,
        or None until needed. It only guides the wall filter, so it may be long."""
        self._turn = 0
        self._targets: int | None = None
        """The seat to move's pawn targets, once worked out in this position."""
        fields, distances = _opening_fields(self.variant.players, self.variant.size)
        self._distances: list[int | None] = list(distances)
        """Each seat's distance to its goal, once worked out in this position."""
        self._fields: list[list[int] | None] = [list(field) for field in fields]
        """Per seat, the distances from its goal edge found so far (``field_distance``),
        kept until a wall changes them (``field_cut``); at first the opening's, copied."""
        self._wall_list: list[str] | None = []
        """The walls on the board in notation (``walls``), kept as walls are placed; None
        after an undo, until asked for."""
        self._sealing: list[tuple[int, int] | None] = [None] * self.variant.players
        """Per seat, the free (horizontal, vertical) slots whose wall would leave it no way
        to its goal, once worked out. Kept across pawn moves (``_update_sealing``), worked
        out again after a wall or an undo."""
        self._parts: list[int] | None = [geo.border_points]
        """``_wall_parts``: at first the board's edge alone."""
        self._risky: tuple[int, int] | None = None
        """``_risky_slots``, once worked out since the last wall or undo."""
        self._legal_slots: tuple[int, int] | None = None
        """``_free_slots``, once worked out since the last change of ``_sealing``."""
        every_slot = (1 << 2 * (geo.size - 1) ** 2) - 1  # geo.pack_slots(geo.slots, geo.slots)
        self._packed = ((geo.slots, geo.slots), every_slot)
        """The last ``_legal_slots`` packed (``legal_wall_mask``), with what it packed: at
        first every slot, as at the start, so later ones flip only the slots that changed."""
        self._winner: int | None = None
        self._retired = 0
        """Bit per seat that has left a four-player game: its pawn stays, its turns pass."""
        self._moves: list[str] = []
        self._history: list[int | str | None] = []
        """Per action, what it changed and the action (a move, or ``retire N``): the
        ``_entry`` of each, one after the other in one flat list (``_entry_size`` items
        each). Flat, so that a move adds no object for the garbage collector to walk: a
        tuple per move was the largest share of the young collections' work on a busy
        server (bench/core_cost.py: 1.7 us of collection per move, 1.2 flat)."""

    @classmethod
    def from_moves(
        cls,
        record: str | Iterable[str],
        players: int = 2,
        size: int = 9,
        walls: int | None = None,
    ) -> Game:
        """A game after playing ``record``: a record string, or a list of actions.

        A list may also hold ``retire N`` entries (what ``undo`` returns for a
        retirement), so a four-player game where a seat left can be rebuilt.
        """
        game = cls(players, size, walls)
        moves = parse_record(record, players) if isinstance(record, str) else record
        for move in moves:
            game.apply(move)
        return game

    def apply(self, action: str) -> None:
        """``play`` a move, or ``retire`` a seat for ``retire N``."""
        if action.startswith("retire "):
            seat = action.removeprefix("retire ")
            if not seat.isdigit():
                raise NotationError(f"{action!r} is not a retirement: expected retire 0..3")
            self.retire(int(seat))
        else:
            self.play(action)

    # -- what the position is -------------------------------------------------

    @property
    def turn(self) -> int:
        """The seat to move; once the game is over, the winner (who moved last)."""
        return self._turn

    @property
    def winner(self) -> int | None:
        """The seat whose pawn reached its goal edge, or None while playing."""
        return self._winner

    @property
    def is_over(self) -> bool:
        return self._winner is not None

    @property
    def moves(self) -> list[str]:
        """The record so far, one notation string per ply (a copy)."""
        return list(self._moves)

    @property
    def last_move(self) -> str | None:
        """The last move played (without copying the record), or None at the start."""
        return self._moves[-1] if self._moves else None

    @property
    def ply(self) -> int:
        """Number of moves played."""
        return len(self._moves)

    @property
    def pawns(self) -> list[str]:
        """Each seat's square, in notation."""
        return [self._geo.square_names[bit] for bit in self._pawns]

    @property
    def walls_left(self) -> list[int]:
        """Walls each seat still holds."""
        return list(self._walls_left)

    @property
    def walls(self) -> list[str]:
        """Every wall on the board, horizontal ones first, in slot order."""
        if self._wall_list is None:
            geo = self._geo
            names = geo.slot_names(self._h_walls, True) + geo.slot_names(self._v_walls, False)
            self._wall_list = names
        return list(self._wall_list)

    def record(self, numbered: bool = False) -> str:
        """The moves so far in standard notation (``numbered`` for ``1. e2 e8``).

        Retirements (``retire``) are not moves and are not in the record.
        """
        return format_record(self._moves, self.variant.players, numbered)

    def distance(self, seat: int) -> int:
        """Fewest pawn steps from the seat's square to its goal edge (jumps ignored)."""
        return self._distance_list()[seat]

    def distances(self) -> list[int]:
        """``distance`` for every seat."""
        return list(self._distance_list())

    def _distance_list(self) -> list[int]:
        known = self._distances
        if None in known:
            for seat, distance in enumerate(known):
                if distance is None:
                    known[seat] = self._distance(seat)
        return cast(list[int], known)

    def __str__(self) -> str:
        """A text diagram, row 9 on top; pawns are their seat numbers.

        ``|`` between squares is a vertical wall and ``-`` under a square a
        horizontal one; a wall's middle character sits on its midpoint, so
        ``-----`` is one wall and ``--- ---`` two walls end to end::

              a b c d e f g h i
            9 . . . . 1 . . . .
                      ---
            8 . . . . . .|. . .
                         |
            7 . . . . . .|. . .
        """
        size, geo = self.variant.size, self._geo
        label = len(str(size))
        occupant = {bit: str(seat) for seat, bit in enumerate(self._pawns)}
        letters = " " * (label + 1) + " ".join(COLUMNS[:size])
        lines = [letters]
        for row in reversed(range(size)):
            cells = []
            for col in range(size):
                bit = geo.bit(col, row)
                cells.append(occupant.get(bit, "."))
                cells.append("|" if (self._closed_east >> bit) & 1 else " ")
            lines.append(f"{row + 1:>{label}} " + "".join(cells).rstrip())
            if row:
                lines.append(" " * (label + 1) + self._groove_line(row - 1).rstrip())
        lines.append(letters)
        return "\n".join(line.rstrip() for line in lines) + "\n"

    def _groove_line(self, row: int) -> str:
        """The text between ``row`` and the row above it."""
        geo, size = self._geo, self.variant.size
        chars = [" "] * (2 * size - 1)
        for col in range(size):
            if (self._closed_north >> geo.bit(col, row)) & 1:
                chars[2 * col] = "-"
        for col in range(size - 1):
            slot = geo.bit(col, row)
            if (self._h_walls >> slot) & 1:
                chars[2 * col + 1] = "-"
            elif (self._v_walls >> slot) & 1:
                chars[2 * col + 1] = "|"
        return "".join(chars)

    # -- what may be played ---------------------------------------------------

    def legal_moves(self) -> list[str]:
        """Every legal move for the seat to move: pawn moves first, then walls."""
        return self.legal_pawn_moves() + self.legal_walls()

    def legal_pawn_moves(self) -> list[str]:
        """The squares the seat to move may step or jump to, in bit order."""
        if self._winner is not None:
            return []
        return list(_square_names(self._geo, self._pawn_targets(self._turn)))

    def legal_walls(self) -> list[str]:
        """Every wall the seat to move may place: horizontal first, in slot order."""
        if self._winner is not None or not self._walls_left[self._turn]:
            return []
        return self._wall_names()

    def legal_wall_mask(self) -> int:
        """``legal_walls`` as one int, bit ``i`` for wall slot ``i`` (``Geometry.pack_slots``):
        horizontal slots first, row by row from row 1, then vertical ones likewise."""
        if self._winner is not None or not self._walls_left[self._turn]:
            return 0
        free = self._free_slots()
        (h_from, v_from), packed = self._packed
        if free != (h_from, v_from):  # after most pawn moves the legal walls are the same
            packed = self._geo.repack(packed, free[0] ^ h_from, free[1] ^ v_from)
            self._packed = (free, packed)
        return packed

    def _wall_names(self) -> list[str]:
        """Every wall that may stand on the board now, whoever places it."""
        h_free, v_free = self._free_slots()
        return self._geo.slot_names(h_free, True) + self._geo.slot_names(v_free, False)

    def _free_slots(self) -> tuple[int, int]:
        """The (horizontal, vertical) slots where a wall may stand now, as board masks."""
        if self._legal_slots is None:
            geo = self._geo
            h_free = geo.slots & ~self._h_forbidden
            v_free = geo.slots & ~self._v_forbidden
            for seat in range(self.variant.players):
                if not (self._retired >> seat) & 1:
                    h_sealing, v_sealing = self._sealing_walls(seat)
                    h_free &= ~h_sealing
                    v_free &= ~v_sealing
            self._legal_slots = (h_free, v_free)
        return self._legal_slots

    def _sealing_walls(self, seat: int) -> tuple[int, int]:
        """The free (horizontal, vertical) slots whose wall would seal ``seat``'s way."""
        sealing = self._sealing[seat]
        if sealing is not None:
            return sealing
        stride = self._geo.stride
        h_risky, v_risky = self._risky_slots()
        h_sealing = v_sealing = 0
        if h_risky | v_risky:
            # Only a wall that closes an edge of the seat's route can seal it.
            north, east = self._route(seat)
            for slot in bits(h_risky & (north | (north >> 1))):
                if self._splits(seat, 1 << slot, True):
                    h_sealing |= 1 << slot
            for slot in bits(v_risky & (east | (east >> stride))):
                if self._splits(seat, 1 << slot, False):
                    v_sealing |= 1 << slot
        sealing = self._sealing[seat] = (h_sealing, v_sealing)
        return sealing

    def _risky_slots(self) -> tuple[int, int]:
        """The free (horizontal, vertical) slots whose wall might cut the board in two:
        the same for every seat, so worked out once until the walls change."""
        if self._risky is None:
            geo = self._geo
            stride, points = geo.stride, self._points
            # A wall can only cut the board in two when it closes a loop of walls
            # and board edge, which needs two of its three lattice points to be
            # touched already: find those walls for all slots at once.
            a, b, c = points >> stride, points >> (stride + 1), points >> (stride + 2)
            h_risky = geo.slots & ~self._h_forbidden & ((a & b) | (a & c) | (b & c))
            a, b, c = points >> 1, points >> (stride + 1), points >> (2 * stride + 1)
            v_risky = geo.slots & ~self._v_forbidden & ((a & b) | (a & c) | (b & c))
            self._risky = (h_risky, v_risky)
        return self._risky

    def _update_sealing(self, seat: int, here: int, target: int) -> None:
        """Keep ``seat``'s sealing walls right as its pawn steps from ``here`` to ``target``.

        The pawn walked over an open edge, so a wall that does not close that edge
        leaves both squares on the same side of it: it seals the seat from one exactly
        when from the other. Only the (at most two) walls that close the edge can change.
        Nothing changes for the other seats (pawns are no obstacle to a path), nor for
        a wall that closes no loop (``_risky_slots``): it seals no one, ever.
        """
        sealing = self._sealing[seat]
        if sealing is None:
            return
        stride, low = self._geo.stride, min(here, target)
        h_risky, v_risky = self._risky_slots()
        edge = (1 << low) | (1 << low >> 1)  # the slots of the walls closing it, for a north edge
        if abs(target - here) == stride:
            horizontal, candidates = True, edge & h_risky
        elif abs(target - here) == 1:
            edge = (1 << low) | (1 << low >> stride)
            horizontal, candidates = False, edge & v_risky
        else:  # a jump crosses two edges: work it out again when needed
            self._sealing[seat] = self._legal_slots = None
            return
        if not candidates:
            return
        h_sealing, v_sealing = sealing
        changing = h_sealing if horizontal else v_sealing
        for slot in bits(candidates):
            wall = 1 << slot
            sealed = self._seals(seat, wall, horizontal)
            changing = changing | wall if sealed else changing & ~wall
        updated = (changing, v_sealing) if horizontal else (h_sealing, changing)
        if updated != sealing:
            self._sealing[seat] = updated
            self._legal_slots = None

    def is_legal(self, move: str) -> bool:
        try:
            self._check(move)
        except ValueError:
            return False
        return True

    # -- playing --------------------------------------------------------------

    def play(self, move: str) -> None:
        """Play a move in notation for the seat to move.

        Raises NotationError when ``move`` is not notation for this board and
        IllegalMove, with the reason, when the rules forbid it. Either way the
        game is unchanged.
        """
        parsed = self._check(move)
        # parse_move accepts only the notation it prints, so ``move`` is ``str(parsed)``.
        self._history += self._entry(move)
        seat, square = self._turn, self._geo.bit(parsed.col, parsed.row)
        if parsed.orientation:  # a wall
            self._place_wall(1 << square, parsed.orientation == "h", move)
            self._walls_left[seat] -= 1
        else:
            target, here = square, self._pawns[seat]
            self._extend_route(seat, target)
            self._pawns[seat] = target
            self._update_sealing(seat, here, target)
            if (1 << target) & self._goals[seat]:
                self._winner = seat
            # Pawns are no obstacle to a distance: only the mover's changed, and a step
            # moves it to a neighbouring layer of its field: look there first.
            known, field = self._distances[seat], self._fields[seat]
            if known is not None and field is not None:
                known = field_layer(field, 1 << target, known)
            self._distances[seat] = None if known is None or known < 0 else known
        self._targets = None
        self._moves.append(move)
        if self._winner is None:
            self._turn = self._next_seat(seat)

    def retire(self, seat: int) -> None:
        """Take a seat out of a four-player game (it resigned or walked away).

        Its pawn stays on the board as an obstacle, its turns are skipped, and
        walls no longer need to leave it a path. The game goes on while two
        or more seats remain; what to do with the last one is the caller's call.
        """
        if self.variant.players != 4:
            raise IllegalMove("only a four-player game goes on without a seat")
        if self._winner is not None:
            raise IllegalMove(f"the game is over: seat {self._winner} has won")
        if not 0 <= seat < 4 or (self._retired >> seat) & 1:
            raise IllegalMove(f"seat {seat} is not in the game")
        if (self._retired | (1 << seat)).bit_count() == 4:
            raise IllegalMove("the last seat cannot retire")
        self._history += self._entry(f"retire {seat}")
        self._retired |= 1 << seat
        self._targets = self._legal_slots = None  # its sealing walls no longer count
        if self._turn == seat:
            self._turn = self._next_seat(seat)

    @property
    def retired(self) -> list[int]:
        """Seats that left a four-player game, lowest first."""
        return [seat for seat in range(self.variant.players) if (self._retired >> seat) & 1]

    def is_retired(self, seat: int) -> bool:
        """Whether ``seat`` left a four-player game (``seat in retired``, without a list)."""
        return bool((self._retired >> seat) & 1)

    def undo(self) -> str:
        """Take back the last action and return it (a move, or ``retire N``).

        IndexError when there is none.
        """
        if not self._history:
            raise IndexError("no move to undo")
        size = _entry_size(self.variant.players)
        entry = tuple(self._history[-size:])
        del self._history[-size:]
        snap, action = _unpack(entry, self.variant.players)
        self._pawns = list(snap.pawns)
        self._walls_left = list(snap.walls_left)
        self._h_walls, self._v_walls = snap.h_walls, snap.v_walls
        self._h_forbidden, self._v_forbidden = snap.h_forbidden, snap.v_forbidden
        self._closed_north, self._closed_east = snap.closed_north, snap.closed_east
        self._open_edges = self._find_open()
        self._points, self._turn, self._winner = snap.points, snap.turn, snap.winner
        self._routes = list(snap.routes)
        self._retired = snap.retired
        self._targets = self._wall_list = self._legal_slots = None
        self._distances = [None] * self.variant.players
        self._fields = [None] * self.variant.players
        self._sealing = [None] * self.variant.players
        self._risky = self._parts = None
        if not action.startswith("retire"):
            self._moves.pop()
        return action

    # -- internals ------------------------------------------------------------

    def _next_seat(self, seat: int) -> int:
        """The seat after ``seat`` in turn order that can act.

        Retired seats are skipped, and so is a seat with no legal action at
        all: in the four-player game pawns and walls can box in a pawn whose
        walls are spent, and since nothing is legal for it, it passes until
        it can move again. (With two players this cannot happen: the box
        would seal both pawns' paths, which no wall may do.)
        """
        players = self.variant.players
        if players == 2:
            return 1 - seat
        seats = [(seat + step) % players for step in range(1, players + 1)]
        active = [s for s in seats if not (self._retired >> s) & 1]
        return next((s for s in active if self._can_act(s)), active[0])

    def _can_act(self, seat: int) -> bool:
        if self._find_pawn_targets(seat):
            return True
        return bool(self._walls_left[seat] and self._wall_names())

    def _entry(self, action: str) -> _Entry:
        """What ``undo`` restores before ``action``, flat: ``_Snapshot``'s fields but the
        routes (a cache, walked again when needed) with each tuple spread out, then
        ``action``.

        Ints, ``None`` and a string, added item by item to the flat ``_history`` (the
        tuple itself is freed at once): a game's history adds no object the garbage
        collector walks, neither in the young collections nor in the old generation that
        every full collection walks again.
        """
        return (
            *self._pawns,
            *self._walls_left,
            self._h_walls,
            self._v_walls,
            self._h_forbidden,
            self._v_forbidden,
            self._closed_north,
            self._closed_east,
            self._points,
            self._turn,
            self._winner,
            self._retired,
            action,
        )

    def _snapshot(self) -> _Snapshot:
        return _Snapshot(
            tuple(self._pawns),
            tuple(self._walls_left),
            self._h_walls,
            self._v_walls,
            self._h_forbidden,
            self._v_forbidden,
            self._closed_north,
            self._closed_east,
            self._points,
            tuple(self._routes),
            self._turn,
            self._winner,
            self._retired,
        )

    def _find_open(self) -> tuple[int, int]:
        """Squares whose north / east edge a pawn can cross right now, worked out from the
        walls (kept in ``_open_edges`` as they change)."""
        geo = self._geo
        return (
            geo.board & ~geo.top_row & ~self._closed_north,
            geo.board & ~geo.last_col & ~self._closed_east,
        )

    def _distance(self, seat: int) -> int:
        """The seat's distance to its goal, from its field (made, or grown, if need be)."""
        north, east = self._open_edges
        stride, field = self._geo.stride, self._fields[seat]
        if field is None:
            field = self._fields[seat] = goal_field(self._goals[seat], north, east, stride)
        return field_distance(field, 1 << self._pawns[seat], north, east, stride)

    def _route(self, seat: int) -> tuple[int, int]:
        """The seat's cached walk to its goal: if unknown, a shortest one, walked down the
        frontiers of its distance field (which its distance reads too)."""
        route = self._routes[seat]
        if route is None:
            distance = self._distance(seat)
            field, (north, east) = self._fields[seat], self._open_edges
            assert field is not None
            pawn, stride = 1 << self._pawns[seat], self._geo.stride
            frontiers = field[1 : distance + 2]  # from the goal edge out to the pawn
            route = self._routes[seat] = path_edges(frontiers, pawn, north, east, stride)
        return route

    def _extend_route(self, seat: int, target: int) -> None:
        """Keep the seat's walk valid as its pawn moves to ``target``."""
        route = self._routes[seat]
        if route is None:
            return
        here, stride = self._pawns[seat], self._geo.stride
        low = min(here, target)
        step = abs(target - here)
        # One step back onto the old walk extends it; after a jump, search again.
        if step == stride:
            self._routes[seat] = (route[0] | (1 << low), route[1])
        elif step == 1:
            self._routes[seat] = (route[0], route[1] | (1 << low))
        else:
            self._routes[seat] = None

    def _sealed_seat(self, wall: int, horizontal: bool) -> int | None:
        """The first seat this wall would leave with no way to its goal, if any."""
        for seat in range(self.variant.players):
            if not (self._retired >> seat) & 1 and self._seals(seat, wall, horizontal):
                return seat
        return None

    def _seals(self, seat: int, wall: int, horizontal: bool) -> bool:
        """Whether this wall would leave ``seat`` with no way to its goal."""
        stride = self._geo.stride
        if horizontal:
            closes_north, closes_east = wall | (wall << 1), 0
        else:
            closes_north, closes_east = 0, wall | (wall << stride)
        touched = self._points & wall_points(wall, horizontal, stride)
        if touched.bit_count() < 2:
            return False  # closes no loop, so it cannot cut the board in two
        route_north, route_east = self._route(seat)
        if not (closes_north & route_north or closes_east & route_east):
            return False  # the seat's route goes round it
        return self._splits(seat, wall, horizontal)

    def _splits(self, seat: int, wall: int, horizontal: bool) -> bool:
        """``_seals`` for a wall that closes an edge of the seat's route."""
        stride = self._geo.stride
        if not self._closes_loop(wall_points(wall, horizontal, stride)):
            return False
        if horizontal:
            return self._cut_off(seat, wall | (wall << 1), 0)
        return self._cut_off(seat, 0, wall | (wall << stride))

    def _closes_loop(self, points: int) -> bool:
        """Whether a wall touching these lattice points links two already linked by walls
        and board edge: only a wall that closes such a loop can cut the board in two (any
        other leaves as many regions as there were). Two touched points, the quick test
        (``_risky_slots``), are often two ends of unlinked walls."""
        for part in self._wall_parts():
            shared = part & points
            if shared & (shared - 1):  # two points or more
                return True
        return False

    def _wall_parts(self) -> list[int]:
        """The lattice points linked by walls and board edge, a mask per linked group
        (``engine.board.joined``); kept as walls are placed, worked out after an undo."""
        if self._parts is None:
            geo = self._geo
            parts = [geo.border_points]
            for slot in bits(self._h_walls):
                parts = joined(parts, wall_points(1 << slot, True, geo.stride))
            for slot in bits(self._v_walls):
                parts = joined(parts, wall_points(1 << slot, False, geo.stride))
            self._parts = parts
        return self._parts

    def _cut_off(self, seat: int, closes_north: int, closes_east: int) -> bool:
        """Whether closing these edges too would leave ``seat`` no way to its goal."""
        north, east = self._open_edges
        north &= ~closes_north
        east &= ~closes_east
        pawn, goal = 1 << self._pawns[seat], self._goals[seat]
        return not reaches(pawn, goal, north, east, self._geo.stride)

    def _place_wall(self, wall: int, horizontal: bool, name: str) -> None:
        stride = self._geo.stride
        self._list_wall(wall, horizontal, name)
        self._legal_slots = None
        self._sealing = [None] * self.variant.players
        self._risky = None
        if horizontal:
            self._h_walls |= wall
            closed = wall | (wall << 1)
            self._closed_north |= closed
            self._h_forbidden |= wall | (wall << 1) | (wall >> 1)
            self._v_forbidden |= wall
            cut = [route is not None and route[0] & closed for route in self._routes]
        else:
            self._v_walls |= wall
            closed = wall | (wall << stride)
            self._closed_east |= closed
            self._v_forbidden |= wall | (wall << stride) | (wall >> stride)
            self._h_forbidden |= wall
            cut = [route is not None and route[1] & closed for route in self._routes]
        points = wall_points(wall, horizontal, stride)
        self._points |= points
        if self._parts is not None:
            self._parts = joined(self._parts, points)
        self._open_edges = self._find_open()
        for seat, broken in enumerate(cut):
            if broken:
                self._routes[seat] = None
        self._keep_fields(closed if horizontal else 0, 0 if horizontal else closed)

    def _list_wall(self, wall: int, horizontal: bool, name: str) -> None:
        """Insert a new wall's name in ``_wall_list`` (horizontal walls first, in slot
        order) where it goes: the walls before it are counted, not named again."""
        if self._wall_list is None:
            return
        before = wall - 1  # the slots below this one
        if horizontal:
            index = (self._h_walls & before).bit_count()
        else:
            index = self._h_walls.bit_count() + (self._v_walls & before).bit_count()
        self._wall_list.insert(index, name)

    def _keep_fields(self, closes_north: int, closes_east: int) -> None:
        """After a wall, drop the distance fields (and distances) it changes; a wall
        across someone else's way mostly leaves a seat's distance as it was."""
        stride = self._geo.stride
        for seat, field in enumerate(self._fields):
            if field is not None and field_cut(field, closes_north, closes_east, stride):
                self._fields[seat] = self._distances[seat] = None

    def _step(self, square: int, direction: int, north: int, east: int) -> int:
        """The neighbour of ``square`` in ``direction``, or -1 past a wall or edge."""
        stride = self._geo.stride
        if direction == NORTH:
            return square + stride if (north >> square) & 1 else -1
        if direction == EAST:
            return square + 1 if (east >> square) & 1 else -1
        if direction == SOUTH:
            below = square - stride
            return below if below >= 0 and (north >> below) & 1 else -1
        left = square - 1
        return left if left >= 0 and (east >> left) & 1 else -1

    def _pawn_targets(self, seat: int) -> int:
        """Mask of the squares ``seat`` may move its pawn to (cached for the seat to move)."""
        if seat == self._turn and self._targets is not None:
            return self._targets
        targets = self._find_pawn_targets(seat)
        if seat == self._turn:
            self._targets = targets
        return targets

    def _find_pawn_targets(self, seat: int) -> int:
        occupied = 0
        for pawn in self._pawns:
            occupied |= 1 << pawn
        here = self._pawns[seat]
        north, east = self._open_edges
        stride, pawn = self._geo.stride, 1 << here
        steps = (
            ((pawn & north) << stride)
            | ((pawn >> stride) & north)
            | ((pawn & east) << 1)
            | ((pawn >> 1) & east)
        )
        if not steps & occupied:
            return steps  # no pawn next to this one: no jumps to work out
        targets = 0
        for direction in (NORTH, EAST, SOUTH, WEST):
            near = self._step(here, direction, north, east)
            if near < 0:
                continue
            if not (occupied >> near) & 1:
                targets |= 1 << near
                continue
            behind = self._step(near, direction, north, east)
            if behind >= 0 and not (occupied >> behind) & 1:
                targets |= 1 << behind
                continue
            for side in _PERPENDICULAR[direction]:
                landing = self._step(near, side, north, east)
                if landing >= 0 and not (occupied >> landing) & 1:
                    targets |= 1 << landing
        return targets

    def _check(self, text: str) -> Move:
        """Parse and check a move; raise NotationError or IllegalMove."""
        move = parse_move(text, self.variant.size)
        if self._winner is not None:
            raise IllegalMove(f"the game is over: seat {self._winner} has won")
        if move.is_wall:
            self._check_wall(move)
        else:
            self._check_step(move)
        return move

    def _check_step(self, move: Move) -> None:
        geo = self._geo
        target = geo.bit(move.col, move.row)
        if (self._pawn_targets(self._turn) >> target) & 1:
            return
        here = self._pawns[self._turn]
        origin = geo.square_names[here]
        if target in self._pawns:
            seat = self._pawns.index(target)
            raise IllegalMove(f"{move} is occupied by seat {seat}'s pawn")
        (col, row), (to_col, to_row) = geo.coords(here), (move.col, move.row)
        if abs(col - to_col) + abs(row - to_row) == 1:
            raise IllegalMove(f"a wall blocks the step from {origin} to {move}")
        if abs(col - to_col) + abs(row - to_row) == 2 and self._adjacent_pawn_between(here, target):
            if col == to_col or row == to_row:
                raise IllegalMove(
                    f"cannot jump from {origin} to {move}: a wall or a pawn is in the way"
                )
            raise IllegalMove(
                f"cannot jump from {origin} to {move}: a diagonal landing is allowed only "
                "when the straight jump is blocked, and no wall may be crossed"
            )
        raise IllegalMove(f"{move} is not one step or jump away from {origin}")

    def _adjacent_pawn_between(self, here: int, target: int) -> bool:
        """Is there a pawn next to ``here`` that ``target`` is beyond or beside?"""
        (col, row), (to_col, to_row) = self._geo.coords(here), self._geo.coords(target)
        for pawn in self._pawns:
            pc, pr = self._geo.coords(pawn)
            next_to_here = abs(pc - col) + abs(pr - row) == 1
            if next_to_here and abs(pc - to_col) + abs(pr - to_row) == 1:
                return True
        return False

    def _check_wall(self, move: Move) -> None:
        geo, seat = self._geo, self._turn
        if not self._walls_left[seat]:
            raise IllegalMove(f"seat {seat} has no walls left")
        slot = geo.bit(move.col, move.row)
        horizontal = move.orientation == "h"
        self._check_overlap(move, slot, horizontal)
        legal = self._legal_slots  # known when the state was last sent: mostly
        if legal is not None and (legal[0 if horizontal else 1] >> slot) & 1:
            return
        sealed = self._sealed_seat(1 << slot, horizontal)
        if sealed is not None:
            goal = self.variant.goal_name(sealed)
            raise IllegalMove(f"wall {move} would leave seat {sealed} no path to {goal}")

    def _check_overlap(self, move: Move, slot: int, horizontal: bool) -> None:
        forbidden = self._h_forbidden if horizontal else self._v_forbidden
        if not (forbidden >> slot) & 1:
            return
        geo, name = self._geo, str(move)
        # Name the wall in the way: the same wall, a cross, or one along the groove.
        same, cross = (
            (self._h_walls, self._v_walls) if horizontal else (self._v_walls, self._h_walls)
        )
        if (same >> slot) & 1:
            raise IllegalMove(f"wall {name} is already on the board")
        if (cross >> slot) & 1:
            col, row = geo.coords(slot)
            other = "v" if horizontal else "h"
            raise IllegalMove(f"wall {name} crosses {format_square(col, row)}{other}")
        step = 1 if horizontal else geo.stride
        for neighbour in (slot - step, slot + step):
            if neighbour >= 0 and (same >> neighbour) & 1:
                col, row = geo.coords(neighbour)
                raise IllegalMove(f"wall {name} overlaps {format_square(col, row)}{name[-1]}")
        raise AssertionError("forbidden slot without a wall in the way")  # pragma: no cover

    # -- for search code (engine.ai) ------------------------------------------

    def bitboards(self) -> _Snapshot:
        """The position as plain ints, for search code to copy into its own state.

        The fields are ``_Snapshot``'s: pawn square bits, walls left, wall slot
        masks, forbidden slot masks, closed north/east edge masks, lattice
        points, cached routes, turn and winner (see ``engine.board`` for the
        bit layout). Read only: nothing here is shared with the game.
        """
        return self._snapshot()

    def goal_masks(self) -> tuple[int, ...]:
        """Per seat, the mask of the squares of its goal edge."""
        return self._goals


__all__ = ["Game", "IllegalMove", "NotationError"]


@cache
def _square_names(geo: Geometry, mask: int) -> tuple[str, ...]:
    """The squares of ``mask`` in notation, in bit order: a pawn's targets, of which a
    board has a few thousand sets at most, so each is named once."""
    names = geo.square_names
    return tuple(names[bit] for bit in bits(mask))


@cache
def _opening_fields(players: int, size: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """Each seat's distance field (``goal_field``, grown to its pawn) and distance at the
    start: the same for every game of a variant, so searched once and copied. A new game
    is asked its distances at once (the state sent on joining), and searching them took
    about a third of what opening a room cost the server (bench/wire_cost.py)."""
    geo, variant = geometry(size), Variant.of(players, size)
    north, east = geo.board & ~geo.top_row, geo.board & ~geo.last_col
    fields, distances = [], []
    for seat, goal in enumerate(_goal_masks(players, size)):
        field = goal_field(goal, north, east, geo.stride)
        pawn = 1 << geo.bit(*variant.start(seat))
        distances.append(field_distance(field, pawn, north, east, geo.stride))
        fields.append(tuple(field))
    return tuple(fields), tuple(distances)


@cache
def _goal_masks(players: int, size: int) -> tuple[int, ...]:
    """Each seat's goal edge as a mask (the same for every game of a variant)."""
    geo, last = geometry(size), size - 1
    if players == 2:
        return (geo.row_mask(last), geo.row_mask(0))
    return (geo.row_mask(last), geo.col_mask(last), geo.row_mask(0), geo.col_mask(0))
