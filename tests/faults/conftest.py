"""A real in-process server, and the misbehaving proxy in front of it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from server.app import GameServer
from server.config import Config
from tests.faults.proxy import Proxy
from tests.wsclient import Client


@pytest.fixture
async def server() -> AsyncIterator[GameServer]:
    config = Config(
        port=0, max_per_ip=10000, rooms_per_ip=10000, rate=1000, burst=1000, hello_burst=10000
    )
    async with GameServer(config).running() as running:
        yield running


@pytest.fixture
async def proxy(server: GameServer) -> AsyncIterator[Proxy]:
    """A proxy to ``server``; set ``delay`` or ``upstream_rcvbuf`` before opening links."""
    relay = await Proxy("127.0.0.1", server.port).start()
    yield relay
    await relay.close()


Connect = Callable[..., Awaitable[Client]]
"""``await connect(url, name="player", hello=True)``: a client, closed after the test."""


@pytest.fixture
async def connect() -> AsyncIterator[Connect]:
    clients: list[Client] = []

    async def open_client(url: str, name: str = "player", hello: bool = True) -> Client:
        client = await Client.connect(url, name, hello)
        clients.append(client)
        return client

    yield open_client
    await asyncio.gather(*(_close(client) for client in clients))


async def _close(client: Client) -> None:
    """Close quickly, even a client whose link is paused or gone."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.ws.close(), 1.0)
    client.ws.transport.abort()
    client._reader.cancel()
