"""Connections are counted from accept: half-open sockets (slowloris) hold the per-address
cap, and the server as a whole stays below its cap with a clear 503. Real sockets."""

from __future__ import annotations

import asyncio
import resource
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from server.app import GameServer
from server.config import Config
from server.http import default_connection_cap
from tests.http import get as http_get
from tests.wsclient import Client


@pytest.fixture
async def small() -> AsyncIterator[GameServer]:
    async with GameServer(Config(port=0, max_per_ip=3, max_connections=5)).running() as server:
        yield server


async def silent_socket(port: int, source: str = "127.0.0.1") -> asyncio.StreamWriter:
    """A TCP connection that never sends its request."""
    _, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    return writer


async def refusal(port: int) -> int:
    with pytest.raises(InvalidStatus) as refused:
        await connect(f"ws://127.0.0.1:{port}/")
    return refused.value.response.status_code


async def test_half_open_sockets_count_against_the_address(small: GameServer) -> None:
    silent = [await silent_socket(small.port) for _ in range(3)]
    await asyncio.sleep(0.1)
    assert await refusal(small.port) == 429
    for writer in silent:
        writer.close()
    await asyncio.sleep(0.1)
    async with connect(f"ws://127.0.0.1:{small.port}/") as ws:
        await ws.ping()


async def test_the_server_keeps_below_its_connection_cap(small: GameServer) -> None:
    silent = [await silent_socket(small.port, f"127.0.0.{n}") for n in range(2, 7)]
    await asyncio.sleep(0.1)
    assert await refusal(small.port) == 503
    silent.pop().close()
    await asyncio.sleep(0.1)
    status, metrics = await http_get(small.port, "/metrics")
    assert status == 200
    assert 'quoridor_connections_refused_total{reason="full"} 1.0' in metrics
    for writer in silent:
        writer.close()


def test_the_default_cap_is_below_the_file_limit() -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert default_connection_cap() < soft


async def test_a_guest_cannot_pass_for_the_computer_or_the_server(server: GameServer) -> None:
    for said, shown in [
        ("Computer L5", "Computer L5 (guest)"),
        ("admin", "admin (guest)"),
        ("SERVER", "SERVER (guest)"),
        ("S\u0443stem", "S\u0443stem (guest)"),  # a Cyrillic u (U+0443): looks like "System"
        ("QUORlDOR", "QUORlDOR (guest)"),  # a small L for the capital i
        ("Guest", "Guest"),  # reserved for accounts, but it says what a guest is
        ("alice", "alice"),
    ]:
        client = await Client.connect(f"ws://127.0.0.1:{server.port}", said)
        assert client.welcome is not None
        assert client.welcome.name == shown
        await client.close()
