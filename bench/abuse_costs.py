"""What one address, within every documented limit, makes the server and its database spend.

    python bench/abuse_costs.py                       # every attack, 10 s each
    python bench/abuse_costs.py --attack fetch_memory --seconds 20
    python bench/abuse_costs.py --server-root /tmp/before

A template SQLite file is made first (once per run): a server plays one game of 1000 plies
(a draw by the move limit: the longest record there is) and registers an account,
then stops. For each attack a fresh server starts as
``python -m server`` on a copy of that file, ``--games`` games between innocent players
(addresses 127.0.1.x) move every half second, and one address (127.0.0.2) opens as many
connections as it may hold (20), each sending one kind of request as fast as its rate limit
allows (20 a second), one at a time (it waits for the answer before the next). Printed for
each: the requests answered a second and how, the CPU of the server's process, of its
database process and of its computer workers (shares of one core), and the innocent moves'
round trip p50/p99 (sent, to the state carrying the move back). On a shared machine compare
runs made back to back.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from bench._load_abuse import percentile  # noqa: E402

SHUFFLE = ["e2", "e8", "e1", "e9"]
CONNECTIONS = 20
RATE = 19.0
"""A little under the connection's 20 a second, so that none is refused for its rate."""
ATTACKER = "127.0.0.2"
PASSWORD = "correct horse battery"


# -- the server ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(root: Path, db: Path, extra: Sequence[str] = ()) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(root))
    argv = [sys.executable, "-m", "server", "--port", str(port), "--db", str(db),
            "--log-level", "ERROR", *extra]  # fmt: skip
    server = subprocess.Popen(argv, cwd=root, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, port
        time.sleep(0.2)
    server.kill()
    raise RuntimeError("the server did not start")


def stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(child) for child in found] + [p for c in found for p in children(int(c))]


def cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_split(pid: int) -> dict[str, float]:
    """CPU seconds of the server, its database process and its other children (workers)."""
    split = {"server": cpu(pid), "database": 0.0, "workers": 0.0}
    for child in children(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        split["database" if b"server.database" in command else "workers"] += cpu(child)
    return split


# -- clients ------------------------------------------------------------------------------


async def client(port: int, source: str, name: str, **hello: Any) -> ClientConnection:
    ws = await connect(f"ws://127.0.0.1:{port}/", local_addr=(source, 0), max_size=None,
                       compression=None, ping_interval=None, open_timeout=10)  # fmt: skip
    await ws.send(json.dumps({"type": "hello", "version": "1.0", "name": name, **hello}))
    await until(ws, lambda m: m["type"] in ("welcome", "error"))
    return ws


async def until(ws: ClientConnection, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    while True:
        message: dict[str, Any] = json.loads(await ws.recv())
        if test(message):
            return message


def after(ply: int) -> Callable[[dict[str, Any]], bool]:
    """Whether a message is the state after ``ply``."""
    return lambda m: m["type"] == "state" and m["ply"] == ply + 1


def answering(request: int) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m.get("id") == request


async def pair(port: int, source: str, n: int) -> tuple[ClientConnection, ClientConnection]:
    a = await client(port, source, f"a{n}")
    b = await client(port, source, f"b{n}")
    await a.send(json.dumps({"type": "create"}))
    room = (await until(a, lambda m: m["type"] == "joined"))["room"]
    await b.send(json.dumps({"type": "join", "room": room}))
    await until(b, lambda m: m["type"] == "state" and m["status"] == "playing")
    return a, b


async def play(a: ClientConnection, b: ClientConnection, plies: int, pause: float = 0.0) -> None:
    players = (a, b)
    for ply in range(plies):
        mover = players[ply % 2]
        await mover.send(json.dumps({"type": "move", "move": SHUFFLE[ply % 4], "ply": ply}))
        await until(mover, after(ply))
        if pause:
            await asyncio.sleep(pause)


# -- the template database ------------------------------------------------------------------


def make_template(root: Path, folder: Path) -> Path:
    db = folder / "template.db"
    server, port = start(root, db)

    async def seed() -> None:
        a, b = await pair(port, "127.0.3.1", 0)
        await play(a, b, 1000, 0.045)  # within the rate limit
        for ws in (a, b):
            await ws.close()
        ws = await client(port, "127.0.3.9", "owner")
        await ws.send(json.dumps({"type": "register", "name": "victim", "password": PASSWORD}))
        print("  register:", (await until(ws, lambda m: m.get("type") != "state"))["type"])
        await ws.close()

    asyncio.run(seed())
    stop(server)
    return db


# -- the innocent games ---------------------------------------------------------------------


def innocents(port: int, games: int, start_at: float, end: float, out: Path) -> None:
    async def one(n: int, rtts: list[float]) -> None:
        a, b = await pair(port, f"127.0.1.{1 + n // 5}", n)  # 5 waiting rooms an address
        players, ply = (a, b), 0
        await asyncio.sleep(max(0.0, start_at - time.monotonic()) + (n % 10) / 20)
        while time.monotonic() < end:
            mover = players[ply % 2]
            sent = time.monotonic()
            await mover.send(json.dumps({"type": "move", "move": SHUFFLE[ply % 4], "ply": ply}))
            await until(mover, after(ply))
            rtts.append(time.monotonic() - sent)
            ply += 1
            if ply >= 990:  # the move limit: a new game
                return
            await asyncio.sleep(max(0.0, sent + 0.5 - time.monotonic()))

    async def run() -> list[float]:
        rtts: list[float] = []
        tasks = [asyncio.create_task(one(n, rtts)) for n in range(games)]
        _done, late = await asyncio.wait(tasks, timeout=max(0.0, end - time.monotonic()) + 10)
        rtts.extend(10.0 for _ in late)
        for task in late:
            task.cancel()
        return rtts

    out.write_text(json.dumps(asyncio.run(run())))


# -- the attacks ----------------------------------------------------------------------------

Request = Callable[[int, int], dict[str, Any]]
"""The n-th request of connection c."""


async def long_game_id(ws: ClientConnection) -> int:
    await ws.send(json.dumps({"type": "history", "limit": 100, "id": "h"}))
    listing = await until(ws, lambda m: m.get("id") == "h")
    return int(max(listing["games"], key=lambda g: g["plies"])["game"])


async def attack(port: int, kind: str, start_at: float, end: float) -> Counter[str]:
    tally: Counter[str] = Counter()
    conns = [await client(port, ATTACKER, f"x{c}") for c in range(CONNECTIONS)]
    game = await long_game_id(conns[0])
    rooms: list[str] = []
    request: Request
    if kind == "ping":
        request = lambda c, n: {"type": "ping"}  # noqa: E731
    elif kind == "fetch_memory":
        request = lambda c, n: {"type": "fetch_game", "game": game}  # noqa: E731
    elif kind == "history":
        request = lambda c, n: {"type": "history", "limit": 100}  # noqa: E731
    elif kind == "list_rooms":
        request = lambda c, n: {"type": "list_rooms"}  # noqa: E731
    elif kind == "leaderboard":
        request = lambda c, n: {"type": "leaderboard", "limit": 100}  # noqa: E731
    elif kind == "profile":
        request = lambda c, n: {"type": "profile", "name": "a0"}  # noqa: E731
    elif kind == "login":
        request = lambda c, n: {"type": "login", "name": "victim", "password": f"w{n}"}  # noqa: E731
    elif kind == "register":
        request = lambda c, n: {"type": "register", "name": f"z{c}x{n}", "password": PASSWORD}  # noqa: E731
    elif kind == "analyse":
        request = lambda c, n: {"type": "analyse", "game": game}  # noqa: E731
    elif kind == "replay":
        moves = (SHUFFLE * 150)[:600]
        request = lambda c, n: {"type": "replay", "moves": moves}  # noqa: E731
    elif kind in ("watch", "spectate"):
        listing_ws = conns[0]
        await listing_ws.send(json.dumps({"type": "list_rooms", "id": "l"}))
        listed = await until(listing_ws, lambda m: m.get("id") == "l")
        rooms = [r["room"] for r in listed["rooms"]]
        # watch one room, leave, watch the next: every watch sends the room's whole state.
        request = lambda c, n: (  # noqa: E731
            {"type": "watch", "room": rooms[(c + n // 2) % len(rooms)]}
            if n % 2 == 0
            else {"type": "leave"}
        )
    elif kind in ("draw_churn", "chat", "rematch_churn"):
        # 10 games of its own, two connections each: offers and declines, or chat lines.
        games = []
        for g in range(CONNECTIONS // 2):
            a, b = conns[2 * g], conns[2 * g + 1]
            await a.send(json.dumps({"type": "create"}))
            room = (await until(a, lambda m: m["type"] == "joined"))["room"]
            await b.send(json.dumps({"type": "join", "room": room}))
            await until(b, lambda m: m["type"] == "state" and m["status"] == "playing")
            games.append(room)
        if kind == "rematch_churn":
            for g in range(CONNECTIONS // 2):
                await conns[2 * g].send(json.dumps({"type": "resign", "id": "r"}))
                await until(conns[2 * g], lambda m: m.get("status") == "finished")

        def request(c: int, n: int) -> dict[str, Any]:
            if kind == "chat":
                return {"type": "chat", "text": f"line {n} " + "x" * 250}
            action = "offer" if (c % 2 == 0) else "decline"
            if kind == "rematch_churn":
                return {"type": "rematch", "action": action}
            return {"type": "draw", "action": action}
    else:
        raise SystemExit(f"unknown attack {kind}")

    async def pump(c: int, ws: ClientConnection) -> None:
        n = 0
        await asyncio.sleep(max(0.0, start_at - 1.0 - time.monotonic()) + c / CONNECTIONS / RATE)
        while time.monotonic() < end:
            sent = time.monotonic()
            message = {**request(c, n), "id": n}
            try:
                await ws.send(json.dumps(message))
                reply = await asyncio.wait_for(until(ws, answering(n)), 15)
            except Exception as error:
                tally[f"failed {type(error).__name__}"] += 1
                return
            what = reply["type"] if reply["type"] != "error" else f"error {reply['code']}"
            if sent >= start_at:
                tally[what] += 1
            n += 1
            await asyncio.sleep(max(0.0, sent + 1 / RATE - time.monotonic()))

    await asyncio.gather(*(pump(c, ws) for c, ws in enumerate(conns)))
    for ws in conns:
        await ws.close()
    return tally


def attacker(port: int, kind: str, start_at: float, end: float, out: Path) -> None:
    out.write_text(json.dumps(asyncio.run(attack(port, kind, start_at, end))))


# -- the run ----------------------------------------------------------------------------------


def measure(root: Path, template: Path, kind: str, games: int, seconds: float) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="abuse-costs-"))
    db = folder / "q.db"
    shutil.copy(template, db)
    server, port = start(root, db)
    try:
        start_at = time.monotonic() + 6.0
        end = start_at + seconds
        spawn = multiprocessing.get_context("spawn")
        players = spawn.Process(target=innocents, args=(port, games, start_at, end, folder / "r"))
        players.start()
        flood = None
        if kind != "none":
            flood = spawn.Process(target=attacker, args=(port, kind, start_at, end, folder / "t"))
            flood.start()
        time.sleep(max(0.0, start_at - time.monotonic()))
        before = cpu_split(server.pid)
        time.sleep(max(0.0, end - time.monotonic()))
        after = cpu_split(server.pid)
        players.join(60)
        if flood is not None:
            flood.join(60)
        rtts = [r * 1000 for r in json.loads((folder / "r").read_text())]
        tally = json.loads((folder / "t").read_text()) if flood is not None else {}
    finally:
        stop(server)
        shutil.rmtree(folder, ignore_errors=True)
    shares = {key: (after[key] - before[key]) / seconds for key in after}
    return {"kind": kind, "tally": tally, "shares": shares, "rtts": rtts, "seconds": seconds}


def report(row: dict[str, Any]) -> None:
    tally, shares, rtts, seconds = row["tally"], row["shares"], row["rtts"], row["seconds"]
    answered = ", ".join(f"{k} {v / seconds:.0f}/s" for k, v in sorted(tally.items()))
    print(f"| {row['kind']:<13} | {answered or '-'} | {shares['server']:.2f} | "
          f"{shares['database']:.2f} | {shares['workers']:.2f} | "
          f"{percentile(rtts, 0.5):.1f} / {percentile(rtts, 0.99):.1f} ms | "
          f"load {os.getloadavg()[0]:.1f} |", flush=True)  # fmt: skip


ATTACKS = ("none", "ping", "fetch_memory", "history", "list_rooms", "leaderboard", "profile",
           "login", "register", "analyse", "replay", "watch", "draw_churn", "rematch_churn",
           "chat")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--server-root", type=Path, default=_HERE.parent)
    parser.add_argument("--attack", action="append", choices=ATTACKS)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--template", type=Path, help="a template database made earlier")
    args = parser.parse_args(argv)
    template = args.template
    if template is None:
        folder = Path(tempfile.mkdtemp(prefix="abuse-template-"))
        print(f"making the template database in {folder} (about 30 s)", flush=True)
        template = make_template(args.server_root, folder)
    print("| request | answered (within limits) | server | database | workers | "
          "innocent move p50 / p99 | |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for kind in args.attack or ATTACKS:
        report(measure(args.server_root, template, kind, args.games, args.seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
