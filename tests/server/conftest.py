"""A real server on 127.0.0.1, port 0, for each test that asks for one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from server.app import GameServer
from server.config import Config
from tests.wsclient import Client

Connect = Callable[..., Awaitable[Client]]
"""Opens a greeted client (or an ungreeted one with ``hello=False``) to the test server."""


@pytest.fixture
async def server() -> AsyncIterator[GameServer]:
    async with GameServer(Config(port=0, rate=1000, burst=1000)).running() as running:
        yield running


@pytest.fixture
async def connect(server: GameServer) -> AsyncIterator[Connect]:
    clients: list[Client] = []

    async def open_client(name: str = "player", hello: bool = True) -> Client:
        client = await Client.connect(f"ws://127.0.0.1:{server.port}", name, hello)
        clients.append(client)
        return client

    yield open_client
    for client in clients:
        await client.close()
