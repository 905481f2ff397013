"""Differential test of the rules engine against OpenSpiel's C++ quoridor.

Seeded random games, biased so that pawns meet (jumps, diagonal jumps against
walls and the board edge) and walls land next to pawns, compare at every ply
the full sets of legal moves in our notation, whose turn it is, where the
pawns are, the walls left and the game's end and winner.

OpenSpiel declares a draw once ``4 * size * size`` plies have been played
(even if that ply wins), a rule standard Quoridor does not have, so games are
cut one ply short of that limit.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

pyspiel = pytest.importorskip("pyspiel")

from bench.openspiel_bridge import (  # noqa: E402
    flip,
    is_wall_action,
    legal_moves,
    load_game,
    move_to_action,
    pawns,
    replay,
    wall_action,
    wall_from_action,
    walls_left,
    winner,
)
from engine import Game  # noqa: E402

# (size, walls per player, games, seed): about 20 000 plies, a few seconds in all.
CONFIGS = [
    pytest.param(9, 10, 250, 9_2024, id="9x9"),
    pytest.param(9, 3, 100, 9_0003, id="9x9-3-walls"),
    pytest.param(7, 6, 150, 7_2024, id="7x7"),
    pytest.param(5, 3, 200, 5_2024, id="5x5"),
    pytest.param(11, 10, 30, 11_2024, id="11x11"),
]


def _square(text: str) -> tuple[int, int]:
    return ord(text[0]) - ord("a"), int(text[1:])


def _manhattan(a: str, b: str) -> int:
    (ac, ar), (bc, br) = _square(a), _square(b)
    return abs(ac - bc) + abs(ar - br)


def _choose(game: Game, legal: list[str], rng: random.Random, size: int) -> str:
    """A random legal move, biased towards pawn contact and walls near pawns."""
    steps = [move for move in legal if move[-1] not in "hv"]
    walls = [move for move in legal if move[-1] in "hv"]
    seat = game.turn
    me, other = game.pawns[seat], game.pawns[1 - seat]
    roll = rng.random()
    if roll < 0.5:
        # Approach the other pawn; when already touching, stay in contact (jumps).
        gap = _manhattan(me, other)
        near = [move for move in steps if _manhattan(move, other) <= max(1, gap - 1)]
        if near:
            return rng.choice(near)
    if walls and roll < 0.8:
        if rng.random() < 0.6:
            squares = [_square(pawn) for pawn in game.pawns]
            close = [
                wall
                for wall in walls
                if any(
                    0 <= col - _square(wall[:-1])[0] <= 1 and 0 <= row - _square(wall[:-1])[1] <= 1
                    for col, row in squares
                )
            ]
            if close:
                return rng.choice(close)
        return rng.choice(walls)
    if rng.random() < 0.5:
        goal = size if seat == 0 else 1
        forward = [
            move for move in steps if abs(_square(move)[1] - goal) < abs(_square(me)[1] - goal)
        ]
        if forward:
            return rng.choice(forward)
    return rng.choice(steps)


def _compare(game: Game, state: Any, size: int) -> None:
    record = " ".join(game.moves)
    where = f"after {len(game.moves)} plies: {record!r} (size {size})"
    assert game.winner == winner(state), where
    assert (game.winner is not None) == bool(state.is_terminal()), where
    assert game.pawns == pawns(state), where
    assert game.walls_left == walls_left(state), where
    if game.winner is not None:
        return
    assert game.turn == state.current_player(), where
    ours, theirs = game.legal_moves(), legal_moves(state, size)
    assert len(theirs) == len(set(theirs)), where
    assert len(ours) == len(set(ours)), where
    only_ours, only_theirs = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
    # (only in ours, only in OpenSpiel)
    assert (only_ours, only_theirs) == ([], []), where


@pytest.mark.parametrize(("size", "walls", "games", "seed"), CONFIGS)
def test_random_games_agree(size: int, walls: int, games: int, seed: int) -> None:
    rng = random.Random(seed)
    spiel = load_game(size, walls)
    limit = int(spiel.max_game_length()) - 1  # OpenSpiel's forced draw comes after this.
    plies = finished = 0
    for _ in range(games):
        game = Game(players=2, size=size, walls=walls)
        state = spiel.new_initial_state()
        while True:
            _compare(game, state, size)
            if game.winner is not None or len(game.moves) >= limit:
                break
            move = _choose(game, game.legal_moves(), rng, size)
            state.apply_action(move_to_action(state, move, size))
            game.play(move)
            plies += 1
        finished += game.winner is not None
    assert plies >= 10 * games
    assert finished >= games // 2, "the bias should let most games finish"


def test_opening() -> None:
    game, state = Game(players=2, size=9), load_game(9).new_initial_state()
    assert len(game.legal_moves()) == len(state.legal_actions()) == 131
    assert set(game.legal_moves()) == set(legal_moves(state))
    assert pawns(state) == game.pawns == ["e1", "e9"]
    assert state.current_player() == game.turn == 0
    assert sorted(move for move in legal_moves(state) if move[-1] not in "hv") == ["d1", "e2", "f1"]


@pytest.mark.parametrize("size", [5, 7, 9, 11])
def test_wall_mapping(size: int) -> None:
    state = load_game(size).new_initial_state()
    wall_ids = [action for action in state.legal_actions() if is_wall_action(action, size)]
    assert len(wall_ids) == 2 * (size - 1) ** 2
    for action in wall_ids:
        ours = wall_from_action(action, size)
        assert wall_action(ours, size) == action
        assert flip(ours, size) == state.action_to_string(0, action)
        assert flip(flip(ours, size), size) == ours
    # Spot checks on 9x9: rows flip, columns and orientation do not.
    if size == 9:
        assert flip("e3h") == "e6h"
        assert flip("a1v") == "a8v"
        assert flip("e2") == "e8"
        assert flip("e1") == "e9"


# Hand-picked positions around jumps; (record, the pawn moves the mover has).
JUMPS = [
    pytest.param("e2 e8 e3 e7 e4 e6 e5", ["d6", "e4", "e7", "f6"], id="straight-jump"),
    pytest.param("e2 e8 e3 e7 e4 e6 e5 e6h", ["d5", "d6", "e4", "f5", "f6"], id="wall-behind"),
    pytest.param("e2 e8 e3 e7 e4 e6 e5 e6h a1h d5v", ["e4", "f5", "f6"], id="wall-and-side"),
    pytest.param(
        "e2 a1h e3 c1h e4 g1h e5 a3h e6 c3h e7 g3h e8",
        ["d9", "e7", "f9"],
        id="jump-from-edge",
    ),
    pytest.param(
        "e2 a1h e3 c1h e4 g1h e5 a3h e6 c3h e7 g3h e8 a5h",
        ["d8", "d9", "e7", "f8", "f9"],
        id="edge-behind",
    ),
]


@pytest.mark.parametrize(("record", "steps"), JUMPS)
def test_jump_positions(record: str, steps: list[str]) -> None:
    game = Game.from_moves(record, players=2, size=9)
    state = replay(record.split())
    _compare(game, state, 9)
    if game.winner is None:
        assert sorted(move for move in game.legal_moves() if move[-1] not in "hv") == sorted(steps)
