"""Hand-made ``state`` messages for the client tests: no engine, no server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from protocol.messages import ClockInfo, LastMove, PlayerInfo, Result, State, VariantSpec

Status = Literal["waiting", "playing", "finished"]


def make_state(
    *,
    size: int = 9,
    pawns: Sequence[str] = ("e1", "e9"),
    walls: Sequence[str] = (),
    last: str | None = None,
    last_seat: int = 0,
    turn: int | None = 0,
    legal: Sequence[str] = (),
    status: Status = "playing",
    names: Sequence[str | None] = ("Alice", "Bob"),
    ply: int = 0,
    event: int = 1,
    walls_left: Sequence[int] | None = None,
    distances: Sequence[int] | None = None,
    clock: ClockInfo | None = None,
    result: Result | None = None,
    room: str = "room1",
    game: int = 1,
    connected: Sequence[bool] | None = None,
    draw_offers: Sequence[int] = (),
    rematch: Sequence[int] = (),
    moves: Sequence[str] | None = None,
) -> State:
    """A state; its ``moves`` as many as ``ply`` (the last one ``last``) unless given."""
    players = len(pawns)
    if moves is None:
        moves = ["e2"] * (ply - 1) + [last or "e2"] if ply else []
    return State(
        event=event,
        room=room,
        variant=VariantSpec(players=2 if players == 2 else 4, size=size, walls=10),  # type: ignore[arg-type]
        status=status,
        ply=ply,
        turn=turn if status == "playing" else None,
        pawns=list(pawns),
        walls=list(walls),
        walls_left=list(walls_left or [10] * players),
        last_move=None if last is None else LastMove(seat=last_seat, move=last, ply=ply - 1),
        legal_pawn_moves=list(legal),
        distances=list(distances or [8] * players),
        players=[
            PlayerInfo(
                seat=seat,
                name=names[seat],
                connected=names[seat] is not None and (connected is None or connected[seat]),
            )
            for seat in range(players)
        ],
        spectators=0,
        result=result,
        game=game,
        clock=clock,
        draw_offers=list(draw_offers),
        rematch=list(rematch),
        moves=list(moves),
    )
