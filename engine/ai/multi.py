"""Four-player fallback: a shallow max-n search on a race evaluation.

Each seat's *finish time* is the ply on which it would arrive walking its
shortest path while nobody walls it: ``(distance - 1) * players + places
until its turn``. A seat's value is how far the earliest other seat is
behind it (positive: it leads), in steps, plus a little for its walls.

* depth 1: the mover plays the move with the best value for itself;
* depth 2 (max-n): each mover move is answered by the next seat's best move
  for *that* seat (its own depth-1 choice), and the mover keeps the move
  whose answered position is best for it.

Candidate walls are those that cut a shortest path of the leading opponent
(or of both leading opponents when they are level), as in the two-player
search. This is a fallback for filling seats, not a strong player.
"""

from __future__ import annotations

import random
import time

from engine.ai.position import (
    WALL_H,
    GoalMap,
    Position,
    cut_walls,
    distance,
)
from engine.ai.search import STEP, Timeout, careless_choice
from engine.board import bits


def _values(pos: Position, maps: tuple[GoalMap, ...]) -> list[float]:
    """Every seat's race value in this position (seat to move is ``pos.turn``)."""
    players = pos.players
    playing = [seat for seat in range(players) if not (pos.retired >> seat) & 1]
    finish = [0] * players
    for seat in playing:
        dist = distance(maps[seat].layers, pos.pawns[seat])
        if dist == 0:
            finish[seat] = -players  # already arrived: the game is won
            continue
        finish[seat] = (dist - 1) * players + (seat - pos.turn) % players
    values = [0.0] * players
    for seat in playing:
        rival = min((finish[other] for other in playing if other != seat), default=finish[seat])
        lead = (rival - finish[seat]) / players
        values[seat] = STEP * lead + 3 * pos.walls_left[seat]
    return values


class MultiSearcher:
    """Max-n to depth 1 or 2 for three or more seats."""

    def __init__(self, position: Position, *, max_depth: int, deadline: float) -> None:
        self.pos = position
        self.max_depth = min(max_depth, 2)
        self.deadline = deadline
        self.nodes = 0

    def moves(self) -> list[int]:
        """Pawn moves, then walls against the leading opponent(s); all legal."""
        pos = self.pos
        me = pos.turn
        maps = pos.maps()
        result = bits(pos.pawn_targets(me))
        if not pos.walls_left[me]:
            return result
        players = pos.players
        finish = {
            seat: (distance(maps[seat].layers, pos.pawns[seat]) - 1) * players
            + (seat - me) % players
            for seat in range(players)
            if seat != me and not (pos.retired >> seat) & 1
        }
        if not finish:
            return result
        lead = min(finish.values())
        north, east = pos.open_edges()
        h_free, v_free = pos.free_slots()
        walls: list[int] = []
        for seat, when in finish.items():
            if when <= lead + players:
                for wall in cut_walls(
                    maps[seat].layers, pos.pawns[seat], north, east, pos.stride, h_free, v_free
                ):
                    if wall not in walls:
                        walls.append(wall)
        for wall in walls:
            closes_north, closes_east = pos.wall_edges(wall)
            if not pos.seals(pos.maps_after_wall(maps, closes_north, closes_east)):
                result.append(wall)
        return result

    def _play(self, move: int) -> tuple[int, ...]:
        pos = self.pos
        if move < WALL_H:
            seat = pos.turn
            here = pos.pawns[seat]
            pos.pawns[seat] = move
            pos.turn = pos.next_seat(seat)
            return (seat, here)
        return pos.place_wall(move)

    def _unplay(self, move: int, saved: tuple[int, ...]) -> None:
        pos = self.pos
        if move < WALL_H:
            pos.turn, pos.pawns[saved[0]] = saved
        else:
            pos.remove_wall(saved)

    def _after(self, move: int, depth: int) -> list[float]:
        """Value vector after ``move`` for the seat to move, searched ``depth - 1`` more."""
        self.nodes += 1
        if time.perf_counter() >= self.deadline:
            raise Timeout
        pos = self.pos
        mover = pos.turn
        if move < WALL_H and (pos.goals[mover] >> move) & 1:
            values = [-1e6] * pos.players
            values[mover] = 1e6
            return values
        saved = self._play(move)
        try:
            if depth <= 1:
                return _values(pos, pos.maps())
            seat = pos.turn
            best: list[float] | None = None
            for reply in self.moves():
                values = self._after(reply, depth - 1)
                if best is None or values[seat] > best[seat]:
                    best = values
            return best if best is not None else _values(pos, pos.maps())
        finally:
            self._unplay(move, saved)

    def run(self, rng: random.Random, noise: int = 0) -> tuple[int, dict[int, float]]:
        """The chosen move (-1 when there is no candidate) and the root scores."""
        moves = self.moves()
        if not moves:
            return -1, {}  # boxed in, and no wall against a leader: the caller picks
        rng.shuffle(moves)
        me = self.pos.turn
        for move in moves:
            if move < WALL_H and (self.pos.goals[me] >> move) & 1:
                return move, {move: 1e6}
        scores: dict[int, float] = {}
        try:
            for depth in range(1, self.max_depth + 1):
                iteration = {move: self._after(move, depth)[me] for move in moves}
                scores = iteration
        except Timeout:
            pass
        if not scores:
            # Out of time before any evaluation: the move nearest the goal.
            mine = self.pos.maps()[me].layers
            return min(
                moves, key=lambda move: WALL_H if move >= WALL_H else distance(mine, move)
            ), {}
        return careless_choice(self.pos, scores, rng, noise), scores
