"""Seats kept between runs: the secret (and resume token) of each game you play.

``quoridor join CODE`` takes your own seat back with them, and a plain
``quoridor`` offers to resume a game in progress. They live in the user's
state directory (``$XDG_STATE_HOME/quoridor/seats.json``, by default
``~/.local/state/quoridor/seats.json``), readable by the user alone (0600,
in a 0700 folder): a seat secret is what lets anyone play your seat. A seat
is kept from the moment the server hands it out until its game (or match)
is over; a file that cannot be read is treated as empty, never as an error.

One seat is one entry: taking a seat back, the server hands out a new secret, and the
entry written with the old one is replaced (two players of one machine share the file,
and a stale entry of the other's would be offered to the wrong one). A seat whose client
is gone and that was last written more than ``STALE_AFTER`` ago is dropped: its game is
long decided (the server's ``--hard-limit`` is 10 minutes by default), and a file left
to grow would offer rooms long gone, run after run.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import msgspec

MAX_SEATS = 50
"""Seats kept at most (the oldest go first): a few games in progress is the normal case."""

STALE_AFTER = 24 * 3600.0
"""Seconds after which a seat no running client plays is dropped (see the module's text)."""

ANY_AGE = 30 * 24 * 3600.0
"""Seconds after which any seat is dropped: a process number may have been reused since."""


class SavedSeat(msgspec.Struct, kw_only=True):
    server: str
    room: str
    seat: int
    secret: str
    resume_token: str | None = None
    name: str = ""
    saved: float = 0.0
    """When it was written (Unix time), newest first in ``SeatBook.seats``."""
    pid: int | None = None
    """The client process playing it: while that process runs, the seat is in use (a second
    terminal of the same user joining the room is another player, not a comeback)."""

    def in_use(self) -> bool:
        """Whether another running client plays this seat now."""
        if self.pid is None or self.pid == os.getpid():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True  # it exists, under another user
        return True

    def stale(self, now: float) -> bool:
        """Too old to offer: its client gone a day ago, or written a month ago."""
        age = now - self.saved
        return age > ANY_AGE or (age > STALE_AFTER and not self.in_use())


def _key(seat: SavedSeat) -> tuple[str, str, str]:
    return seat.server, seat.room, seat.secret


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "quoridor"


class SeatBook:
    """The seats file: read, changed and written whole (it is small)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "seats.json"

    def seats(self, server: str | None = None) -> list[SavedSeat]:
        """The seats kept (on ``server`` only, if given), newest first."""
        try:
            data = self.path.read_bytes()
            seats = msgspec.json.decode(data, type=list[SavedSeat])
        except (OSError, msgspec.DecodeError):
            return []
        seats.sort(key=lambda s: s.saved, reverse=True)
        now = time.time()
        return [s for s in seats if (server is None or s.server == server) and not s.stale(now)]

    def find(self, server: str, room: str, name: str | None = None) -> SavedSeat | None:
        """Our seat in ``room``, unless another running client plays it now: the newest one,
        or, given a ``name`` (two players of one machine, each with ``--name``), the newest
        saved under it: never another player's, though theirs is the only one kept (Bob
        joining the room Alice left would have taken her seat)."""
        mine = [s for s in self.free(server) if s.room == room]
        return next((s for s in mine if name is None or s.name == name), None)

    def free(self, server: str) -> list[SavedSeat]:
        """The seats on ``server`` no running client plays: the ones to come back to."""
        return [s for s in self.seats(server) if not s.in_use()]

    def keep(self, seat: SavedSeat, replaces: str | None = None) -> None:
        """Write ``seat`` down (again: a match turns the seats, the secret stays the same).

        A seat is known by its secret: the same user may hold two seats of one room, from
        two terminals. ``replaces`` is the secret it was taken back with: the server gave
        a new one, and the entry with the old one is this seat's, not another.
        """
        seat.saved = time.time()
        seat.pid = os.getpid()
        gone = {_key(seat), (seat.server, seat.room, replaces or seat.secret)}
        others = [s for s in self.seats() if _key(s) not in gone]
        self._write([seat, *others][:MAX_SEATS])

    def forget(self, server: str, room: str, secret: str | None = None) -> None:
        """Forget the seat with ``secret`` in ``room``, or every seat of the room."""
        seats = self.seats()
        kept = [
            s
            for s in seats
            if (s.server, s.room) != (server, room) or secret not in (None, s.secret)
        ]
        if len(kept) != len(seats):
            self._write(kept)

    def _write(self, seats: list[SavedSeat]) -> None:
        """Write the file atomically, user-only from its first byte."""
        with contextlib.suppress(OSError):  # no state directory: nothing kept, play goes on
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            temporary = self.path.with_name(self.path.name + ".new")
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(msgspec.json.encode(seats))
            os.chmod(temporary, 0o600)  # an older file of the same name may have had more
            os.replace(temporary, self.path)
