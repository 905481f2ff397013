"""Moving a server from SQLite to PostgreSQL (``python -m server.copydb``), on the real two."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from server import accountdb
from server.accountdb import CreateAccount, IssueToken, Profile, ProfileOf, TokenAccount
from server.copydb import CopyError, copy, main
from server.database import SCHEMA_VERSION, Batch, Database, MoveDelta
from server.pgstore import SQLITE_EQUIVALENT, PgStore
from server.records import AccountRecord
from server.store import Store, StoreLocked
from tests.server.test_store_contract import POOL, game, room, session


def fill(path: Path) -> None:
    """A SQLite database with some of everything: rooms, sessions, rated games, tokens."""
    database = Database(path)
    ids = [
        accountdb.answer(database.db, CreateAccount(name=n, key=n, look=n, password="h", now=1.0))
        for n in ("alice", "bob")
    ]
    alice, bob = (int(i) for i in ids)  # type: ignore[call-overload]
    accountdb.answer(
        database.db, IssueToken(digest=b"t" * 32, account=alice, now=1.0, expires=1e12)
    )
    database.write(
        Batch(
            rooms=[(room("AAAA", ["e2", "e8"]), "playing")],
            sessions=[replace(session("s1", "AAAA", alice), previous_digest="ef")],
            games=[game(1, [alice, bob], [1, 2], POOL), game(2, [alice, bob], [2, 1], POOL)],
            analyses=[(1, b'{"moves":[]}')],
        )
    )
    # Moves since the record was written whole (SQLite's room_moves): copied in the record.
    delta = MoveDelta(code="AAAA", status="playing", event=3, actions=["e3"], movers=[0],
                      draw_offers=[], clock=None)  # fmt: skip
    database.write(Batch(moved=[delta]))
    database.close()


async def test_everything_copied_reads_back_the_same_and_numbering_goes_on(
    tmp_path: Path, postgres_url: str
) -> None:
    path = tmp_path / "old.db"
    fill(path)
    counts = await copy(path, postgres_url)
    assert counts["games"] == 2
    assert counts["rating_history"] == 4

    sqlite = Store(path)
    await sqlite.open()
    postgres = PgStore(postgres_url)
    await postgres.open()
    before, after = await sqlite.load(), await postgres.load()
    assert after.rooms == before.rooms
    assert before.rooms[0].actions == ["e2", "e8", "e3"]
    assert after.sessions == before.sessions
    assert after.games == before.games
    assert after.accounts == before.accounts
    assert after.analyses == before.analyses
    query = ProfileOf(key="alice", recent=10)
    assert await postgres.ask(query, Profile) == await sqlite.ask(query, Profile)
    # A player coming back through any node of a cluster finds the game, by either token.
    assert await postgres.session_room(bytes.fromhex("ab")) == "AAAA"
    assert await postgres.session_room(bytes.fromhex("ef")) == "AAAA"
    token = TokenAccount(digest=b"t" * 32, now=2.0)
    assert (await postgres.ask(token, AccountRecord)).name == "alice"
    # New accounts are numbered after the copied ones.
    carol = await postgres.ask(CreateAccount(name="c", key="c", look="c", password="h", now=3), int)
    assert carol > max(a.id for a in after.accounts)
    await sqlite.close()
    await postgres.close()


async def test_a_database_in_use_or_a_target_not_empty_is_refused(
    tmp_path: Path, postgres_url: str
) -> None:
    path = tmp_path / "busy.db"
    fill(path)
    server = Store(path)
    await server.open()  # a server holds the file
    with pytest.raises(StoreLocked, match="copy a database no server uses"):
        await copy(path, postgres_url)
    await server.close()
    held = PgStore(postgres_url, alone=True)  # a stand-alone server on the target
    await held.open()
    with pytest.raises(CopyError, match="in use by a server: stop it first, and copy only"):
        await copy(path, postgres_url)
    await held.close()
    await copy(path, postgres_url)
    with pytest.raises(CopyError, match="already holds"):
        await copy(path, postgres_url)  # a second time: the target is not empty
    assert main([str(path), "not-a-url"]) == 2


def test_the_command_says_what_it_copied_and_why_it_refuses(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An operator's review: a missing file got the usage line alone, a database a server
    used named the server's ``--db``, and "7 accounts" after registering 2 (the other 5
    are the computer's levels) read as a wrong copy."""
    missing = tmp_path / "nothing.db"
    assert main([str(missing), postgres_url]) == 2
    assert f"no SQLite database at {missing} (no such file)" in capsys.readouterr().err
    path = tmp_path / "old.db"
    fill(path)
    assert main([str(path), postgres_url]) == 0
    said = capsys.readouterr().out
    assert "accounts (5 of them the computer's levels)" in said


def test_postgresql_holds_what_the_current_sqlite_schema_holds() -> None:
    """A new SQLite migration needs its PostgreSQL counterpart (server/pgstore.py) and the
    copy's table list (server/copydb.py)."""
    assert SQLITE_EQUIVALENT == SCHEMA_VERSION


async def test_a_room_whose_moves_do_not_read_back_is_copied_quarantined(
    tmp_path: Path, postgres_url: str
) -> None:
    """Its record alone would start an older position of the game in PostgreSQL: it is set
    aside there, as SQLite's start would set it aside."""
    path = tmp_path / "bad.db"
    fill(path)
    database = Database(path)
    database.db.execute("UPDATE room_moves SET moves = '{not json' WHERE code = 'AAAA'")
    database.close()
    await copy(path, postgres_url)
    postgres = PgStore(postgres_url)
    await postgres.open()
    loaded = await postgres.load()
    assert loaded.rooms == []
    await postgres.close()
