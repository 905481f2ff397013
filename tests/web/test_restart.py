"""The browser client across a restart of a real server process on an older backup of its
SQLite database, behind a proxy that answers 503 while the server is down (as the terminal
client's tests/client/test_restart.py)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from playwright.async_api import Browser

from tests.client.test_restart import Proxy, restore
from tests.process import ServerProcess
from tests.web.pages import Player, close_all, game_between, play

pytestmark = pytest.mark.asyncio(loop_scope="session")

DOWN = ("WebSocket connection to", "ERR_INTERNET_DISCONNECTED")
"""What Chromium logs for each attempt made while offline or the server is down: expected."""


async def wait_online(player: Player) -> None:
    await player.page.wait_for_function(
        "() => document.body.dataset.link === 'online'", timeout=20_000, polling=50
    )


async def test_pages_play_on_from_the_restored_position(browser: Browser, tmp_path: Path) -> None:
    """The operator review's case: the server restarted on an older backup; the pages came
    back but kept the newer position, ignoring every state whose event was not newer than the
    last they saw. Alice's page resumes with its token, Bob's (whose token is newer than the
    backup's) takes his seat back with its secret; both show the backup's position and play on.
    While the server is down, each try is answered 503 by the proxy: the pages keep trying."""
    db, backup = tmp_path / "q.db", tmp_path / "backup.db"
    server = await ServerProcess(db).start()
    proxy = await Proxy(server.port).start()
    try:
        (alice, bob), _ = await game_between(browser, proxy)
        await play([alice, bob], ["c2"])
        with (
            contextlib.closing(sqlite3.connect(db)) as live,
            contextlib.closing(sqlite3.connect(backup)) as copy,
        ):
            live.backup(copy)  # the operator's backup: Bob to move
        await bob.context.set_offline(True)  # Bob resumes: his token is newer than the backup's
        await bob.page.wait_for_function("() => document.body.dataset.link === 'offline'")
        await bob.context.set_offline(False)
        await wait_online(bob)
        await play([alice, bob], ["c4", "c3"], start=1)
        assert "Your move" in await bob.banner()

        await server.stop()
        await alice.page.wait_for_function("() => document.body.dataset.link === 'offline'")
        await bob.page.wait_for_function("() => document.body.dataset.link === 'offline'")
        tries = proxy.unavailable
        await alice.page.wait_for_timeout(1500)
        assert proxy.unavailable >= tries + 2  # answered 503, and tried again
        restore(backup, db)
        server = await ServerProcess(db, "--port", str(proxy.upstream)).start()

        for player in (alice, bob):
            await wait_online(player)
            await player.wait_ply(1)
        assert "Your move" in await bob.banner()
        await play([alice, bob], ["b5", "c3"], start=1)
        assert await alice.page.evaluate("document.body.dataset.ply") == "3"
        for player in (alice, bob):
            player.errors[:] = [
                error for error in player.errors if not any(mark in error for mark in DOWN)
            ]
        await close_all(alice, bob)
    finally:
        await proxy.close()
        await server.stop()
