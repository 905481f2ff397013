"""Websocket pings from a client are bounded: websockets answers each one by itself, before
the server sees it, so neither a flood of them nor their unread pongs may cost the server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket

import pytest
from websockets.client import ClientProtocol
from websockets.frames import Close, Frame, Opcode
from websockets.uri import parse_uri

from protocol.messages import Ping, Pong
from server.app import GameServer
from tests.faults.conftest import Connect
from tests.wsclient import RawSocket

BURST = 20
"""Control frames a client may send at once (PROTOCOL.md, section 1)."""
PAYLOAD = b"x" * 125
"""The longest a control frame may carry."""


async def test_a_ping_flood_is_closed_with_1008(server: GameServer, connect: Connect) -> None:
    url = f"ws://127.0.0.1:{server.port}"
    keepalive = await connect(url, "keepalive")
    for _ in range(BURST):  # a burst within the allowance: answered
        await asyncio.wait_for(await keepalive.ws.ping(), 5)
    await keepalive.send(Ping(id=1))
    await keepalive.expect(Pong)

    flood = await connect(url, "flood")
    for _ in range(200):
        await flood.ws.pong()  # unsolicited pongs count as well: no reply, but parsed all the same
        await flood.ws.ping()
    assert await flood.closed() == (1008, "too many pings")
    await keepalive.send(Ping(id=2))  # the other connection is untouched
    await keepalive.expect(Pong)


async def test_a_client_that_never_reads_its_pongs_is_cut_off(
    server: GameServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With the ping allowance lifted, only the backlog's cap stands between this client and
    # the server's memory (20 such connections grew a server by a gigabyte in 30 s).
    monkeypatch.setattr("server.wire.CONTROL_RATE", 1e9, raising=False)
    monkeypatch.setattr("server.wire.CONTROL_BURST", 1e9, raising=False)
    client = ClientProtocol(parse_uri(f"ws://127.0.0.1:{server.port}/"))
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, ("127.0.0.1", server.port))
    client.send_request(client.connect())
    for data in client.data_to_send():
        await loop.sock_sendall(sock, data)
    while not client.events_received():
        client.receive_data(await loop.sock_recv(sock, 4096))
    (link,) = server.sockets.values()

    ping = Frame(Opcode.PING, PAYLOAD).serialize(mask=True)
    with caplog.at_level(logging.WARNING, "quoridor.server"):
        sent = 0
        try:
            while server.sockets and sent < 64 << 20:  # 64 MiB of pings at most
                await asyncio.wait_for(loop.sock_sendall(sock, ping * 256), 5)
                sent += len(ping) * 256
                assert link.transport.get_write_buffer_size() <= (1 << 20) + 256 * len(PAYLOAD)
        except (ConnectionError, TimeoutError):
            pass  # cut off while sending
        finally:
            sock.close()
    assert "cutting off a client that stopped reading" in caplog.text
    assert sent < 16 << 20  # cut off once a megabyte of pongs waited (plus the kernel's buffers)


async def test_a_message_that_never_ends_is_closed_with_1008(
    server: GameServer, connect: Connect
) -> None:
    # Empty continuation frames without end: no message completes, so the request rate never
    # counts one, and no byte is added, so the size limit is never reached either. One such
    # connection held the event loop for 20 s of 20 (an outside review).
    url = f"ws://127.0.0.1:{server.port}"
    keepalive = await connect(url, "keepalive")
    raw = await RawSocket.open(server.port)
    first = Frame(Opcode.TEXT, b'{"type":"pi', fin=False).serialize(mask=True)
    empty = Frame(Opcode.CONT, b"", fin=False).serialize(mask=True)
    raw.writer.write(first + empty * 100_000)  # 600 kB: far past the allowance, in one go
    with contextlib.suppress(ConnectionError):
        await raw.writer.drain()
    async with asyncio.timeout(5):
        close = await raw.close_frame()
    assert close == Close(1008, "too many fragments")
    raw.abandon()
    await keepalive.send(Ping(id=3))  # the other connection is untouched
    await keepalive.expect(Pong)
    # Read no more, and dropped within a second or so rather than after the close handshake
    # (which would need the flood read on).
    for _ in range(30):
        if len(server.sockets) == 1:
            break
        await asyncio.sleep(0.1)
    assert len(server.sockets) == 1
