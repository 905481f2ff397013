"""What the room host asks of the computer: its moves, hints and evaluations.

Pure functions of a room: the ``Think``, ``Suggest`` and ``LiveEvalStep`` actions the
adapter hands to the workers (``server.workers``), and the ``evaluation`` frame made from
what they find. The answers come back through ``Core``; ``server.play`` acts on them.
"""

from __future__ import annotations

from engine.ai.evaluation import Evaluation as EngineEvaluation
from protocol.codec import encode
from protocol.messages import Evaluation
from server.actions import LiveEvalStep, Think
from server.rooms import Room

HINT_LEVEL = 5
HINT_SECONDS = 1.0
"""How the computer thinks for a hint: its strongest level, a fixed second."""

LIVE_DEPTH = 3
LIVE_NODES = 4_000
"""The live evaluation's small fixed budget: 3 plies, at most 4,000 positions (tens of ms)."""


def think(room: Room) -> list[Think]:
    """Ask the computer for a move when it is its turn, and tell it when its flag falls if
    its clock runs (it budgets its time from that: ``server.thinking``)."""
    holder = room.bot_to_move()
    if holder is None or holder.bot is None:
        return []
    game = room.game
    clock = room.clock
    running = clock is not None and clock.running == game.turn
    return [
        Think(
            room.code,
            game.turn,
            game.ply,
            list(room.actions),
            room.spec,
            holder.bot,
            holder.think,
            room.share,
            clock.deadline() if clock is not None and running else None,
            clock.increment if clock is not None else 0.0,
        )
    ]


def live(room: Room) -> list[LiveEvalStep]:
    """Have the position evaluated when a spectator follows it: once per position."""
    if not room.eval_followers or room.status != "playing" or not room.evaluable():
        return []  # nobody follows it: the common case, on every move
    ply = room.game.ply
    if room.live_pending == ply or (room.live is not None and room.live[0] == ply):
        return []
    room.live_pending = ply
    return [LiveEvalStep(room.code, ply, list(room.actions), room.spec)]


def evaluation(room: Room, ply: int, found: EngineEvaluation) -> bytes:
    """The ``evaluation`` frame for spectators, from seat 0's side (the engine speaks for
    the side to move)."""
    flip = room.game.turn == 1
    return encode(
        Evaluation(
            room=room.code,
            ply=ply,
            score=-found.score if flip else found.score,
            win=round(1.0 - found.win_probability if flip else found.win_probability, 4),
            win_in=None if found.win_in is None else -found.win_in if flip else found.win_in,
            best=found.best,
            pv=list(found.pv),
            depth=found.depth,
        )
    )
