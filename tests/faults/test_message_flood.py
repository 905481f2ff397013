"""A flood of tiny complete messages is cut short: once the server closes the connection for
exceeding the request rate (1008), it reads nothing more from it, even what came in the same
packet, rather than parsing and answering every frame until the close handshake times out.

An outside review: empty text frames (6 bytes each) sent as fast as the socket took them
held the event loop for seconds (one connection's 12 MB: 5.6 s), and grew the server by
hundreds of megabytes, the close for the rate limit logged 35 s after the flood began."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator

import pytest
from websockets.frames import Close, Frame, Opcode

from protocol.codec import encode
from protocol.messages import VERSION, Hello, Ping, Pong
from server.app import GameServer
from server.config import Config
from tests.http import get as http_get
from tests.wsclient import Client, RawSocket

FLOOD = 200_000
"""Empty text frames sent in one go: 1.2 MB."""


@pytest.fixture
async def server() -> AsyncIterator[GameServer]:
    """The documented limits (20 requests a second, 40 at once, 20 refused in a row)."""
    async with GameServer(Config(port=0)).running() as running:
        yield running


async def requests_served(port: int) -> int:
    """Every request the server's core took, as its metrics count them."""
    status, text = await http_get(port, "/metrics")
    assert status == 200
    counts = re.findall(r"^quoridor_request_seconds_count\{[^}]*\} (\S+)$", text, re.M)
    return sum(int(float(count)) for count in counts)


@pytest.mark.parametrize("greeted", [True, False], ids=["after hello", "without hello"])
async def test_a_flood_of_tiny_messages_is_closed_and_read_no_further(
    server: GameServer, greeted: bool
) -> None:
    url = f"ws://127.0.0.1:{server.port}"
    bystander = await Client.connect(url, "bystander")
    before = await requests_served(server.port)
    raw = await RawSocket.open(server.port)
    hello = encode(Hello(version=VERSION, name="flood"))
    first = Frame(Opcode.TEXT, hello).serialize(mask=True) if greeted else b""
    empty = Frame(Opcode.TEXT, b"").serialize(mask=True)
    raw.writer.write(first + empty * FLOOD)
    with contextlib.suppress(ConnectionError):
        await raw.writer.drain()
    async with asyncio.timeout(10):
        assert await raw.close_frame() == Close(1008, "rate limit exceeded")
    async with asyncio.timeout(3):  # dropped a second later, no close handshake awaited
        with contextlib.suppress(ConnectionError):
            while await raw.reader.read(65536):
                pass
    raw.abandon()
    # The allowance (40 at once), the refusals in a row (20), the hello, and nothing after.
    assert await requests_served(server.port) - before <= 40 + 21 + 1 + 1
    await bystander.send(Ping(id=1))  # the other connection is untouched
    await bystander.expect(Pong)
    await bystander.close()
