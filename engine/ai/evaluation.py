"""Evaluation of a position and computer analysis of a finished game (two players).

**Evaluation.** :func:`evaluate` searches a position to a fixed depth (with a
node cap bounding its work) and reports, from the side to move's point of
view:

* ``score``: the search's score in *steps of the race* (the shortest-path
  difference, plus the tempo and the walls in hand as the search values
  them): ``+2.5`` means "two and a half steps ahead". A forced result is
  reported as ``win_in`` (plies to the end, negative when the side to move
  loses) and the score is then pinned to :data:`SCORE_CAP`;
* ``best`` and ``pv``: the best move and the principal variation;
* ``win_probability``: ``1 / (1 + exp(-K * score))`` on the uncapped score
  (1 or 0 for a forced result, 0.5 for an exact draw). :data:`K` was fitted by
  maximum likelihood on positions from bot games (``bench/calibrate.py``
  documents the method and prints the fit).

Once neither side holds a wall the exact endgame answers instead of the
search (``exact`` is then true): a won race is a win in so many plies.

**Game analysis.** :func:`analyse_game` evaluates every position of a game
once. A move's *loss* is the mover's win probability with the best move minus
with the move played, both scored by the same search to the same depth (so an
odd/even depth swing between consecutive positions is never read as a
mistake); the engine's own best move loses nothing by definition. When the played
or the best move is a step next to the goal (the opponent holding a wall), both are
scored a ply deeper (:func:`_threatens`). Marks follow lichess's thresholds on the
win-probability loss: :data:`MARKS`.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from engine.ai import endgame, exact_score
from engine.ai.position import WALL_H, WALL_V, Position, distance
from engine.ai.search import MATE_BOUND, RACE, STEP, WIN, Searcher, Timeout
from engine.game import Game
from engine.notation import parse_move

K = 0.35
"""Logistic slope of the win probability per step of score, fitted by ``bench/calibrate.py``
on 5,057 positions of 300 games between levels 1-4 (K = 0.3535; log loss 0.484 against
0.693 for a coin flip). Predicted against observed, per tenth: 0.05, 0.12, 0.23, 0.30, 0.39,
0.54, 0.69, 0.73, 0.86, 0.94: a step ahead is worth about 59 %, three steps 74 %."""
SCORE_CAP = 20.0
"""The score reported for a forced win (minus it for a forced loss), in steps."""
DEPTH = 4
"""Default search depth of an evaluation (plies)."""
NODES = 20_000
"""Default node cap of one evaluation: bounds its work whatever the position."""
GAME_NODES = 800_000
"""Node cap of a whole game's analysis (``nodes_per_move``): 40 moves at ``NODES`` each (a
move of a real game seldom needs half of it: a 9x9 game's analysis takes a few seconds)."""
MIN_NODES = 2_000
"""The least a move of a very long game is given (``nodes_per_move``)."""
PV_LENGTH = 8
MARKS = (("blunder", 0.30), ("mistake", 0.20), ("inaccuracy", 0.10))
"""A move losing at least this much win probability gets the mark (lichess's)."""


@dataclass(frozen=True)
class Evaluation:
    """One position's evaluation, from the side to move's point of view."""

    score: float
    """Steps ahead in the race (negative: behind); +-SCORE_CAP for a forced result."""
    win_probability: float
    win_in: int | None
    """Plies to a forced end: n > 0 the side to move wins, n < 0 it loses; else None."""
    best: str
    pv: tuple[str, ...]
    depth: int
    nodes: int
    exact: bool
    decided: bool = False
    """The search reads the race as decided (the loser cannot lengthen the winner's
    path any more); ``score`` is then the race margin and the probability near 0 or 1."""


@dataclass(frozen=True)
class MoveReview:
    """One move of a game, judged."""

    ply: int
    """0 for the first move."""
    seat: int
    move: str
    before: Evaluation
    """The position before the move, from the mover's view."""
    score_after: float
    """The mover's score after the move: the played move searched as deep as the best."""
    win_probability_after: float
    """The mover's win probability after the move."""
    pv_after: tuple[str, ...]
    """The line the search expects after the move played, the opponent's reply first (the
    move itself not repeated): why a marked move is worse. Empty when it ends the game, or
    passes up a win in one (the search then looks no further than that win)."""
    loss: float
    """Win probability the move gave away (0 to 1)."""
    mark: str | None
    """``"inaccuracy"``, ``"mistake"``, ``"blunder"`` or None."""


@dataclass(frozen=True)
class Summary:
    """One seat's moves in a game, summed up."""

    seat: int
    moves: int
    average_loss: float
    """Mean win-probability loss per move (0 to 1)."""
    marks: dict[str, int] = field(default_factory=dict)
    """Mark -> how many of this seat's moves got it (every mark present)."""


@dataclass(frozen=True)
class GameAnalysis:
    moves: tuple[MoveReview, ...]
    summaries: tuple[Summary, ...]
    final: Evaluation | None
    """The last position's evaluation when the game did not end on the board."""


def win_probability(score: float) -> float:
    """The calibrated win probability of a score in steps (side to move's view)."""
    return 1.0 / (1.0 + math.exp(-K * max(-200.0, min(200.0, score))))


def evaluate(
    record: str | Sequence[str],
    *,
    size: int = 9,
    walls: int | None = None,
    depth: int = DEPTH,
    nodes: int = NODES,
) -> Evaluation:
    """Evaluate the position after ``record`` (two players; the game not over).

    Deterministic: a fixed depth and node cap, no clock and no randomness in
    what is reported. Raises ValueError for a finished game or a bad record.
    """
    game = Game.from_moves(record, 2, size, walls)
    if game.is_over:
        raise ValueError(f"the game is over: seat {game.winner} has won")
    return _evaluate(Position(game, {}), depth, nodes)


def _evaluate(position: Position, depth: int, nodes: int) -> Evaluation:
    return _judge(position, None, depth, nodes)[0]


def _judge(
    position: Position, played: int | None, depth: int, nodes: int
) -> tuple[Evaluation, int, tuple[str, ...]]:
    """The position's evaluation, and the search score of the ``played`` move and the line
    after it, searched to the same depth from the same root (so both are comparable). The
    line is read from what the search already did (its table, the endgame's): no more work."""
    if endgame.applies(position):
        ranked = endgame.ranked_moves(position)
        value = next((v for v, m in ranked if m == played), ranked[0][0])
        line = () if played is None else _exact_line(position, played)[1:]
        return _exact(position), exact_score(value), line
    searcher = Searcher(position, max_depth=depth, deadline=math.inf, max_nodes=nodes)
    move, stats = searcher.run(random.Random(0))
    if searcher.cut and searcher.settled >= 0:
        # The node cap stopped an iteration: report the move its score belongs to (that of
        # the deepest finished iteration), not one the unfinished iteration preferred.
        move = searcher.settled
    best, reached = stats.score, stats.depth
    score = best
    if played is not None and played != move:
        me = position.turn
        if played < WALL_H and (position.goals[me] >> played) & 1:
            score = WIN - 1
        else:
            if searcher.cut:
                # Its table holds the unfinished iteration's deeper scores: read as the
                # played move's, they would judge it a ply deeper than the best move.
                searcher.reset_table()
            searcher.max_nodes = None  # one more move: its work is bounded by the depth
            score = searcher.score_move(played, max(1, reached))
            if (
                reached == depth
                and abs(best) < MATE_BOUND
                and (_threatens(position, played) or _threatens(position, move))
            ):
                # A step next to the goal, played or best: judge both one ply deeper, within
                # the move's share of nodes (else as they are). At an even depth the
                # opponent's wall in front of the pawn has the last word in every line, and
                # such steps were judged far more harshly than deeper searches judge them.
                searcher.max_nodes = nodes
                try:
                    deeper = searcher.score_move(move, depth + 1)
                    score = searcher.score_move(played, depth + 1)
                except Timeout:
                    pass
                else:
                    best, reached = deeper, depth + 1
                    if score > best:  # the step is the better move one ply deeper
                        best, move = score, played
    pv = searcher.principal_variation(move, PV_LENGTH)
    names = tuple(position.notation(m) for m in pv) or (position.notation(move),)
    after: tuple[str, ...] = ()
    if played is not None:
        # The table holds the played move's own search (or, when it is the best move, the
        # root's): its line, as long as the best move's with the move itself left out.
        after = tuple(position.notation(m) for m in searcher.principal_variation(played, PV_LENGTH))
    return _from_score(best, names, reached, stats.nodes, exact=False), score, after[1:]


def _threatens(position: Position, move: int) -> bool:
    """Whether ``move`` steps the mover next to its goal while the opponent holds a wall."""
    me = position.turn
    if move >= WALL_H or not position.walls_left[1 - me]:
        return False
    return distance(position.maps()[me].layers, move) == 1


def _exact(position: Position) -> Evaluation:
    value = endgame.ranked_moves(position)[0][0]
    return _from_score(exact_score(value), _exact_line(position, None), 0, 0, exact=True)


def _exact_line(position: Position, first: int | None) -> tuple[str, ...]:
    """``first`` (by default the best move) and the endgame's best replies after it, up to
    ``PV_LENGTH`` moves or the end of the game (the endgame's tables are look-ups)."""
    line: list[str] = []
    saved: list[tuple[int, int]] = []
    try:
        while len(line) < PV_LENGTH:
            move = endgame.ranked_moves(position)[0][1] if first is None or line else first
            line.append(position.notation(move))
            me = position.turn
            if (position.goals[me] >> move) & 1:
                break
            saved.append((me, position.pawns[me]))
            position.pawns[me] = move
            position.turn = 1 - me
    finally:
        for me, square in reversed(saved):
            position.turn = me
            position.pawns[me] = square
    return tuple(line)


def _from_score(score: int, pv: tuple[str, ...], depth: int, nodes: int, exact: bool) -> Evaluation:
    if abs(score) >= MATE_BOUND:
        plies = WIN - abs(score)
        won = score > 0
        return Evaluation(
            score=SCORE_CAP if won else -SCORE_CAP,
            win_probability=1.0 if won else 0.0,
            win_in=plies if won else -plies,
            best=pv[0],
            pv=pv,
            depth=depth,
            nodes=nodes,
            exact=exact,
        )
    # A race the search reads as decided carries a bonus: shown as steps without it.
    decided = abs(score) > RACE // 2
    shown = score - RACE if score > RACE // 2 else score + RACE if score < -RACE // 2 else score
    return Evaluation(
        score=round(shown / STEP, 1),
        win_probability=0.5 if exact else round(win_probability(score / STEP), 4),
        win_in=None,
        best=pv[0],
        pv=pv,
        depth=depth,
        nodes=nodes,
        exact=exact,
        decided=decided,
    )


def analyse_game(
    record: str | Sequence[str],
    *,
    size: int = 9,
    walls: int | None = None,
    depth: int = DEPTH,
    nodes: int | None = None,
    deadline: float = math.inf,
) -> GameAnalysis:
    """Judge every move of a two-player game (finished or not).

    ``deadline`` (a ``time.monotonic()`` value) stops a runaway analysis with
    TimeoutError; each position's work is bounded by ``nodes`` anyway (by default
    ``nodes_per_move``, as the server's analyses).
    """
    moves = Game.from_moves(record, 2, size, walls).moves  # checks the whole record first
    if nodes is None:
        nodes = nodes_per_move(len(moves))
    game = Game(2, size, walls)
    reviews: list[MoveReview] = []
    for ply, move in enumerate(moves):
        if time.monotonic() > deadline:
            raise TimeoutError("the analysis ran out of time")
        reviews.append(_review_here(game, ply, move, depth, nodes))
        game.play(move)
    final = None if game.is_over else _evaluate(Position(game, {}), depth, nodes)
    reviews = settle(reviews)
    summaries = tuple(_summary(seat, reviews) for seat in (0, 1))
    return GameAnalysis(tuple(reviews), summaries, final)


def nodes_per_move(moves: int) -> int:
    """The node cap of each move's review in an analysis of a game of ``moves`` moves:
    ``NODES``, or for a game longer than 40 moves an even share of ``GAME_NODES`` (at least
    ``MIN_NODES``), so that a game drawn out on purpose costs no more than a long real one.
    It depends on the length alone: the same game always gets the same analysis."""
    return max(MIN_NODES, min(NODES, GAME_NODES // max(1, moves)))


def review_move(
    record: Sequence[str],
    ply: int,
    *,
    size: int = 9,
    walls: int | None = None,
    depth: int = DEPTH,
    nodes: int = NODES,
) -> MoveReview:
    """Judge move ``ply`` (0 for the first) of a two-player ``record``: one step of
    :func:`analyse_game`, for callers that spread a game's analysis over time."""
    game = Game.from_moves(record[:ply], 2, size, walls)
    if ply >= len(record):
        raise ValueError(f"the record has no move {ply + 1}")
    if game.is_over or not game.is_legal(record[ply]):
        raise ValueError(f"move {ply + 1} ({record[ply]}) cannot be played")
    return _review_here(game, ply, record[ply], depth, nodes)


def _review_here(game: Game, ply: int, move: str, depth: int, nodes: int) -> MoveReview:
    position = Position(game, {})
    before, played, after = _judge(position, _move_id(position, move), depth, nodes)
    return _review(ply, move, before, _from_score(played, (move, *after), 0, 0, False))


def _move_id(position: Position, move: str) -> int:
    """The search's number for a move in notation (see ``engine.ai.position``)."""
    parsed = parse_move(move, position.size)
    square = parsed.row * position.stride + parsed.col
    if not parsed.is_wall:
        return square
    return (WALL_H if parsed.orientation == "h" else WALL_V) + square


def settle(reviews: Sequence[MoveReview]) -> list[MoveReview]:
    """A two-player game's reviews made to agree with what the later positions showed.

    Each move's search sees only so far: an outside review lost to a win found one move
    later, and the move that allowed it was not marked (its search had not seen it; the
    reply's did). Two facts repair that, walked from the last move back: the position after
    a move is the one its reply is played from, so the move is worth no more than that
    position is worth to the reply's player, turned round; and a position is worth at least
    the move played from it, which its player could make. A move into a loss found only by
    the reply's search is then judged by what that search found.
    """
    settled = list(reviews)
    later: Evaluation | None = None  # the position after this move, from the reply's side
    for index in range(len(settled) - 1, -1, -1):
        review = settled[index]
        before = review.before
        after = Evaluation(
            score=review.score_after,
            win_probability=review.win_probability_after,
            win_in=None,
            best=review.move,
            pv=(review.move, *review.pv_after),
            depth=before.depth,
            nodes=0,
            exact=False,
        )
        if later is not None and -later.score < after.score:
            after = replace(
                after,
                score=-later.score,
                win_probability=1.0 - later.win_probability,
                win_in=None if later.win_in is None else -later.win_in - _sign(later.win_in),
                pv=(review.move, *later.pv),
            )
        if after.score > before.score:  # the move played did better than the search's best
            before = replace(
                before,
                score=after.score,
                win_probability=after.win_probability,
                win_in=after.win_in,
                best=review.move,
                pv=after.pv,
            )
        settled[index] = _review(review.ply, review.move, before, after)
        later = before
    return settled


def _sign(number: int) -> int:
    return 1 if number > 0 else -1


def _review(ply: int, move: str, before: Evaluation, after: Evaluation) -> MoveReview:
    """``after`` is the played move's evaluation, from the mover's view."""
    score_after, probability_after = after.score, after.win_probability
    loss = 0.0 if move == before.best else max(0.0, before.win_probability - probability_after)
    mark = next((name for name, threshold in MARKS if loss >= threshold), None)
    return MoveReview(
        ply=ply,
        seat=ply % 2,
        move=move,
        before=before,
        score_after=score_after,
        win_probability_after=round(probability_after, 4),
        pv_after=after.pv[1:],
        loss=round(loss, 4),
        mark=mark,
    )


def _summary(seat: int, reviews: list[MoveReview]) -> Summary:
    mine = [review for review in reviews if review.seat == seat]
    average = sum(review.loss for review in mine) / len(mine) if mine else 0.0
    marks = {name: sum(review.mark == name for review in mine) for name, _ in MARKS}
    return Summary(seat=seat, moves=len(mine), average_loss=round(average, 4), marks=marks)


__all__ = [
    "MARKS",
    "Evaluation",
    "GameAnalysis",
    "K",
    "MoveReview",
    "Summary",
    "analyse_game",
    "evaluate",
    "review_move",
    "settle",
    "win_probability",
]
