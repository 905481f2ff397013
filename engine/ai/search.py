"""Two-player search: iterative deepening principal variation search.

* Negamax alpha-beta with a principal-variation (null-window) re-search, a
  transposition table keyed on ``(walls, turn, pawns, walls left)``, killer
  moves and a history table.
* Candidate moves: the pawn moves, and only the walls that close an edge of
  some shortest path of the opponent (:func:`engine.ai.position.cut_walls`):
  any other wall leaves the opponent's distance as it is and only spends a
  wall and a tempo, so it is pruned ("walls that cannot matter"). Walls are
  tried from the opponent's pawn outwards; pawn moves along one's own shortest
  path first.
* Evaluation (side to move's view, a step is worth 10): the shortest-path
  difference, walls in hand, a tempo bonus, and race knowledge: once a side
  has no walls left, the other one's path can no longer be lengthened, so the
  race can be read off the distances (up to pawn jumps).
* A win in one is found at every node before anything else; terminal scores
  are ``WIN - ply`` so nearer wins are preferred.

The search stops at a depth cap, a node cap or a deadline, whichever comes
first, and answers with the best move of the deepest finished iteration (or
a better one already proven in the unfinished one).
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from dataclasses import dataclass, field

from engine.ai.position import (
    WALL_H,
    WALL_V,
    GoalMap,
    Position,
    cut_walls,
    distance,
)
from engine.board import bits

WIN = 1_000_000
"""Score of a won position (minus the plies to the win)."""
MATE_BOUND = WIN - 10_000
"""Scores beyond this are wins or losses found by search."""
INF = WIN + 1
STEP = 10
"""Score of one step of shortest-path difference."""
TEMPO = 5
"""The side to move is half a step ahead in a race."""
WALL_VALUE = (0, 25, 45, 60, 72, 81, 88, 93, 97, 100, 102)
"""Value of holding n walls (diminishing); beyond the table, +2 a wall."""
RACE = 5_000
"""Bonus for a race that is decided once a side is out of walls."""

EXACT, LOWER, UPPER = 0, 1, 2
TABLE_LIMIT = 200_000
"""Entries the transposition table may hold (about 300 bytes each): emptied when full. With
``CUTS_LIMIT``, what bounds a long search's memory: a 30 s search (``ai.seconds``) grew a
worker process to about a gigabyte, which it then kept while idle (an outside review)."""
CUTS_LIMIT = 50_000
"""Entries of the wall cache (a list of walls each, about 1 kB): emptied when full."""
CHECK_EVERY = 15
"""Look at the clock every 16 nodes (a node costs from microseconds to a millisecond)."""


def careless_choice(
    pos: Position, scores: dict[int, int] | dict[int, float], rng: random.Random, noise: int
) -> int:
    """The root move a level with ``noise`` plays: the best score after a random slack in
    ``[0, noise]`` given to every wall and to every pawn move that brings the pawn nearer its
    goal. A step that does not (sideways, back) gets no slack, so it is played only when it
    scores best: a careless player misjudges walls and races, but does not wander to and fro
    (level 2, slack for every move, walked h2 g2 f2 g2 h2 g2 h2 while losing)."""
    me = pos.turn
    mine = pos.maps()[me].layers
    now = distance(mine, pos.pawns[me])

    def slack(move: int) -> float:
        forward = move >= WALL_H or distance(mine, move) < now
        return rng.uniform(0, noise) if forward else 0.0

    return max(scores, key=lambda move: scores[move] + slack(move))


class Timeout(Exception):
    """The deadline or node cap was hit: unwind the search."""


def wall_value(walls: int) -> int:
    if walls < len(WALL_VALUE):
        return WALL_VALUE[walls]
    return WALL_VALUE[-1] + 2 * (walls - len(WALL_VALUE) + 1)


def evaluate(d_me: int, d_op: int, w_me: int, w_op: int) -> int:
    """Static score for the side to move, who is ``d_me`` steps from its goal."""
    if w_op == 0 and d_me <= d_op:
        # Nobody can lengthen my path and I arrive first.
        return RACE + STEP * (d_op - d_me) + wall_value(w_me)
    if w_me == 0 and d_op < d_me:
        # I cannot lengthen the opponent's path and it arrives first.
        return -RACE + STEP * (d_op - d_me) - wall_value(w_op)
    return STEP * (d_op - d_me) + TEMPO + wall_value(w_me) - wall_value(w_op)


@dataclass
class Stats:
    """What one search did (for tests, tuning and the arena)."""

    nodes: int = 0
    depth: int = 0
    """Deepest iteration finished."""
    score: int = 0
    """Score of the chosen move at that depth, side to move's view."""
    elapsed: float = 0.0
    scores: dict[str, int] = field(default_factory=dict)
    """Root move -> score at the deepest finished depth (exact only with noise)."""
    exact: bool = False
    """Whether the answer came from the exact endgame rather than a search."""


class Searcher:
    """One two-player search from one position."""

    def __init__(
        self,
        position: Position,
        *,
        max_depth: int,
        deadline: float,
        max_nodes: int | None = None,
    ) -> None:
        self.pos = position
        self.max_depth = max_depth
        self.deadline = deadline
        self.max_nodes = max_nodes
        self.nodes = 0
        self.tt: dict[tuple[int, ...], tuple[int, int, int, int]] = {}
        """key -> (depth, flag, score, best move)."""
        self.killers: list[list[int]] = [[-1, -1] for _ in range(max_depth + 1)]
        self.history: defaultdict[int, int] = defaultdict(int)
        self.cuts: dict[tuple[int, int, int], list[int]] = {}
        """Candidate walls by (horizontal walls, vertical walls, opponent's square): a
        function of those alone, and asked for again at every iteration and transposition."""
        self.settled = -1
        """The best root move of the deepest finished iteration (the move ``Stats.score``
        scores; ``run`` may answer with a better one proven in an unfinished iteration)."""
        self.cut = False
        """Whether the last ``run`` stopped in the middle of an iteration (deadline or node
        cap): the table then holds deeper scores than ``Stats.depth`` (``reset_table``)."""

    # -- the clock --------------------------------------------------------------

    def _tick(self) -> None:
        self.nodes += 1
        if not self.nodes & CHECK_EVERY:
            if time.perf_counter() >= self.deadline:
                raise Timeout
            if self.max_nodes is not None and self.nodes >= self.max_nodes:
                raise Timeout

    # -- move generation --------------------------------------------------------

    def root_moves(self) -> list[int]:
        """Every candidate move at the root, legal, in a static order."""
        pos = self.pos
        me = pos.turn
        maps = pos.maps()
        moves: list[tuple[int, int]] = []
        mine = maps[me].layers
        for square in bits(pos.pawn_targets(me)):
            moves.append((distance(mine, square), square))
        moves.sort()
        ordered = [move for _, move in moves]
        for wall in self._walls(maps):
            if self._wall_maps(maps, wall) is not None:
                ordered.append(wall)
        return ordered

    def _walls(self, maps: tuple[GoalMap, ...]) -> list[int]:
        pos = self.pos
        me = pos.turn
        if not pos.walls_left[me]:
            return []
        op = 1 - me
        key = (pos.h_walls, pos.v_walls, pos.pawns[op])
        found = self.cuts.get(key)
        if found is None:
            north, east = pos.open_edges()
            h_free, v_free = pos.free_slots()
            found = cut_walls(
                maps[op].layers, pos.pawns[op], north, east, pos.stride, h_free, v_free
            )
            if len(self.cuts) >= CUTS_LIMIT:
                self.cuts.clear()
            self.cuts[key] = found
        return found

    def _wall_maps(self, maps: tuple[GoalMap, ...], wall: int) -> tuple[GoalMap, ...] | None:
        """The maps after ``wall``, or None when it would seal a pawn in."""
        pos = self.pos
        closes_north, closes_east = pos.wall_edges(wall)
        after = pos.maps_after_wall(maps, closes_north, closes_east)
        return None if pos.seals(after) else after

    # -- search -----------------------------------------------------------------

    def search(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Negamax score of the position for the side to move."""
        self._tick()
        pos = self.pos
        me = pos.turn
        op = 1 - me
        pawns = pos.pawns
        maps = pos.maps()
        mine, theirs = maps[me].layers, maps[op].layers
        d_me = distance(mine, pawns[me])
        if d_me == 1:
            targets = pos.pawn_targets(me)
            if targets & pos.goals[me]:
                return WIN - ply - 1
        if depth <= 0:
            return evaluate(
                d_me, distance(theirs, pawns[op]), pos.walls_left[me], pos.walls_left[op]
            )

        key = pos.key()
        entry = self.tt.get(key)
        tt_move = -1
        if entry is not None:
            e_depth, flag, value, tt_move = entry
            if e_depth >= depth:
                value = _from_tt(value, ply)
                if flag == EXACT:
                    return value
                if flag == LOWER:
                    if value >= beta:
                        return value
                elif value <= alpha:
                    return value

        original_alpha = alpha
        best, best_move = -INF, -1
        searched = 0
        for move in self._ordered(maps, mine, tt_move, ply):
            if move < WALL_H:
                here = pawns[me]
                if (pos.goals[me] >> move) & 1:
                    score = WIN - ply - 1
                else:
                    pawns[me] = move
                    pos.turn = op
                    try:
                        score = self._child(depth, alpha, beta, ply, searched)
                    finally:
                        pos.turn = me
                        pawns[me] = here
            else:
                if self._wall_maps(maps, move) is None:
                    continue
                saved = pos.place_wall(move)
                try:
                    score = self._child(depth, alpha, beta, ply, searched)
                finally:
                    pos.remove_wall(saved)
            searched += 1
            if score > best:
                best, best_move = score, move
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        if move >= WALL_H:
                            killers = self.killers[ply]
                            if killers[0] != move:
                                killers[1], killers[0] = killers[0], move
                            self.history[move] += depth * depth
                        break
        if best_move < 0:
            # No legal move: cannot happen in Quoridor (a pawn can always move).
            return evaluate(
                d_me, distance(theirs, pawns[op]), pos.walls_left[me], pos.walls_left[op]
            )
        flag = LOWER if best >= beta else UPPER if best <= original_alpha else EXACT
        if len(self.tt) >= TABLE_LIMIT:
            self.tt.clear()
        self.tt[key] = (depth, flag, _to_tt(best, ply), best_move)
        return best

    def _child(self, depth: int, alpha: int, beta: int, ply: int, searched: int) -> int:
        if searched == 0 or beta - alpha == 1:
            return -self.search(depth - 1, -beta, -alpha, ply + 1)
        score = -self.search(depth - 1, -alpha - 1, -alpha, ply + 1)
        if alpha < score < beta:
            score = -self.search(depth - 1, -beta, -score, ply + 1)
        return score

    def _ordered(
        self, maps: tuple[GoalMap, ...], mine: tuple[int, ...], tt_move: int, ply: int
    ) -> list[int]:
        """TT move, pawn moves that shorten one's path, killer walls, other walls by
        history then nearness to the opponent, other pawn moves."""
        pos = self.pos
        me = pos.turn
        here = distance(mine, pos.pawns[me])
        # A move forward lands on the layer one step nearer the goal (a jump may land two
        # nearer: on the layer before that).
        nearer = mine[here - 1] if here >= 1 else 0
        if here >= 2:
            nearer |= mine[here - 2]
        targets = pos.pawn_targets(me)
        forward = bits(targets & nearer)
        other = bits(targets & ~nearer)
        walls = self._walls(maps)
        if walls:
            history = self.history
            killers = self.killers[ply]
            first = [move for move in killers if move in walls]
            rest = [move for move in walls if move not in first]
            if history:
                rest.sort(key=history.__getitem__, reverse=True)  # stable: ties keep order
            walls = first + rest
        moves = forward + walls + other
        if tt_move >= 0 and tt_move in moves:
            moves.remove(tt_move)
            moves.insert(0, tt_move)
        return moves

    # -- the root ---------------------------------------------------------------

    def run(self, rng: random.Random, noise: int = 0, variety: int = 0) -> tuple[int, Stats]:
        """Iterative deepening from the root; returns the chosen move and stats.

        With ``noise``, every root move gets an exact score and the move with
        the highest score plus a uniform random amount in ``[0, noise]`` is
        played (``careless_choice``: no slack for a step that leads no nearer
        the goal). With ``variety``, a move is drawn at random from those of
        the best one's kind that the deepest finished iteration scored within
        ``variety`` of it (each of them searched exactly, the rest with a null
        window below them), so that an exact level does not play the same game
        again and again.
        Otherwise ties are broken by the seeded shuffle of the root moves.
        """
        started = time.perf_counter()
        stats = Stats()
        pos = self.pos
        me = pos.turn
        moves = self.root_moves()
        # Seeded shuffle, then pawn moves first, nearest the goal first (the answer if
        # not even depth 1 finishes): moves that score the same vary by seed.
        rng.shuffle(moves)
        mine = pos.maps()[me].layers
        moves.sort(key=lambda move: WALL_H if move >= WALL_H else distance(mine, move))
        # A pawn move that wins ends it.
        for move in moves:
            if move < WALL_H and (pos.goals[me] >> move) & 1:
                stats.score, stats.depth = WIN - 1, 1
                stats.elapsed = time.perf_counter() - started
                return move, stats
        chosen = moves[0]
        scores: dict[int, int] = {}
        self.cut = False
        try:
            for depth in range(1, self.max_depth + 1):
                iteration: dict[int, int] = {}
                alpha = -INF
                best_move, best = moves[0], -INF
                for index, move in enumerate(moves):
                    if noise or index == 0:
                        score = self._root_child(move, depth, -INF, INF)
                    else:
                        # The null window sits ``variety`` below the best so far: a move
                        # that fails low is out of the draw, one that does not is scored.
                        low = alpha - variety - 1 if variety else alpha
                        score = self._root_child(move, depth, low, low + 1)
                        if score > low:
                            score = self._root_child(move, depth, low, INF)
                    iteration[move] = score
                    if score > best:
                        best, best_move = score, move
                        alpha = max(alpha, score)
                        if depth > 1 and not noise and index:
                            chosen = best_move  # proven better than the previous best
                scores = iteration
                chosen = self.settled = best_move
                if variety and abs(best) < MATE_BOUND:
                    chosen = rng.choice(self._nearly_best(moves, iteration, best_move, variety))
                stats.depth, stats.score = depth, best
                # Best first next time; the rest by this iteration's scores.
                moves.sort(key=lambda move: -iteration.get(move, -INF))
                if abs(best) >= MATE_BOUND:
                    break  # a forced win or loss is known: deeper changes nothing
        except Timeout:
            self.cut = True
        if noise and scores:
            chosen = careless_choice(pos, scores, rng, noise)
        stats.nodes = self.nodes
        stats.elapsed = time.perf_counter() - started
        stats.scores = {pos.notation(move): score for move, score in scores.items()}
        return chosen, stats

    @staticmethod
    def _nearly_best(
        moves: list[int], scores: dict[int, int], best: int, variety: int
    ) -> list[int]:
        """The moves scored within ``variety`` of ``best``'s score and of its kind (pawn moves
        if it is one, else walls): early walls the search scored as high as the best step
        won 10 games of 30 against the same level without them (``bench/arena.py``)."""
        wall = best >= WALL_H
        floor = scores[best] - variety
        return [m for m in moves if scores[m] >= floor and (m >= WALL_H) == wall]

    def score_move(self, move: int, depth: int) -> int:
        """The score of one root move (legal, not winning at once) searched to ``depth``.

        After a ``run`` that was ``cut``, call ``reset_table`` first to score it to
        ``Stats.depth``: the unfinished iteration left deeper scores in the table, which
        the search would take for this move's (one ply more: the other parity)."""
        return self._root_child(move, depth, -INF, INF)

    def reset_table(self) -> None:
        """Forget the transposition table (the wall cache, killers and history stay: they
        only order moves and cut nothing)."""
        self.tt.clear()

    def principal_variation(self, first: int, length: int) -> list[int]:
        """``first`` and the best replies the transposition table remembers after it,
        each checked legal, up to ``length`` moves or the end of the game. A side that can
        step onto its goal does (the search answers that before its table, and stores
        nothing): the line ends with the winning step rather than one move short of it."""
        pos = self.pos
        line: list[int] = []
        undo: list[tuple[int, int | tuple[int, ...]]] = []
        move = first
        try:
            while len(line) < length and self._legal(move):
                line.append(move)
                me = pos.turn
                if move < WALL_H:
                    if (pos.goals[me] >> move) & 1:
                        break
                    undo.append((me, pos.pawns[me]))
                    pos.pawns[me] = move
                    pos.turn = 1 - me
                else:
                    undo.append((me, pos.place_wall(move)))
                move = self._winning_step()
                if move < 0:
                    entry = self.tt.get(pos.key())
                    if entry is None:
                        break
                    move = entry[3]
        finally:
            for me, saved in reversed(undo):
                if isinstance(saved, tuple):
                    pos.remove_wall(saved)
                else:
                    pos.turn = me
                    pos.pawns[me] = saved
        return line

    def _winning_step(self) -> int:
        """A step of the side to move onto its goal, or -1 when it has none."""
        pos = self.pos
        wins = pos.pawn_targets(pos.turn) & pos.goals[pos.turn]
        return (wins & -wins).bit_length() - 1

    def _legal(self, move: int) -> bool:
        pos = self.pos
        if move < 0:
            return False
        if move < WALL_H:
            return bool((pos.pawn_targets(pos.turn) >> move) & 1)
        if not pos.walls_left[pos.turn]:
            return False
        h_free, v_free = pos.free_slots()
        slot = move - (WALL_V if move >= WALL_V else WALL_H)
        if not ((h_free if move < WALL_V else v_free) >> slot) & 1:
            return False
        return self._wall_maps(pos.maps(), move) is not None

    def _root_child(self, move: int, depth: int, alpha: int, beta: int) -> int:
        pos = self.pos
        me = pos.turn
        if move < WALL_H:
            here = pos.pawns[me]
            pos.pawns[me] = move
            pos.turn = 1 - me
            try:
                return -self.search(depth - 1, -beta, -alpha, 1)
            finally:
                pos.turn = me
                pos.pawns[me] = here
        saved = pos.place_wall(move)
        try:
            return -self.search(depth - 1, -beta, -alpha, 1)
        finally:
            pos.remove_wall(saved)


def _to_tt(score: int, ply: int) -> int:
    if score >= MATE_BOUND:
        return score + ply
    if score <= -MATE_BOUND:
        return score - ply
    return score


def _from_tt(score: int, ply: int) -> int:
    if score >= MATE_BOUND:
        return score - ply
    if score <= -MATE_BOUND:
        return score + ply
    return score
