"""A client that goes on sending after the close handshake is dropped at once.

Once both close frames have passed, a client may send nothing more (RFC 6455, 5.5.1).
websockets reads and discards whatever comes until the close timeout: an outside review
measured a third of a core for 5 s for each connection that streamed bytes after its close
frame."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from websockets.frames import Close, CloseCode, Frame, Opcode

from server.app import GameServer
from server.config import Config
from server.wire import CLOSE_TIMEOUT
from tests.wsclient import Client, RawSocket


@pytest.fixture
async def server() -> AsyncIterator[GameServer]:
    async with GameServer(Config(port=0)).running() as running:
        yield running


async def close_handshake(raw: RawSocket) -> None:
    """Send a close frame and read the server's answer to it."""
    close = Close(CloseCode.NORMAL_CLOSURE, "bye").serialize()
    raw.writer.write(Frame(Opcode.CLOSE, close).serialize(mask=True))
    async with asyncio.timeout(3):
        await raw.close_frame()


async def write_until_dropped(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Write ``data`` again and again until the server drops the connection: its half
    ended with its close frame, and once it drops the whole connection writing fails."""
    try:
        while True:
            writer.write(data)
            await writer.drain()
            await asyncio.sleep(0.01)
    except ConnectionError:
        return


async def test_bytes_after_the_close_handshake_end_the_connection_at_once(
    server: GameServer,
) -> None:
    raw = await RawSocket.open(server.port)
    await close_handshake(raw)
    junk = Frame(Opcode.TEXT, b"x" * 1000).serialize(mask=True) * 16
    started = time.monotonic()
    async with asyncio.timeout(CLOSE_TIMEOUT + 2):
        await write_until_dropped(raw.writer, junk)
    assert time.monotonic() - started < 1.0, "still read after the close handshake"
    raw.abandon()
    # The server is unharmed: a newcomer plays on.
    newcomer = await Client.connect(f"ws://127.0.0.1:{server.port}", "newcomer")
    await newcomer.close()


async def test_a_client_that_only_closes_is_let_go_as_before(server: GameServer) -> None:
    raw = await RawSocket.open(server.port)
    await close_handshake(raw)
    raw.writer.write_eof()
    async with asyncio.timeout(2):
        assert await raw.reader.read(4096) == b""
    raw.abandon()
