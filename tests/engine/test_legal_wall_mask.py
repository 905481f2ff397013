"""``Game.legal_wall_mask`` (``state.legal_walls``) says exactly what ``legal_walls`` says."""

from __future__ import annotations

import random

import pytest

from engine import Game
from engine.notation import COLUMNS


def decode(mask: int, size: int) -> list[str]:
    """The walls of a packed mask, as a client reads it: horizontal slots, then vertical."""
    width = size - 1
    names = []
    for index in range(2 * width * width):
        if (mask >> index) & 1:
            orientation = "h" if index < width * width else "v"
            row, col = divmod(index % (width * width), width)
            names.append(f"{COLUMNS[col]}{row + 1}{orientation}")
    return names


@pytest.mark.parametrize(("players", "size"), [(2, 5), (2, 7), (2, 9), (4, 9), (2, 11)])
def test_the_mask_lists_the_legal_walls_through_random_games(players: int, size: int) -> None:
    rng = random.Random(size * players)
    for _ in range(8):
        game = Game(players, size)
        while game.winner is None and game.ply < 80:
            assert decode(game.legal_wall_mask(), size) == game.legal_walls()
            moves = game.legal_moves()
            walls = [move for move in moves if move[-1] in "hv"]
            # Lean on walls so positions with many of them (and sealed slots) come up.
            game.play(rng.choice(walls if walls and rng.random() < 0.6 else moves))
        assert decode(game.legal_wall_mask(), size) == game.legal_walls()


def test_no_walls_left_or_game_over_is_an_empty_mask() -> None:
    game = Game(2, 5, walls=1)
    game.play("a1h")
    game.play("c4")
    assert game.legal_wall_mask() == 0  # seat 0 spent its only wall
    assert game.legal_walls() == []
