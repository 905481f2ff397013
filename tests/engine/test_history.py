"""What a game keeps to undo its moves, as the garbage collector sees it."""

from __future__ import annotations

import gc

from engine import Game


def test_history_leaves_the_collectors_sight() -> None:
    """What undo needs is kept in plain tuples of untracked values, which the collector
    stops tracking within two collections: a game's history never reaches the old
    generation that every full collection walks (the server's longest pauses)."""
    game = Game.from_moves(["e2", "e8", "e3h", "d7v", "e3"])
    gc.collect(1)
    assert not any(gc.is_tracked(entry) for entry in game._history)
    assert game.undo() == "e3"
    assert game.undo() == "d7v"
    assert game.moves == ["e2", "e8", "e3h"]
    assert game.bitboards().walls_left == (9, 10)
    game.play("d7v")
    assert game.bitboards().walls_left == (9, 9)


def test_a_retirement_is_undone_like_a_move() -> None:
    game = Game.from_moves(["e2", "b5", "e8", "h5"], players=4)
    game.retire(1)
    assert game.retired == [1]
    assert game.undo() == "retire 1"
    assert game.retired == []
    assert game.undo() == "h5"
