"""The server's helper processes end with it, even when it is killed outright."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from protocol.messages import AiSpec, Create, Joined, MoveRequest
from tests.process import ServerProcess, children, cmdline, wait_gone
from tests.wsclient import Client


async def test_computer_workers_end_when_the_server_is_killed(tmp_path: Path) -> None:
    server = await ServerProcess(tmp_path / "orphans.db", "--ai-workers", "2").start()
    client = await Client.connect(server.url)
    await client.send(Create(ai=AiSpec(level=1)))
    await client.expect(Joined)
    await client.send(MoveRequest(move="e2", ply=0))
    while (await client.state()).ply < 2:  # the computer answered: its workers are running
        pass
    assert server.process is not None
    helpers = [
        pid for pid in children(server.process.pid) if b"multiprocessing" in cmdline(pid)
    ]  # the workers, and multiprocessing's resource tracker
    assert len(helpers) >= 2
    os.kill(server.process.pid, signal.SIGKILL)
    # Not ``process.wait()``: it also waits for the server's stderr, which its helpers share.
    assert wait_gone(server.process.pid)
    try:
        assert [pid for pid in helpers if not wait_gone(pid, within=10)] == []
    finally:
        for pid in helpers:  # before the fix: leave no orphan behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await server.stop()  # its log's end: the helpers held its stderr too
        await client.close()
