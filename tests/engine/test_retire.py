"""Four-player games go on without a seat that resigned or walked away."""

from __future__ import annotations

import pytest

from engine import Game, IllegalMove


def test_a_retired_seat_is_skipped_and_its_pawn_stays() -> None:
    game = Game(players=4)
    game.play("e2")
    game.retire(1)  # seat 1 (a5) is to move: the turn passes to seat 2
    assert game.turn == 2
    assert game.retired == [1]
    game.play("e8")
    game.play("h5")
    assert game.turn == 0
    assert game.pawns[1] == "a5"
    game.play("e3")
    assert game.turn == 2
    # The retired pawn is still in the way: a4 cannot be entered by stepping onto a5.
    assert "a5" not in game.legal_pawn_moves()


def test_walls_need_not_leave_a_retired_seat_a_path() -> None:
    # a4h, a6h and b5v box in a5, b5, a6, b6, where seat 1 (racing to column i) stands.
    playing = Game.from_moves("a4h h1h a6h", players=4)
    with pytest.raises(IllegalMove, match="would leave seat 1 no path to column i"):
        playing.play("b5v")
    retired = Game(players=4)
    retired.play("a4h")
    retired.retire(1)
    retired.play("a6h")
    retired.play("b5v")
    assert retired.walls == ["a4h", "a6h", "b5v"]


def test_retire_is_undone_like_a_move() -> None:
    game = Game(players=4)
    game.play("e2")
    before = (str(game), game.turn, game.legal_moves())
    game.retire(1)
    assert game.undo() == "retire 1"
    assert (str(game), game.turn, game.legal_moves()) == before
    assert game.retired == []


def test_retire_refusals() -> None:
    with pytest.raises(IllegalMove):
        Game().retire(0)
    game = Game(players=4)
    game.retire(0)
    with pytest.raises(IllegalMove):
        game.retire(0)
    game.retire(1)
    game.retire(2)
    with pytest.raises(IllegalMove, match="last seat"):
        game.retire(3)
    assert game.turn == 3
