"""Nothing is lost: the database, restarts over real processes, and the history."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
from pathlib import Path

import msgspec
import pytest
from websockets.exceptions import InvalidStatus
from websockets.frames import Frame, Opcode

from protocol.codec import encode
from protocol.messages import (
    VERSION,
    Create,
    Error,
    FetchGame,
    GameRecordReply,
    Hello,
    History,
    HistoryList,
    Join,
    Joined,
    MoveRequest,
    State,
    TimeControl,
    VariantSpec,
    Welcome,
)
from server.accountdb import CreateAccount, GamesOf, Profile, ProfileOf, TopRatings
from server.app import GameServer
from server.config import Config
from server.database import SCHEMA_VERSION, Database, Reader, migrate, saved_rooms
from server.records import GameRecord
from server.retention import is_short
from server.store import Store, StoreError
from tests.http import get as http_get
from tests.process import ServerProcess, children, cmdline, wait_gone
from tests.server.test_wire import raw_websocket
from tests.wsclient import Client

# Seat 0 walks up column e, seat 1 steps aside to column d and walks down it.
GAME = "e2 d9 e3 d8 e4 a6h e5 d7 e6 d6 e7 d5 e8 d4 e9".split()


async def seat_two(url: str) -> tuple[Client, Client, str]:
    a, b = await Client.connect(url, "alice"), await Client.connect(url, "bob")
    await a.send(Create())
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    return a, b, room


async def play(clients: list[Client], moves: list[str], first_ply: int) -> State:
    state = None
    for offset, move in enumerate(moves):
        ply = first_ply + offset
        await clients[ply % 2].send(MoveRequest(move=move, ply=ply))
        for client in clients:
            state = await client.state()
            while state.ply != ply + 1:
                state = await client.state()
    assert state is not None
    return state


async def resume(url: str, welcome: Welcome | None, name: str) -> Client:
    assert welcome is not None
    client = await Client.connect(url, hello=False)
    await client.send(Hello(version=VERSION, name=name, resume=welcome.resume_token))
    client.welcome = await client.expect(Welcome)
    return client


# -- migrations -----------------------------------------------------------------


def test_migrate_an_empty_database(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "new.db")
    assert migrate(db) == (0, SCHEMA_VERSION)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"rooms", "sessions", "games"} <= tables
    assert migrate(db) == (SCHEMA_VERSION, SCHEMA_VERSION)


def test_migrate_from_the_previous_version_keeps_the_data(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    assert migrate(db, target=SCHEMA_VERSION - 1) == (0, SCHEMA_VERSION - 1)
    db.execute("INSERT INTO rooms VALUES ('abc', 'playing', '{}', 1.0)")
    assert migrate(db) == (SCHEMA_VERSION - 1, SCHEMA_VERSION)
    assert db.execute("SELECT code, status FROM rooms").fetchall() == [("abc", "playing")]
    assert db.execute("SELECT count(*) FROM games").fetchone() == (0,)


def test_schema_5_marks_the_short_games_already_saved(tmp_path: Path) -> None:
    """Pruning needs to know which games are short (server.retention): the games saved
    before the column existed are sorted by the migration, a damaged record counted played
    (kept)."""
    db = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    migrate(db, target=4)
    variant = VariantSpec(players=2, size=9, walls=10)

    def record(id_: int, moves: list[str], reason: str) -> bytes:
        return msgspec.json.encode(
            GameRecord(id=id_, room="r", number=1, variant=variant, players=["a", "b"],
                       winner=0, reason=reason, moves=moves, finished=1.0)
        )  # fmt: skip

    rows = {
        1: record(1, ["e2", "e8", "e3", "e7"], "goal"),
        2: record(2, ["e2", "e8", "e3", "e7"], "aborted"),
        3: record(3, ["e2", "e8", "e3", "retire1"], "resign"),
        4: b"{not json",
    }
    for id_, body in rows.items():
        db.execute("INSERT INTO games VALUES (?, 'r', 1, 1.0, ?, NULL)", (id_, body))
    migrate(db)
    short = dict(db.execute("SELECT id, short FROM games").fetchall())
    assert short == {1: 0, 2: 1, 3: 1, 4: 0}
    assert short == {id_: int(is_short(msgspec.json.decode(rows[id_], type=GameRecord)))
                     for id_ in (1, 2, 3)} | {4: 0}  # fmt: skip


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "future.db")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(RuntimeError, match="newer"):
        migrate(db)


# -- in-process: order, history -------------------------------------------------------


async def test_many_games_writing_at_once_keep_every_move_in_order(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    config = Config(
        port=0, db=str(path), max_per_ip=100, rooms_per_ip=100, hello_burst=1000, address_share=100
    )
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        tables = await asyncio.gather(*(seat_two(url) for _ in range(12)))
        await asyncio.gather(*(play([a, b], GAME[:-1], 0) for a, b, _ in tables))
        rooms = saved_rooms(sqlite3.connect(path))  # with the moves saved since each record
        for _a, _b, room in tables:
            record = rooms[room]
            assert record.actions == GAME[:-1]
            assert record.movers == [ply % 2 for ply in range(len(GAME) - 1)]
        for a, b, _ in tables:
            await asyncio.gather(a.close(), b.close())


async def test_finished_games_go_to_the_history(tmp_path: Path) -> None:
    async with GameServer(Config(port=0, db=str(tmp_path / "h.db"))).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b, room = await seat_two(url)
        final = await play([a, b], GAME, 0)
        assert final.result is not None
        await a.send(History(id=1))
        listed = await a.expect(HistoryList)
        (summary,) = listed.games
        assert (summary.room, summary.players, summary.winner, summary.reason) == (
            room,
            ["alice", "bob"],
            0,
            "goal",
        )
        assert summary.plies == len(GAME)
        assert final.result.game_id == summary.game  # the state named the game's id
        await a.send(FetchGame(id=2, game=summary.game))
        record = await a.expect(GameRecordReply)
        assert record.moves == GAME
        assert record.record == " ".join(GAME)
        assert record.numbered.startswith("1. e2 d9 2. e3 d8")
        await asyncio.gather(a.close(), b.close())
    # The history survives a restart.
    async with GameServer(Config(port=0, db=str(tmp_path / "h.db"))).running() as server:
        client = await Client.connect(f"ws://127.0.0.1:{server.port}")
        await client.send(FetchGame(game=summary.game))
        assert (await client.expect(GameRecordReply)).moves == GAME
        await client.close()


# -- real processes: crash and graceful restart ----------------------------------------


async def test_sigkill_mid_game_loses_nothing(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    server = await ServerProcess(db).start()
    a, b, room = await seat_two(server.url)
    half = 7
    await play([a, b], GAME[:half], 0)
    databases = server.children()
    assert len(databases) == 2  # the writer and the reader
    assert await server.stop(signal.SIGKILL) == -signal.SIGKILL
    # The database processes see the end of their input and go too.
    assert all(wait_gone(database) for database in databases)

    server = await ServerProcess(db).start()
    a2 = await resume(server.url, a.welcome, "alice")
    b2 = await resume(server.url, b.welcome, "bob")
    assert a2.welcome is not None
    assert (a2.welcome.room, a2.welcome.seat) == (room, 0)
    state = await a2.state()
    while not all(p.connected for p in state.players):
        state = await a2.state()
    assert state.ply == half
    final = await play([a2, b2], GAME[half:], half)
    assert final.result is not None
    assert final.result.winner == 0
    await a2.send(History())
    (summary,) = (await a2.expect(HistoryList)).games
    await a2.send(FetchGame(game=summary.game))
    assert (await a2.expect(GameRecordReply)).moves == GAME
    await asyncio.gather(a2.close(), b2.close())
    assert await server.stop() == 0


async def test_a_resume_whose_welcome_a_crash_lost_is_made_again_after_it(
    tmp_path: Path,
) -> None:
    """The server saves a resume's new token before it writes the welcome; a crash in
    between leaves the client with the token it resumed with, which still works."""
    db = tmp_path / "lost.db"
    server = await ServerProcess(db).start()
    a, b, room = await seat_two(server.url)
    await play([a, b], GAME[:3], 0)
    a.ws.transport.abort()
    lost = await resume(server.url, a.welcome, "alice")  # its welcome never "arrives"
    assert await server.stop(signal.SIGKILL) == -signal.SIGKILL

    server = await ServerProcess(db).start()
    a2 = await resume(server.url, a.welcome, "alice")
    assert a2.welcome is not None
    assert (a2.welcome.room, a2.welcome.seat) == (room, 0)
    refused = await Client.connect(server.url, hello=False)
    assert lost.welcome is not None
    await refused.send(Hello(version=VERSION, name="alice", resume=lost.welcome.resume_token))
    assert (await refused.expect(Error)).code == "bad_token"
    b2 = await resume(server.url, b.welcome, "bob")
    final = await play([a2, b2], GAME[3:], 3)
    assert final.result is not None
    await asyncio.gather(a2.close(), b2.close(), refused.close(), lost.close())
    assert await server.stop() == 0


async def test_sigterm_closes_with_1012_exits_0_and_the_game_resumes(tmp_path: Path) -> None:
    db = tmp_path / "term.db"
    server = await ServerProcess(db).start()
    a, b = await Client.connect(server.url, "alice"), await Client.connect(server.url, "bob")
    await a.send(Create(clock=TimeControl(base=300, increment=5)))
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    await play([a, b], GAME[:4], 0)
    assert await server.stop(signal.SIGTERM) == 0
    assert await a.closed() == (1012, "server restarting")
    assert await b.closed() == (1012, "server restarting")

    server = await ServerProcess(db).start()
    a2 = await resume(server.url, a.welcome, "alice")
    state = await a2.state()
    assert (state.room, state.ply, state.status) == (room, 4, "playing")
    assert state.clock is not None
    assert state.clock.running == 0
    # The seat to move got its time back plus the restart bonus (10 s); nobody lost any.
    assert state.clock.remaining_ms[0] > 300_000
    assert state.clock.remaining_ms[1] > 300_000
    b2 = await resume(server.url, b.welcome, "bob")
    final = await play([a2, b2], GAME[4:], 4)
    assert final.result is not None
    await asyncio.gather(a2.close(), b2.close())
    assert await server.stop() == 0


async def test_sigterm_to_the_whole_process_group_still_saves_last(tmp_path: Path) -> None:
    """A service manager signals every process of the service: the database process
    must outlive the server's final save, and both must end."""
    db = tmp_path / "group.db"
    server = await ServerProcess(db).start()
    a, b = await Client.connect(server.url, "alice"), await Client.connect(server.url, "bob")
    await a.send(Create(clock=TimeControl(base=300, increment=5)))
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    await play([a, b], GAME[:3], 0)
    databases = server.children()
    assert len(databases) == 2  # the writer and the reader
    assert await server.stop(signal.SIGTERM, group=True) == 0
    assert b"cannot write" not in server.log
    assert all(wait_gone(database) for database in databases)

    server = await ServerProcess(db).start()
    b2 = await resume(server.url, b.welcome, "bob")
    state = await b2.state()
    assert (state.room, state.ply, state.status) == (room, 3, "playing")
    assert state.clock is not None
    assert state.clock.running == 1
    await b2.close()
    assert await server.stop() == 0


async def test_a_lost_database_stops_the_server_and_nothing_unsaved_is_acknowledged(
    tmp_path: Path,
) -> None:
    config = Config(port=0, db=str(tmp_path / "lost.db"))
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b, _room = await seat_two(url)
        await play([a, b], GAME[:2], 0)
        assert server.store is not None
        assert isinstance(server.store, Store)
        assert server.store.pid is not None
        os.kill(server.store.pid, signal.SIGKILL)
        await a.send(MoveRequest(move=GAME[2], ply=2))
        async with asyncio.timeout(10):
            await server.stopping.wait()
        assert server.failed
        # The move was never saved, so nobody heard of it.
        await a.quiet(0.5)
        await b.quiet(0.1)
        await asyncio.gather(a.close(), b.close())


async def test_a_database_newer_than_the_server_is_refused_and_no_process_is_left(
    tmp_path: Path,
) -> None:
    path = tmp_path / "newer.db"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    store = Store(path)
    with pytest.raises(StoreError, match="newer than this server"):
        await store.open()
    assert store.pid is None
    assert not [pid for pid in children(os.getpid()) if b"server.database" in cmdline(pid)]


async def test_a_sigterm_restart_leaves_no_gap_in_the_event_numbers(tmp_path: Path) -> None:
    """Section 7: a gap means a missed event. The players dropped by the stop are not
    events (nobody receives them), so the first event after resuming follows the last
    one received before the 1012."""
    db = tmp_path / "gap.db"
    server = await ServerProcess(db).start()
    a, b, room = await seat_two(server.url)
    await play([a, b], GAME[:4], 0)
    last = {}
    for name, client in (("alice", a), ("bob", b)):
        events = [m.event for m in client.seen if isinstance(m, State)]
        last[name] = events[-1]
    assert last["alice"] == last["bob"]
    assert await server.stop(signal.SIGTERM) == 0
    assert await a.closed() == (1012, "server restarting")
    await b.closed()
    for name, client in (("alice", a), ("bob", b)):
        assert max(m.event for m in client.seen if isinstance(m, State)) == last[name]

    server = await ServerProcess(db).start()
    firsts = []
    for name, welcome in (("alice", a.welcome), ("bob", b.welcome)):
        assert welcome is not None
        back = await Client.connect(server.url, hello=False)
        await back.send(
            Hello(version=VERSION, name=name, resume=welcome.resume_token, last_event=last[name])
        )
        assert (await back.expect(Welcome)).room == room
        firsts.append((await back.state()).event)
        await back.close()
    # Alice's return is the first event after the restart; Bob gets it replayed first.
    assert firsts == [last["alice"] + 1, last["bob"] + 1]
    assert await server.stop() == 0


async def test_a_database_killed_while_idle_is_noticed_at_once(tmp_path: Path) -> None:
    config = Config(port=0, db=str(tmp_path / "idle.db"))
    async with GameServer(config).running() as server:
        assert await http_get(server.port, "/readyz") == (200, "ready\n")
        assert server.store is not None
        assert isinstance(server.store, Store)
        assert server.store.pid is not None
        os.kill(server.store.pid, signal.SIGKILL)  # nothing is being written
        async with asyncio.timeout(2):
            await server.stopping.wait()
        assert server.failed
        assert await http_get(server.port, "/readyz") == (503, "cannot save games\n")
        with pytest.raises(InvalidStatus) as refused:
            await Client.connect(f"ws://127.0.0.1:{server.port}")
        assert refused.value.response.status_code == 503


async def test_reads_go_beside_the_commits_and_to_the_writer_once_the_reader_is_gone(
    tmp_path: Path,
) -> None:
    """20 addresses reading 100 games a second each held every move's commit behind their
    reads (p99 2.65 -> 111 ms, an outside review): reads have a process of their own. Here
    the reader is stopped (SIGSTOP) in the middle of a read, and a commit still goes
    through; killed, its reads go to the writer, and the server goes on."""
    store = Store(tmp_path / "reads.db")
    lost: list[str] = []
    store.lost = lost.append
    await store.open()
    try:
        reader = store.reader_pid
        assert reader is not None
        assert reader != store.pid
        os.kill(reader, signal.SIGSTOP)
        read = asyncio.ensure_future(store.ask(GamesOf(account=1, limit=100, before=None), list))
        created = CreateAccount(name="ann", key="ann", look="ann", password="x", now=0.0)
        async with asyncio.timeout(5):
            account = await store.ask(created, int | None)  # the writer waits for no read
        assert isinstance(account, int)
        assert not read.done()
        os.kill(reader, signal.SIGCONT)
        async with asyncio.timeout(5):
            assert await read == []
        os.kill(reader, signal.SIGKILL)
        assert wait_gone(reader)
        async with asyncio.timeout(5):
            while store.reader_pid is not None:  # noqa: ASYNC110 - told by a pipe's end
                await asyncio.sleep(0.01)
            profile = await store.ask(ProfileOf(key="ann", recent=10), Profile | None)
        assert profile is not None  # read by the writer, which sees its own account
        assert lost == []
    finally:
        await store.close()


def test_the_reader_answers_only_what_reads(tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    Database(path).close()
    reader = Reader(path)
    try:
        with pytest.raises(RuntimeError, match="a reader does not answer CreateAccount"):
            reader.answer(CreateAccount(name="a", key="a", look="a", password="x", now=0.0))
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.db.execute("DELETE FROM accounts")  # read-only, whatever is asked of it
        assert reader.answer(TopRatings(pool="9x9-blitz", limit=10, min_games=0)) == []
    finally:
        reader.close()


async def test_a_resume_read_after_the_stop_closed_every_connection_keeps_its_token(
    tmp_path: Path,
) -> None:
    """A hello read after the server's 1012 close frames went out was served: the session's
    resume token was changed and saved, and the welcome with the new one could never go
    out, so the player's token no longer worked after the restart."""
    db = tmp_path / "late.db"
    server = await ServerProcess(db).start()
    a, _, room = await seat_two(server.url)
    assert a.welcome is not None
    token = a.welcome.resume_token
    await a.close()
    reader, writer = await raw_websocket(server.port)
    stopping = asyncio.ensure_future(server.stop(signal.SIGTERM))
    head = await asyncio.wait_for(reader.readexactly(2), 10)
    assert head[0] == 0x88  # the server's close frame (1012): the stop has begun
    late = Hello(version=VERSION, name="alice", resume=token)
    writer.write(Frame(Opcode.TEXT, encode(late)).serialize(mask=True))
    await writer.drain()
    assert await stopping == 0
    writer.close()

    server = await ServerProcess(db).start()
    back = await Client.connect(server.url, hello=False)
    await back.send(Hello(version=VERSION, name="alice", resume=token))
    assert (await back.expect(Welcome)).room == room
    await back.close()
    assert await server.stop() == 0
