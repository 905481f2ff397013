"""A real server on 127.0.0.1, port 0, and helpers to drive client controllers against it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.app import GameServer
from server.config import Config


@pytest.fixture
async def server() -> AsyncIterator[GameServer]:
    async with GameServer(Config(port=0, rate=1000, burst=1000)).running() as running:
        yield running


@pytest.fixture
def url(server: GameServer) -> str:
    return f"ws://127.0.0.1:{server.port}"
