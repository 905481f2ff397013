"""The SQLite database itself: schema, migrations, and the synchronous reads and writes.

It runs in a process of its own (``python -m server.database``, started by
``server.store.Store``), speaking a small request/reply protocol on its
standard input and output: the server's event loop never waits for the
interpreter lock while SQLite works, and SQLite never waits for the loop.

The schema is versioned with ``PRAGMA user_version``; ``MIGRATIONS[n]`` takes
a database from version ``n`` to ``n + 1``.

Channel: each message is a 4-byte big-endian length and a msgpack payload.
Requests are ``OpenRequest``, ``LoadRequest``, ``WriteRequest``, ``PruneRequest`` and the
account queries of ``server.accountdb``; each reply
is one status byte (0: done, 1: failed) and the msgpack result or the error's
text. End of input closes the database and ends the process.

A second process opened with ``ReaderRequest`` answers only the queries that read
(``accountdb.READS``: finished games, profiles, leaderboards) on a read-only connection: in
WAL mode it reads beside the writer, so a flood of long reads keeps no move's commit waiting
(20 addresses reading 100 games a second each held moves' commits behind them: p99 111 ms).
"""

from __future__ import annotations

import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, TypeVar

import msgspec

from server import accountdb
from server.accountdb import AccountQuery, RatedGame
from server.records import AccountRecord, ClockRecord, GameRecord, RoomRecord, SessionRecord
from server.retention import PRUNE_CHUNK, PRUNE_EVERY, Retention, is_short, statements

R = TypeVar("R", RoomRecord, SessionRecord, GameRecord)

# The sqlite3 module binds int, float, str and bytearray as they are, but looks up an adapter
# for any other parameter, bytes included (every record we write): not finding one on its
# protocol class, it raises and formats an AttributeError, about 2,000 instructions for each
# bytes parameter, 45 in a commit at saturation. Registered to itself, bytes is found at once
# and bound as the same blob.
sqlite3.register_adapter(bytes, bytes)

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
    # 3: accounts, login tokens, ratings and who played which game.
    accountdb.MIGRATION,
    # 4: computer analyses of finished games (an ``analysis`` frame, JSON, without its id).
    """
    CREATE TABLE analyses (
        game INTEGER PRIMARY KEY,
        body BLOB NOT NULL
    );
    """,
    # 5: which games are short (server.retention), for pruning; games a rating points at.
    """
    ALTER TABLE games ADD COLUMN short INTEGER NOT NULL DEFAULT 0;
    UPDATE games SET short = 1
    WHERE json_valid(CAST(record AS TEXT)) AND (
        json_extract(CAST(record AS TEXT), '$.reason') = 'aborted'
        OR (
            SELECT COUNT(*) FROM json_each(CAST(record AS TEXT), '$.moves')
            WHERE value NOT LIKE 'retire%'
        ) < 2 * json_extract(CAST(record AS TEXT), '$.variant.players')
    );
    CREATE INDEX games_short ON games (short, finished);
    CREATE INDEX rating_history_by_game ON rating_history (game);
    """,
    # 6: session and game rows that could not be read back, kept aside like rooms.
    """
    ALTER TABLE sessions ADD COLUMN quarantined INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE games ADD COLUMN quarantined INTEGER NOT NULL DEFAULT 0;
    """,
    # 7: a room's moves since its record was last written whole (``RoomMoves``, JSON): a move
    # rewrites this small row instead of the room's whole record.
    """
    CREATE TABLE room_moves (
        code TEXT PRIMARY KEY,
        moves BLOB NOT NULL
    ) WITHOUT ROWID;
    """,
    # 8: each account's games by outcome, kept by triggers as ``game_players`` rows come and
    # go, for ``profile``: it counted the rows, O(games) in the one process every commit
    # waits for (a computer level's 100,000 games: 85 ms a profile, and 20 in flight from
    # one address held everyone's moves for a second).
    f"""
    {accountdb.TOTALS}
    INSERT INTO player_totals (account, outcome, games)
    SELECT account, outcome, COUNT(*) FROM game_players GROUP BY account, outcome;
    """,
    # 9: a pool's ratings by rating, with each one's games: a leaderboard walks them down to
    # its last established player, and read each row for its games (a pool of 100,000 with
    # one in 1000 established: 28 ms a read on a warm cache, 7 ms now, in the one process
    # every commit waits for).
    accountdb.RANKED,
]
SCHEMA_VERSION = len(MIGRATIONS)
HISTORY_LOADED = 5000
"""Finished games read back at start-up (the history the server can answer from)."""

Synchronous = Literal["off", "normal", "full"]


class MoveDelta(msgspec.Struct, kw_only=True, array_like=True):
    """A room whose only change since its last record is moves: what to add to it. (Never
    stored: it crosses the pipe to the database process as a msgpack array, not a map with
    its field names, in every commit.)"""

    code: str
    status: str
    event: int
    actions: list[str]
    """Appended to the record's actions."""
    movers: list[int]
    """Appended to the record's movers."""
    draw_offers: list[int]
    clock: ClockRecord | None


class RoomMoves(msgspec.Struct, kw_only=True):
    """A room's ``room_moves`` row: what the moves played since its record in ``rooms`` was
    last written whole add to that record (``apply``). A move rewrites this row, a few
    hundred bytes, rather than the whole record (its seats, its variant and every move
    before); the row goes when the record is written whole again."""

    event: int = 0
    actions: list[str] = msgspec.field(default_factory=list)
    """Played after the record's actions."""
    movers: list[int] = msgspec.field(default_factory=list)
    """Played after the record's movers."""
    draw_offers: list[int] = msgspec.field(default_factory=list)
    clock: ClockRecord | None = None

    def add(self, delta: MoveDelta) -> None:
        """Take in the moves of ``delta``, played after these."""
        self.actions += delta.actions
        self.movers += delta.movers
        self.event = delta.event
        self.draw_offers = delta.draw_offers
        self.clock = delta.clock

    def apply(self, record: RoomRecord) -> None:
        """Bring ``record``, as last written whole, up to date."""
        record.actions += self.actions
        record.movers += self.movers
        record.event = self.event
        record.draw_offers = self.draw_offers
        record.clock = self.clock


@dataclass
class _Saved:
    """The database process's note of a room it wrote: its row's status and its moves since
    its record was written whole (its ``room_moves`` row, if any moves)."""

    status: str
    moves: RoomMoves


@dataclass
class Batch:
    """Everything to write in one transaction."""

    rooms: list[tuple[RoomRecord, str]] = field(default_factory=list)
    """(record, status) to insert or replace."""
    dropped_rooms: list[str] = field(default_factory=list)
    sessions: list[SessionRecord] = field(default_factory=list)
    dropped_sessions: list[str] = field(default_factory=list)
    games: list[GameRecord] = field(default_factory=list)
    moved: list[MoveDelta] = field(default_factory=list)
    """Rooms saved by adding moves to their last record (never also in ``rooms``)."""
    quarantined: list[str] = field(default_factory=list)
    """Rooms whose rows could not be restored: marked ``quarantined``, kept."""
    analyses: list[tuple[int, bytes]] = field(default_factory=list)
    """(game id, encoded analysis) of finished games analysed."""

    def __bool__(self) -> bool:
        return bool(
            self.analyses
            or self.rooms
            or self.moved
            or self.dropped_rooms
            or self.quarantined
            or self.sessions
            or self.dropped_sessions
            or self.games
        )


class Unreadable(msgspec.Struct):
    """A row start-up could not use: its table (``rooms``, ``sessions``, ``games``), its key,
    and why. The row is quarantined: kept as it is for a person to look at, never loaded
    (nor pruned) again. A room row's status says ``quarantined``; a session or game row has
    its ``quarantined`` column set."""

    table: str
    key: str
    reason: str


QUARANTINED = "quarantined"
"""The status of a room row that could not be restored: kept for a person to look at."""
QUARANTINED_COLUMN = ("sessions", "games")
"""The tables whose unreadable rows are set aside by their ``quarantined`` column."""


@dataclass
class Loaded:
    """What start-up recovery reads back."""

    rooms: list[RoomRecord]
    sessions: list[SessionRecord]
    games: list[GameRecord]
    accounts: list[AccountRecord] = field(default_factory=list)
    """The computer's accounts, and those of the sessions saved (players in games)."""
    unreadable: list[Unreadable] = field(default_factory=list)
    analyses: dict[int, bytes] = field(default_factory=dict)
    """The analyses of the games loaded, by game id."""
    last_game: int = 0
    """The highest game id in the database, quarantined rows included (never reused)."""
    pruned: int = 0
    """Finished games the retention rule deleted as the database opened."""


class WriteReply(msgspec.Struct, kw_only=True):
    seconds: float
    """How long the commit took."""
    rated: list[RatedGame]
    """The rating changes of the rated games in the batch, committed with them."""
    pruned: int = 0
    """Finished games the database process deleted by itself (the retention rule) since it
    last said: it prunes between requests, so a pruning is told with the next reply."""


CHECKPOINT_EVERY = 1.0
"""Seconds between two checkpoints (``Checkpoints``)."""
CATCH_UP_ROUNDS = 5
"""Checkpoint rounds at most, one after the other, to copy the log to its end."""
WAL_BACKSTOP_PAGES = 10_000
"""Pages (4 KiB) in the write-ahead log past which a commit checkpoints it itself."""
WAL_KEPT_BYTES = 64 * 1024 * 1024
"""What the write-ahead log's file is cut back to when the writer starts it again from its
beginning (every log copied to its end): without a limit the file keeps the size of the
longest stretch ever written between two copies, for good. Above what a second of saturation
writes (bench/load.py: about 23 MB), so that a busy server does not cut and grow it again
every second (at 16 MiB, one run's commits took 0.50 ms on average, against 0.39-0.42 before)."""
ROWS_PER_STATEMENT = 200
"""Rows written by one statement (SQLite allows at least 999 parameters in one)."""


def _insert(
    db: sqlite3.Connection, head: str, rows: list[tuple[object, ...]], tail: str = ""
) -> None:
    """Insert ``rows`` with a few multi-row statements rather than one statement a row.

    Fewer, larger statements: each one is a round of the sqlite3 module's
    bookkeeping (and, when the database ran on a thread of the server, a wait
    to win back the interpreter lock from the busy event loop).
    """
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start : start + ROWS_PER_STATEMENT]
        row = "(" + ", ".join("?" * len(chunk[0])) + ")"
        db.execute(f"{head} VALUES {', '.join([row] * len(chunk))}{tail}", _flat(chunk))


_IN_PLACE = (
    "ON CONFLICT (code) DO UPDATE"
    " SET status = excluded.status, record = excluded.record, updated = excluded.updated"
)
"""A saved room's row is updated where it is. ``INSERT OR REPLACE`` deleted it and inserted
it again under a new rowid, at the table's end: each move rewrote about five pages (19 KiB
of WAL a commit, 1,000 paced games), where an update in place rewrites one or two."""


_MOVES_IN_PLACE = "ON CONFLICT (code) DO UPDATE SET moves = excluded.moves"


def _delete(db: sqlite3.Connection, head: str, keys: list[Any]) -> None:
    """``head IN (...)`` for ``keys``, a few statements rather than one a key."""
    for start in range(0, len(keys), ROWS_PER_STATEMENT):
        chunk = keys[start : start + ROWS_PER_STATEMENT]
        db.execute(f"{head} IN ({', '.join('?' * len(chunk))})", chunk)


def decode_rows(
    rows: Iterable[tuple[object, bytes]], kind: type[R], table: str, unreadable: list[Unreadable]
) -> list[R]:
    """Decode each row's record; a row that does not decode (or whose record names
    another key) goes to ``unreadable`` instead."""
    records: list[R] = []
    for key, record in rows:
        try:
            decoded = msgspec.json.decode(record, type=kind)
        except (msgspec.DecodeError, UnicodeDecodeError, TypeError) as error:
            unreadable.append(Unreadable(table, str(key), f"unreadable record: {error}"))
            continue
        named = getattr(decoded, "code", getattr(decoded, "id", None))
        if str(named) != str(key):
            unreadable.append(Unreadable(table, str(key), f"its record is for {named!r}"))
            continue
        records.append(decoded)
    return records


def decode_rooms(
    rows: Iterable[tuple[str, bytes, bytes | None]], unreadable: list[Unreadable]
) -> list[RoomRecord]:
    """``decode_rows`` for the rooms table joined with ``room_moves``: each record with the
    moves since added; a row whose moves do not decode is unreadable too."""
    rooms: list[RoomRecord] = []
    moves: dict[str, bytes] = {}
    for code, record, since in rows:
        rooms += decode_rows([(code, record)], RoomRecord, "rooms", unreadable)
        if since is not None:
            moves[code] = since
    if not moves:
        return rooms
    whole: list[RoomRecord] = []
    for room in rooms:
        since = moves.get(room.code)
        if since is not None:
            try:
                msgspec.json.decode(since, type=RoomMoves).apply(room)
            except (msgspec.DecodeError, UnicodeDecodeError, TypeError) as error:
                reason = f"{UNREADABLE_MOVES}: {error}"
                unreadable.append(Unreadable("rooms", room.code, reason))
                continue
        whole.append(room)
    return whole


UNREADABLE_MOVES = "unreadable moves since the record"
"""How ``decode_rooms`` says a room's ``room_moves`` row does not decode."""
ROOMS_SAVED = (
    "SELECT r.code, r.record, m.moves FROM rooms r LEFT JOIN room_moves m ON m.code = r.code"
)
"""Each room row with its moves since (``decode_rooms``)."""


def saved_rooms(db: sqlite3.Connection) -> dict[str, RoomRecord]:
    """Every room as saved, moves since its record included (quarantined rows too, but not
    those that do not decode): for the copy to PostgreSQL, tests and benchmarks."""
    rooms = decode_rooms(db.execute(ROOMS_SAVED), [])
    return {room.code: room for room in rooms}


def quarantined_keys(unreadable: list[Unreadable], table: str) -> list[Any]:
    """The keys of ``table``'s unreadable rows, as the table keeps them (game ids are numbers)."""
    keys = [bad.key for bad in unreadable if bad.table == table]
    return [int(key) for key in keys] if table == "games" else keys


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
            statement = ""
            for piece in MIGRATIONS[version].split(";"):
                # A trigger's body holds semicolons of its own: cut at whole statements.
                statement += piece + ";"
                if sqlite3.complete_statement(statement):
                    if statement.strip().strip(";").strip():
                        db.execute(statement)
                    statement = ""
            db.execute(f"PRAGMA user_version = {version + 1}")
    return before, max(before, target)


class OpenRequest(msgspec.Struct, tag="open"):
    path: str
    synchronous: Synchronous
    retention: Retention = Retention()


class ReaderRequest(msgspec.Struct, tag="open_reader"):
    """Open an existing database to answer only ``accountdb.READS`` (``Reader``)."""

    path: str


class PruneRequest(msgspec.Struct, tag="prune"):
    """Delete every game the retention rule lets go as of ``now``; answers how many."""

    now: float


class LoadRequest(msgspec.Struct, tag="load"):
    pass


class WriteRequest(msgspec.Struct, tag="write"):
    batch: Batch


Request = OpenRequest | ReaderRequest | LoadRequest | WriteRequest | PruneRequest | AccountQuery
DONE, FAILED = b"\x00", b"\x01"


class Database:
    """One SQLite connection, opened and migrated, read and written synchronously."""

    def __init__(
        self,
        path: str | Path,
        synchronous: Synchronous = "normal",
        retention: Retention | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        # WAL with NORMAL survives a crash of the process (SIGKILL) without
        # losing a commit; FULL also survives losing power, at an fsync a commit.
        db.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        db.execute("PRAGMA busy_timeout = 5000")
        db.execute(f"PRAGMA wal_autocheckpoint = {WAL_BACKSTOP_PAGES}")
        db.execute(f"PRAGMA journal_size_limit = {WAL_KEPT_BYTES}")
        self.db = db
        self.versions = migrate(db)
        """The schema version before and after opening."""
        with db:
            db.execute("BEGIN IMMEDIATE")
            accountdb.add_computers(db, time.time())
        self.rooms: dict[str, _Saved] = {}
        """Each room written whole since the database opened: its row's status and its moves
        since, for deltas (``MoveDelta``) to add to."""
        self.retention = retention or Retention()
        self.prune_due = 0.0
        """When the next pruning is due (``prune_if_due``): at once, on opening."""
        self.unreported = 0
        """Games ``prune_if_due`` deleted that no reply told of yet."""
        self.checkpoints = Checkpoints(self.path, synchronous)
        self.checkpoints.start()

    def prune(self, now: float, limit: int = PRUNE_CHUNK) -> int:
        """Delete up to ``limit`` games of each kind the retention rule
        (``server.retention``) lets go as of ``now``, in one transaction; how many."""
        deleted = 0
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            for sql, params, games in statements(self.retention, now, "?", limit):
                count = self.db.execute(sql, params).rowcount
                deleted += count if games else 0
        return deleted

    def prune_all(self, now: float) -> int:
        """Prune until nothing more is due; how many games were deleted."""
        deleted = 0
        while (count := self.prune(now)) > 0:
            deleted += count
        return deleted

    def prune_if_due(self, now: float) -> int:
        """One pruning if one is due: the next is due in ``PRUNE_EVERY`` seconds, or at
        once if this one deleted a whole chunk (more is waiting)."""
        if now < self.prune_due:
            return 0
        try:
            deleted = self.prune(now)
        except sqlite3.Error as error:  # the history grows a while longer; games go on
            sys.stderr.write(f"pruning the history failed, trying again later: {error}\n")
            deleted = 0
        self.prune_due = now if deleted >= PRUNE_CHUNK else now + PRUNE_EVERY
        self.unreported += deleted
        return deleted

    def load(self) -> Loaded:
        """Everything start-up needs; a row that does not decode is left out and named in
        ``unreadable`` (a room's is quarantined at once), so one bad row stops nothing."""
        db = self.db
        unreadable: list[Unreadable] = []
        rows = db.execute(f"{ROOMS_SAVED} WHERE r.status != ?", (QUARANTINED,))
        rooms = decode_rooms(rows, unreadable)
        self.quarantine([bad.key for bad in unreadable])
        rows = db.execute("SELECT id, record FROM sessions WHERE quarantined = 0")
        sessions = decode_rows(rows, SessionRecord, "sessions", unreadable)
        rows = db.execute(
            "SELECT id, record FROM games WHERE quarantined = 0"
            " ORDER BY finished DESC, id DESC LIMIT ?",
            (HISTORY_LOADED,),
        )
        games = decode_rows(rows, GameRecord, "games", unreadable)
        self._quarantine_rows(unreadable)
        (last_game,) = db.execute("SELECT COALESCE(MAX(id), 0) FROM games").fetchone()
        # The server writes each room it restored whole before any delta of it.
        self.rooms = {}
        ids = [id_ for (id_,) in db.execute("SELECT id FROM accounts WHERE computer IS NOT NULL")]
        ids += sorted({s.account for s in sessions if s.account is not None})
        accounts = accountdb.answer(db, accountdb.LoadAccounts(ids))
        assert isinstance(accounts, list)
        oldest = min((game.id for game in games), default=0)
        rows = db.execute("SELECT game, body FROM analyses WHERE game >= ?", (oldest,))
        analyses = {game: bytes(body) for game, body in rows}
        pruned, self.unreported = self.unreported, 0
        return Loaded(
            rooms, sessions, games[::-1], accounts, unreadable, analyses, last_game, pruned
        )

    def _quarantine_rows(self, unreadable: list[Unreadable]) -> None:
        """Set the unreadable session and game rows aside (room rows are done already)."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            for table in QUARANTINED_COLUMN:
                keys = quarantined_keys(unreadable, table)
                _delete(self.db, f"UPDATE {table} SET quarantined = 1 WHERE id", keys)

    def quarantine(self, codes: list[str]) -> None:
        """Mark these rooms' rows ``quarantined``: kept as they are, never loaded again."""
        if codes:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self._mark_quarantined(codes)

    def _mark_quarantined(self, codes: list[str]) -> None:
        for code in codes:
            self.rooms.pop(code, None)
        _delete(self.db, f"UPDATE rooms SET status = '{QUARANTINED}' WHERE code", codes)

    def write(self, batch: Batch) -> WriteReply:
        """Commit ``batch`` in one transaction: the seconds it took, and the rating changes
        of the rated games in it (made in that same transaction)."""
        db = self.db
        started = time.perf_counter()
        encode = msgspec.json.encode
        now = time.time()
        rooms = self.rooms
        rows: list[tuple[object, ...]] = []
        for record, status in batch.rooms:
            rooms[record.code] = _Saved(status, RoomMoves())
            rows.append((record.code, status, encode(record), now))
        moves: list[tuple[object, ...]] = []
        statuses: list[tuple[str, str]] = []
        for delta in batch.moved:
            saved = rooms[delta.code]  # unknown: a bug upstream; failing stops the server
            saved.moves.add(delta)
            moves.append((delta.code, encode(saved.moves)))
            if delta.status != saved.status:
                saved.status = delta.status
                statuses.append((delta.status, delta.code))
        for code in batch.dropped_rooms:
            rooms.pop(code, None)
        with db:
            db.execute("BEGIN IMMEDIATE")
            _insert(db, "INSERT INTO rooms (code, status, record, updated)", rows, _IN_PLACE)
            # Written whole: their moves so far are in their records now.
            _delete(db, "DELETE FROM room_moves WHERE code", [r.code for r, _ in batch.rooms])
            _insert(db, "INSERT INTO room_moves (code, moves)", moves, _MOVES_IN_PLACE)
            db.executemany("UPDATE rooms SET status = ? WHERE code = ?", statuses)
            _delete(db, "DELETE FROM rooms WHERE code", batch.dropped_rooms)
            _delete(db, "DELETE FROM room_moves WHERE code", batch.dropped_rooms)
            self._mark_quarantined(batch.quarantined)
            # A quarantined row stays as it is (its seat's session lives on unsaved).
            _insert(
                db,
                "INSERT INTO sessions (id, room, record)",
                [(s.id, s.room, encode(s)) for s in batch.sessions],
                " ON CONFLICT (id) DO UPDATE SET room = excluded.room, record = excluded.record"
                " WHERE quarantined = 0",
            )
            _delete(db, "DELETE FROM sessions WHERE quarantined = 0 AND id", batch.dropped_sessions)
            _insert(
                db,
                "INSERT INTO games (id, room, number, finished, record, short)",
                [
                    (g.id, g.room, g.number, g.finished, encode(g), int(is_short(g)))
                    for g in batch.games
                ],
            )
            rated = accountdb.record_games(db, batch.games, now)
            analyses: list[tuple[object, ...]] = list(batch.analyses)
            _insert(db, "INSERT OR REPLACE INTO analyses (game, body)", analyses)
        pruned, self.unreported = self.unreported, 0
        return WriteReply(seconds=time.perf_counter() - started, rated=rated, pruned=pruned)

    def close(self) -> None:
        self.checkpoints.stop()
        self.db.close()


class Reader:
    """A read-only connection to a database a ``Database`` opened (and migrated)."""

    def __init__(self, path: str | Path) -> None:
        uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        self.db = sqlite3.connect(uri, uri=True, isolation_level=None)
        self.db.execute("PRAGMA busy_timeout = 5000")

    def answer(self, request: Request) -> object:
        if not isinstance(request, accountdb.READS):
            raise RuntimeError(f"a reader does not answer {type(request).__name__}")
        return accountdb.answer(self.db, request)

    def close(self) -> None:
        self.db.close()


class Checkpoints(threading.Thread):
    """Copies the write-ahead log into the database file, beside the writer, every
    ``CHECKPOINT_EVERY`` seconds.

    SQLite's automatic checkpoint runs inside the commit that fills the log past
    its limit: that commit (and every reply waiting on it) waited for the copy and
    its fsyncs, with 1,000 paced games once every second or so. On a connection of
    its own (and in a thread, which the sqlite3 module lets run without the
    interpreter lock), a passive checkpoint never holds up a commit; the writer's
    own automatic checkpoint (``WAL_BACKSTOP_PAGES``) stays as a backstop should
    this one fall behind. Checkpoints change nothing about durability: a commit is
    in the log, on the same terms, before it is acknowledged.
    """

    def __init__(self, path: Path, synchronous: Synchronous) -> None:
        super().__init__(name="checkpoints", daemon=True)
        self.path = path
        self.synchronous = synchronous
        self.done = 0
        """Checkpoints run (for tests)."""
        self._stopping = threading.Event()

    def run(self) -> None:
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            # The copy's fsyncs follow this connection's setting: the writer's.
            db.execute(f"PRAGMA synchronous = {self.synchronous.upper()}")
            while not self._stopping.wait(CHECKPOINT_EVERY):
                try:
                    self._catch_up(db)
                except sqlite3.Error:
                    continue  # busy, say: the next round (or the backstop) copies it
                self.done += 1
        finally:
            db.close()

    @staticmethod
    def _catch_up(db: sqlite3.Connection) -> None:
        """Copy the log, then what was committed meanwhile, until a round finds nothing new
        (``CATCH_UP_ROUNDS`` at most): the writer starts the log again from its beginning
        only at a commit that finds it copied to the end; else the log grows until the
        backstop."""
        previous = -1
        for _ in range(CATCH_UP_ROUNDS):
            _, logged, copied = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if logged == copied and logged <= previous:
                return
            previous = logged

    def stop(self) -> None:
        self._stopping.set()
        self.join()


def read_message(stream: BinaryIO) -> bytes | None:
    """One framed message, or None at the end of the stream."""
    head = stream.read(4)
    if len(head) < 4:
        return None
    size = int.from_bytes(head, "big")
    body = stream.read(size)
    if len(body) < size:
        return None
    return body


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def _said(error: Exception) -> str:
    """A failure as the server's message quotes it: SQLite's with the kind of error
    (``DatabaseError: file is not a database``), this module's own sentences alone."""
    return str(error) if type(error) is RuntimeError else f"{type(error).__name__}: {error}"


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    """Answer requests until the end of input."""
    decoder = msgspec.msgpack.Decoder(Request)
    encode = msgspec.msgpack.encode
    database: Database | None = None
    reader: Reader | None = None
    try:
        while (message := read_message(requests)) is not None:
            try:
                request = decoder.decode(message)
                if isinstance(request, OpenRequest):
                    database = Database(request.path, request.synchronous, request.retention)
                    reply = DONE + encode(database.versions)
                elif isinstance(request, ReaderRequest):
                    reader = Reader(request.path)
                    reply = DONE + encode(None)
                elif reader is not None:
                    reply = DONE + encode(reader.answer(request))
                elif database is None:
                    raise RuntimeError("the database is not open")
                elif isinstance(request, LoadRequest):
                    reply = DONE + encode(database.load())
                elif isinstance(request, WriteRequest):
                    reply = DONE + encode(database.write(request.batch))
                elif isinstance(request, PruneRequest):
                    reply = DONE + encode(database.prune_all(request.now))
                else:
                    reply = DONE + encode(accountdb.answer(database.db, request))
            except Exception as error:  # the server decides what a failure means
                reply = FAILED + _said(error).encode()
            replies.write(frame(reply))
            replies.flush()
            if database is not None:
                # Once the reply is out, so that no commit waits for it (the next may).
                database.prune_if_due(time.time())
    finally:
        for opened in (database, reader):
            if opened is not None:
                opened.close()


def main() -> None:
    # The server decides when the database closes (after its last save), by
    # closing our input; a signal to the whole process group must not beat it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
