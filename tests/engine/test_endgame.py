"""The exact endgame (``engine.ai.endgame``) against a brute-force search on ``Game``.

The brute force knows nothing of the solver: it plays the engine's own legal
moves (``Game.legal_pawn_moves``, the rules the server enforces, jumps and
all) and finds by exhaustive depth-limited minimax whether the side to move
wins or loses within ``DEPTH`` plies, and how fast. Every state reachable from
each wall layout must agree with the table: the same win or loss in the same
number of plies when it is within the horizon, nothing found otherwise.
"""

from __future__ import annotations

import random
from collections import deque

import pytest

from engine import Game
from engine.ai import analyse, choose_move, endgame
from engine.ai.position import Position

DEPTH = 9


def brute_force(game: Game, depth: int, memo: dict[tuple[object, ...], int | None]) -> int | None:
    """+n: the side to move wins in n <= depth plies; -n: it loses in n; None: neither."""
    key = (tuple(game.pawns), game.turn, depth)
    if key in memo:
        return memo[key]
    result: int | None = None
    if depth > 0:
        wins: list[int] = []
        losses: list[int] = []
        unknown = False
        for move in game.legal_pawn_moves():
            game.play(move)
            if game.is_over:
                child: int | None = 0
            else:
                child = brute_force(game, depth - 1, memo)
            game.undo()
            if child is None:
                unknown = True
            elif child <= 0:
                wins.append(-child + 1)
            else:
                losses.append(child + 1)
        if wins:
            result = min(wins)
        elif not unknown:
            result = -max(losses)
    memo[key] = result
    return result


def layouts() -> list[Game]:
    """5x5 games whose walls are all down: none, and seeded random layouts."""
    games = [Game(size=5, walls=0)]
    for seed in range(5):
        rng = random.Random(seed)
        game = Game(size=5, walls=3)
        while any(game.walls_left):
            walls = [move for move in game.legal_moves() if move[-1] in "hv"]
            game.play(rng.choice(walls))
        games.append(game)
    return games


def reachable(start: Game) -> list[list[str]]:
    """The records of every pawn placement reachable from ``start`` (not finished)."""
    seen = {(tuple(start.pawns), start.turn)}
    queue = deque([start.moves])
    found: list[list[str]] = []
    while queue:
        record = queue.popleft()
        found.append(record)
        game = Game.from_moves(record, 2, 5, start.variant.walls)
        for move in game.legal_pawn_moves():
            game.play(move)
            state = (tuple(game.pawns), game.turn)
            if not game.is_over and state not in seen:
                seen.add(state)
                queue.append(game.moves)
            game.undo()
    return found


@pytest.mark.parametrize("layout", range(6))
def test_table_agrees_with_brute_force(layout: int) -> None:
    start = layouts()[layout]
    memo: dict[tuple[object, ...], int | None] = {}
    checked = decided = 0
    for record in reachable(start):
        game = Game.from_moves(record, 2, 5, start.variant.walls)
        exact = endgame.value(Position(game, {}))
        expected = exact if exact is not None and abs(exact) <= DEPTH else None
        assert brute_force(game, DEPTH, memo) == expected, (record, exact)
        checked += 1
        decided += expected is not None
    assert checked > 100
    assert decided > 50


def test_no_walls_the_second_player_wins_by_jumping() -> None:
    """With no walls at all, the first to reach the middle is jumped: the opener loses."""
    assert endgame.value(Position(Game(walls=0), {})) == -16


def test_ranked_moves_put_the_fastest_win_first() -> None:
    game = Game.from_moves("c2 c4 c3", 2, 5, 0)  # seat 1 to move, face to face
    ranked = endgame.ranked_moves(Position(game, {}))
    values = [value for value, _ in ranked]
    assert values[0] is not None
    assert values[0] > 0
    for value, move in ranked:
        game.play(Position(game, {}).notation(move))
        child = endgame.value(Position(game, {})) if not game.is_over else 0
        game.undo()
        assert value == (None if child is None else -child + 1 if child <= 0 else -(child + 1))


def test_bots_play_the_exact_endgame() -> None:
    """Out of walls, every level that plays its best move plays the table's best move."""
    game = Game.from_moves("c2 c4 c3", 2, 5, 0)
    best_value = endgame.ranked_moves(Position(game, {}))[0][0]
    for level in (4, 5):
        move, stats = analyse(game.moves, size=5, walls=0, level=level)
        game.play(move)
        after = endgame.value(Position(game, {}))
        game.undo()
        assert after is not None
        assert best_value is not None
        assert -after + 1 == best_value
        assert stats.exact
    assert choose_move(game.moves, size=5, walls=0, level=5) in game.legal_pawn_moves()


def test_a_bot_short_of_time_searches_instead_of_solving() -> None:
    """Solving a fresh table takes a tenth of a second or so: a smaller budget is honoured."""
    game = Game.from_moves("e2 e8 c3h f6h", walls=1)
    endgame._CACHE.clear()
    with pytest.raises(TimeoutError):
        endgame.table(Position(game, {}), deadline=0.0)
    assert not endgame._CACHE  # nothing half-solved is kept
    move, stats = analyse(game.moves, walls=1, level=5, budget=0.001)
    assert not stats.exact
    assert move in game.legal_moves()
    move, stats = analyse(game.moves, walls=1, level=5, budget=2.0)
    assert stats.exact
