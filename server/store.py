"""Durable storage: the server's handle on its database process.

SQLite runs in a process of its own (``server.database``). When it ran on a
thread of the server, the two took turns at the interpreter lock at every
statement, and a busy event loop stretched each commit to 6-10 ms; in its own
process a commit costs the loop one message each way.

Writes come in batches (one transaction for everything the server accepted
since the last commit), so a busy server pays one commit for many moves, and
each move is on disk before anyone hears of it. Requests are pipelined: the
server may send the next batch before the last one's reply, and replies come
back in order, each handed to its callback as soon as it arrives (no task
switch). If the process dies, every request fails, and the server stops
rather than acknowledge what it cannot save.

A second process, the reader, answers the queries that only read (``accountdb.READS``:
finished games, profiles, leaderboards) beside it, so that long reads keep no commit
waiting; if it dies, those go to the first process again.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import msgspec

from server.accountdb import READS, AccountQuery, RatedGame
from server.database import (
    DONE,
    Batch,
    Loaded,
    LoadRequest,
    OpenRequest,
    PruneRequest,
    ReaderRequest,
    Request,
    Synchronous,
    WriteReply,
    WriteRequest,
    frame,
)
from server.retention import Retention

log = logging.getLogger("quoridor.store")

T = TypeVar("T")
CLOSE_WITHIN = 10.0
"""Seconds the database process has to finish and exit once its input is closed."""
_ROOT = Path(__file__).resolve().parent.parent


class StoreError(RuntimeError):
    """The database process failed a request, or is gone."""


class StoreRefused(StoreError):
    """The database cannot be used (held by another server, its folder missing, ...); the
    message says why in one sentence."""


class StoreLocked(StoreRefused):
    """Another server holds the database; the message says so in one sentence."""


LOCK_SUFFIX = ".lock"
"""Beside the database, the file a server holds locked while it uses it."""


def lock_path(path: Path) -> Path:
    """The lock file of the database at ``path`` (beside it, where a link to it points)."""
    real = path.resolve()
    return real.with_name(real.name + LOCK_SUFFIX)


def _lock(path: Path, remedy: str = "stop it first, or give this one another --db") -> int:
    """Lock ``path`` + ``.lock`` for this process (released when it exits, even killed).

    SQLite alone lets two servers share a file, and two servers would each
    believe they own every game in it; a lock of our own refuses the second.
    The holder's process id is written in the file, for the message.
    """
    real = path.resolve()  # a symbolic link to the file is the same database
    try:
        fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o644)
    except FileNotFoundError:
        raise StoreRefused(
            f"cannot create the database {path}: the folder {real.parent} does not exist"
        ) from None
    except OSError as error:
        reason = (error.strerror or str(error)).lower()
        raise StoreRefused(f"cannot open the database {path}: {reason}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise StoreLocked(
            f"the database {path} is in use by another server (process {holder}); {remedy}"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


Done = Callable[[bytes | BaseException], None]
"""Called with a request's answer (msgpack), or the error that failed it."""


class _Channel(asyncio.SubprocessProtocol):
    """The database process's pipes: framed replies, matched to requests in order."""

    def __init__(self, on_lost: Callable[[str], None]) -> None:
        self.transport: asyncio.SubprocessTransport | None = None
        self.waiting: deque[Done] = deque()
        self.lost: BaseException | None = None
        self.on_lost: Callable[[str], None] | None = on_lost
        """Told at once, with the reason, when the process goes away unasked (None once a
        close is asked for)."""
        self.exited = asyncio.get_running_loop().create_future()
        self._buffer = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.SubprocessTransport, transport)

    def send(self, request: Request, done: Done) -> None:
        if self.lost is not None or self.transport is None:
            error = self.lost or StoreError("the database is not open")
            asyncio.get_running_loop().call_soon(done, error)
            return
        pipe = cast(asyncio.WriteTransport, self.transport.get_pipe_transport(0))
        pipe.write(frame(msgspec.msgpack.encode(request)))
        self.waiting.append(done)

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        buffer = self._buffer
        buffer += data
        while len(buffer) >= 4:
            size = int.from_bytes(buffer[:4], "big")
            if len(buffer) < 4 + size:
                return
            answer = bytes(buffer[4 : 4 + size])
            del buffer[: 4 + size]
            done = self.waiting.popleft()
            if answer[:1] == DONE:
                done(answer[1:])
            else:
                done(StoreError(answer[1:].decode(errors="replace")))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._fail(f"the database process closed its pipe ({exc!r})")

    def process_exited(self) -> None:
        self._fail("the database process exited")
        if not self.exited.done():
            self.exited.set_result(None)

    def _fail(self, reason: str) -> None:
        if self.lost is None:
            self.lost = StoreError(reason)
            if self.on_lost is not None:
                self.on_lost(reason)
        while self.waiting:
            self.waiting.popleft()(self.lost)


class Store:
    """The database process, started by ``open`` and ended by ``close``."""

    def __init__(
        self,
        path: str | Path,
        synchronous: Synchronous = "normal",
        retention: Retention | None = None,
    ) -> None:
        self.path = Path(path)
        self.synchronous = synchronous
        self.retention = retention or Retention()
        """Which finished games the database keeps (``server.retention``)."""
        self.write_seconds: Callable[[float], None] = lambda seconds: None
        self.pruned: Callable[[int], None] = lambda count: None
        """Called with each commit's duration (metrics hook)."""
        self.lost: Callable[[str], None] = lambda reason: None
        """Called as soon as the database process dies or closes its pipes unasked (even
        while nothing is being written), with the reason."""
        self.rated: Callable[[list[RatedGame]], None] = lambda games: None
        """Called with the rating changes each commit made, once it is on disk (before the
        commit's ``done``)."""
        self.reconnects = 0
        """Never more than 0: a database process that dies stops the server."""
        self._channel: _Channel | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._reader_channel: _Channel | None = None
        self._reader_transport: asyncio.SubprocessTransport | None = None
        self._lock: int | None = None

    async def open(self) -> tuple[int, int]:
        """Start the process, create or open the database and migrate it; the schema
        versions before and after. Raises ``StoreLocked`` if another server holds it."""
        lock_file = lock_path(self.path)
        fresh = not lock_file.exists()
        self._lock = _lock(self.path)
        try:
            self._transport, self._channel = await _start(lambda reason: self.lost(reason))
            opening = OpenRequest(str(self.path), self.synchronous, self.retention)
            before, after = await self._call(opening, tuple[int, int])
            # Once the schema is there (migrated): the reader only reads it.
            self._reader_transport, self._reader_channel = await _start(self._reader_lost)
            await _call(self._reader_channel, ReaderRequest(str(self.path)), type(None))
        except BaseException:
            if fresh:  # a file it cannot use (not a database, say): nothing of ours beside it
                lock_file.unlink(missing_ok=True)  # while held: nobody else locks it meanwhile
            await self.close()  # a database it cannot open (or migrate): no process left over
            raise
        return before, after

    def _reader_lost(self, reason: str) -> None:
        log.warning("the database reader is gone (%s); reads go to the writer", reason)

    @property
    def _reader(self) -> _Channel | None:
        """The reader's channel while it answers (None once it is gone)."""
        reader = self._reader_channel
        return reader if reader is not None and reader.lost is None else None

    @property
    def pid(self) -> int | None:
        """The database process's id while it runs (for diagnostics and tests)."""
        return self._transport.get_pid() if self._transport is not None else None

    @property
    def reader_pid(self) -> int | None:
        """The reader process's id while it answers (for diagnostics and tests)."""
        transport = self._reader_transport
        return transport.get_pid() if transport is not None and self._reader else None

    async def load(self) -> Loaded:
        loaded: Loaded = await self._call(LoadRequest(), Loaded)
        if loaded.pruned:
            self.pruned(loaded.pruned)
        return loaded

    async def write(self, batch: Batch) -> None:
        """Commit ``batch`` and wait for it."""
        if batch:
            self._written(await self._call(WriteRequest(batch), WriteReply))

    async def prune(self, now: float) -> int:
        """Delete every game the retention rule lets go as of ``now``: how many. (The
        database process also prunes by itself, when it opens and about hourly.)"""
        return await self._call(PruneRequest(now), int)

    async def ask(self, query: AccountQuery, reply: Any) -> Any:
        """Run one account query (``server.accountdb``) after everything sent before it; its
        answer decoded as ``reply`` (a type, or a union such as ``int | None``). A query
        that only reads (``READS``) goes to the reader, and sees what was committed when it
        runs (what the server acknowledged), not a batch still being committed."""
        if self._reader is not None and isinstance(query, READS):
            return await _call(self._reader, query, reply)
        return await self._call(query, reply)

    def _written(self, reply: WriteReply) -> None:
        self.write_seconds(reply.seconds)
        if reply.pruned:
            self.pruned(reply.pruned)
        if reply.rated:
            self.rated(reply.rated)

    def submit(self, batch: Batch, done: Callable[[BaseException | None], None]) -> None:
        """Send ``batch`` to be committed after everything submitted before it; ``done``
        is called (from the event loop) once it is on disk, or with the error."""

        def answered(answer: bytes | BaseException) -> None:
            if isinstance(answer, BaseException):
                done(answer)
                return
            self._written(msgspec.msgpack.decode(answer, type=WriteReply))
            done(None)

        self._channel_or_closed().send(WriteRequest(batch), answered)

    async def close(self) -> None:
        """Close the database (the processes end at the end of their input)."""
        processes = [
            (self._reader_transport, self._reader_channel),
            (self._transport, self._channel),
        ]
        self._reader_transport = self._reader_channel = None
        self._transport = self._channel = None
        for transport, channel in processes:
            if transport is not None and channel is not None:
                await _stop(transport, channel)
        self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            # No process id left behind: a script's kill of a stale one could hit another
            # process that has it now.
            os.ftruncate(self._lock, 0)
            os.close(self._lock)  # closing the file releases the lock
            self._lock = None

    async def _call(self, request: Request, reply: type[T]) -> T:
        return await _call(self._channel_or_closed(), request, reply)

    def _channel_or_closed(self) -> _Channel:
        if self._channel is None:
            raise StoreError("the database is not open")
        return self._channel


async def _start(on_lost: Callable[[str], None]) -> tuple[asyncio.SubprocessTransport, _Channel]:
    """A database process (``python -m server.database``), not yet told what to open."""
    environment = dict(os.environ)
    # The same code as this server, wherever it was started from.
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(_ROOT), environment.get("PYTHONPATH")])
    )
    return await asyncio.get_running_loop().subprocess_exec(
        lambda: _Channel(on_lost),
        sys.executable,
        "-m",
        "server.database",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=None,
        env=environment,
    )


async def _stop(transport: asyncio.SubprocessTransport, channel: _Channel) -> None:
    """Close a database process's input and wait for it to end (killed if it will not)."""
    channel.on_lost = None  # its end is asked for now
    pipe = transport.get_pipe_transport(0)
    if pipe is not None:
        pipe.close()
    try:
        await asyncio.wait_for(asyncio.shield(channel.exited), CLOSE_WITHIN)
    except TimeoutError:
        transport.kill()  # stuck: what it had not committed was never acknowledged
        await channel.exited
    transport.close()


async def _call(channel: _Channel, request: Request, reply: type[T]) -> T:
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def answered(answer: bytes | BaseException) -> None:
        if future.done():
            return
        if isinstance(answer, BaseException):
            future.set_exception(answer)
        else:
            future.set_result(answer)

    channel.send(request, answered)
    return msgspec.msgpack.decode(await future, type=reply)
