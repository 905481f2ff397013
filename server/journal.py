"""What changed since the last commit: the rooms and sessions the database must rewrite.

The core notes each change here as it makes it; the adapter takes the batch
once a commit and commits it before sending the replies. Without a database
the journal is off and notes nothing.

Most changes are a move and nothing else. For those the database gets only
what to add to the room's last record (``MoveDelta``: the new moves, the
event, offers and clock) rather than a whole record built again from the
room, which was most of the cost of saving a move; any other change sends
the record afresh.
"""

from __future__ import annotations

from server.database import Batch, MoveDelta
from server.records import ClockRecord, GameRecord
from server.rooms import Member, Room
from server.snapshot import room_record, session_record


class Journal:
    def __init__(self) -> None:
        self.enabled = False
        self._rooms: set[Room] = set()
        """Rooms to save from scratch."""
        self._moved: set[Room] = set()
        """Rooms whose only change since their last record is moves played."""
        self._sent: dict[str, tuple[int, int, int]] = {}
        """Per room saved: its game number and how many actions and movers the database
        has of it."""
        self._sessions: set[Member] = set()
        self._dropped_rooms: set[str] = set()
        self._dropped_sessions: set[str] = set()
        self._quarantined: list[str] = []
        self._stored: dict[str, tuple[bytes, bytes | None, str, int | None]] = {}
        """Per session saved: (token hash, room, seat) as last written."""

    def room(self, room: Room) -> None:
        if self.enabled:
            self._rooms.add(room)

    def moved(self, room: Room) -> None:
        """A move was played in ``room`` and nothing else changed (no game ended)."""
        if self.enabled:
            self._moved.add(room)

    def session(self, session: Member) -> None:
        if self.enabled:
            self._sessions.add(session)

    def drop_room(self, code: str) -> None:
        if self.enabled:
            self._dropped_rooms.add(code)

    def quarantine(self, code: str) -> None:
        """The room's saved row could not be restored: keep it aside (never load it again)."""
        if self.enabled:
            self._quarantined.append(code)

    def drop_session(self, session: Member) -> None:
        if self.enabled:
            self._stored.pop(session.id, None)
            self._dropped_sessions.add(session.id)

    def forget(self, room: Room, members: list[Member]) -> None:
        """Note nothing more of ``room`` and its ``members``, and drop nothing of theirs:
        another cluster node owns the room now, and its rows with it."""
        self._rooms.discard(room)
        self._moved.discard(room)
        self._sent.pop(room.code, None)
        self._dropped_rooms.discard(room.code)
        for member in members:
            self._sessions.discard(member)
            self._stored.pop(member.id, None)
            self._dropped_sessions.discard(member.id)

    def __bool__(self) -> bool:
        """Whether anything was noted since the last ``take``."""
        return bool(
            self._rooms
            or self._moved
            or self._sessions
            or self._dropped_rooms
            or self._dropped_sessions
            or self._quarantined
        )

    def take(self, rooms: dict[str, Room], games: list[GameRecord], now: float) -> Batch:
        """The batch for everything noted (rooms still open, and their seated sessions)."""
        batch = Batch(games=games, quarantined=self._quarantined)
        self._quarantined = []
        sessions = set(self._sessions)
        sent = self._sent
        for room in self._moved - self._rooms:
            if room.code not in rooms:
                continue
            delta = _delta(room, sent.get(room.code), now)
            if delta is None:
                self._rooms.add(room)
            else:
                batch.moved.append(delta)
                sent[room.code] = (room.number, len(room.actions), len(room.movers))
        for room in self._rooms:
            if room.code not in rooms:
                continue
            batch.rooms.append((room_record(room, now), room.status))
            sent[room.code] = (room.number, len(room.actions), len(room.movers))
            sessions.update(h.session for h in room.seats if h and h.session.room is room)
        for session in sessions:
            if session.room is not None:
                stored = (
                    session.token_digest,
                    session.previous_digest,
                    session.room.code,
                    session.seat,
                )
                if self._stored.get(session.id) != stored:  # most moves change none of them
                    self._stored[session.id] = stored
                    batch.sessions.append(session_record(session))
            else:
                self._stored.pop(session.id, None)
                self._dropped_sessions.add(session.id)
        # Not ``- set(rooms)``: this runs for every commit, and rooms may be thousands.
        batch.dropped_rooms = sorted(code for code in self._dropped_rooms if code not in rooms)
        for code in batch.dropped_rooms:
            sent.pop(code, None)
        batch.dropped_sessions = sorted(self._dropped_sessions)
        self._rooms.clear()
        self._moved.clear()
        self._sessions.clear()
        self._dropped_rooms.clear()
        self._dropped_sessions.clear()
        return batch


def _delta(room: Room, sent: tuple[int, int, int] | None, now: float) -> MoveDelta | None:
    """What to add to the room's last record for the moves played since; None when the
    database has no record of this game to add to."""
    if sent is None:
        return None
    number, actions, movers = sent
    # Retirements are actions without a mover: the two lists are counted apart.
    if number != room.number or actions > len(room.actions) or movers > len(room.movers):
        return None
    clock = None
    if room.clock is not None:
        banks = [room.clock.left(seat, now) for seat in range(room.spec.players)]
        clock = ClockRecord(remaining=banks, running=room.clock.running)
    return MoveDelta(
        code=room.code,
        status=room.status,
        event=room.event,
        actions=room.actions[actions:],
        movers=room.movers[movers:],
        draw_offers=sorted(room.draw_offers),
        clock=clock,
    )
