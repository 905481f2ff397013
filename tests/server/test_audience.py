"""What one client can make a room send: chat per seat, spectators, their comings and
goings. Over real sockets."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from protocol.messages import Chat, ChatMessage, ErrorCode, Join, Joined, Leave, Left, Watch
from server.app import GameServer
from server.config import Config
from tests.server.test_games import seat_players
from tests.wsclient import Client


@pytest.fixture
async def hall() -> AsyncIterator[GameServer]:
    config = Config(port=0, rate=1000, burst=1000, max_spectators=3)
    async with GameServer(config).running() as server:
        yield server


def url(server: GameServer) -> str:
    return f"ws://127.0.0.1:{server.port}"


async def test_the_chat_limit_stays_with_the_seat_when_it_is_reclaimed(hall: GameServer) -> None:
    (a, b), room = await seat_players(lambda name="p": Client.connect(url(hall), name))
    secret = next(m for m in a.seen if isinstance(m, Joined)).secret
    assert secret is not None
    for n in range(5):  # the burst
        await a.send(Chat(text=f"line {n}"))
        await a.expect(ChatMessage)
    back = await Client.connect(url(hall), "again")  # a fresh session with the secret
    await back.send(Join(room=room, seat=0, secret=secret))
    await back.expect(Joined)
    await back.state()
    await back.send(Chat(id="more", text="and more"))
    assert (await back.error(ErrorCode.RATE_LIMITED)).id == "more"
    for client in (a, b, back):
        await client.close()


async def test_a_room_takes_a_bounded_audience(hall: GameServer) -> None:
    (a, b), room = await seat_players(lambda name="p": Client.connect(url(hall), name))
    watchers = [await Client.connect(url(hall), f"w{n}") for n in range(4)]
    for watcher in watchers[:3]:
        await watcher.send(Watch(room=room))
        await watcher.expect(Joined)
    await watchers[3].send(Watch(id="late", room=room))
    error = await watchers[3].error(ErrorCode.ROOM_FULL)
    assert "spectators" in error.message
    for client in (a, b, *watchers):
        await client.close()


async def test_spectators_coming_and_going_send_the_players_nothing(hall: GameServer) -> None:
    (a, b), room = await seat_players(lambda name="p": Client.connect(url(hall), name))
    churner = await Client.connect(url(hall), "churner")
    for _ in range(20):
        await churner.send(Watch(room=room))
        await churner.expect(Joined)
        assert (await churner.state()).room == room  # the newcomer gets the room's state
        await churner.send(Leave())
        await churner.expect(Left)
    await a.quiet(0.2)
    await b.quiet(0.05)
    for client in (a, b, churner):
        await client.close()
