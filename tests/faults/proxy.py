"""A TCP proxy between clients and the server that can misbehave on demand.

Each client connection through the proxy is a ``Link``: client <-> proxy <->
server. A link (or the whole proxy, for every link at once) can

- ``delay``: hold every chunk for that many seconds before forwarding it, in
  both directions, keeping the order;
- ``cut()``: drop both TCP connections at once, discarding whatever was in
  flight (the peers see the connection end, with no websocket close);
- ``reset()``: the same with RST (``SO_LINGER`` 0) instead of an orderly end;
- ``pause()`` / ``resume()``: stop forwarding and stop reading both sockets,
  so the sender's buffers fill up as with a peer that stopped reading.

``upstream_rcvbuf`` gives the link's socket toward the server a small receive
buffer, so a paused link backs up into the server's own write buffer quickly.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections import deque
from typing import cast

Chunk = tuple[float, bytes]


class _Side(asyncio.Protocol):
    """One of the link's two TCP connections."""

    def __init__(self, link: Link, name: str) -> None:
        self.link = link
        self.name = name
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.link.side_made(self)

    def data_received(self, data: bytes) -> None:
        self.link.forward(self, data)

    def eof_received(self) -> bool:
        self.link.side_eof(self)
        return True  # keep the other half open until the peer is done

    def connection_lost(self, exc: Exception | None) -> None:
        self.link.side_lost(self, exc)


class Link:
    """One client connection through the proxy."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        self.loop = asyncio.get_running_loop()
        self.delay = proxy.delay
        self.paused = False
        self.client = _Side(self, "client")
        self.server = _Side(self, "server")
        self.connected = asyncio.Event()
        """Set once the connection to the server is up."""
        self.closed = asyncio.Event()
        """Set once both connections are gone."""
        self.server_error: Exception | None = None
        """How the server's side ended, if not cleanly (e.g. the server reset it)."""
        self.bytes_to_client = 0
        self.bytes_to_server = 0
        self._queues: dict[str, deque[Chunk]] = {"client": deque(), "server": deque()}
        self._timers: dict[str, asyncio.TimerHandle | None] = {"client": None, "server": None}
        self._eof: set[str] = set()
        self._lost: set[str] = set()
        self._cut = False

    # -- set-up ----------------------------------------------------------------------

    def side_made(self, side: _Side) -> None:
        if side is self.client:
            assert side.transport is not None
            side.transport.pause_reading()  # until the server side is up
            task = self.loop.create_task(self._connect_upstream())
            self.proxy.tasks.add(task)
            task.add_done_callback(self.proxy.tasks.discard)

    async def _connect_upstream(self) -> None:
        proxy = self.proxy
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if proxy.upstream_rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, proxy.upstream_rcvbuf)
        sock.setblocking(False)
        try:
            await self.loop.sock_connect(sock, (proxy.target_host, proxy.target_port))
            await self.loop.create_connection(lambda: self.server, sock=sock)
        except OSError as exc:
            sock.close()
            self.server_error = exc
            self._abort(self.client)
            return
        self.connected.set()
        if not self.paused and self.client.transport is not None:
            self.client.transport.resume_reading()

    # -- forwarding ------------------------------------------------------------------

    def _other(self, side: _Side) -> _Side:
        return self.server if side is self.client else self.client

    def forward(self, side: _Side, data: bytes) -> None:
        target = self._other(side)
        if self._cut:
            return
        queue = self._queues[target.name]
        if self.delay <= 0 and not queue and not self.paused:
            self._write(target, data)
            return
        due = self.loop.time() + self.delay
        if queue:
            due = max(due, queue[-1][0])
        queue.append((due, data))
        self._arm(target)

    def _arm(self, target: _Side) -> None:
        queue = self._queues[target.name]
        if self._timers[target.name] is not None or not queue or self.paused:
            return
        self._timers[target.name] = self.loop.call_at(queue[0][0], self._flush, target)

    def _flush(self, target: _Side) -> None:
        self._timers[target.name] = None
        if self.paused or self._cut:
            return
        queue = self._queues[target.name]
        now = self.loop.time()
        while queue and queue[0][0] <= now:
            self._write(target, queue.popleft()[1])
        if queue:
            self._arm(target)
        else:
            self._pass_on_end(self._other(target))

    def _write(self, target: _Side, data: bytes) -> None:
        if target.transport is None or target.transport.is_closing():
            return
        target.transport.write(data)
        if target is self.client:
            self.bytes_to_client += len(data)
        else:
            self.bytes_to_server += len(data)

    # -- ends --------------------------------------------------------------------------

    def side_eof(self, side: _Side) -> None:
        self._eof.add(side.name)
        if not self._queues[self._other(side).name]:
            self._pass_on_end(side)

    def side_lost(self, side: _Side, exc: Exception | None) -> None:
        self._lost.add(side.name)
        if side is self.server and exc is not None:
            self.server_error = exc
        if not self._queues[self._other(side).name]:
            self._pass_on_end(side)
        if len(self._lost) == 2:
            self.closed.set()

    def _pass_on_end(self, side: _Side) -> None:
        """``side`` ended (EOF or lost) and all it sent is delivered: tell the other."""
        other = self._other(side)
        transport = other.transport
        if transport is None or transport.is_closing():
            if side.name in self._lost and (other.name in self._lost or transport is None):
                self.closed.set()
            return
        if side.name in self._lost:
            transport.close()
        elif side.name in self._eof and transport.can_write_eof():
            with contextlib.suppress(OSError, RuntimeError):
                transport.write_eof()

    # -- faults --------------------------------------------------------------------

    def cut(self) -> None:
        """Drop both connections now; whatever was in flight is lost."""
        self._cut = True
        for side in (self.client, self.server):
            self._abort(side)

    def reset(self) -> None:
        """Drop both connections with a TCP reset."""
        self._cut = True
        for side in (self.client, self.server):
            transport = side.transport
            if transport is not None:
                sock = transport.get_extra_info("socket")
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
            self._abort(side)

    def _abort(self, side: _Side) -> None:
        self._queues[side.name].clear()
        timer = self._timers[side.name]
        if timer is not None:
            timer.cancel()
            self._timers[side.name] = None
        if side.transport is not None:
            side.transport.abort()
        else:
            self._lost.add(side.name)
            if len(self._lost) == 2:
                self.closed.set()

    def pause(self) -> None:
        """Stop forwarding and reading, both ways."""
        self.paused = True
        for side in (self.client, self.server):
            if side.transport is not None and not side.transport.is_closing():
                side.transport.pause_reading()

    def resume(self) -> None:
        self.paused = False
        for side in (self.client, self.server):
            if side.transport is not None and not side.transport.is_closing():
                side.transport.resume_reading()
            self._arm(side)


class Proxy:
    """Listens on 127.0.0.1 (a free port) and relays each connection to the target."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target_host = target_host
        self.target_port = target_port
        self.delay = 0.0
        """Seconds each chunk is held, for links opened from now on."""
        self.upstream_rcvbuf: int | None = None
        """SO_RCVBUF of the socket toward the server, for links opened from now on."""
        self.links: list[Link] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.port = 0
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def start(self) -> Proxy:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._accept, "127.0.0.1", 0, backlog=1024)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def _accept(self) -> _Side:
        link = Link(self)
        self.links.append(link)
        return link.client

    def live(self) -> list[Link]:
        return [link for link in self.links if not link.closed.is_set()]

    def cut_all(self) -> None:
        for link in self.live():
            link.cut()

    def reset_all(self) -> None:
        for link in self.live():
            link.reset()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for link in self.live():
            link.cut()
        for task in list(self.tasks):
            task.cancel()
        if self._server is not None:
            await self._server.wait_closed()
