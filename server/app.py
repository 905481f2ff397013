"""The thin websockets adapter around the socket-free core.

It numbers connections, feeds their frames to ``Core`` and carries out the
actions it returns. Everything about games lives in the core.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Iterable

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

from server.config import Config
from server.core import Action, Close, Core, Limits, Send
from server.rooms import Absence

log = logging.getLogger("quoridor.server")

CLOSE_RESTART = 1012


class GameServer:
    """One listening server: the core plus the open websockets."""

    def __init__(self, config: Config) -> None:
        self.config = config
        absence = Absence(config.grace, config.deliberate_grace, config.hard_limit)
        self.core = Core(Limits(rate=config.rate, burst=config.burst, absence=absence))
        self.sockets: dict[int, ServerConnection] = {}
        self._ids = itertools.count(1)
        self._server: Server | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[GameServer]:
        """Listen while inside the block; close every connection on the way out."""
        config = self.config
        async with serve(
            self._handle,
            config.host,
            config.port,
            compression=None,  # memory per connection, and no compression bombs
            max_size=config.max_message,
            max_queue=16,
            open_timeout=10,
            ping_interval=config.ping_interval,
            ping_timeout=config.ping_interval,
            close_timeout=5,
            backlog=1024,
        ) as server:
            self._server = server
            log.info("listening on ws://%s:%d", config.host, self.port)
            try:
                yield self
            finally:
                await self.shutdown()

    async def shutdown(self) -> None:
        """Refuse new rooms, tell every client the server restarts (1012)."""
        self.core.accepting = False
        if self._server is not None:
            self._server.close(close_connections=False)
        sockets = list(self.sockets.values())
        await asyncio.gather(
            *(ws.close(CLOSE_RESTART, "server restarting") for ws in sockets),
            return_exceptions=True,
        )

    async def _handle(self, ws: ServerConnection) -> None:
        conn = next(self._ids)
        self.sockets[conn] = ws
        self.core.open(conn)
        try:
            while True:
                # Text frames arrive as bytes: msgspec decodes UTF-8 JSON itself.
                data = await ws.recv(decode=False)
                self._carry_out(self.core.receive(conn, data))
        except ConnectionClosed:
            pass  # every close code, clean or not, ends the connection
        finally:
            del self.sockets[conn]
            # A client that closed with 1000/1001 left on purpose: shorter grace.
            received = ws.protocol.close_rcvd
            deliberate = received is not None and received.code in (1000, 1001)
            self._carry_out(self.core.close(conn, deliberate))

    def _carry_out(self, actions: Iterable[Action]) -> None:
        self._send(actions)
        self._arm_timer()

    def _arm_timer(self) -> None:
        """Wake up for the core's next deadline (a flag, an abandoned seat)."""
        when = self.core.next_deadline()
        if when == self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = None
        if when is not None:
            loop = asyncio.get_running_loop()
            delay = max(0.0, when - self.core.clock())
            self._timer = loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = self._timer_at = None
        self._carry_out(self.core.tick())

    def _send(self, actions: Iterable[Action]) -> None:
        for action in actions:
            if isinstance(action, Send):
                targets = [self.sockets[t] for t in action.targets if t in self.sockets]
                broadcast(targets, action.payload, text=True)
            elif isinstance(action, Close):
                ws = self.sockets.get(action.target)
                if ws is not None:
                    task = asyncio.create_task(ws.close(action.code, action.reason))
                    self._closing.add(task)
                    task.add_done_callback(self._closing.discard)
