"""The exact endgame: two players, both out of walls, solved by retrograde analysis.

Once neither side holds a wall the board can no longer change, and what is
left is a pursuit race of two pawns whose whole state is ``(pawn 0, pawn 1,
side to move)``: at most 121 * 120 * 2 states on the largest board. Instead of
reading the race off the distances (which ignores that a pawn can jump the
other or stand in its way), every state is solved at once, backwards from the
finished games:

* a state where the side to move's opponent has just reached its goal edge is
  lost in 0 plies;
* a state with a successor lost in ``n`` is won in ``n + 1`` (the first such
  ``n`` found, breadth first, is the smallest);
* a state all of whose successors are won is lost in one more ply than its
  longest such successor (breadth first, the last one resolved).

States never resolved are draws: both sides can keep the other from ever
arriving (possible in principle when the pawns block each other in a
corridor). Jumps follow the engine's rules (:meth:`Position.pawn_targets`),
and the tests compare every state against a brute-force search on the
engine's own ``Game`` on small boards.

A table depends on the walls only, so one is built per wall layout (about
0.1 s on 9x9) and kept in a small per-process cache: a game's endgame is
solved once, then every later move of it is a look-up.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass

from engine.ai.position import Position, _step, distance
from engine.board import bits

_CACHE: dict[tuple[int, int, int, int], EndgameTable] = {}
_CACHE_LIMIT = 64


@dataclass(frozen=True)
class EndgameTable:
    """Exact values of every pawn placement for one wall layout.

    ``value(a, b, turn)`` is ``+n`` when the side to move wins in ``n``
    plies (its own moves and the opponent's), ``-n`` when it loses in ``n``
    (0 only where the game is already over) and None when neither side can
    force a win: a draw, the game would go on for ever.
    """

    values: dict[int, int]
    stride: int

    def value(self, pawn0: int, pawn1: int, turn: int) -> int | None:
        return self.values.get(_key(pawn0, pawn1, turn))


def _key(pawn0: int, pawn1: int, turn: int) -> int:
    return (pawn0 << 9 | pawn1) << 1 | turn


def targets(here: int, other: int, north: int, east: int, stride: int) -> int:
    """Squares a pawn on ``here`` may move to with the other pawn on ``other``."""
    pawn = 1 << here
    steps = (
        ((pawn & north) << stride)
        | ((pawn >> stride) & north)
        | ((pawn & east) << 1)
        | ((pawn >> 1) & east)
    )
    blocker = 1 << other
    if not steps & blocker:
        return steps
    result = steps & ~blocker
    delta = other - here
    behind = _step(other, delta, north, east, stride)
    if behind >= 0:
        return result | (1 << behind)
    for side in (1, -1) if delta in (stride, -stride) else (stride, -stride):
        landing = _step(other, side, north, east, stride)
        if landing >= 0:
            result |= 1 << landing
    return result


def table(pos: Position, deadline: float = math.inf) -> EndgameTable:
    """The solved table for the walls of ``pos`` (cached per wall layout).

    Raises TimeoutError, caching nothing, when solving would pass ``deadline``
    (a ``time.perf_counter()`` value): a bot short of time searches instead.
    """
    cache_key = (pos.size, pos.cn, pos.ce, pos.goals[0])
    found = _CACHE.get(cache_key)
    if found is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        north, east = pos.open_edges()
        maps = pos.maps()
        found = solve(maps[0].reach, maps[1].reach, pos.goals, north, east, pos.stride, deadline)
        _CACHE[cache_key] = found
    return found


def solve(
    reach0: int,
    reach1: int,
    goals: tuple[int, ...],
    north: int,
    east: int,
    stride: int,
    deadline: float = math.inf,
) -> EndgameTable:
    """Retrograde analysis of every placement of pawn 0 in ``reach0`` and pawn 1 in
    ``reach1`` (the squares that can reach their goal edges)."""
    squares = (bits(reach0), bits(reach1))
    values: dict[int, int] = {}
    unresolved: dict[int, int] = {}
    """State -> successors not yet known to be won for the mover's opponent."""
    parents: dict[int, list[int]] = {}
    queue: deque[int] = deque()
    goal0, goal1 = goals[0], goals[1]
    for a in squares[0]:
        if time.perf_counter() > deadline:
            raise TimeoutError("no time left to solve the endgame")
        for b in squares[1]:
            if a == b:
                continue
            a_home, b_home = (goal0 >> a) & 1, (goal1 >> b) & 1
            if a_home and b_home:
                continue
            for turn in (0, 1):
                state = _key(a, b, turn)
                if a_home or b_home:
                    # Only the side that just moved can stand on its goal edge.
                    if (a_home and turn == 1) or (b_home and turn == 0):
                        values[state] = 0
                        queue.append(state)
                    continue
                if turn == 0:
                    moves = targets(a, b, north, east, stride)
                    children = [_key(to, b, 1) for to in bits(moves)]
                else:
                    moves = targets(b, a, north, east, stride)
                    children = [_key(a, to, 0) for to in bits(moves)]
                unresolved[state] = len(children)
                for child in children:
                    parents.setdefault(child, []).append(state)
    popped = 0
    while queue:
        popped += 1
        if not popped & 1023 and time.perf_counter() > deadline:
            raise TimeoutError("no time left to solve the endgame")
        state = queue.popleft()
        value = values[state]
        for parent in parents.get(state, ()):
            if parent in values:
                continue
            if value <= 0:
                # The child is lost for its mover: the parent's mover wins by going there.
                values[parent] = -value + 1
                queue.append(parent)
            else:
                left = unresolved[parent] - 1
                unresolved[parent] = left
                if not left:
                    values[parent] = -(value + 1)
                    queue.append(parent)
    # States never resolved stay out of ``values``: draws.
    return EndgameTable(values, stride)


def applies(pos: Position) -> bool:
    """Whether ``pos`` is a two-player position where neither side holds a wall."""
    return pos.players == 2 and not any(pos.walls_left)


def value(pos: Position) -> int | None:
    """The exact value of ``pos`` for the side to move (see :class:`EndgameTable`)."""
    return table(pos).value(pos.pawns[0], pos.pawns[1], pos.turn)


def ranked_moves(pos: Position) -> list[tuple[int | None, int]]:
    """Every pawn move with its exact value for the mover, best first.

    Best is the quickest win, then a draw, then the slowest loss; between moves
    of the same value, the one nearest the goal first (it looks purposeful and
    gives a fallible opponent the most chances to go wrong).
    """
    solved = table(pos)
    north, east = pos.open_edges()
    me = pos.turn
    a, b = pos.pawns
    here, other = (a, b) if me == 0 else (b, a)
    ranked: list[tuple[int | None, int]] = []
    for to in bits(targets(here, other, north, east, pos.stride)):
        child = solved.value(to, b, 1) if me == 0 else solved.value(a, to, 0)
        ranked.append((_parent_value(child), to))
    layers = pos.maps()[me].layers
    ranked.sort(key=lambda item: (_preference(item[0]), distance(layers, item[1])))
    return ranked


def _parent_value(child: int | None) -> int | None:
    """The mover's value of a move from the value of the state it leads to
    (the opponent's view): their loss in n is a win in n + 1, and so on."""
    if child is None:
        return None
    return -child + 1 if child <= 0 else -(child + 1)


def _preference(value: int | None) -> tuple[int, int]:
    """Sort key: wins (fastest first), then draws, then losses (slowest first)."""
    if value is None:
        return (1, 0)
    if value > 0:
        return (0, value)
    return (2, value)


__all__ = ["EndgameTable", "applies", "ranked_moves", "solve", "table", "targets", "value"]
