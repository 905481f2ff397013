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

Run: ``python bench/_load_echo.py [--port 0] [--max-message 4096] [--fanout]``;
it prints ``listening on ws://HOST:PORT`` to stderr like the game server, and
stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable

from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

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
    args = parser.parse_args()
    serving = main(args.host, args.port, args.max_message, fanout if args.fanout else echo)
    try:
        import uvloop
    except ImportError:  # pragma: no cover
        asyncio.run(serving)
    else:
        uvloop.run(serving)
