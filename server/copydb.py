"""Copy a SQLite database into an empty PostgreSQL one: moving a single server to the store
of a cluster (docs/cluster.md).

    .venv/bin/python -m server.copydb quoridor.db postgresql://quoridor@db:5432/quoridor

Stop the server first: the copy refuses a SQLite file another server holds. The
file is brought to the current schema first (as the server would on start), then
every table is copied in one PostgreSQL transaction, ids kept, and the row
counts compared; a PostgreSQL database that already holds games, rooms or
accounts is refused. A room's moves since its record was last written whole
(SQLite's ``room_moves``) are copied inside its record, as PostgreSQL keeps it.
Then start the server with the URL as ``--db``.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec

from server.database import (
    QUARANTINED,
    ROOMS_SAVED,
    SCHEMA_VERSION,
    UNREADABLE_MOVES,
    Database,
    Unreadable,
    decode_rooms,
)
from server.dburl import is_postgresql, shown
from server.pgstore import SQLITE_EQUIVALENT, Conn, PgStore, index_session_tokens
from server.store import StoreError, StoreLocked, _lock

TABLES: dict[str, list[str]] = {
    "accounts": ["id", "name", "key", "look", "password", "computer", "created"],
    "tokens": ["digest", "account", "created", "expires"],
    "ratings": ["account", "pool", "mu", "sigma", "games", "wins", "losses", "draws"],
    "rating_history": ["id", "account", "pool", "game", "mu", "sigma", "at"],
    "games": ["id", "room", "number", "finished", "record", "pool", "short", "quarantined"],
    "game_players": ["game", "seat", "account", "outcome"],
    "analyses": ["game", "body"],
    "rooms": ["code", "status", "record", "updated"],
    "sessions": ["id", "room", "record", "quarantined"],
}
"""Every table of SQLite's schema (``SQLITE_EQUIVALENT``), in an order that keeps the
references whole, with its columns (the same names in both)."""
IDENTITIES = ("accounts", "rating_history")
"""Tables whose ids PostgreSQL numbers: their sequences continue after the copied ids."""


class CopyError(RuntimeError):
    pass


def _value(value: object) -> object:
    return bytes(value) if isinstance(value, memoryview) else value


async def copy(source: Path, url: str) -> dict[str, int]:
    """Copy ``source`` into the PostgreSQL database at ``url``: rows copied per table."""
    if SCHEMA_VERSION != SQLITE_EQUIVALENT:
        raise CopyError(
            f"this copy knows SQLite schema {SQLITE_EQUIVALENT}, the server's is {SCHEMA_VERSION}"
        )
    lock = _lock(source, "stop it first: copy a database no server uses")
    try:
        database = Database(source)
        rows = {
            table: [
                tuple(_value(v) for v in row)
                for row in database.db.execute(f"SELECT {', '.join(cols)} FROM {table}")
            ]
            for table, cols in TABLES.items()
        }
        rows["rooms"] = _whole_rooms(database.db, rows["rooms"])
        database.close()
    finally:
        os.close(lock)
    store = PgStore(url)
    try:
        await store.open()
    except StoreLocked:
        # The store's own remedy names the server's --db, which this command has not.
        raise CopyError(
            f"the database {shown(url)} is in use by a server: stop it first, and copy only "
            "into a database no server uses"
        ) from None
    try:
        # Through the store's queue: its own requests (a pruning as it opens) wait their turn.
        await store._run(lambda conn: _fill(conn, rows))
    finally:
        await store.close()
    return {table: len(table_rows) for table, table_rows in rows.items()}


def _whole_rooms(
    db: sqlite3.Connection, rows: list[tuple[object, ...]]
) -> list[tuple[object, ...]]:
    """The rooms rows with each record brought up to date with its moves since it was last
    written whole (SQLite's ``room_moves``: PostgreSQL's rows hold whole records). A room
    whose moves do not read back is copied quarantined, as SQLite's start would set it."""
    unreadable: list[Unreadable] = []
    moved = {
        room.code: room
        for room in decode_rooms(db.execute(f"{ROOMS_SAVED} WHERE m.moves IS NOT NULL"), unreadable)
    }
    bad = {u.key for u in unreadable if u.reason.startswith(UNREADABLE_MOVES)}
    whole: list[tuple[object, ...]] = []
    for code, status, record, updated in rows:
        if code in moved:
            record = msgspec.json.encode(moved[code])
        elif code in bad:
            status = QUARANTINED
        whole.append((code, status, record, updated))
    return whole


async def _fill(conn: Conn, rows: dict[str, list[tuple[object, ...]]]) -> None:
    async with conn.transaction():
        for table in ("games", "rooms", "sessions"):
            cursor = await conn.execute(f"SELECT count(*) FROM {table}".encode())
            found = await cursor.fetchone()
            if found is not None and found[0]:
                raise CopyError(f"the PostgreSQL database already holds {table}: give an empty one")
        cursor = await conn.execute(b"SELECT count(*) FROM accounts WHERE computer IS NULL")
        found = await cursor.fetchone()
        if found is not None and found[0]:
            raise CopyError("the PostgreSQL database already holds accounts: give an empty one")
        await conn.execute(b"DELETE FROM accounts")  # the computer's, as SQLite numbered them
        for table, cols in TABLES.items():
            if not rows[table]:
                continue
            marks = ", ".join(["%s"] * len(cols))
            overriding = " OVERRIDING SYSTEM VALUE" if table in IDENTITIES else ""
            sql = f"INSERT INTO {table} ({', '.join(cols)}){overriding} VALUES ({marks})"
            await conn.cursor().executemany(sql.encode(), rows[table])
        for table in IDENTITIES:
            await conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                f" (SELECT COALESCE(max(id), 0) + 1 FROM {table}), false)".encode()
            )
        # The columns a cluster's nodes find a returning player's session by: SQLite has
        # them only in the records (without, a resume through a node that did not host the
        # game yet was answered bad_token).
        await index_session_tokens(conn)
        for table in TABLES:
            cursor = await conn.execute(f"SELECT count(*) FROM {table}".encode())
            counted = await cursor.fetchone()
            if counted is None or counted[0] != len(rows[table]):
                raise CopyError(f"{table}: {counted} rows in PostgreSQL, {len(rows[table])} read")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or not is_postgresql(args[1]):
        sys.stderr.write(f"usage: {sys.executable} -m server.copydb SQLITE_FILE postgresql://...\n")
        return 2
    if not Path(args[0]).is_file():
        sys.stderr.write(f"copydb: no SQLite database at {args[0]} (no such file)\n")
        return 2
    try:
        counts = asyncio.run(copy(Path(args[0]), args[1]))
    except (CopyError, StoreError) as error:
        sys.stderr.write(f"copydb: {error}\n")
        return 1
    print(f"copied {args[0]} to {shown(args[1])}: {copied_text(counts, Path(args[0]))}")
    return 0


def copied_text(counts: dict[str, int], source: Path) -> str:
    """The rows copied per table, the computer's own accounts (one per level, made by every
    server) said apart: an operator who had registered 2 read "7 accounts" and wondered."""
    db = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    try:
        ((computer,),) = db.execute("SELECT count(*) FROM accounts WHERE computer IS NOT NULL")
    finally:
        db.close()
    said = [f"{count} {table}" for table, count in counts.items()]
    if computer:
        index = list(counts).index("accounts")
        said[index] += f" ({computer} of them the computer's levels)"
    return ", ".join(said)


if __name__ == "__main__":
    raise SystemExit(main())
