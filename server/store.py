"""Durable storage in SQLite (WAL mode), on a thread of its own.

The event loop never touches the database: every call runs on the store's
single worker thread, and the adapter awaits it. Writes come in batches (one
transaction for everything the server accepted since the last commit), so a
busy server pays one commit for many moves, and each move is on disk before
anyone hears of it.

The schema is versioned with ``PRAGMA user_version``; ``MIGRATIONS[n]`` takes
a database from version ``n`` to ``n + 1``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

import msgspec

from server.snapshot import GameRecord, RoomRecord, SessionRecord

MIGRATIONS = [
    # 1: rooms in play and the sessions seated in them.
    """
    CREATE TABLE rooms (
        code TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        record BLOB NOT NULL,
        updated REAL NOT NULL
    );
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        room TEXT,
        record BLOB NOT NULL
    );
    """,
    # 2: the history of finished games.
    """
    CREATE TABLE games (
        id INTEGER PRIMARY KEY,
        room TEXT NOT NULL,
        number INTEGER NOT NULL,
        finished REAL NOT NULL,
        record BLOB NOT NULL
    );
    CREATE INDEX games_by_time ON games (finished DESC);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)
HISTORY_LOADED = 1000
"""Finished games read back at start-up (the history the server can answer from)."""

Synchronous = Literal["off", "normal", "full"]
T = TypeVar("T")


@dataclass
class Batch:
    """Everything to write in one transaction."""

    rooms: list[tuple[RoomRecord, str]] = field(default_factory=list)
    """(record, status) to insert or replace."""
    dropped_rooms: list[str] = field(default_factory=list)
    sessions: list[SessionRecord] = field(default_factory=list)
    dropped_sessions: list[str] = field(default_factory=list)
    games: list[GameRecord] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(
            self.rooms or self.dropped_rooms or self.sessions or self.dropped_sessions or self.games
        )


@dataclass
class Loaded:
    """What start-up recovery reads back."""

    rooms: list[RoomRecord]
    sessions: list[SessionRecord]
    games: list[GameRecord]


ROWS_PER_STATEMENT = 200
"""Rows written by one statement (SQLite allows at least 999 parameters in one)."""


def _insert(db: sqlite3.Connection, head: str, rows: list[tuple[object, ...]]) -> None:
    """Insert ``rows`` with a few multi-row statements rather than one statement a row.

    The database thread gives up the interpreter lock for each statement it
    runs and must win it back from the busy event loop afterwards; a row at a
    time, a commit of a hundred moves took ~10 ms of such waits.
    """
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start : start + ROWS_PER_STATEMENT]
        row = "(" + ", ".join("?" * len(chunk[0])) + ")"
        db.execute(f"{head} VALUES {', '.join([row] * len(chunk))}", _flat(chunk))


def _delete(db: sqlite3.Connection, head: str, keys: list[str]) -> None:
    """``head IN (...)`` for ``keys``, a few statements rather than one a key."""
    for start in range(0, len(keys), ROWS_PER_STATEMENT):
        chunk = keys[start : start + ROWS_PER_STATEMENT]
        db.execute(f"{head} IN ({', '.join('?' * len(chunk))})", chunk)


def _flat(rows: list[tuple[object, ...]]) -> list[object]:
    return [value for row in rows for value in row]


def migrate(db: sqlite3.Connection, target: int = SCHEMA_VERSION) -> tuple[int, int]:
    """Bring the schema to ``target``; (version before, version after)."""
    (before,) = db.execute("PRAGMA user_version").fetchone()
    if before > SCHEMA_VERSION:
        raise RuntimeError(
            f"database schema version {before} is newer than this server's {SCHEMA_VERSION}"
        )
    for version in range(before, target):
        with db:  # each step is one transaction, version bump included
            db.execute("BEGIN IMMEDIATE")
            for statement in MIGRATIONS[version].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {version + 1}")
    return before, max(before, target)


class Store:
    """The server's database: opened, migrated, written and read on one thread."""

    def __init__(self, path: str | Path, synchronous: Synchronous = "normal") -> None:
        self.path = Path(path)
        self.synchronous = synchronous
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store")
        self._db: sqlite3.Connection | None = None
        self.write_seconds: Callable[[float], None] = lambda seconds: None
        """Called with each commit's duration (metrics hook)."""

    async def _run(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)

    async def open(self) -> tuple[int, int]:
        """Create or open the database and migrate it; the schema versions before/after."""
        return await self._run(self._open)

    def _open(self) -> tuple[int, int]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        # WAL with NORMAL survives a crash of the process (SIGKILL) without
        # losing a commit; FULL also survives losing power, at an fsync a commit.
        db.execute(f"PRAGMA synchronous = {self.synchronous.upper()}")
        db.execute("PRAGMA busy_timeout = 5000")
        self._db = db
        return migrate(db)

    async def load(self) -> Loaded:
        return await self._run(self._load)

    def _load(self) -> Loaded:
        db = self._connection()
        rooms = [
            msgspec.json.decode(record, type=RoomRecord)
            for (record,) in db.execute("SELECT record FROM rooms")
        ]
        sessions = [
            msgspec.json.decode(record, type=SessionRecord)
            for (record,) in db.execute("SELECT record FROM sessions")
        ]
        rows = db.execute(
            "SELECT record FROM games ORDER BY finished DESC, id DESC LIMIT ?", (HISTORY_LOADED,)
        )
        games = [msgspec.json.decode(record, type=GameRecord) for (record,) in rows]
        return Loaded(rooms, sessions, games[::-1])

    async def write(self, batch: Batch) -> None:
        if batch:
            await self._run(lambda: self._write(batch))

    def _write(self, batch: Batch) -> None:
        db = self._connection()
        started = time.perf_counter()
        encode = msgspec.json.encode
        now = time.time()
        with db:
            db.execute("BEGIN IMMEDIATE")
            _insert(
                db,
                "INSERT OR REPLACE INTO rooms (code, status, record, updated)",
                [(record.code, status, encode(record), now) for record, status in batch.rooms],
            )
            _delete(db, "DELETE FROM rooms WHERE code", batch.dropped_rooms)
            _insert(
                db,
                "INSERT OR REPLACE INTO sessions (id, room, record)",
                [(s.id, s.room, encode(s)) for s in batch.sessions],
            )
            _delete(db, "DELETE FROM sessions WHERE id", batch.dropped_sessions)
            _insert(
                db,
                "INSERT INTO games (id, room, number, finished, record)",
                [(g.id, g.room, g.number, g.finished, encode(g)) for g in batch.games],
            )
        self.write_seconds(time.perf_counter() - started)

    async def next_game_id(self) -> int:
        def query() -> int:
            (top,) = self._connection().execute("SELECT max(id) FROM games").fetchone()
            return int(top or 0) + 1

        return await self._run(query)

    async def close(self) -> None:
        def close() -> None:
            if self._db is not None:
                self._db.close()
                self._db = None

        await self._run(close)
        self._executor.shutdown(wait=True)

    def _connection(self) -> sqlite3.Connection:
        assert self._db is not None, "Store.open() first"
        return self._db
