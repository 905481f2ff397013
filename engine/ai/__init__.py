"""Quoridor bots on the engine's bitboards: pure, standard library only, no I/O.

The one entry point is a plain function of plain values, so it can be sent to
a process pool as is::

    from engine.ai import choose_move

    choose_move("e2 e8 e3", level=5)            # -> "e7", say
    choose_move(["e2", "e8"], level=1, seed=7)  # the same answer for the same seed

Two players get an iterative-deepening principal variation search
(:mod:`engine.ai.search`); three or more a shallow max-n on a race evaluation
(:mod:`engine.ai.multi`). Every level stops at its depth cap, node cap or
time budget, whichever comes first, and always answers with a legal move.

Levels (:data:`LEVELS`; ``budget`` overrides the time, never the caps):

===== ========= ===== ===== ====== ===== =========================================
level name      depth nodes time s noise what it is like
===== ========= ===== ===== ====== ===== =========================================
1     beginner  1     -     0.5    60    greedy; often plays a merely decent move
2     casual    2     -     1.0    27    sees the reply, still careless
3     club      2     -     1.0    6     sees the reply, rarely careless
4     strong    3     -     1.5    0     three plies, exact
5     expert    12    -     2.0    0     deepens until its time is up
===== ========= ===== ===== ====== ===== =========================================

In a two-player game the levels without noise (4 and 5) play a move drawn
from those of the best move's kind (steps, or walls) that their search scored
within a fifth of a step of it, so that the same moves against them do not
replay the same game (``bench/arena.py``, 30 games at 0.5 s a move against the
same level without: 13 won, 17 lost, within the noise of so few games; with
walls drawn against a best step too, 10 of 30, so steps and walls are not
mixed).

Once neither of two players holds a wall, the levels without noise (4 and 5)
play the exact endgame (:mod:`engine.ai.endgame`): no search, the quickest
forced win, else a draw, else the slowest loss.

On a clock (:func:`move_budget`) a level thinks for less than its time when the
clock runs low: a twentieth of what is left plus half the increment, like any
engine with time management, so it never runs out of time by thinking.

Noise is in evaluation units (a step of shortest-path difference is 10):
the root moves get exact scores and the move with the best score plus a
uniform random amount in ``[0, noise]`` is played; a pawn move that leads no
nearer the goal gets no random amount, so a careless level misjudges walls
and races but does not wander to and fro. Without noise, moves that score
the same are chosen between by the seed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from engine.ai import endgame
from engine.ai.multi import MultiSearcher
from engine.ai.position import GoalMap, Position, distance
from engine.ai.search import WIN, Searcher, Stats
from engine.game import Game


@dataclass(frozen=True)
class Level:
    """How one level searches."""

    level: int
    name: str
    depth: int
    """Deepest iteration (plies)."""
    time: float
    """Default time budget per move, seconds."""
    nodes: int | None
    """Node cap (deterministic, unlike the clock), or None."""
    noise: int
    """Random slack added to root scores (a step is 10); 0 plays the best move."""
    about: str
    variety: int = 0
    """A move drawn from those of the best one's kind (steps or walls) scored within this of
    it (a step is 10): the levels without noise would otherwise play the same game again
    against the same moves, and a player who once found a win could repeat it for ever."""


LEVELS: dict[int, Level] = {
    1: Level(1, "beginner", 1, 0.5, None, 60, "greedy; often plays a merely decent move"),
    2: Level(2, "casual", 2, 1.0, None, 27, "sees the reply, still careless"),
    3: Level(3, "club", 2, 1.0, None, 6, "sees the reply, rarely careless"),
    4: Level(4, "strong", 3, 1.5, None, 0, "three plies, exact", variety=2),
    5: Level(5, "expert", 12, 2.0, None, 0, "deepens until its time is up", variety=2),
}
"""The levels, weakest first."""


MOVES_AHEAD = 20
"""A move on a clock spends at most this fraction (1/20) of what is left: what is left then
shrinks by a twentieth a move, and lasts any game (the computer lost every 10 s bullet game on
time while it thought its level's 2 s a move: an outside review)."""
OVERHEAD = 0.05
"""Seconds of a clock kept for what a move costs besides its search (the record replayed, the
answer handed back and sent)."""
SHORTEST = 0.01
"""The least time a move is given: enough for a search of a ply or two."""

_MAP_CACHES: dict[tuple[int, int], dict[tuple[int, int], tuple[GoalMap, ...]]] = {}
"""Per (players, size), goal maps by closed edges, kept between calls in one
process (a pure function of the walls, so it changes no answer)."""


def choose_move(
    record: str | Sequence[str],
    *,
    players: int = 2,
    size: int = 9,
    walls: int | None = None,
    level: int = 3,
    budget: float | None = None,
    seed: int | None = None,
) -> str:
    """The bot's move, in standard notation, for the seat to move after ``record``.

    ``record`` is a record string or a list of actions as ``Game.from_moves``
    takes them (a list may hold ``retire N`` entries of a four-player game).

    ``walls=None`` is the official supply (10 each, 5 in the four-player
    game). ``budget`` is the time in seconds this call may take (default: the
    level's); the answer comes back within it plus a few milliseconds. Raises
    ValueError for an unknown level, a bad record or a finished game.
    """
    return analyse(
        record,
        players=players,
        size=size,
        walls=walls,
        level=level,
        budget=budget,
        seed=seed,
    )[0]


def move_budget(left: float, increment: float, most: float) -> float:
    """Seconds a move may take with ``left`` seconds on the mover's clock and ``increment``
    added after it: a twentieth of what is left (less ``OVERHEAD``) plus half the increment,
    never more than half of what is left nor more than ``most`` (the level's own time, or
    the one chosen), never less than ``SHORTEST``."""
    usable = left - OVERHEAD
    spend = min(most, usable / MOVES_AHEAD + increment / 2, usable / 2)
    return max(SHORTEST, spend)


def analyse(
    record: str | Sequence[str],
    *,
    players: int = 2,
    size: int = 9,
    walls: int | None = None,
    level: int = 3,
    budget: float | None = None,
    seed: int | None = None,
    variety: int | None = None,
) -> tuple[str, Stats]:
    """``choose_move`` plus what the search did (depth, score, nodes, time). ``variety``
    overrides the level's (0: the best move found, as the arena's ``-fixed`` players)."""
    started = time.perf_counter()
    if level not in LEVELS:
        raise ValueError(f"level must be one of {sorted(LEVELS)}, not {level}")
    settings = LEVELS[level]
    limit = settings.time if budget is None else budget
    if limit <= 0:
        raise ValueError(f"budget must be positive, not {budget}")
    # Leave room to build the answer: the search itself stops a little early.
    deadline = started + max(0.0, limit * 0.95 - 0.005)
    game = Game.from_moves(record, players, size, walls)
    if game.is_over:
        raise ValueError(f"the game is over: seat {game.winner} has won")
    cache = _MAP_CACHES.setdefault((game.variant.players, game.variant.size), {})
    position = Position(game, cache)
    rng = random.Random(seed)
    found = _exact(position, rng, deadline) if not settings.noise else None
    if found is not None:
        move, stats = found
    elif game.variant.players == 2:
        searcher = Searcher(
            position, max_depth=settings.depth, deadline=deadline, max_nodes=settings.nodes
        )
        near = settings.variety if variety is None else variety
        move, stats = searcher.run(rng, settings.noise, near)
    else:
        multi = MultiSearcher(position, max_depth=settings.depth, deadline=deadline)
        move, scores = multi.run(rng, settings.noise)
        stats = Stats(
            nodes=multi.nodes,
            depth=multi.max_depth,
            scores={position.notation(m): round(s) for m, s in scores.items()},
        )
    answer = position.notation(move) if move >= 0 else ""
    if not answer or not game.is_legal(answer):
        # No candidate (a boxed-in four-player pawn), or a bug guard never expected.
        answer = rng.choice(game.legal_moves())
    stats.elapsed = time.perf_counter() - started
    return answer, stats


def _exact(position: Position, rng: random.Random, deadline: float) -> tuple[int, Stats] | None:
    """The exact endgame's best move (ties broken by ``rng``), scored like a search; None
    when it does not apply, or its table is not known and cannot be solved by ``deadline``
    (the caller searches instead)."""
    if not endgame.applies(position):
        return None
    try:
        endgame.table(position, deadline)
    except TimeoutError:
        return None
    ranked = endgame.ranked_moves(position)
    best = ranked[0][0]
    layers = position.maps()[position.turn].layers
    nearest = distance(layers, ranked[0][1])
    move = rng.choice(
        [move for value, move in ranked if value == best and distance(layers, move) == nearest]
    )
    stats = Stats(score=exact_score(best), exact=True)
    stats.scores = {position.notation(m): exact_score(value) for value, m in ranked}
    return move, stats


def exact_score(value: int | None) -> int:
    """An exact endgame value as a search score (win in n: ``WIN - n``; draw: 0)."""
    if value is None:
        return 0
    return WIN - value if value > 0 else -WIN - value


__all__ = ["LEVELS", "SHORTEST", "Level", "Stats", "analyse", "choose_move", "move_budget"]
