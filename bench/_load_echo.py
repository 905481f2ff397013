"""The ceilings for ``bench/load.py``: a bare websockets echo server.

Same socket settings as the game server (``server/app.py``): no compression,
the same frame size limit, receive queue, keepalive, timeouts and listen
backlog, on uvloop when it is installed, as ``python -m server`` runs.

echo (the default)
    Each frame is read as bytes and sent straight back as a text frame: the
    least work a websockets server can do for one message in and one out.
fanout (``--fanout``)
    A connection's first frame names its pair (any bytes; two connections send
    the same); every later frame goes, with ``broadcast()`` as the game server
    sends its states, to both connections of the pair: the game server's I/O
    for a move (one frame in, the same frame out to both players) without the
    game.
fanout on the sans-I/O core (``--fanout --sansio``)
    The same fan-out with websockets' sans-I/O ``ServerProtocol`` driven from a
    plain ``asyncio.Protocol``: no task, queue or future per connection, frames
    written straight to the transport, as the game server's connections work
    (``server/wire.py``; its keepalive pings and timeouts left out).

Run: ``python bench/_load_echo.py [--port 0] [--max-message 4096] [--fanout [--sansio]]``;
it prints ``listening on ws://HOST:PORT`` to stderr like the game server, and
stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import ClassVar

from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import OPEN
from websockets.server import ServerProtocol

Handler = Callable[[ServerConnection], Awaitable[None]]
pairs: dict[bytes, list[ServerConnection]] = {}


async def echo(ws: ServerConnection) -> None:
    try:
        while True:
            data = await ws.recv(decode=False)
            await ws.send(data, text=True)
    except ConnectionClosed:
        pass


async def fanout(ws: ServerConnection) -> None:
    key = b""
    try:
        key = await ws.recv(decode=False)
        pair = pairs.setdefault(key, [])
        pair.append(ws)
        while True:
            data = await ws.recv(decode=False)
            broadcast(pair, data, text=True)
    except ConnectionClosed:
        pass
    finally:
        if key in pairs:
            pairs[key] = [other for other in pairs[key] if other is not ws]
            if not pairs[key]:
                del pairs[key]


class SansIoFanout(asyncio.Protocol):
    """One connection of the sans-I/O fan-out: bytes in, events out, bytes written."""

    pairs: ClassVar[dict[bytes, list[SansIoFanout]]] = {}

    def __init__(self, max_message: int) -> None:
        self.ws = ServerProtocol(max_size=max_message)
        self.transport: asyncio.Transport | None = None
        self.key: bytes | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        ws = self.ws
        ws.receive_data(data)
        for event in ws.events_received():
            if isinstance(event, Request):
                ws.send_response(ws.accept(event))
            elif isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                self.frame(bytes(event.data))
        self.flush()

    def frame(self, data: bytes) -> None:
        if self.key is None:
            self.key = data
            self.pairs.setdefault(data, []).append(self)
            return
        frame = Frame(Opcode.TEXT, data).serialize(mask=False)
        for other in self.pairs.get(self.key, ()):
            if other.ws.state is OPEN and other.transport is not None:
                other.transport.write(frame)

    def flush(self) -> None:
        assert self.transport is not None
        for chunk in self.ws.data_to_send():
            if chunk:
                self.transport.write(chunk)
            else:  # the protocol wants the TCP connection half-closed: close it
                self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.ws.receive_eof()
        if self.key is not None and self.key in self.pairs:
            self.pairs[self.key] = [other for other in self.pairs[self.key] if other is not self]
            if not self.pairs[self.key]:
                del self.pairs[self.key]


async def sansio_main(host: str, port: int, max_message: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = await loop.create_server(lambda: SansIoFanout(max_message), host, port, backlog=1024)
    bound = server.sockets[0].getsockname()
    print(f"listening on ws://{bound[0]}:{bound[1]}", file=sys.stderr, flush=True)
    await stop.wait()
    server.close()


async def main(host: str, port: int, max_message: int, handler: Handler) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with serve(
        handler,
        host,
        port,
        compression=None,
        max_size=max_message,
        max_queue=16,
        open_timeout=10,
        ping_interval=20,
        ping_timeout=20,
        close_timeout=5,
        backlog=1024,
    ) as server:
        bound = server.sockets[0].getsockname()
        print(f"listening on ws://{bound[0]}:{bound[1]}", file=sys.stderr, flush=True)
        await stop.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--max-message", type=int, default=4096)
    parser.add_argument("--fanout", action="store_true", help="send each frame to its pair")
    parser.add_argument(
        "--sansio", action="store_true", help="with --fanout: the sans-I/O core, no tasks"
    )
    args = parser.parse_args()
    if args.sansio:
        serving = sansio_main(args.host, args.port, args.max_message)
    else:
        serving = main(args.host, args.port, args.max_message, fanout if args.fanout else echo)
    try:
        import uvloop
    except ImportError:  # pragma: no cover
        asyncio.run(serving)
    else:
        uvloop.run(serving)
