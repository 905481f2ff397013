"""A room: one game, its seats, its spectators and its event counter.

The room knows nothing of sockets. It turns the game into the self-sufficient
``state`` message and counts events so clients can tell when they missed one.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from engine import Game
from protocol.messages import (
    LastMove,
    PlayerInfo,
    RequestId,
    Result,
    RoomInfo,
    State,
    VariantSpec,
)

if TYPE_CHECKING:
    from server.sessions import Session

Status = Literal["waiting", "playing", "finished"]


@dataclass(eq=False)
class SeatHolder:
    """Who holds a seat: the session, its name, and the seat's secret."""

    session: Session
    name: str
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(18))

    def owns(self, secret: str) -> bool:
        return hmac.compare_digest(self.secret.encode(), secret.encode())


class Room:
    """One game between two or four seats, watched by any number of spectators."""

    def __init__(self, code: str, spec: VariantSpec, public: bool, created: float) -> None:
        self.code = code
        self.spec = spec
        self.game = Game(spec.players, spec.size, spec.walls)
        self.public = public
        self.created = created
        self.seats: list[SeatHolder | None] = [None] * spec.players
        self.spectators: set[Session] = set()
        self.event = 0
        """Number of the last event pushed to the room."""
        self.movers: list[int] = []
        """The seat that played each ply."""
        self.started = False

    @property
    def status(self) -> Status:
        if self.game.is_over:
            return "finished"
        return "playing" if self.started else "waiting"

    def free_seat(self) -> int | None:
        return next((seat for seat, holder in enumerate(self.seats) if holder is None), None)

    def seat(self, session: Session, seat: int, name: str) -> SeatHolder:
        """Give ``seat`` to ``session``; the game starts once every seat is taken."""
        holder = SeatHolder(session, name)
        self.seats[seat] = holder
        if all(self.seats):
            self.started = True
        return holder

    def members(self) -> list[Session]:
        """Every session in the room: seated players, then spectators."""
        players = [h.session for h in self.seats if h is not None and h.session.room is self]
        return players + list(self.spectators)

    def connections(self) -> list[int]:
        return [s.conn for s in self.members() if s.conn is not None]

    def anyone_connected(self) -> bool:
        return any(s.conn is not None for s in self.members())

    def connected(self, seat: int) -> bool:
        holder = self.seats[seat]
        return (
            holder is not None and holder.session.room is self and holder.session.conn is not None
        )

    def state(self, request_id: RequestId = None) -> State:
        """The whole room as one message, numbered with the current event."""
        game = self.game
        playing = self.status == "playing"
        last = None
        if self.movers:
            last = LastMove(seat=self.movers[-1], move=game.moves[-1], ply=game.ply - 1)
        result = None
        if game.winner is not None:
            result = Result(winner=game.winner, reason="goal")
        return State(
            id=request_id,
            event=self.event,
            room=self.code,
            variant=self.spec,
            status=self.status,
            ply=game.ply,
            turn=game.turn if playing else None,
            pawns=game.pawns,
            walls=game.walls,
            walls_left=game.walls_left,
            last_move=last,
            legal_pawn_moves=game.legal_pawn_moves() if playing else [],
            distances=game.distances(),
            players=[
                PlayerInfo(
                    seat=seat,
                    name=holder.name if holder else None,
                    connected=self.connected(seat),
                )
                for seat, holder in enumerate(self.seats)
            ],
            spectators=len(self.spectators),
            result=result,
        )

    def info(self) -> RoomInfo:
        return RoomInfo(
            room=self.code,
            variant=self.spec,
            status=self.status,
            players=[holder.name if holder else None for holder in self.seats],
            spectators=len(self.spectators),
        )
