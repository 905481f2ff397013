"""Start-up refusals (another server on the port or the file, a database it cannot use): one
sentence on stderr, exit status 1, nothing touched."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.process import ServerProcess
from tests.wsclient import Client


async def start_second(*args: str) -> tuple[int, list[str]]:
    """``python -m server ARGS``, which must stop by itself: its exit status and stderr lines."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", *args, stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    ServerProcess.started.append(process)  # killed after the test if it does not stop
    _, err = await asyncio.wait_for(process.communicate(), 20)
    assert process.returncode is not None
    return process.returncode, err.decode().splitlines()


async def test_a_second_server_on_a_port_in_use_says_so_and_never_opens_its_database(
    tmp_path: Path,
) -> None:
    first = await ServerProcess(tmp_path / "first.db").start()
    try:
        second_db = tmp_path / "second.db"
        status, lines = await start_second("--port", str(first.port), "--db", str(second_db))
        assert status == 1
        assert lines == [
            f"quoridor-server: cannot listen on 127.0.0.1:{first.port}: the port is already "
            "in use (another server is running there; stop it or choose another port: --port, "
            "or QUORIDOR_PORT in the environment)"
        ]
        assert list(tmp_path.glob("second.db*")) == []  # noqa: ASYNC240 - not even created
        client = await Client.connect(first.url, "Alice")  # the first one serves on
        await client.close()
    finally:
        assert await first.stop() == 0


@pytest.mark.parametrize("through_a_link", [False, True])
async def test_two_servers_on_one_database_file_are_refused(
    tmp_path: Path, through_a_link: bool
) -> None:
    db, link = tmp_path / "games.db", tmp_path / "link.db"
    link.symlink_to(db)  # a symbolic link to the file is the same database
    second = link if through_a_link else db
    first = await ServerProcess(db).start()
    try:
        assert first.process is not None
        status, lines = await start_second("--port", "0", "--db", str(second))
        assert status == 1
        assert lines == [
            f"quoridor-server: the database {second} is in use by another server (process "
            f"{first.process.pid}); stop it first, or give this one another --db"
        ]
        client = await Client.connect(first.url, "Alice")
        await client.close()
        lock = tmp_path / "games.db.lock"
        assert lock.read_text() == f"{first.process.pid}\n"
    finally:
        assert await first.stop() == 0
    # A clean stop leaves no process id in it (for a script's kill to hit another's)...
    assert lock.read_text() == ""
    # ...and once the first is gone, the file is free again.
    again = await ServerProcess(db).start()
    assert await again.stop() == 0


async def test_a_database_of_a_newer_server_is_not_called_damaged(tmp_path: Path) -> None:
    db = tmp_path / "newer.db"
    with contextlib.closing(sqlite3.connect(db)) as connection:
        connection.execute("PRAGMA user_version = 99")
    status, lines = await start_second("--port", "0", "--db", str(db))
    assert status == 1
    (line,) = lines
    assert f"the database {db} (database schema version 99 is newer than this server's" in line
    assert "a newer version of the server wrote it" in line
    assert "damaged" not in line


async def test_a_postgresql_that_does_not_answer_is_one_line_not_called_damaged() -> None:
    status, lines = await start_second("--port", "0", "--db", "postgresql://q@127.0.0.1:1/q")
    assert status == 1
    (line,) = lines  # psycopg's message has two lines of its own
    assert "cannot use the database postgresql://q@127.0.0.1:1/q (PostgreSQL:" in line
    assert "check that PostgreSQL runs and the URL is right" in line
    assert "damaged" not in line


async def test_a_database_in_a_folder_that_does_not_exist_is_one_sentence(
    tmp_path: Path,
) -> None:
    db = tmp_path / "nowhere" / "games.db"
    status, lines = await start_second("--port", "0", "--db", str(db))
    assert (status, lines) == (
        1,
        [
            f"quoridor-server: cannot create the database {db}: the folder "
            f"{tmp_path / 'nowhere'} does not exist"
        ],
    )


async def test_two_stand_alone_servers_on_one_postgresql_database_are_refused(
    postgres_url: str,
) -> None:
    first = await ServerProcess(postgres_url).start()
    try:
        status, lines = await start_second("--port", "0", "--db", postgres_url)
        assert status == 1
        assert lines[-1].startswith("quoridor-server: the database postgresql://")
        assert lines[-1].endswith(
            "is in use by another server or a cluster; stop it first, or give this one another --db"
        )
    finally:
        assert await first.stop() == 0
    again = await ServerProcess(postgres_url).start()  # free once the first is gone
    assert await again.stop() == 0


async def test_a_server_on_every_address_says_what_to_give_a_friend(tmp_path: Path) -> None:
    """A host started on 0.0.0.0 was told ``ws://0.0.0.0:PORT`` and ``http://localhost``:
    neither is of use on another machine."""
    server = await ServerProcess(tmp_path / "games.db", "--host", "0.0.0.0").start()
    try:
        name, port = socket.gethostname(), server.port
        told = (
            f"play from this machine at http://localhost:{port}/; "
            f"from others: http://{name}:{port}/ or this machine's address, and quoridor "
            f"--server ws://{name}:{port}"
        )
        async with asyncio.timeout(5):  # the line after "listening on", read as it comes
            while told not in server.log.decode():  # noqa: ASYNC110 - a log, no event
                await asyncio.sleep(0.02)
    finally:
        assert await server.stop() == 0


INTERRUPTED_WHILE_LOADING = """
import os, signal, sys, threading, time
def interrupt():  # Ctrl-C while the server's modules load, before it listens
    while "server.app" not in sys.modules:
        time.sleep(0.0005)
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=interrupt, daemon=True).start()
from server.__main__ import main
main(["--port", "0", "--db", ""])
"""


async def test_ctrl_c_while_starting_is_one_line_not_a_stack() -> None:
    """An outside newcomer review pressed Ctrl-C in the server's first 0.2 s: a traceback."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", INTERRUPTED_WHILE_LOADING, stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    ServerProcess.started.append(process)
    _, err = await asyncio.wait_for(process.communicate(), 20)
    assert process.returncode == 130
    assert "Traceback" not in err.decode()
    assert err.decode().endswith("\nquoridor-server: interrupted while starting\n")
