"""What one client can make the server hold: rooms per session, per address and in all,
computer games nobody plays any more, quick-match queues. Over real sockets."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator

import pytest

from protocol.messages import (
    AiSpec,
    Create,
    ErrorCode,
    Joined,
    Leave,
    Left,
    MoveRequest,
    Queued,
    QuickMatch,
    TimeControl,
)
from server.app import GameServer
from server.config import Config
from tests.wsclient import Client


async def serve(**settings: object) -> AsyncIterator[GameServer]:
    config = Config(port=0, rate=1000, burst=1000, **settings)  # type: ignore[arg-type]
    async with GameServer(config).running() as server:
        yield server


@pytest.fixture
async def capped() -> AsyncIterator[GameServer]:
    async for server in serve(rooms_per_ip=4, max_rooms=6, deliberate_grace=30.0):
        yield server


def url(server: GameServer) -> str:
    return f"ws://127.0.0.1:{server.port}"


async def computer_game_left(client: Client) -> None:
    """Create a game against the computer, move, and leave it (the room stays a while)."""
    await client.send(Create(ai=AiSpec(level=1, seconds=0.05)))
    await client.expect(Joined)
    await client.state()
    await client.send(MoveRequest(move="e2", ply=0))
    await client.send(Leave(id="leave"))
    while not isinstance(await client.recv(), Left):
        pass


async def test_games_left_in_progress_count_against_the_address_only() -> None:
    """Three games left in progress (they stay until decided) kept their player from creating
    a fourth room, with no room of theirs shown anywhere; the address's cap still holds."""
    async for capped in serve(rooms_per_ip=4, max_rooms=6, deliberate_grace=30.0, ai_workers=2):
        await play_four_left_games(capped)


async def play_four_left_games(capped: GameServer) -> None:
    client = await Client.connect(url(capped))
    for _ in range(3):
        await computer_game_left(client)
    assert len(capped.core.rooms) == 3
    await computer_game_left(client)  # a fourth: it was refused
    assert len(capped.core.rooms) == 4
    await client.send(Create(id="fifth"))  # the address's cap (4 here)
    error = await client.error(ErrorCode.TOO_MANY_ROOMS)
    assert error.id == "fifth"
    assert "address" in error.message
    assert len(capped.core.rooms) == 4
    await client.close()


async def test_one_address_may_hold_its_cap_of_rooms(capped: GameServer) -> None:
    client = await Client.connect(url(capped), "one")
    for _ in range(4):  # games against the computer, left: each kept a while
        await computer_game_left(client)
    await client.close()
    assert len(capped.core.rooms) == 4
    late = await Client.connect(url(capped), "late")
    await late.send(Create())
    assert "address" in (await late.error(ErrorCode.TOO_MANY_ROOMS)).message
    await late.send(QuickMatch())
    await late.error(ErrorCode.TOO_MANY_ROOMS)
    await late.close()


async def test_an_address_has_a_quarter_of_its_rooms_waiting_for_players() -> None:
    # Rooms waiting for someone to join cost nothing to make: 250 addresses with 20 each
    # filled the server's cap of 5000 in seconds, and nobody could start a game (an
    # outside review). A quarter of an address's rooms (5 of 20 by default) may wait.
    async for server in serve():
        for n in range(5):  # each a fresh connection: the room is kept for a dropped player
            client = await Client.connect(url(server), f"churn{n}")
            await client.send(Create())
            await client.expect(Joined)
            client.ws.transport.abort()
        await asyncio.sleep(0.2)
        late = await Client.connect(url(server), "late")
        await late.send(Create(id="sixth"))
        refused = await late.error(ErrorCode.TOO_MANY_ROOMS)
        assert "5 rooms waiting for players" in refused.message
        assert len(server.core.rooms) == 5
        # A game against the computer starts at once: it waits for nobody.
        await late.send(Create(ai=AiSpec(level=1, seconds=0.05)))
        await late.expect(Joined)
        await late.close()


async def test_an_ipv6_customer_s_rooms_are_counted_by_its_56() -> None:
    # A provider's customer usually holds a /56, 256 /64s: counted by its /64, one customer
    # kept 20 rooms in each and filled the server's 5000 (an outside attacker's review).
    # Here an address holds 2 rooms, 1 of them waiting for players.
    async for server in serve(rooms_per_ip=2, trusted_proxies="127.0.0.1"):
        client = functools.partial(Client.connect, url(server))
        first = await client(address="2001:db8:1:1::a")
        await first.send(Create())
        await first.expect(Joined)
        neighbour = await client(address="2001:db8:1:2::b")  # another /64 of the same /56
        await neighbour.send(Create(id="waiting"))
        refused = await neighbour.error(ErrorCode.TOO_MANY_ROOMS)
        assert "1 rooms waiting for players" in refused.message
        await neighbour.send(Create(ai=AiSpec(level=1, seconds=0.05)))
        await neighbour.expect(Joined)
        third = await client(address="2001:db8:1:ff::c")
        await third.send(Create(ai=AiSpec(level=1, seconds=0.05)))
        refused = await third.error(ErrorCode.TOO_MANY_ROOMS)
        assert "2 rooms open" in refused.message
        assert len(server.core.rooms) == 2
        elsewhere = await client(address="2001:db8:1:100::a")  # the next /56: another customer
        await elsewhere.send(Create())
        await elsewhere.expect(Joined)
        for each in (first, neighbour, third, elsewhere):
            await each.close()


async def test_the_server_refuses_rooms_past_its_cap() -> None:
    async for server in serve(max_rooms=2):
        clients = [await Client.connect(url(server), f"p{n}") for n in range(3)]
        for client in clients[:2]:
            await client.send(Create())
            await client.expect(Joined)
        await clients[2].send(Create())
        error = await clients[2].error(ErrorCode.SERVER_BUSY)
        assert "as many rooms" in error.message
        for client in clients:
            await client.close()


async def test_a_computer_game_nobody_plays_is_ended_and_forgotten() -> None:
    async for server in serve(deliberate_grace=0.3, grace=0.3):
        client = await Client.connect(url(server))
        await computer_game_left(client)
        assert len(server.core.rooms) == 1
        await asyncio.sleep(0.6)
        assert server.core.rooms == {}
        assert [game.reason for game in server.core.history.short] == ["abandon"]  # short
        dropped = await Client.connect(url(server), "dropped")  # the connection goes instead
        await dropped.send(Create(ai=AiSpec(level=1, seconds=0.05)))
        await dropped.expect(Joined)
        await dropped.close()
        await asyncio.sleep(0.6)
        assert server.core.rooms == {}
        await client.close()


async def test_quick_match_queues_left_empty_are_forgotten(capped: GameServer) -> None:
    client = await Client.connect(url(capped))
    for base in (61.5, 62.5, 63.5):
        await client.send(QuickMatch(clock=TimeControl(base=base)))
        await client.expect(Queued)
        await client.send(Leave())
        await client.expect(Left)
    assert capped.core.queues == {}
    await client.send(QuickMatch(clock=TimeControl(base=64.5)))
    await client.expect(Queued)
    await client.close()
    await asyncio.sleep(0.2)
    assert capped.core.queues == {}
