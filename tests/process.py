"""The server as a real process, for tests that kill and restart it."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path

LISTENING = re.compile(rb"listening on ws://([\d.]+):(\d+)")


class ServerProcess:
    """``python -m server`` on 127.0.0.1, a free port, and the given database."""

    def __init__(self, db: Path | str, *args: str) -> None:
        self.db = db
        self.args = args
        self.process: asyncio.subprocess.Process | None = None
        self.port = 0
        self.log = bytearray()
        self._reader: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def start(self, within: float = 20.0) -> ServerProcess:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server",
            "--port",
            "0",
            "--db",
            str(self.db),
            *self.args,
            stderr=asyncio.subprocess.PIPE,
        )
        assert self.process.stderr is not None
        async with asyncio.timeout(within):
            while not (match := LISTENING.search(self.log)):
                line = await self.process.stderr.readline()
                if not line:
                    raise RuntimeError(f"server exited: {self.log.decode(errors='replace')}")
                self.log += line
        self.port = int(match.group(2))
        self._reader = asyncio.create_task(self._keep_reading())
        return self

    async def _keep_reading(self) -> None:
        assert self.process is not None
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.log += line

    async def stop(self, sig: signal.Signals = signal.SIGTERM, within: float = 20.0) -> int:
        """Send ``sig`` and wait for the exit status."""
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(sig)
        async with asyncio.timeout(within):
            status = await self.process.wait()
            if self._reader is not None:
                await self._reader
        return status
