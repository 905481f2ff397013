"""One bad saved row stops nothing: the room is set aside (kept), named once, counted.

Games are played over real sockets into a real SQLite file; one room's row is
then damaged in one of many ways, and the server must start with the others.
"""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.messages import Create, Join, Joined, MoveRequest, Resign, TimeControl
from server.app import GameServer
from server.config import Config
from tests.http import get as http_get
from tests.wsclient import Client

Damage = Callable[[bytes], bytes]


def edited(change: Callable[[dict[str, Any]], None]) -> Damage:
    def damage(record: bytes) -> bytes:
        value = msgspec.json.decode(record)
        change(value)
        return msgspec.json.encode(value)

    return damage


def set_key(key: str, value: object) -> Damage:
    return edited(lambda record: record.__setitem__(key, value))


DAMAGES: dict[str, Damage] = {
    "not json": lambda record: b"\x00garbage",
    "truncated": lambda record: record[: len(record) // 2],
    "not utf-8": lambda record: b'{"code": "\xff\xfe"}',
    "wrong type": set_key("variant", {"players": "two", "size": 9}),
    "illegal move": set_key("actions", ["e2", "z9"]),
    "seat missing": edited(lambda record: record["seats"].pop()),
    "movers": set_key("movers", []),
    "secret not hex": edited(lambda record: record["seats"][0].__setitem__("digest", "zz")),
    "clock banks": edited(lambda record: record["clock"].__setitem__("remaining", [1.0])),
    "clock seat": edited(lambda record: record["clock"].__setitem__("running", 7)),
    "another room's code": set_key("code", "elsewhere"),
    # A room still waiting for players is taken back too, when it makes sense.
    "waiting, moves played": set_key("started", False),
    "waiting, nobody seated": edited(
        lambda record: record.update(started=False, actions=[], movers=[], seats=[None, None])
    ),
}


async def play_three_rooms(db: Path) -> list[str]:
    """Three timed games, two moves into each; their room codes."""
    codes = []
    async with GameServer(Config(port=0, db=str(db))).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        for _ in range(3):
            a, b = await Client.connect(url, "ann"), await Client.connect(url, "bob")
            await a.send(Create(clock=TimeControl(base=300)))
            code = (await a.expect(Joined)).room
            await b.send(Join(room=code))
            await b.expect(Joined)
            await a.send(MoveRequest(move="e2", ply=0))
            await b.send(MoveRequest(move="e8", ply=1))
            while (await a.state()).ply < 2:
                pass
            await a.close()
            await b.close()
            codes.append(code)
    return codes


def rooms_table(db: Path) -> dict[str, tuple[str, bytes]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT code, status, record FROM rooms")
        return {code: (status, record) for code, status, record in rows}


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
async def test_a_damaged_room_row_is_quarantined_and_the_others_start(
    tmp_path: Path, damage: Damage, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "games.db"
    bad, *good = await play_three_rooms(db)
    _, record = rooms_table(db)[bad]
    damaged = damage(record)
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE rooms SET record = ? WHERE code = ?", (damaged, bad))
    caplog.clear()
    caplog.set_level(logging.WARNING)
    async with GameServer(Config(port=0, db=str(db))).running() as server:
        assert sorted(server.core.rooms) == sorted(good)
        lines = [r for r in caplog.records if bad in r.getMessage()]
        assert len(lines) == 1
        assert "quarantined" in lines[0].getMessage()
        assert not [r for r in caplog.records if r.exc_info]
        _, metrics = await http_get(server.port, "/metrics")
        assert 'quoridor_unreadable_rows_total{table="rooms"} 1.0' in metrics
    assert rooms_table(db)[bad] == ("quarantined", damaged)  # kept as it was
    caplog.clear()
    async with GameServer(Config(port=0, db=str(db))).running() as server:
        assert sorted(server.core.rooms) == sorted(good)
        assert not [r for r in caplog.records if bad in r.getMessage()]  # set aside for good


def test_a_file_that_is_no_database_gets_one_sentence(tmp_path: Path) -> None:
    db = tmp_path / "junk.db"
    db.write_bytes(b"this is not an SQLite database, only some words\n" * 100)
    done = subprocess.run(
        [sys.executable, "-m", "server", "--port", "0", "--db", str(db)],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert "cannot use the database" in lines[0]
    assert "Traceback" not in lines[0]
    # Nothing of the server's is left beside the file it refused (its lock file was).
    assert sorted(path.name for path in tmp_path.iterdir()) == ["junk.db"]


async def finish_a_game(port: int) -> None:
    """One untimed game, a move each, ended by a resignation (a row in ``games``)."""
    url = f"ws://127.0.0.1:{port}"
    a, b = await Client.connect(url, "ann"), await Client.connect(url, "bob")
    await a.send(Create())
    await b.send(Join(room=(await a.expect(Joined)).room))
    await b.expect(Joined)
    await a.send(MoveRequest(move="e2", ply=0))
    await b.send(MoveRequest(move="e8", ply=1))
    await a.send(Resign())
    while (await b.state()).status != "finished":
        pass
    await a.close()
    await b.close()


def rows_of(db: Path, table: str) -> dict[str, tuple[int, bytes]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute(f"SELECT id, quarantined, record FROM {table}")
        return {str(key): (quarantined, record) for key, quarantined, record in rows}


@pytest.mark.parametrize("table", ["sessions", "games"])
async def test_a_damaged_session_or_game_row_is_quarantined_too(
    tmp_path: Path, table: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Set aside like a room: kept as it was, named in one line, counted, never read again;
    and a game's id is never given to another game (that insert would stop the server)."""
    db = tmp_path / "games.db"
    await play_three_rooms(db)
    async with GameServer(Config(port=0, db=str(db))).running() as server:
        await finish_a_game(server.port)
    bad = max(rows_of(db, table), key=lambda key: int(key) if table == "games" else key)
    damaged = b"\x00garbage"
    with sqlite3.connect(db) as connection:
        connection.execute(f"UPDATE {table} SET record = ? WHERE id = ?", (damaged, bad))
    caplog.clear()
    caplog.set_level(logging.WARNING)
    async with GameServer(Config(port=0, db=str(db))).running() as server:
        lines = [r for r in caplog.records if f"{table} row {bad} " in r.getMessage()]
        assert len(lines) == 1
        assert "quarantined" in lines[0].getMessage()
        assert not [r for r in caplog.records if r.exc_info]
        _, metrics = await http_get(server.port, "/metrics")
        assert f'quoridor_unreadable_rows_total{{table="{table}"}} 1.0' in metrics
        await finish_a_game(server.port)  # a new game: saved under a new id
    assert rows_of(db, table)[bad] == (1, damaged)  # kept as it was, set aside
    if table == "games":
        assert sorted(int(key) for key in rows_of(db, "games")) == [int(bad), int(bad) + 1]
    caplog.clear()
    async with GameServer(Config(port=0, db=str(db))).running() as server:
        assert not [r for r in caplog.records if f"{table} row {bad} " in r.getMessage()]
