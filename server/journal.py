"""What changed since the last commit: the rooms and sessions the database must rewrite.

The core notes each change here as it makes it; the adapter takes the batch
once a commit and commits it before sending the replies. Without a database
the journal is off and notes nothing.

Most changes are a move and nothing else. For those the room's last record
is brought up to date (the new moves appended, the event, offers and clock
set) rather than built again from the room, which is most of the cost of
saving a move; any other change builds the record afresh.
"""

from __future__ import annotations

from server.database import Batch
from server.records import ClockRecord, GameRecord, RoomRecord
from server.rooms import Room
from server.sessions import Session
from server.snapshot import room_record, session_record


class Journal:
    def __init__(self) -> None:
        self.enabled = False
        self._rooms: set[Room] = set()
        """Rooms to save from scratch."""
        self._moved: set[Room] = set()
        """Rooms whose only change since their last record is moves played."""
        self._records: dict[str, RoomRecord] = {}
        """The last record taken of each room still saved."""
        self._sessions: set[Session] = set()
        self._dropped_rooms: set[str] = set()
        self._dropped_sessions: set[str] = set()

    def room(self, room: Room) -> None:
        if self.enabled:
            self._rooms.add(room)

    def moved(self, room: Room) -> None:
        """A move was played in ``room`` and nothing else changed (no game ended)."""
        if self.enabled:
            self._moved.add(room)

    def session(self, session: Session) -> None:
        if self.enabled:
            self._sessions.add(session)

    def drop_room(self, code: str) -> None:
        if self.enabled:
            self._dropped_rooms.add(code)

    def drop_session(self, session: Session) -> None:
        if self.enabled:
            session.stored = None
            self._dropped_sessions.add(session.id)

    def __bool__(self) -> bool:
        """Whether anything was noted since the last ``take``."""
        return bool(
            self._rooms
            or self._moved
            or self._sessions
            or self._dropped_rooms
            or self._dropped_sessions
        )

    def take(self, rooms: dict[str, Room], games: list[GameRecord], now: float) -> Batch:
        """The batch for everything noted (rooms still open, and their seated sessions)."""
        batch = Batch(games=games)
        sessions = set(self._sessions)
        records = self._records
        for room in self._moved - self._rooms:
            record = records.get(room.code)
            if room.code not in rooms:
                continue
            if record is None or not _follow(record, room, now):
                self._rooms.add(room)
            else:
                batch.rooms.append((record, room.status))
        for room in self._rooms:
            if room.code not in rooms:
                continue
            record = records[room.code] = room_record(room, now)
            batch.rooms.append((record, room.status))
            sessions.update(h.session for h in room.seats if h and h.session.room is room)
        for session in sessions:
            if session.room is not None:
                stored = (session.token_digest, session.room.code, session.seat)
                if session.stored != stored:  # most moves change no session: no rewrite
                    session.stored = stored
                    batch.sessions.append(session_record(session))
            else:
                session.stored = None
                self._dropped_sessions.add(session.id)
        # Not ``- set(rooms)``: this runs for every commit, and rooms may be thousands.
        batch.dropped_rooms = sorted(code for code in self._dropped_rooms if code not in rooms)
        for code in batch.dropped_rooms:
            records.pop(code, None)
        batch.dropped_sessions = sorted(self._dropped_sessions)
        self._rooms.clear()
        self._moved.clear()
        self._sessions.clear()
        self._dropped_rooms.clear()
        self._dropped_sessions.clear()
        return batch


def _follow(record: RoomRecord, room: Room, now: float) -> bool:
    """Bring ``record`` up to date with moves played in ``room`` since it was taken;
    False (and ``record`` unchanged) when it is of another game."""
    actions, movers = room.actions, room.movers
    # Retirements are actions without a mover: the two lists are followed apart.
    if record.number != room.number or len(record.actions) > len(actions):
        return False
    record.actions += actions[len(record.actions) :]
    record.movers += movers[len(record.movers) :]
    record.event = room.event
    record.draw_offers = sorted(room.draw_offers)
    clock = room.clock
    if clock is not None:
        banks = [clock.left(seat, now) for seat in range(room.spec.players)]
        record.clock = ClockRecord(remaining=banks, running=clock.running)
    return True
