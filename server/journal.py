"""What changed since the last commit: the rooms and sessions the database must rewrite.

The core notes each change here as it makes it; the adapter takes the batch
after every call into the core and commits it before sending the replies.
Without a database the journal is off and notes nothing.
"""

from __future__ import annotations

from server.database import Batch
from server.rooms import Room
from server.sessions import Session
from server.snapshot import GameRecord, room_record, session_record


class Journal:
    def __init__(self) -> None:
        self.enabled = False
        self._rooms: set[Room] = set()
        self._sessions: set[Session] = set()
        self._dropped_rooms: set[str] = set()
        self._dropped_sessions: set[str] = set()

    def room(self, room: Room) -> None:
        if self.enabled:
            self._rooms.add(room)

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
        return bool(self._rooms or self._sessions or self._dropped_rooms or self._dropped_sessions)

    def take(self, rooms: dict[str, Room], games: list[GameRecord], now: float) -> Batch:
        """The batch for everything noted (rooms still open, and their seated sessions)."""
        batch = Batch(games=games)
        sessions = set(self._sessions)
        for room in self._rooms:
            if room.code not in rooms:
                continue
            batch.rooms.append((room_record(room, now), room.status))
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
        # Not ``- set(rooms)``: this runs for every request, and rooms may be thousands.
        batch.dropped_rooms = sorted(code for code in self._dropped_rooms if code not in rooms)
        batch.dropped_sessions = sorted(self._dropped_sessions)
        self._rooms.clear()
        self._sessions.clear()
        self._dropped_rooms.clear()
        self._dropped_sessions.clear()
        return batch
