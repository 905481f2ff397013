"""Clients across restarts of a real server process with its SQLite database: behind a
reverse proxy that answers 503 while the server is down, and after the database was put back
to an older backup (event numbers going back)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sqlite3
from functools import partial
from pathlib import Path

import pytest

from client.connection import ConnectError, Connection
from client.controller import Controller, went_back_in_game
from protocol.messages import Create, Join, State
from tests.client.recorder import start, until
from tests.client.states import make_state
from tests.process import ServerProcess

WITHIN = 20.0
"""Seconds for a restart and the reconnections after it (a loaded machine is slow)."""

UNAVAILABLE = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\nContent-Length: 19\r\n"
    b"Connection: close\r\n\r\n<h1>503 down</h1>\r\n"
)


class Proxy:
    """What nginx or Caddy does in front of the server: every connection forwarded to the
    server's port, or answered ``503 Service Unavailable`` while nothing listens there."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        """The server's port."""
        self.unavailable = 0
        """Connections answered 503."""
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def start(self) -> Proxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            try:
                upstream = await asyncio.open_connection("127.0.0.1", self.upstream)
            except OSError:
                with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                    await reader.readuntil(b"\r\n\r\n")
                    self.unavailable += 1
                    writer.write(UNAVAILABLE)
                    await writer.drain()
                writer.close()
                return
            self._writers.add(upstream[1])
            await asyncio.gather(_pipe(reader, upstream[1]), _pipe(upstream[0], writer))
        finally:
            self._writers.discard(writer)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until either side is done, then close the writing side."""
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


async def test_reconnecting_through_a_proxy_that_answers_503_while_the_server_restarts(
    tmp_path: Path,
) -> None:
    """The operator review's case: the server behind nginx restarts (1012), nginx answers 503
    until it is back; the client used to stop at the first 503 ("is it a Quoridor server?")."""
    db = tmp_path / "q.db"
    server = await ServerProcess(db).start()
    proxy = await Proxy(server.port).start()
    try:
        alice, alice_view, alice_task = await start(proxy.url, "Alice", Create())
        room = (await alice_view.wait_for("quoridor join ")).rsplit(" ", 1)[1]
        bob, bob_view, bob_task = await start(proxy.url, "Bob", Join(room=room))
        alice.type("e2")
        await bob_view.wait_for("Alice moved to e2.")

        await server.stop()  # SIGTERM: every connection closed with 1012
        await alice_view.wait_for("Connection lost: the server is restarting.")
        # The proxy stands alone: each try is answered 503, and the clients keep trying.
        await until(lambda: proxy.unavailable >= 6 or None, WITHIN)
        assert "answered HTTP 503: the server is not back yet" in alice.link_note
        assert alice.link == bob.link == "reconnecting"
        # A first connection answered 503 is still told plainly, and not tried again.
        with pytest.raises(ConnectError) as refused:
            await Connection(proxy.url, "Carol", lambda event: None).open()
        assert refused.value.message == (
            f"{proxy.url[5:]} answered HTTP 503 instead of a websocket: is it a Quoridor server?"
        )
        assert not refused.value.retry

        server = await ServerProcess(db, "--port", str(proxy.upstream)).start()
        await alice_view.wait_for(f"Reconnected: back in room {room}.", WITHIN)
        await bob_view.wait_for(f"Reconnected: back in room {room}.", WITHIN)
        bob.type("e8")
        await alice_view.wait_for("Bob moved to e8.")
        alice.type("e3")
        await bob_view.wait_for("Alice moved to e3.")
        assert not alice_view.texts("error")
        assert not bob_view.texts("error")
        # Every player was away for a moment, until their client resumed: not worth a line
        # ("Bob is away; ... claim the game in 59 s", then "Bob is back": an operator's review).
        for view in (alice_view, bob_view):
            told = " ".join(view.texts("event"))
            assert "is away" not in told
            assert "is back" not in told
        alice.type("quit")
        bob.type("quit")
        assert await asyncio.wait_for(alice_task, 5) == 0
        assert await asyncio.wait_for(bob_task, 5) == 0
    finally:
        await proxy.close()
        await server.stop()


def restored(player: Controller) -> State | None:
    """The state ``player`` shows once it is the backup's (ply 1), else None."""
    return player.state if player.state is not None and player.state.ply == 1 else None


def restore(backup: Path, db: Path) -> None:
    """Put the backup in the database's place, as an operator does with the server stopped."""
    for path in db.parent.glob(db.name + "*"):  # its -wal and -shm files too
        path.unlink()
    shutil.copyfile(backup, db)


async def test_a_database_put_back_to_an_older_backup_is_played_on_from_there(
    tmp_path: Path,
) -> None:
    """The operator review's case: the server restarted on an older backup; the clients came
    back to their seats but kept showing the newer position, as the room's event numbers had
    gone back and they ignored every state not newer than the last they saw. Bob (resumed
    with his token) and Alice (whose token is newer than the backup's: she takes her seat
    back with its secret) must both show the restored position and play on."""
    db, backup = tmp_path / "q.db", tmp_path / "backup.db"
    server = await ServerProcess(db).start()
    try:
        alice, alice_view, alice_task = await start(server.url, "Alice", Create())
        room = (await alice_view.wait_for("quoridor join ")).rsplit(" ", 1)[1]
        bob, bob_view, bob_task = await start(server.url, "Bob", Join(room=room))
        alice.type("e2")
        await bob_view.wait_for("Alice moved to e2.")
        # The operator's backup, taken while the server runs: Bob to move.
        with (
            contextlib.closing(sqlite3.connect(db)) as live,
            contextlib.closing(sqlite3.connect(backup)) as copy,
        ):
            live.backup(copy)
        assert alice.connection.ws is not None
        alice.connection.ws.transport.abort()  # Alice resumes: her token is newer than the backup's
        await alice_view.wait_for(f"Reconnected: back in room {room}.", WITHIN)
        bob.type("e8")
        await alice_view.wait_for("Bob moved to e8.")
        for line in ("one", "two", "three"):  # events too: the restored room is further behind
            alice.type(f"chat {line}")
        await bob_view.wait_for("Alice: three")
        assert bob.state is not None
        assert (bob.state.ply, bob.state.turn) == (2, 0)

        await server.stop()
        restore(backup, db)
        server = await ServerProcess(db, "--port", str(server.port)).start()

        await alice_view.wait_for(f"Back in room {room}.", WITHIN)  # with the seat secret
        await bob_view.wait_for(f"Reconnected: back in room {room}.", WITHIN)  # resumed
        for player in (alice, bob):
            state = await until(partial(restored, player))
            assert (state.turn, state.pawns) == (1, ["e2", "e9"])
        assert bob_view.has("The server is back at an earlier point of the game")
        assert not bob_view.has("taken back.")  # nobody took a move back
        bob.type("d9")
        await alice_view.wait_for("Bob moved to d9.")
        alice.type("e3")
        await bob_view.wait_for("Alice moved to e3.")
        assert alice.state is not None
        assert alice.state.pawns == ["e3", "d9"]
        assert not alice_view.texts("error")
        assert not bob_view.texts("error")
        alice.type("quit")
        bob.type("quit")
        assert await asyncio.wait_for(alice_task, 5) == 0
        assert await asyncio.wait_for(bob_task, 5) == 0
    finally:
        await server.stop()


def test_a_game_gone_back_is_seen_by_its_moves_whatever_the_event_numbers() -> None:
    """An operator's review: after a restore, the room's events, numbered again from
    the backup's, had caught up with Bob's last one, and only Alice was told."""
    held = make_state(ply=3, event=9, moves=["e2", "e8", "e3"])
    for later in (
        make_state(ply=2, event=9, moves=["e2", "e8"]),  # the same number, an earlier point
        make_state(ply=3, event=12, moves=["e2", "e8", "d2"]),  # another line from the backup
        make_state(ply=1, event=3, game=1, moves=["e2"]),
    ):
        assert went_back_in_game(held, later)
    for later in (
        make_state(ply=3, event=9, moves=["e2", "e8", "e3"]),  # the same point
        make_state(ply=4, event=10, moves=["e2", "e8", "e3", "e7"]),  # further on
        make_state(ply=0, event=20, game=2, moves=[]),  # the rematch, not a step back
        make_state(ply=1, event=2, room="other", moves=["e2"]),  # another room
    ):
        assert not went_back_in_game(held, later)
    assert not went_back_in_game(None, held)
