"""The server on PostgreSQL (``--db postgresql://...``): durable moves, and fencing.

Against the real PostgreSQL of tests/services.py; the store's own behaviour is
the shared suite's (test_store_contract.py).
"""

from __future__ import annotations

import asyncio
import signal

import msgspec
import psycopg
import pytest

from protocol.messages import (
    FetchGame,
    GameRecordReply,
    History,
    HistoryList,
    MoveRequest,
    State,
)
from server.database import Batch, MoveDelta
from server.dburl import shown
from server.pgstore import SCHEMA_VERSION, WATCH_EVERY, Fenced, PgStore, _Attempt
from tests.http import get as http_get
from tests.process import ServerProcess
from tests.server.test_store import GAME, play, resume, seat_two
from tests.server.test_store_contract import game, room, session
from tests.services import PostgresServer
from tests.wsclient import Client


async def test_sigkill_mid_game_on_postgresql_loses_no_acknowledged_move(
    postgres_url: str,
) -> None:
    server = await ServerProcess(postgres_url).start()
    a, b, code = await seat_two(server.url)
    half = 7
    await play([a, b], GAME[:half], 0)  # each move acknowledged to both players
    assert await server.stop(signal.SIGKILL) == -signal.SIGKILL

    server = await ServerProcess(postgres_url).start()
    a2 = await resume(server.url, a.welcome, "alice")
    b2 = await resume(server.url, b.welcome, "bob")
    assert a2.welcome is not None
    assert (a2.welcome.room, a2.welcome.seat) == (code, 0)
    state = await a2.state()
    while not all(p.connected for p in state.players):
        state = await a2.state()
    assert state.ply == half
    final = await play([a2, b2], GAME[half:], half)
    assert final.result is not None
    await a2.send(History())
    (summary,) = (await a2.expect(HistoryList)).games
    await a2.send(FetchGame(game=summary.game))
    assert (await a2.expect(GameRecordReply)).moves == GAME
    await asyncio.gather(a2.close(), b2.close())
    assert await server.stop() == 0


async def test_postgresql_away_too_long_acknowledges_nothing_unsaved_and_loses_nothing(
    own_postgres: PostgresServer,
) -> None:
    """PostgreSQL stopped for longer than ``--db-retry``: the server stops (exit 1) without
    acknowledging the move made meanwhile; once PostgreSQL is back and the server started
    again, every acknowledged move is there."""
    url = own_postgres.create_database("game")
    server = await ServerProcess(url, "--db-retry", "1").start()
    a, b, code = await seat_two(server.url)
    await play([a, b], GAME[:4], 0)
    own_postgres.stop()
    await a.send(MoveRequest(move=GAME[4], ply=4))
    assert server.process is not None
    async with asyncio.timeout(20):
        assert await server.process.wait() == 1  # it stops by itself
    assert await server.stop() == 1
    assert b"PostgreSQL" in server.log
    acknowledged = [m.ply for m in a.seen + b.seen if isinstance(m, State) and m.ply > 4]
    assert acknowledged == []  # the move was never acknowledged

    own_postgres.start()
    server = await ServerProcess(url).start()
    a2 = await resume(server.url, a.welcome, "alice")
    b2 = await resume(server.url, b.welcome, "bob")
    state = await a2.state()
    while not all(p.connected for p in state.players):
        state = await a2.state()
    assert state.ply == 4
    final = await play([a2, b2], GAME[4:], 4)
    assert final.result is not None
    await asyncio.gather(a2.close(), b2.close())
    assert await server.stop() == 0
    await asyncio.gather(a.close(), b.close())
    assert a2.welcome is not None
    assert a2.welcome.room == code


async def test_postgresql_restarted_between_moves_the_game_goes_on_on_the_same_server(
    own_postgres: PostgresServer,
) -> None:
    """A restart of PostgreSQL noticed between writes: the server connects again by itself;
    a move made while it is down waits, unacknowledged, and goes through once it is back."""
    url = own_postgres.create_database("game")
    server = await ServerProcess(url).start()
    a, b, _code = await seat_two(server.url)
    await play([a, b], GAME[:4], 0)
    own_postgres.stop()
    await asyncio.sleep(WATCH_EVERY * 2.5)  # the server notices while idle
    await a.send(MoveRequest(move=GAME[4], ply=4))
    await a.quiet(0.5)  # not acknowledged while PostgreSQL is away
    own_postgres.start()
    state = await a.state()
    assert state.ply == 5
    await b.state()
    final = await play([a, b], GAME[5:], 5)
    assert final.result is not None
    assert b"PostgreSQL connection made again" in server.log
    status, metrics = await http_get(server.port, "/metrics")
    assert status == 200
    assert "quoridor_db_reconnects_total 1.0" in metrics
    await asyncio.gather(a.close(), b.close())
    assert await server.stop() == 0

    # Every move is in PostgreSQL, and the server never restarted.
    store = PgStore(url)
    await store.open()
    (finished,) = (await store.load()).games
    assert finished.moves == GAME
    await store.close()


SHUFFLE = "e2 e8 e1 e9".split()
"""Both pawns step out and back: a game that goes on for as long as a test needs."""


async def shuffle(a: Client, b: Client, until: asyncio.Event, after: int) -> int:
    """Play SHUFFLE's moves, each acknowledged to both players, until ``until`` is set and
    ``after`` more were played: the plies acknowledged."""
    ply = extra = 0
    while extra < after:
        await (a, b)[ply % 2].send(MoveRequest(move=SHUFFLE[ply % len(SHUFFLE)], ply=ply))
        for client in (a, b):  # held while PostgreSQL is away: a slow machine's restart
            while (await client.expect(State, within=60)).ply != ply + 1:
                pass
        ply += 1
        extra += until.is_set()
        await asyncio.sleep(0.01)
    return ply


async def test_postgresql_restarted_under_load_the_server_rides_it_out(
    own_postgres: PostgresServer,
) -> None:
    """The operators' review (M1): PostgreSQL restarted while games are played. A write is
    the first to find the connection gone; the server connects again within --db-retry,
    learns whether the commit in flight happened, and goes on: it never stops, replies wait
    meanwhile, and every acknowledged move is in PostgreSQL."""
    url = own_postgres.create_database("game")
    server = await ServerProcess(url, "--db-retry", "20").start()
    pairs = [await seat_two(server.url) for _ in range(4)]
    restarted = asyncio.Event()
    games = [asyncio.create_task(shuffle(a, b, restarted, 20)) for a, b, _ in pairs]
    await asyncio.sleep(0.5)
    await asyncio.to_thread(own_postgres.stop)
    await asyncio.sleep(1.0)  # down for a while under load: replies held
    await asyncio.to_thread(own_postgres.start)
    restarted.set()
    plies = await asyncio.gather(*games)
    assert server.process is not None
    assert server.process.returncode is None  # it never stopped
    # Nearly always noticed by a write (the watch looks once a second), which stopped the
    # server before; either way it connects again.
    assert b"PostgreSQL connection lost" in server.log
    assert b"PostgreSQL connection made again" in server.log
    for a, b, _ in pairs:
        await asyncio.gather(a.close(), b.close())
    assert await server.stop() == 0

    store = PgStore(url)
    await store.open()
    saved = {room.code: len(room.actions) for room in (await store.load()).rooms}
    await store.close()
    assert saved == {code: ply for (_, _, code), ply in zip(pairs, plies, strict=True)}


async def test_a_write_in_doubt_is_made_once_whichever_way_its_lost_commit_went(
    postgres_url: str,
) -> None:
    """A stand-alone server's write whose connection was lost runs again on the new one
    only if PostgreSQL says its transaction did not commit: a finished game (an insert,
    which a second write would refuse) is saved exactly once either way."""
    store = PgStore(postgres_url, alone=True)
    await store.open()
    committed = _Attempt()
    batch = Batch(games=[game(1)])
    await store._run(lambda conn: store._write(conn, batch, committed), again=True)
    assert committed.xid is not None
    # As if the reply to its COMMIT had been lost: the write runs again, finds it made.
    await store._run(lambda conn: store._write(conn, batch, committed), again=True)

    async with await psycopg.AsyncConnection.connect(postgres_url) as other:
        rolled_back = _Attempt()
        ((rolled_back.xid,),) = await (
            await other.execute("SELECT pg_current_xact_id()::text")
        ).fetchall()
        await other.rollback()
    batch = Batch(games=[game(2)])
    await store._run(lambda conn: store._write(conn, batch, rolled_back), again=True)
    assert sorted(g.id for g in (await store.load()).games) == [1, 2]
    await store.close()


async def test_a_former_owner_cannot_write_a_room_claimed_under_a_newer_epoch(
    postgres_url: str,
) -> None:
    old, new = PgStore(postgres_url), PgStore(postgres_url)
    await old.open()
    await new.open()
    await old.claim("ffff", 1)
    await old.write(Batch(rooms=[(room("ffff", ["e2"]), "playing")]))

    await new.claim("ffff", 2)  # the takeover
    taken, _sessions = await new.load_room("ffff")
    assert taken is not None
    assert taken.actions == ["e2"]

    # The old owner wakes up and writes a move, and another room of its own with it.
    stale = MoveDelta(
        code="ffff",
        status="playing",
        event=2,
        actions=["e8"],
        movers=[1],
        draw_offers=[],
        clock=None,
    )
    with pytest.raises(Fenced) as refused:
        await old.write(Batch(rooms=[(room("gggg", []), "playing")], moved=[stale]))
    assert refused.value.codes == ["ffff"]
    with pytest.raises(Fenced):
        await old.write(Batch(dropped_rooms=["ffff"]))
    with pytest.raises(Fenced):
        await old.claim("ffff", 1)  # nor can it claim the room back under its old epoch

    # Nothing of the refused batches was written; the new owner writes on.
    await new.write(Batch(moved=[stale]))
    rooms = {r.code: r for r in (await new.load()).rooms}
    assert set(rooms) == {"ffff"}
    assert rooms["ffff"].actions == ["e2", "e8"]
    await old.close()
    await new.close()


async def test_a_claim_waits_for_the_former_owners_write_in_flight(postgres_url: str) -> None:
    """The fence is read under a share lock: a claim cannot slip between the old owner's
    check and its commit, so what the new owner loads after its claim is final."""
    old, new = PgStore(postgres_url), PgStore(postgres_url)
    await old.open()
    await new.open()
    await old.claim("hhhh", 1)
    await old.write(Batch(rooms=[(room("hhhh", []), "playing")]))
    assert old._conn is not None
    async with old._conn.transaction():
        await old._check_fences(old._conn, ["hhhh"])  # the old owner's batch, mid-commit
        claim = asyncio.create_task(new.claim("hhhh", 2))
        await asyncio.sleep(0.3)
        assert not claim.done()
    await asyncio.wait_for(claim, 10)
    await old.close()
    await new.close()


async def test_a_former_owner_stalled_mid_commit_cannot_hold_up_a_takeover(
    postgres_url: str,
) -> None:
    """A node paused inside its transaction holds the fences it read; PostgreSQL ends its
    session after ``stalled_after``, the claim goes through, and the stalled commit fails."""
    old, new = PgStore(postgres_url, stalled_after=0.5), PgStore(postgres_url)
    await old.open()
    await new.open()
    await old.claim("iiii", 1)
    await old.write(Batch(rooms=[(room("iiii", []), "playing")]))
    conn = old._conn
    assert conn is not None

    async def stalled_commit() -> None:
        async with conn.transaction():
            await old._check_fences(conn, ["iiii"])
            started = asyncio.get_running_loop().time()
            await asyncio.wait_for(new.claim("iiii", 2), 10)  # the old one stalls meanwhile
            assert asyncio.get_running_loop().time() - started < 5
            await conn.execute("SELECT 1")  # it wakes: its session is gone

    with pytest.raises(psycopg.Error, match="idle-in-transaction"):
        await stalled_commit()
    await old.close()
    await new.close()


async def test_a_takeover_leaves_a_quarantined_session_row_aside(postgres_url: str) -> None:
    """A session row set aside at start-up (unreadable) stays out of a room's takeover too:
    its seat is reclaimed with the seat's secret, as after a restart."""
    store = PgStore(postgres_url)
    await store.open()
    await store.write(
        Batch(rooms=[(room("kkkk", ["e2"]), "playing")], sessions=[session("s1", "kkkk")])
    )
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE sessions SET record = %s WHERE id = 's1'", (b"\x00junk",))
    (bad,) = (await store.load()).unreadable  # set aside
    assert (bad.table, bad.key) == ("sessions", "s1")
    taken, sessions = await store.load_room("kkkk")
    assert taken is not None
    assert sessions == []
    await store.close()


async def test_a_session_is_found_by_its_token_digest_also_when_saved_before_schema_5(
    postgres_url: str,
) -> None:
    """``session_room`` reads an indexed column (schema 5); rows saved by an older server
    get it at the migration, so players resuming during a rolling upgrade are still found."""
    store = PgStore(postgres_url)
    await store.open()
    await store.write(Batch(sessions=[session("s1", "kkkk"), session("s2", None)]))
    assert await store.session_room(bytes.fromhex("ab")) == "kkkk"
    assert await store.session_room(bytes.fromhex("cd")) is None
    await store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # as schema 4 left it
        conn.execute("ALTER TABLE sessions DROP COLUMN token_digest")
        conn.execute("ALTER TABLE sessions DROP COLUMN previous_digest")
        conn.execute("DROP TRIGGER game_players_counted ON game_players")  # schema 7's
        conn.execute("DROP FUNCTION count_game_players()")
        conn.execute("DROP TABLE player_totals")
        conn.execute("UPDATE schema_version SET version = 4")
    store = PgStore(postgres_url)
    assert await store.open() == (4, SCHEMA_VERSION)
    assert await store.session_room(bytes.fromhex("ab")) == "kkkk"
    await store.close()


async def test_a_session_is_found_by_the_token_of_its_last_resume_too(postgres_url: str) -> None:
    """A resume's welcome may be lost: the token it was made with still finds the room
    from any node (its node decides whether the token takes the session back)."""
    store = PgStore(postgres_url)
    await store.open()
    resumed = msgspec.structs.replace(session("s1", "kkkk"), previous_digest="ef")
    await store.write(Batch(sessions=[resumed]))
    assert await store.session_room(bytes.fromhex("ab")) == "kkkk"
    assert await store.session_room(bytes.fromhex("ef")) == "kkkk"
    await store.write(Batch(sessions=[msgspec.structs.replace(resumed, previous_digest="ab")]))
    assert await store.session_room(bytes.fromhex("ef")) is None
    await store.close()


def test_a_password_in_the_database_url_is_never_shown() -> None:
    assert shown("postgresql://quoridor:s3cret@db:5432/quoridor") == (
        "postgresql://quoridor:***@db:5432/quoridor"
    )
    assert shown("postgresql://quoridor@db/quoridor") == "postgresql://quoridor@db/quoridor"
    assert shown("games.db") == "games.db"
