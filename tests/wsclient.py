"""A tiny protocol client for tests: sends requests, waits for typed replies."""

from __future__ import annotations

import asyncio
from typing import TypeVar

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

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
