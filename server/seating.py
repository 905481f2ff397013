"""Taking and leaving seats, and watching: how sessions come into a room and go.

``Seating`` works on a room of the room host for the lobby, which finds the room and
checks what it alone can (caps, the session's state). In a cluster this runs on the
node that hosts the room, for a session that may be connected to another node.
"""

from __future__ import annotations

from collections.abc import Callable

from protocol.codec import encode
from protocol.messages import ErrorCode, Join, Joined, Left, RequestId, Watch
from server import computer, walkouts
from server.actions import Action, Send
from server.context import Context
from server.records import AccountRecord
from server.roomhost import RoomHost
from server.rooms import Member, Room
from server.sessions import Session


class Seating:
    """Seats and spectators of the rooms of ``host``."""

    def __init__(self, context: Context, host: RoomHost, forget: Callable[[Member], None]):
        self.context = context
        self.host = host
        self._forget = forget
        """Drops a session that lost its seat and holds nothing more (the registry's)."""

    def seat(self, session: Session, room: Room, seat: int, rid: RequestId) -> Send:
        """Seat ``session``; the ``joined`` reply (the room's push is the caller's)."""
        secret = room.seat(session, seat, session.name)
        session.room, session.seat = room, seat
        joined = Joined(id=rid, room=room.code, role="player", seat=seat, secret=secret)
        assert session.conn is not None
        return Send([session.conn], encode(joined))

    def take_seat(
        self, session: Session, room: Room, seat: int, rid: RequestId, allows_eval: bool = False
    ) -> list[Action]:
        """Seat ``session`` (``allows_eval``: it lets spectators follow the computer's
        evaluation, set before the state that says whether they may)."""
        seated = self.seat(session, room, seat, rid)
        room.holder(seat).allows_eval = allows_eval
        actions: list[Action] = [seated, self.host.push(room)]
        self.host.schedule(room)
        return actions + computer.think(room)

    def join(self, session: Session, room: Room, request: Join) -> list[Action]:
        error = self.context.error
        if room.rated and request.secret is None:
            account = session.account
            refusal: tuple[ErrorCode, str] | None = None
            if account is None:
                refusal = ErrorCode.ACCOUNT_REQUIRED, f"room {room.code} is rated: log in to play"
            elif any(h and h.account and h.account.id == account.id for h in room.seats):
                refusal = ErrorCode.SEAT_TAKEN, "you already hold a seat in this rated room"
            if refusal is not None:
                return [error(session.conn, *refusal, request.id)]
        seat = request.seat
        if seat is not None and seat >= len(room.seats):
            message = (
                f"seat {seat} does not exist: this room has {len(room.seats)} seats - at `$.seat`"
            )
            return [error(session.conn, ErrorCode.INVALID_FIELD, message, request.id)]
        if request.secret is not None:
            return self._reclaim(session, room, seat, request)
        if room.barred:
            login = session.account.id if session.account is not None else None
            if room.barred.intersection(walkouts.keys(session.address, login)):
                message = (
                    f"you left room {room.code}'s game without playing it: it does not seat "
                    "you again (you may watch it)"
                )
                return [error(session.conn, ErrorCode.ROOM_FULL, message, request.id)]
        if seat is None:
            seat = room.free_seat()
            if seat is None:
                message = f"room {room.code} is full; you can watch it"
                return [error(session.conn, ErrorCode.ROOM_FULL, message, request.id)]
        elif room.seats[seat] is not None:
            message = f"seat {seat} in room {room.code} is taken"
            return [error(session.conn, ErrorCode.SEAT_TAKEN, message, request.id)]
        return self.take_seat(session, room, seat, request.id, request.spectator_eval)

    def _reclaim(
        self, session: Session, room: Room, seat: int | None, request: Join
    ) -> list[Action]:
        """Take back a seat with its secret (from this or any other session)."""
        assert request.secret is not None
        assert session.conn is not None
        candidates = room.seats if seat is None else [room.seats[seat]]
        holder = next((h for h in candidates if h is not None and h.owns(request.secret)), None)
        if holder is not None and room.rated and not _same_account(holder.account, session):
            holder = None  # a rated seat stays with its account, whoever learnt the secret
        if holder is None:
            message = f"that secret does not open a seat in room {room.code}"
            return [self.context.error(session.conn, ErrorCode.BAD_SECRET, message, request.id)]
        actions: list[Action] = []
        previous = holder.session
        if previous is not session and room.sits(holder):
            previous.room = previous.seat = None
            self.context.journal.session(previous)
            if previous.conn is not None:
                actions.append(Send([previous.conn], encode(Left(reason="reclaimed"))))
            else:
                self._forget(previous)
        holder.session = session
        secret = holder.new_secret()  # whoever had the old one is out
        session.room, session.seat = room, room.seats.index(holder)
        joined = Joined(
            id=request.id, room=room.code, role="player", seat=session.seat, secret=secret
        )
        back = self.host.back(room, session.seat)
        return [*actions, Send([session.conn], encode(joined)), *back]

    def watch(self, session: Session, room: Room, request: Watch) -> list[Action]:
        if len(room.spectators) >= self.context.limits.spectators:
            message = (
                f"room {room.code} has as many spectators as it takes ({len(room.spectators)})"
            )
            return [self.context.error(session.conn, ErrorCode.ROOM_FULL, message, request.id)]
        room.spectators.add(session)
        session.room, session.seat = room, None
        self.host.note(room)
        assert session.conn is not None
        joined = Joined(id=request.id, room=room.code, role="spectator")
        # The newcomer alone gets the room's state (no new event, nothing to the others:
        # their next state counts the spectator).
        state = encode(room.state(self.context.clock()))
        return [Send([session.conn], encode(joined)), Send([session.conn], state)]

    def leave(self, session: Session, room: Room) -> list[Action]:
        """Take ``session`` out of ``room`` (its ``left`` reply is the caller's)."""
        seat = session.seat
        spectator = seat is None
        if seat is None:
            room.spectators.discard(session)  # no event: see ``RoomHost.gone``
        elif room.status == "waiting":
            room.seats[seat] = None
        else:
            # Leaving a game in progress keeps the seat (and its secret); the
            # others may claim after the short, deliberate grace period.
            deliberate = self.context.limits.absence.deliberate_grace
            room.away(seat, self.context.clock(), deliberate)
        session.room = session.seat = None
        journal = self.context.journal
        journal.room(room)
        journal.session(session)
        actions: list[Action] = []
        if room.anyone_connected() and not spectator:
            actions.append(self.host.push(room))
        self.host.schedule(room)
        self.host.collect(room)
        return actions


def _same_account(account: AccountRecord | None, session: Session) -> bool:
    return account is None or (session.account is not None and session.account.id == account.id)
