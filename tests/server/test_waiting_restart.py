"""A room still waiting for its players survives a restart of its server, graceful (SIGTERM,
1012) or not (SIGKILL): its code, its settings and its seats come back, its players resume
within their grace period, and a friend joins with the code as before; and every room taken
back counts against its creator's address again. Real server processes on a real SQLite file,
as the other restart tests (tests/server/test_store.py)."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from pathlib import Path

from protocol.messages import (
    VERSION,
    AiSpec,
    Create,
    Error,
    ErrorCode,
    Hello,
    Join,
    Joined,
    Leave,
    Left,
    ListRooms,
    LoggedIn,
    MoveRequest,
    Register,
    Rooms,
    State,
    TimeControl,
    VariantSpec,
    Watch,
    Welcome,
)
from tests.process import ServerProcess
from tests.server.test_store import GAME, play, resume
from tests.wsclient import Client

FAST_HASHING = ("--argon2-time-cost", "1", "--argon2-memory-kib", "64", "--argon2-parallelism", "1")


async def connected(client: Client, seats: int) -> State:
    """The first state in which the first ``seats`` seats' players are all connected."""
    state = await client.state()
    while not all(p.connected for p in state.players[:seats]):
        state = await client.state()
    return state


async def listed(url: str) -> list[str]:
    """The codes ``list_rooms`` shows now."""
    client = await Client.connect(url, "lister")
    await client.send(ListRooms(id=1))
    rooms = await client.expect(Rooms)
    await client.close()
    return [info.room for info in rooms.rooms]


def saved(db: Path, table: str) -> list[str]:
    with sqlite3.connect(db) as connection:
        key = "code" if table == "rooms" else "id"
        return [row[0] for row in connection.execute(f"SELECT {key} FROM {table}")]


async def test_a_private_waiting_room_survives_sigterm_and_a_friend_joins_it_after(
    tmp_path: Path,
) -> None:
    db = tmp_path / "waiting.db"
    server = await ServerProcess(db).start()
    alice = await Client.connect(server.url, "alice")
    clock = TimeControl(base=300, increment=5)
    variant = VariantSpec(players=2, size=9, walls=8)
    await alice.send(Create(variant=variant, private=True, clock=clock, match=True))
    room = (await alice.expect(Joined)).room
    before = await alice.state()
    assert before.status == "waiting"
    assert await server.stop(signal.SIGTERM) == 0
    assert await alice.closed() == (1012, "server restarting")

    server = await ServerProcess(db).start()
    assert "0 games in progress recovered, 1 room waiting for players" in server.log.decode()
    alice2 = await resume(server.url, alice.welcome, "alice")
    assert alice2.welcome is not None
    assert (alice2.welcome.room, alice2.welcome.seat) == (room, 0)
    state = await connected(alice2, 1)
    assert (state.room, state.status, state.variant) == (room, "waiting", variant)
    assert state.event == before.event + 1  # no gap after a graceful stop
    assert [p.name for p in state.players] == ["alice", None]
    assert state.clock is not None
    assert state.clock.remaining_ms == [300_000, 300_000]
    assert room not in await listed(server.url)  # still private

    bob = await Client.connect(server.url, "bob")
    await bob.send(Join(room=room))
    assert (await bob.expect(Joined)).seat == 1
    started = await bob.state()
    assert started.status == "playing"
    assert started.match is not None  # a two-game match, as created
    assert started.match.game == 1
    await alice2.state()
    final = await play([alice2, bob], GAME, 0)
    assert final.result is not None
    assert final.result.winner == 0
    await asyncio.gather(alice2.close(), bob.close())
    assert await server.stop() == 0
    assert b"game started: alice v bob" in server.log  # its start logged, as any game's


async def test_a_public_waiting_room_survives_sigkill_and_is_listed_again_once_its_creator_is_back(
    tmp_path: Path,
) -> None:
    db = tmp_path / "crash.db"
    server = await ServerProcess(db).start()
    alice = await Client.connect(server.url, "alice")
    await alice.send(Create(spectator_eval=True))
    room = (await alice.expect(Joined)).room
    await alice.state()
    assert await listed(server.url) == [room]
    databases = server.children()
    assert len(databases) == 2  # the writer and the reader
    assert await server.stop(signal.SIGKILL) == -signal.SIGKILL

    server = await ServerProcess(db).start()
    # Not listed while its creator is away, as after a dropped connection: a room whose
    # creator left is no room to offer (PROTOCOL.md section 4, `list_rooms`).
    assert await listed(server.url) == []
    alice2 = await resume(server.url, alice.welcome, "alice")
    assert alice2.welcome is not None
    assert (alice2.welcome.room, alice2.welcome.seat) == (room, 0)
    await connected(alice2, 1)
    assert await listed(server.url) == [room]

    bob = await Client.connect(server.url, "bob")
    await bob.send(Join(room=room, spectator_eval=True))
    assert (await bob.expect(Joined)).seat == 1
    assert (await bob.state()).status == "playing"
    await alice2.state()
    first = await play([alice2, bob], GAME[:1], 0)
    assert first.spectator_eval  # what the creator allowed was kept
    final = await play([alice2, bob], GAME[1:], 1)
    assert final.result is not None
    await asyncio.gather(alice2.close(), bob.close())
    assert await server.stop() == 0
    assert not set(databases) & set(server.children())


async def test_the_seats_taken_in_a_waiting_four_player_room_come_back_with_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "four.db"
    server = await ServerProcess(db).start()
    alice, bob = await Client.connect(server.url, "alice"), await Client.connect(server.url, "bob")
    await alice.send(Create(variant=VariantSpec(players=4)))
    room = (await alice.expect(Joined)).room
    await bob.send(Join(room=room))
    assert (await bob.expect(Joined)).seat == 1
    await bob.state()
    assert await server.stop(signal.SIGKILL) == -signal.SIGKILL

    server = await ServerProcess(db).start()
    alice2 = await resume(server.url, alice.welcome, "alice")
    bob2 = await resume(server.url, bob.welcome, "bob")
    assert bob2.welcome is not None
    assert (bob2.welcome.room, bob2.welcome.seat) == (room, 1)
    state = await connected(alice2, 2)
    assert [p.name for p in state.players] == ["alice", "bob", None, None]
    carol, dave = (
        await Client.connect(server.url, "carol"),
        await Client.connect(server.url, "dave"),
    )
    await carol.send(Join(room=room))
    assert (await carol.expect(Joined)).seat == 2
    await dave.send(Join(room=room))
    assert (await dave.expect(Joined)).seat == 3
    state = await dave.state()
    assert state.status == "playing"
    assert [p.name for p in state.players] == ["alice", "bob", "carol", "dave"]
    await alice2.send(MoveRequest(move="e2", ply=0))
    while (await dave.state()).ply != 1:
        pass
    await asyncio.gather(*(c.close() for c in (alice2, bob2, carol, dave)))
    assert await server.stop() == 0


async def test_a_waiting_room_nobody_comes_back_to_closes_after_the_grace_period(
    tmp_path: Path,
) -> None:
    db = tmp_path / "gone.db"
    grace = ("--grace", "2")
    server = await ServerProcess(db, *grace).start()
    alice = await Client.connect(server.url, "alice")
    await alice.send(Create())
    room = (await alice.expect(Joined)).room
    await alice.state()
    assert await server.stop(signal.SIGTERM) == 0

    server = await ServerProcess(db, *grace).start()
    carol = await Client.connect(server.url, "carol")
    await carol.send(Watch(room=room))  # there, within the grace period
    await carol.expect(Joined)
    state = await carol.state()
    assert (state.status, state.players[0].name, state.players[0].connected) == (
        "waiting",
        "alice",
        False,
    )
    await carol.send(Leave(id="out"))
    await carol.expect(Left)
    for _ in range(40):  # then gone, as any waiting room its creator left
        await asyncio.sleep(0.25)
        await carol.send(Watch(room=room))
        reply = await carol.recv()
        if isinstance(reply, Error):
            assert reply.code == ErrorCode.ROOM_NOT_FOUND
            break
        await carol.state()
        await carol.send(Leave())
        await carol.expect(Left)
    else:
        raise AssertionError(f"room {room} still open 10 s after its grace period")
    late = await Client.connect(server.url, hello=False)
    assert alice.welcome is not None
    await late.send(Hello(version=VERSION, name="alice", resume=alice.welcome.resume_token))
    assert (await late.expect(Error)).code == ErrorCode.BAD_TOKEN
    await asyncio.gather(carol.close(), late.close())
    assert await server.stop() == 0
    assert saved(db, "rooms") == []
    assert saved(db, "sessions") == []


async def test_a_waiting_room_taken_back_still_counts_against_its_creators_address(
    tmp_path: Path,
) -> None:
    db = tmp_path / "caps.db"
    caps = ("--rooms-per-ip", "4")  # one room at a time waiting for players, per address
    server = await ServerProcess(db, *caps).start()
    alice = await Client.connect(server.url, "alice")
    await alice.send(Create())
    await alice.expect(Joined)
    await alice.state()
    assert await server.stop(signal.SIGKILL) == -signal.SIGKILL

    server = await ServerProcess(db, *caps).start()
    carol = await Client.connect(server.url, "carol")  # the same address
    await carol.send(Create(id=1))
    assert (await carol.expect(Error)).code == ErrorCode.TOO_MANY_ROOMS
    # Its creator is back, leaves it (it closes) and opens another: that one counts too.
    alice2 = await resume(server.url, alice.welcome, "alice")
    await alice2.send(Leave(id="out"))
    while not isinstance(await alice2.recv(), Left):
        pass
    await carol.send(Create(id=2))
    await carol.expect(Joined)
    await carol.send(Leave(id="out"))
    while not isinstance(await carol.recv(), Left):
        pass
    await alice2.send(Create(id=3))
    await alice2.expect(Joined)
    await carol.send(Create(id=4))
    assert (await carol.expect(Error)).code == ErrorCode.TOO_MANY_ROOMS
    await asyncio.gather(alice2.close(), carol.close())
    assert await server.stop() == 0


async def test_a_rated_waiting_room_stays_rated_across_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "rated.db"
    server = await ServerProcess(db, *FAST_HASHING).start()

    async def account(name: str) -> Client:
        client = await Client.connect(server.url, hello=False)
        await client.send(Register(id=1, name=name, password="correct horse battery"))
        token = (await client.expect(LoggedIn)).token
        await client.close()
        client = await Client.connect(server.url, hello=False)
        await client.send(Hello(version=VERSION, name=name, token=token))
        client.welcome = await client.expect(Welcome)
        return client

    alice = await account("alice")
    await alice.send(Create())
    room = (await alice.expect(Joined)).room
    assert ((await alice.state()).pool) == "9x9-untimed"
    assert await server.stop(signal.SIGKILL) == -signal.SIGKILL

    server = await ServerProcess(db, *FAST_HASHING).start()
    alice2 = await resume(server.url, alice.welcome, "alice")
    state = await connected(alice2, 1)
    assert (state.status, state.pool) == ("waiting", "9x9-untimed")
    guest = await Client.connect(server.url, "guest")
    await guest.send(Join(room=room))
    assert (await guest.expect(Error)).code == ErrorCode.ACCOUNT_REQUIRED
    bob = await account("bob")
    await bob.send(Join(room=room))
    await bob.expect(Joined)
    started = await bob.state()
    assert (started.status, started.rated, started.pool) == ("playing", True, "9x9-untimed")
    await asyncio.gather(alice2.close(), guest.close(), bob.close())
    assert await server.stop() == 0


async def test_games_against_the_computer_taken_back_count_against_their_address_again(
    tmp_path: Path,
) -> None:
    """Not only waiting rooms: every room taken back counts against its creator's address as
    before the restart (a restart gave an address a fresh allowance of computer games)."""
    db = tmp_path / "computer.db"
    workers = ("--ai-workers", "1")  # two games against the computer per address
    server = await ServerProcess(db, *workers).start()
    players = [await Client.connect(server.url, f"p{n}") for n in range(2)]
    for player in players:
        await player.send(Create(ai=AiSpec(level=1, seconds=0.05)))
        await player.expect(Joined)
    assert await server.stop(signal.SIGTERM) == 0
    await asyncio.gather(*(player.close() for player in players))

    server = await ServerProcess(db, *workers).start()
    third = await Client.connect(server.url, "p2")
    await third.send(Create(ai=AiSpec(level=1, seconds=0.05)))
    assert (await third.expect(Error)).code == ErrorCode.TOO_MANY_ROOMS
    await third.close()
    assert await server.stop() == 0
