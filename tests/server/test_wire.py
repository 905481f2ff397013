"""The connection layer (``server.wire``) over real sockets: what it does for every
connection that no game test sees (fragments, keepalive, the handshake deadline)."""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import os
import time
import weakref
from collections.abc import AsyncIterator

import pytest
import uvloop
from websockets.asyncio.client import connect
from websockets.frames import Close, Frame, Opcode

from protocol.codec import encode
from protocol.messages import VERSION, Create, Hello, Ping, Pong, Welcome
from server import wire
from server.app import GameServer
from server.config import Config
from tests.wsclient import Client


@pytest.fixture
async def quick() -> AsyncIterator[GameServer]:
    """Keepalive pings every 0.2 s."""
    async with GameServer(Config(port=0, ping_interval=0.2)).running() as server:
        yield server


async def raw_websocket(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A websocket opened by hand, by a client that will never read nor answer a ping."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 101")
    return reader, writer


async def until_gone(reader: asyncio.StreamReader, within: float) -> float:
    """Read (pings and all) until the server ends the connection; the seconds it took."""
    started = time.monotonic()
    async with asyncio.timeout(within):
        try:
            while await reader.read(65536):
                pass
        except ConnectionResetError:
            pass
    return time.monotonic() - started


async def test_a_fragmented_message_is_one_message(server: GameServer) -> None:
    async with connect(f"ws://127.0.0.1:{server.port}") as ws:
        text = encode(Hello(version=VERSION, name="fragments")).decode()
        await ws.send([text[:10], text[10:30], text[30:]])  # three frames
        reply = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert (reply["type"], reply["name"]) == ("welcome", "fragments")


async def test_messages_before_a_close_frame_count(server: GameServer) -> None:
    """A client's last words and its close frame may come in one packet: they still count."""
    reader, writer = await raw_websocket(server.port)
    frames = [
        Frame(Opcode.TEXT, encode(Hello(version=VERSION, name="brief"))),
        Frame(Opcode.TEXT, encode(Create())),
        Frame(Opcode.CLOSE, Close(1000, "bye").serialize()),
    ]
    writer.write(b"".join(frame.serialize(mask=True) for frame in frames))
    await until_gone(reader, 5)
    writer.close()
    assert len(server.core.rooms) == 1  # kept for the grace of a player who left on purpose


async def test_a_silent_peer_is_dropped_and_a_live_one_kept(quick: GameServer) -> None:
    live = await Client.connect(f"ws://127.0.0.1:{quick.port}", "live")  # answers pings
    reader, writer = await raw_websocket(quick.port)
    # No pong, nothing at all: gone after one unanswered ping (between one and two intervals).
    assert await until_gone(reader, 5) < 1.0
    writer.close()
    await asyncio.sleep(0.5)  # a few more pings for the live client, each answered
    await live.send(Ping(id=7))
    assert (await live.expect(Pong)).id == 7
    assert len(quick.sockets) == 1
    await live.close()


async def test_an_unfinished_handshake_is_cut_off(
    server: GameServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wire, "OPEN_TIMEOUT", 0.3)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the end of the headers
    assert 0.2 < await until_gone(reader, 5) < 2.0
    writer.close()
    welcome = await Client.connect(f"ws://127.0.0.1:{server.port}", "after")
    assert isinstance(welcome.welcome, Welcome)
    await welcome.close()


def test_a_closed_connection_is_freed_by_reference_counting() -> None:
    """The full garbage collection runs once an hour (``server.gcclock``), so whatever a
    closed connection held must go without it, or a server whose players come and go
    would keep every closed connection's memory until then. On uvloop, as the server
    runs (asyncio's own selector transports are freed only by the collector)."""

    async def scenario() -> None:
        async with GameServer(Config(port=0)).running() as server:
            client = await Client.connect(f"ws://127.0.0.1:{server.port}", "alice")
            await client.send(Create(id="c"))
            (link,) = server.sockets.values()
            protocol, transport = weakref.ref(link.protocol), weakref.ref(link.transport)
            del link
            await client.close()
            async with asyncio.timeout(5):
                while server.sockets:  # noqa: ASYNC110 (the close, not signalled)
                    await asyncio.sleep(0.01)
            await asyncio.sleep(0)  # the transport's last callbacks
            assert protocol() is None, "websockets' protocol object outlived its connection"
            assert transport() is None, "the transport outlived its connection"

    gc.disable()
    try:
        uvloop.run(scenario())
    finally:
        gc.enable()


def test_a_connection_dropped_mid_handshake_is_freed_by_reference_counting() -> None:
    """The error that ended websockets' parser (the request head never finished) keeps, in
    its traceback, the parser's frame and with it the protocol: a cycle only a full
    collection frees (an outside review: 6 KB more for every connection dropped at the
    handshake deadline, reconnecting over and over, never returned)."""

    async def scenario() -> None:
        async with GameServer(Config(port=0)).running() as server:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the end of the headers
            async with asyncio.timeout(5):
                while not (links := [o for o in gc.get_objects() if type(o) is wire.Link]):  # noqa: ASYNC110 (not signalled)
                    await asyncio.sleep(0.01)
            (link,) = links
            protocol, transport = weakref.ref(link.protocol), weakref.ref(link.transport)
            del link, links
            await until_gone(reader, 5)  # the handshake deadline (0.3 s here)
            writer.close()
            await asyncio.sleep(0.05)  # the transport's last callbacks
            assert protocol() is None, "websockets' protocol object outlived its connection"
            assert transport() is None, "the transport outlived its connection"

    gc.disable()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(wire, "OPEN_TIMEOUT", 0.3)
            uvloop.run(scenario())
    finally:
        gc.enable()
