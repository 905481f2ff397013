"""A tiny protocol client for tests: sends requests, waits for typed replies."""

from __future__ import annotations

import asyncio
from typing import TypeVar

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed
from websockets.frames import Close, Frame, Opcode
from websockets.uri import parse_uri

from protocol.codec import decode_server_message, encode
from protocol.messages import (
    VERSION,
    Error,
    Hello,
    Joined,
    ServerMessage,
    State,
    Welcome,
)

T = TypeVar("T")


class Client:
    """A greeted connection that keeps every message it receives, in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.inbox: asyncio.Queue[ServerMessage] = asyncio.Queue()
        self.seen: list[ServerMessage] = []
        self.welcome: Welcome | None = None
        self.joined: Joined | None = None
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(
        cls, url: str, name: str = "player", hello: bool = True, address: str | None = None
    ) -> Client:
        """Connect and say hello; ``address``: the client's, as a trusted proxy names it."""
        headers = None if address is None else {"X-Forwarded-For": address}
        client = cls(await connect(url, additional_headers=headers))
        if hello:
            await client.send(Hello(version=VERSION, name=name))
            client.welcome = await client.expect(Welcome)
        return client

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                message = decode_server_message(frame)
                if message is not None:
                    self.seen.append(message)
                    await self.inbox.put(message)
        except ConnectionClosed:
            pass  # the close code and reason stay on self.ws

    async def closed(self, within: float = 5.0) -> tuple[int | None, str | None]:
        """Wait for the server to close the connection; its (code, reason)."""
        await asyncio.wait_for(self.ws.wait_closed(), within)
        return self.ws.close_code, self.ws.close_reason

    async def send(self, message: msgspec.Struct) -> None:
        await self.ws.send(encode(message), text=True)

    async def send_raw(self, data: str | bytes) -> None:
        await self.ws.send(data)

    async def recv(self, within: float = 5.0) -> ServerMessage:
        return await asyncio.wait_for(self.inbox.get(), within)

    async def expect(self, kind: type[T], within: float = 5.0) -> T:
        """The next message, which must be a ``kind``."""
        message = await self.recv(within)
        assert isinstance(message, kind), f"expected {kind.__name__}, got {message!r}"
        return message

    async def error(self, code: str) -> Error:
        error = await self.expect(Error)
        assert error.code == code, error
        return error

    async def state(self) -> State:
        return await self.expect(State)

    async def quiet(self, seconds: float = 0.1) -> None:
        """Assert that nothing arrives for a moment."""
        await asyncio.sleep(seconds)
        assert self.inbox.empty(), f"unexpected {self.inbox.get_nowait()!r}"

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()


class RawSocket:
    """A websocket whose frames go out exactly when and as written: many in one packet,
    or bytes no ordinary client sends. websockets' sans-I/O client over a plain stream."""

    def __init__(
        self, protocol: ClientProtocol, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.protocol = protocol
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> RawSocket:
        """Connect and finish the opening handshake."""
        protocol = ClientProtocol(parse_uri(f"ws://127.0.0.1:{port}/"))
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        protocol.send_request(protocol.connect())
        writer.write(b"".join(protocol.data_to_send()))
        while not protocol.events_received():
            protocol.receive_data(await reader.read(4096))
        return cls(protocol, reader, writer)

    def send_together(self, messages: list[msgspec.Struct]) -> None:
        """Write every message as a text frame, all in one write (one packet here)."""
        for message in messages:
            self.protocol.send_text(encode(message))
        self.writer.write(b"".join(self.protocol.data_to_send()))

    async def frames(self) -> list[Frame]:
        """The frames in the next read from the socket; the stream must not end."""
        data = await self.reader.read(65536)
        assert data, "the connection ended without a close frame"
        self.protocol.receive_data(data)
        return [event for event in self.protocol.events_received() if isinstance(event, Frame)]

    async def messages_until(self, last: type[ServerMessage]) -> list[ServerMessage]:
        """Every message received up to and including the first ``last``."""
        messages: list[ServerMessage] = []
        while not any(isinstance(message, last) for message in messages):
            for frame in await self.frames():
                if frame.opcode is Opcode.TEXT:
                    message = decode_server_message(bytes(frame.data))
                    assert message is not None
                    messages.append(message)
        return messages

    async def close_frame(self) -> Close:
        """The code and reason of the server's close frame, when it comes."""
        while True:
            for frame in await self.frames():
                if frame.opcode is Opcode.CLOSE:
                    return Close.parse(frame.data)

    def abandon(self) -> None:
        self.writer.close()
