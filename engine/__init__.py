"""Quoridor rules engine: pure, standard library only, no I/O.

The facade later layers, bots and outside users rely on::

    from engine import Game, IllegalMove, NotationError

    game = Game(players=2, size=9, walls=None)   # walls=None: 10 each, 5 in 4-player
    game.play("e2")
    game.legal_moves()        # ['d1', 'f1', 'e3', ..., 'a1h', ...]
    game.distances()          # shortest distance to goal per seat
    game.undo()
"""

from engine.errors import IllegalMove, NotationError
from engine.game import Game
from engine.notation import Move, format_record, parse_move, parse_record
from engine.variant import Variant

__all__ = [
    "Game",
    "IllegalMove",
    "Move",
    "NotationError",
    "Variant",
    "format_record",
    "parse_move",
    "parse_record",
]
