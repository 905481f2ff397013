"""SIGKILL under load: is every move the server acknowledged in the database afterwards?

Run from the repository root::

    python bench/durability.py                   # 3 rounds, 40 games, killed after 5 s
    python bench/durability.py --rounds 5 --games 60 --seconds 8

Each round starts ``python -m server`` on a fresh SQLite file, plays ``--games`` games
flat out (pawns stepping back and forth, from loopback addresses of their own so the
per-IP caps hold), SIGKILLs the server after ``--seconds``, then reads the saved rooms
(each record with the moves saved since, ``room_moves``). A move is acknowledged once its
state reached the mover; each room's acknowledged plies must all be in its saved record.
Prints acknowledged against present, per round and in all; exits 1 if anything
acknowledged is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.database import saved_rooms  # noqa: E402

SHUFFLE = ["e2", "e8", "e1", "e9"]


async def _client(port: int, source: str, name: str) -> ClientConnection:
    ws = await connect(f"ws://127.0.0.1:{port}/", local_addr=(source, 0), ping_interval=None)
    await ws.send(json.dumps({"type": "hello", "version": "1.0", "name": name}))
    await ws.recv()
    return ws


async def _message(ws: ClientConnection, kind: str) -> dict[str, object]:
    while True:
        message: dict[str, object] = json.loads(await ws.recv())
        if message["type"] == kind:
            return message


async def _game(port: int, n: int, acknowledged: dict[str, int]) -> None:
    source = f"127.0.2.{1 + n // 10}"
    a, b = await _client(port, source, f"a{n}"), await _client(port, source, f"b{n}")
    await a.send(json.dumps({"type": "create"}))
    room = str((await _message(a, "joined"))["room"])
    await b.send(json.dumps({"type": "join", "room": room}))
    await _message(b, "joined")
    players, ply = (a, b), 0
    try:
        while True:
            mover = players[ply % 2]
            await mover.send(json.dumps({"type": "move", "move": SHUFFLE[ply % 4], "ply": ply}))
            while (await _message(mover, "state")).get("ply") != ply + 1:
                pass
            ply += 1
            acknowledged[room] = ply
    except (ConnectionClosed, OSError):
        pass


async def _play(
    port: int, games: int, seconds: float, server: subprocess.Popen[bytes]
) -> dict[str, int]:
    acknowledged: dict[str, int] = {}
    tasks = [asyncio.create_task(_game(port, n, acknowledged)) for n in range(games)]
    await asyncio.sleep(seconds)
    server.send_signal(signal.SIGKILL)
    await asyncio.gather(*tasks, return_exceptions=True)
    return acknowledged


def _present(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as connection:
        rooms = saved_rooms(connection)  # each record with the moves saved since
    return {code: len(room.actions) for code, room in rooms.items()}


def one_round(games: int, seconds: float) -> tuple[int, int, int]:
    """(moves acknowledged, of them present, rooms short of their acknowledged moves)."""
    folder = Path(tempfile.mkdtemp(prefix="durability-"))
    db = folder / "games.db"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    argv = [sys.executable, "-m", "server", "--port", str(port), "--db", str(db),
            "--log-level", "WARNING"]  # fmt: skip
    server = subprocess.Popen(argv, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    acknowledged = asyncio.run(_play(port, games, seconds, server))
    server.wait()
    present = _present(db)
    kept = sum(min(count, present.get(room, 0)) for room, count in acknowledged.items())
    short = sum(1 for room, count in acknowledged.items() if present.get(room, 0) < count)
    return sum(acknowledged.values()), kept, short


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    total_acknowledged = total_present = 0
    for number in range(1, args.rounds + 1):
        acknowledged, present, short = one_round(args.games, args.seconds)
        total_acknowledged += acknowledged
        total_present += present
        print(f"round {number}: SIGKILL after {args.seconds:g} s, {args.games} games: "
              f"{acknowledged} acknowledged, {present} present, {short} rooms short")  # fmt: skip
    lost = total_acknowledged - total_present
    print(f"in all: {total_acknowledged} acknowledged, {total_present} present, {lost} lost")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
