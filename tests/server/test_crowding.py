"""A full server makes room for a newcomer: connections that hold nothing (handshakes in
progress, then the longest idle) are closed for it, with 1013; players seated in a game in
progress never are. Real server, real websockets, a small --max-connections."""

from __future__ import annotations

import asyncio
import re

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.protocol import State as WsState

from protocol.messages import (
    VERSION,
    Create,
    Hello,
    Join,
    Joined,
    MoveRequest,
    Ping,
    Pong,
    Welcome,
)
from server.app import GameServer
from server.config import Config
from server.idlers import HANDSHAKE_GRACE
from tests.http import get as http_get
from tests.wsclient import Client

CLOSE_TRY_LATER = 1013


def full_server(cap: int) -> GameServer:
    return GameServer(Config(port=0, max_connections=cap, rate=1000, burst=1000))


async def game(url: str) -> tuple[Client, Client, str]:
    """Alice and Bob seated in a game in progress, Alice's first move made."""
    a, b = await Client.connect(url, "alice"), await Client.connect(url, "bob")
    await a.send(Create())
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    await a.send(MoveRequest(move="e2", ply=0))
    while (await b.state()).ply < 1:
        pass
    return a, b, room


async def fill(url: str, count: int) -> list[Client]:
    """``count`` greeted connections that say nothing more, as many as the server takes."""
    idlers = []
    for n in range(count):
        try:
            idlers.append(await Client.connect(url, f"idler{n}"))
        except InvalidStatus as refused:  # the server is full
            status = refused.response.status_code
        else:
            status = 101
        assert status in (101, 503)
    await asyncio.sleep(0.1)  # the ones closed to make room are gone
    return [idler for idler in idlers if idler.ws.state is WsState.OPEN]


Socket = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def silent_socket(port: int, source: str) -> Socket:
    """A TCP connection that never sends its request."""
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))


async def evicted(port: int) -> float:
    _, metrics = await http_get(port, "/metrics")
    found = re.search(r'quoridor_connections_evicted_total\{state="idle"\} (\S+)', metrics)
    assert found is not None
    return float(found.group(1))


async def test_a_dropped_player_comes_back_to_a_server_full_of_idlers() -> None:
    async with full_server(8).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b, room = await game(url)
        await fill(url, 8)
        assert a.welcome is not None
        token = a.welcome.resume_token
        a.ws.transport.abort()  # Alice's link drops...
        while (await b.state()).players[0].connected:
            pass
        assert len(await fill(url, 1)) == 1  # ...and an idler takes her place at once

        back = await Client.connect(url, hello=False)
        await back.send(Hello(version=VERSION, name="alice", resume=token))
        welcome = await back.expect(Welcome)
        assert (welcome.room, welcome.seat) == (room, 0)
        await b.send(MoveRequest(move="e8", ply=1))
        while (await back.state()).ply < 2:
            pass
        await back.close()
        await b.close()


async def test_the_longest_idle_makes_room_and_seated_players_never_do() -> None:
    async with full_server(8).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b, _ = await game(url)  # silent since: longer than anyone else
        idlers = await fill(url, 5)
        assert len(idlers) == 5
        await idlers[0].send(Ping())
        await idlers[0].expect(Pong)  # no longer the longest idle: idlers[1] is

        newcomer = await Client.connect(url, "newcomer")
        assert await idlers[1].closed() == (CLOSE_TRY_LATER, "server full; closed the longest idle")
        assert newcomer.ws.state is WsState.OPEN
        assert idlers[0].ws.state is WsState.OPEN
        assert await evicted(server.port) >= 1

        # However many come and stay, every idler goes before any seated player.
        crowd = []
        for _ in range(12):
            crowd.append(await connect(url))
            await asyncio.sleep(0.05)  # the one closed for it is gone
        assert a.ws.state is WsState.OPEN
        assert b.ws.state is WsState.OPEN
        assert all(idler.ws.state is not WsState.OPEN for idler in [*idlers, newcomer])
        assert crowd[-1].state is WsState.OPEN
        assert crowd[0].close_code == CLOSE_TRY_LATER
        await b.send(MoveRequest(move="e8", ply=1))
        while (await a.state()).ply < 2:
            pass
        for ws in crowd:
            await ws.close()


async def test_handshakes_in_progress_go_first_once_past_their_grace() -> None:
    async with full_server(5).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        silent = [await silent_socket(server.port, f"127.0.0.{n}") for n in range(2, 6)]
        await asyncio.sleep(0.1)  # four open: the fifth descriptor is kept for closings
        first = await Client.connect(url, "first")  # nobody else: the oldest handshake goes
        assert await asyncio.wait_for(silent[0][0].read(), 1) == b""  # without a word
        await asyncio.sleep(0.1)
        second = await Client.connect(url, "second")  # young handshakes go after idlers
        assert await first.closed() == (CLOSE_TRY_LATER, "server full; closed the longest idle")

        await asyncio.sleep(HANDSHAKE_GRACE)
        third = await Client.connect(url, "third")  # old handshakes go before idlers
        assert await asyncio.wait_for(silent[1][0].read(), 1) == b""
        assert not silent[2][0].at_eof()
        assert second.ws.state is WsState.OPEN
        assert third.ws.state is WsState.OPEN
        for _, writer in silent:
            writer.close()


async def test_a_server_of_seated_players_refuses_newcomers_with_503() -> None:
    async with full_server(5).running() as server:  # four open, one kept for closings
        url = f"ws://127.0.0.1:{server.port}"
        a, _, _ = await game(url)
        await game(url)
        with pytest.raises(InvalidStatus) as refused:
            await Client.connect(url, "late")
        assert refused.value.response.status_code == 503
        await a.close()
        await asyncio.sleep(0.1)
        _, metrics = await http_get(server.port, "/metrics")
        assert 'quoridor_connections_refused_total{reason="full"} 1.0' in metrics
        assert 'quoridor_connections_evicted_total{state="idle"} 0.0' in metrics
