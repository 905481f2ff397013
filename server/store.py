"""Durable storage: the server's handle on its database process.

SQLite runs in a process of its own (``server.database``). When it ran on a
thread of the server, the two took turns at the interpreter lock at every
statement, and a busy event loop stretched each commit to 6-10 ms; in its own
process a commit costs the loop one message each way.

Writes come in batches (one transaction for everything the server accepted
since the last commit), so a busy server pays one commit for many moves, and
each move is on disk before anyone hears of it. If the process dies, every
call fails, and the server stops rather than acknowledge what it cannot save.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import msgspec

from server.database import (
    DONE,
    Batch,
    Loaded,
    LoadRequest,
    OpenRequest,
    Request,
    Synchronous,
    WriteRequest,
    frame,
)

T = TypeVar("T")
_ROOT = Path(__file__).resolve().parent.parent


class StoreError(RuntimeError):
    """The database process failed a request, or is gone."""


class Store:
    """The database process, started by ``open`` and ended by ``close``."""

    def __init__(self, path: str | Path, synchronous: Synchronous = "normal") -> None:
        self.path = Path(path)
        self.synchronous = synchronous
        self.write_seconds: Callable[[float], None] = lambda seconds: None
        """Called with each commit's duration (metrics hook)."""
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        """One request at a time: replies come back in order, without ids."""

    async def open(self) -> tuple[int, int]:
        """Start the process, create or open the database and migrate it; the schema
        versions before and after."""
        environment = dict(os.environ)
        # The same code as this server, wherever it was started from.
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(_ROOT), environment.get("PYTHONPATH")])
        )
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server.database",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=environment,
        )
        before, after = await self._call(
            OpenRequest(str(self.path), self.synchronous), tuple[int, int]
        )
        return before, after

    @property
    def pid(self) -> int | None:
        """The database process's id while it runs (for diagnostics and tests)."""
        return self._process.pid if self._process is not None else None

    async def load(self) -> Loaded:
        return await self._call(LoadRequest(), Loaded)

    async def write(self, batch: Batch) -> None:
        if batch:
            self.write_seconds(await self._call(WriteRequest(batch), float))

    async def close(self) -> None:
        """Close the database (the process ends at the end of its input)."""
        process, self._process = self._process, None
        if process is None:
            return
        async with self._lock:
            assert process.stdin is not None
            process.stdin.close()
            await process.wait()

    async def _call(self, request: Request, reply: type[T]) -> T:
        process = self._process
        if process is None:
            raise StoreError("the database is not open")
        requests, replies = process.stdin, process.stdout
        assert requests is not None
        assert replies is not None
        async with self._lock:
            try:
                requests.write(frame(msgspec.msgpack.encode(request)))
                await requests.drain()
                size = int.from_bytes(await replies.readexactly(4), "big")
                answer = await replies.readexactly(size)
            except (OSError, asyncio.IncompleteReadError) as error:
                raise StoreError(f"the database process is gone ({error!r})") from error
        if answer[:1] != DONE:
            raise StoreError(answer[1:].decode(errors="replace"))
        return msgspec.msgpack.decode(answer[1:], type=reply)
