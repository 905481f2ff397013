"""The thin websockets adapter around the socket-free core.

It numbers connections, feeds their frames to ``Core`` and carries out the
actions it returns; it writes what the core accepted to the store before any
of it is sent (nothing acknowledged is ever lost), and it wakes the core for
its deadlines. Everything about games lives in the core.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Iterable
from typing import cast

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

from server.config import Config
from server.core import Action, Close, Core, Limits, Send
from server.rooms import Absence
from server.store import Batch, Store, Synchronous

log = logging.getLogger("quoridor.server")

CLOSE_RESTART = 1012


class GameServer:
    """One listening server: the core, the open websockets, and the store."""

    def __init__(self, config: Config) -> None:
        self.config = config
        absence = Absence(config.grace, config.deliberate_grace, config.hard_limit)
        self.core = Core(Limits(rate=config.rate, burst=config.burst, absence=absence))
        self.store: Store | None = None
        if config.db:
            self.store = Store(config.db, _synchronous(config.sync))
        self.sockets: dict[int, ServerConnection] = {}
        self.stopping = asyncio.Event()
        """Set when the server must stop (a signal, or a store that cannot write)."""
        self.failed = False
        """True when it stopped because the store could not write."""
        self._ids = itertools.count(1)
        self._server: Server | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._outbox: list[tuple[Batch, list[Action]]] = []
        """Replies waiting for their changes to be committed, in order."""
        self._flusher: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[GameServer]:
        """Recover saved games, listen while inside the block, then shut down cleanly."""
        config = self.config
        if self.store is not None:
            before, after = await self.store.open()
            self.core.restore(await self.store.load())
            await self.store.write(self.core.take_changes())
            log.info(
                "database %s (schema %d -> %d): %d games in progress recovered",
                config.db,
                before,
                after,
                len(self.core.rooms),
            )
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
            self._arm_timer()
            log.info("listening on ws://%s:%d", config.host, self.port)
            try:
                yield self
            finally:
                await self.shutdown()

    async def shutdown(self) -> None:
        """Refuse new rooms and connections, save every game, close with 1012."""
        self.core.accepting = False
        if self._server is not None:
            self._server.close(close_connections=False)
        if self._timer is not None:
            self._timer.cancel()
        if self.store is not None:
            self._carry_out([], self.core.snapshot_all())
            await self._drain()
        sockets = list(self.sockets.values())
        await asyncio.gather(
            *(ws.close(CLOSE_RESTART, "server restarting") for ws in sockets),
            return_exceptions=True,
        )
        if self._server is not None:
            await self._server.wait_closed()
        if self.store is not None:
            await self._drain()
            await self.store.close()

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

    # -- carrying out the core's actions -------------------------------------------

    def _carry_out(self, actions: list[Action], batch: Batch | None = None) -> None:
        """Send ``actions`` once what the core changed for them is committed."""
        if self.store is not None:
            batch = batch if batch is not None else self.core.take_changes()
            if batch or self._outbox or self._flusher is not None:
                self._outbox.append((batch, actions))
                if self._flusher is None:
                    self._flusher = asyncio.create_task(self._flush())
                self._arm_timer()
                return
        self._send(actions)
        self._arm_timer()

    async def _flush(self) -> None:
        """Commit everything queued in one transaction, then send its replies in order."""
        assert self.store is not None
        try:
            while self._outbox:
                pending, self._outbox = self._outbox, []
                batch = Batch()
                for changes, _ in pending:
                    batch.merge(changes)
                await self.store.write(batch)
                for _, actions in pending:
                    self._send(actions)
        except Exception:
            # Nothing that was not saved may be acknowledged: stop serving.
            log.exception("cannot write to the database; stopping")
            self._outbox.clear()
            self.failed = True
            self.stopping.set()
        finally:
            self._flusher = None

    async def _drain(self) -> None:
        while self._flusher is not None:
            await asyncio.shield(self._flusher)

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


def _synchronous(value: str) -> Synchronous:
    if value not in ("off", "normal", "full"):
        raise ValueError(f"sync must be off, normal or full, not {value!r}")
    return cast(Synchronous, value)
