"""The server as a real process, for tests that kill and restart it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import ClassVar

LISTENING = re.compile(rb"listening on ws://([\d.]+):(\d+)")


class ServerProcess:
    """``python -m server`` on 127.0.0.1, a free port, and the given database."""

    started: ClassVar[list[asyncio.subprocess.Process]] = []
    """Every server process a test started: those still running when it ends are killed
    (``tests/conftest.py``), so a failing test leaves no server behind."""

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
            # Its own process group, as under a service manager: see ``stop(group=True)``.
            start_new_session=True,
        )
        ServerProcess.started.append(self.process)
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

    def children(self) -> list[int]:
        """The server's child processes (its database processes, the writer and the reader)."""
        assert self.process is not None
        return children(self.process.pid)

    async def stop(
        self, sig: signal.Signals = signal.SIGTERM, within: float = 20.0, group: bool = False
    ) -> int:
        """Send ``sig`` (to the whole process group with ``group``, as systemd does) and
        wait for the exit status."""
        assert self.process is not None
        if self.process.returncode is None:
            if group:
                os.killpg(self.process.pid, sig)
            else:
                self.process.send_signal(sig)
        async with asyncio.timeout(within):
            status = await self.process.wait()
            if self._reader is not None:
                await self._reader
        return status


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pid: int, within: float = 10.0) -> bool:
    """Wait (blocking: a few milliseconds at a time) until process ``pid`` has ended."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def cmdline(pid: int) -> bytes:
    """Process ``pid``'s command line (empty once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as command:
            return command.read()
    except OSError:
        return b""


def kill_leftovers() -> None:
    """Kill the server processes (and their process groups) a test left running."""
    for process in ServerProcess.started:
        # Its pid still names a server (not a process that got the number since).
        if process.returncode is None and b"server" in cmdline(process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    ServerProcess.started.clear()
