"""A lean websocket client for the load generator: RFC 6455 over an asyncio Protocol.

Why not ``websockets.asyncio.client``: on a 2-core machine the load generator
shares the CPU with the server it measures, and the full client spends about as
much Python per frame as the server does (a reader generator, a message
assembler, a task woken per message). This one does the minimum a conforming
client must: the opening handshake (keys and accept check from
``websockets.utils``), masked text frames out (``websockets.speedups``), frames
in handed to a callback straight from ``data_received`` (no task, no queue),
pings answered with pongs, and the closing handshake. Server frames are never
fragmented by the game server, but continuation frames are handled anyway.
"""

from __future__ import annotations

import asyncio
import os
import struct
from collections.abc import Callable
from typing import cast

from websockets.speedups import apply_mask
from websockets.utils import accept_key, generate_key

OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA

OnMessage = Callable[["Wire", bytes], None]
OnClose = Callable[["Wire"], None]


class HandshakeFailed(ConnectionError):
    """The server answered the upgrade with something other than 101 (e.g. 429)."""


class Wire(asyncio.Protocol):
    """One client websocket; ``on_message`` gets every text or binary message."""

    def __init__(self, host: str, port: int, on_message: OnMessage, on_close: OnClose) -> None:
        self.host, self.port = host, port
        self.on_message = on_message
        self.on_close = on_close
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.open = False
        self.close_code: int | None = None
        self.received = 0
        """Messages received."""
        self.owner: object = None
        """Whatever drives this connection (the load generator's game or player)."""
        self._key = generate_key()
        self._buffer = bytearray()
        self._fragments: list[bytes] = []
        self._close_sent = False
        self.closing = False
        """True once this side asked to close."""

    @classmethod
    async def connect(
        cls, host: str, port: int, on_message: OnMessage, on_close: OnClose, owner: object = None
    ) -> Wire:
        loop = asyncio.get_running_loop()
        _, wire = await loop.create_connection(
            lambda: cls(host, port, on_message, on_close), host, port
        )
        wire.owner = owner
        await wire.opened
        return wire

    # -- asyncio.Protocol --------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport = cast(
            asyncio.Transport, transport
        )  # uvloop's is not a subclass
        transport.write(
            (
                f"GET / HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {self._key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        if not self.open:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buffer[:end]).decode("latin-1").split("\r\n")
            del buffer[: end + 4]
            headers = {
                name.strip().lower(): value.strip()
                for name, _, value in (line.partition(":") for line in head[1:])
            }
            if not head[0].startswith("HTTP/1.1 101") or headers.get(
                "sec-websocket-accept"
            ) != accept_key(self._key):
                if not self.opened.done():
                    self.opened.set_exception(HandshakeFailed(head[0]))
                assert self.transport is not None
                self.transport.abort()
                return
            self.open = True
            self.opened.set_result(None)
        self._parse()

    def _parse(self) -> None:
        buffer = self._buffer
        size = len(buffer)
        at = 0
        while size - at >= 2:
            first, second = buffer[at], buffer[at + 1]
            length = second & 0x7F
            start = at + 2
            if length == 126:
                if size - at < 4:
                    break
                length = (buffer[at + 2] << 8) | buffer[at + 3]
                start = at + 4
            elif length == 127:
                if size - at < 10:
                    break
                (length,) = struct.unpack_from("!Q", buffer, at + 2)
                start = at + 10
            if second & 0x80:  # a masked server frame breaks the protocol; skip its key
                start += 4
            end = start + length
            if end > size:
                break
            payload = bytes(buffer[start:end])
            if second & 0x80:
                payload = apply_mask(payload, bytes(buffer[start - 4 : start]))
            at = end
            self._frame(first, payload)
            if self.transport is None or (self.transport.is_closing() and not self.open):
                break
        del buffer[:at]

    def _frame(self, first: int, payload: bytes) -> None:
        opcode = first & 0x0F
        if opcode in (OP_TEXT, OP_BINARY, OP_CONTINUATION):
            if not first & 0x80:
                self._fragments.append(payload)
                return
            if self._fragments:
                self._fragments.append(payload)
                payload = b"".join(self._fragments)
                self._fragments.clear()
            self.received += 1
            self.on_message(self, payload)
        elif opcode == OP_PING:
            self._write(OP_PONG, payload)
        elif opcode == OP_CLOSE:
            self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
            self.open = False
            if not self._close_sent:
                self._close_sent = True
                self._write(OP_CLOSE, payload[:2])
            # The server closes the TCP connection first; connection_lost follows.

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionResetError("closed during handshake"))
        if not self.lost.done():
            self.lost.set_result(None)
        self.on_close(self)

    # -- sending -------------------------------------------------------------------

    def send(self, payload: bytes) -> None:
        """Send ``payload`` (UTF-8 JSON) as one text frame."""
        if self.open:
            self._write(OP_TEXT, payload)

    def _write(self, opcode: int, payload: bytes) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        length = len(payload)
        if length < 126:
            header = bytes((0x80 | opcode, 0x80 | length))
        elif length < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        mask = os.urandom(4)
        transport.write(header + mask + apply_mask(payload, mask))

    async def close(self, code: int = 1000, within: float = 5.0) -> None:
        """The closing handshake; the TCP connection is aborted if it takes too long."""
        self.closing = True
        if self.transport is None:
            return
        if self.open and not self._close_sent:
            self._close_sent = True
            self._write(OP_CLOSE, struct.pack("!H", code))
        self.open = False
        try:
            await asyncio.wait_for(asyncio.shield(self.lost), within)
        except TimeoutError:
            self.abort()

    def abort(self) -> None:
        """Drop the TCP connection at once (no closing handshake)."""
        self.closing = True
        if self.transport is not None:
            self.transport.abort()
