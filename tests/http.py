"""Plain HTTP requests over a real socket, read back by h11, a strict HTTP/1.1 parser.

h11 refuses what lenient clients let through (two different Content-Length
headers, a body on a HEAD answer), as Node and Prometheus do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

import h11


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    after: bytes
    """Bytes the server sent after the end of its answer (there must be none)."""

    def header(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name.lower()]


async def request(
    port: int,
    path: str,
    method: str = "GET",
    body: bytes = b"",
    extra: Sequence[tuple[str, str]] = (),
    source: str | None = None,
) -> Reply:
    """Send one request (``extra``: more headers; ``source``: the loopback address to send
    it from, such as 127.0.0.2) and parse the answer strictly (h11 raises on a malformed
    one)."""
    local = None if source is None else (source, 0)
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=local)
    client = h11.Connection(h11.CLIENT)
    headers = [("Host", "localhost"), ("Connection", "close"), *extra]
    if body:
        headers.append(("Content-Length", str(len(body))))
    writer.write(client.send(h11.Request(method=method, target=path, headers=headers)))
    if body:
        writer.write(client.send(h11.Data(data=body)))
    writer.write(client.send(h11.EndOfMessage()))
    await writer.drain()
    status, received, chunks = 0, [], []
    while True:
        event = client.next_event()
        if event is h11.NEED_DATA:
            client.receive_data(await asyncio.wait_for(reader.read(65536), 5))
        elif isinstance(event, h11.Response):
            status = event.status_code
            received = [(k.decode(), v.decode()) for k, v in event.headers]
        elif isinstance(event, h11.Data):
            chunks.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            break
    after = client.trailing_data[0] + await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return Reply(status, received, b"".join(chunks), after)


async def get(port: int, path: str) -> tuple[int, str]:
    """(status, body) of a GET."""
    reply = await request(port, path)
    return reply.status, reply.body.decode()
