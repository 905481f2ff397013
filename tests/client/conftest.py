"""A real server on 127.0.0.1, port 0, and helpers to drive client controllers against it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

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


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Seats kept by the client go to a folder of the test's own (see client.seats)."""
    home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home
