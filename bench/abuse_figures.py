"""Issue 14's attacks, measured against a server started from a given source tree.

    python bench/abuse_figures.py                               # this checkout, every attack
    python bench/abuse_figures.py --server-root /tmp/before     # an older checkout
    python bench/abuse_figures.py --attack computer --seconds 20

For each attack of points 2, 4, 5 and 6 (point 1, the replay flood, is
``bench/load.py --mode abuse``), a fresh server runs as ``python -m server`` from
``--server-root`` (in memory, its default limits); ``--games`` games between other
players move once a second from their own addresses; the attack runs for
``--seconds`` from loopback addresses of its own (127.0.0.x: every one is this
machine). Printed for each: the attack's requests and bytes each way and what it
got, the server's CPU (its process and children) and RSS growth, and the move round
trip p50/p99 of the other games. Compare trees in runs made back to back: each
figure comes with the machine's load average, and a shared machine makes them noisy.

- ``rooms`` (point 2): 50 connections from 5 addresses, each again and again: connect,
  say hello, create a game against the computer, a waiting room, or join a quick-match
  queue with a time control of its own, and disconnect. What is left behind is counted.
- ``computer`` (point 4): one address opens 8 games against the strongest computer with
  5-second searches and moves in each (24 requests); another user plays the computer
  (0.1-second searches) over and over: how long its replies take.
- ``chat`` (point 5): a player reclaims its seat with the seat secret on a fresh
  connection again and again, chatting at once each time, in front of 200 spectators
  (10 addresses): chat lines accepted, bytes the spectators got.
- ``spectators`` (point 5): 100 connections from 5 addresses watch and leave one room as
  fast as their rate limits allow: bytes in, bytes out (the amplification).
- ``slowloris`` (point 6): with the server's open-file limit at 256, one address opens
  300 connections that never finish their HTTP request; meanwhile a new client from
  another address tries to connect every second.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

# Run as a script, this file's folder comes first on sys.path: put the repo root there.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from bench._load_abuse import percentile, play_games, start_server  # noqa: E402

Tally = Counter[str]
ATTACKS = ("rooms", "computer", "chat", "spectators", "slowloris")
POINTS = {"rooms": 2, "computer": 4, "chat": 5, "spectators": 5, "slowloris": 6}


# -- the server and what it costs ----------------------------------------------------------


def stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM, so it stops its computer's workers too; whatever is left is killed."""
    members = family(server.pid)
    server.terminate()
    try:
        server.wait(15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    for member in members[1:]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(member, 9)


def family(pid: int) -> list[int]:
    """The process and its descendants (the database, the computer's workers)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [pid] + [p for child in children for p in family(int(child))]


def cpu_seconds(pid: int) -> float:
    total = 0.0
    for member in family(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_mb(pid: int) -> float:
    found = re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
    return int(found.group(1)) / 1024 if found else float("nan")


def scrape(port: int) -> dict[str, float]:
    """/metrics read to the end of the connection (an old server's headers may be wrong)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\nConnection: close\r\n\r\n")
            body = b"".join(iter(lambda: sock.recv(65536), b""))
    except OSError:
        return {}
    pattern = re.compile(rb"^(quoridor_\w+(?:\{[^}]*\})?) (\S+)$", re.M)
    return {name.decode(): float(value) for name, value in pattern.findall(body)}


# -- clients --------------------------------------------------------------------------------


async def client(port: int, source: str, name: str, tally: Tally) -> ClientConnection:
    ws = await connect(f"ws://127.0.0.1:{port}/", local_addr=(source, 0), max_size=None,
                       compression=None, ping_interval=None, open_timeout=5)  # fmt: skip
    await send(ws, {"type": "hello", "version": "1.0", "name": name}, tally)
    await receive(ws, tally)
    return ws


async def send(ws: ClientConnection, message: dict[str, Any], tally: Tally) -> None:
    text = json.dumps(message)
    tally["requests"] += 1
    tally["bytes sent"] += len(text)
    await ws.send(text)


async def receive(ws: ClientConnection, tally: Tally, key: str = "bytes received") -> Any:
    frame = await ws.recv(decode=False)
    tally[key] += len(frame)
    return json.loads(frame)


async def until(ws: ClientConnection, tally: Tally, test: Callable[[Any], bool]) -> Any:
    while not test(message := await receive(ws, tally)):
        pass
    return message


async def drain(ws: ClientConnection, tally: Tally, key: str) -> None:
    """Read (and count) everything ``ws`` receives until it closes."""
    try:
        while True:
            await receive(ws, tally, key)
    except Exception:
        return


def counts(tally: Tally) -> dict[str, int]:
    """The tally's outcomes (its byte and request counts left out)."""
    return {k: v for k, v in tally.items() if "bytes" not in k and k != "requests"}


def outcome(reply: dict[str, Any]) -> str:
    return f"refused {reply.get('code')}" if reply["type"] == "error" else reply["type"]


async def for_a_while(end: float, work: Callable[[], Awaitable[None]], tally: Tally) -> None:
    """Run ``work`` again and again until ``end``; a failure is counted, not fatal."""
    while time.monotonic() < end:
        try:
            await asyncio.wait_for(work(), max(0.1, end - time.monotonic()))
        except TimeoutError:
            return
        except Exception as error:
            tally[f"failed: {type(error).__name__}"] += 1
            await asyncio.sleep(0.05)


# -- the attacks ----------------------------------------------------------------------------


async def rooms(port: int, end: float, tally: Tally, notes: list[str]) -> None:
    def request(n: int) -> dict[str, Any]:
        if n % 3 == 0:
            return {"type": "create", "ai": {"level": 1}}
        if n % 3 == 1:
            return {"type": "create"}
        return {"type": "quick_match", "clock": {"base": n % 5000 + 1}}  # a queue of its own

    async def leave_something(source: str, n: int) -> None:
        ws = await client(port, source, f"r{n % 1000}", tally)
        await send(ws, request(n), tally)
        tally[outcome(await until(ws, tally, lambda m: m["type"] != "state"))] += 1
        await ws.close()

    def worker(source: str, n: int) -> Awaitable[None]:
        counter = iter(range(n, 10**9, 50))
        return for_a_while(end, lambda: leave_something(source, next(counter)), tally)

    await asyncio.gather(*(worker(f"127.0.0.{2 + a}", a * 10 + c)
                           for a in range(5) for c in range(10)))  # fmt: skip
    metrics = scrape(port)
    held = {k.split('"')[1]: int(v) for k, v in metrics.items() if k.startswith("quoridor_rooms{")}
    notes.append(f"rooms held after the attack: {sum(held.values())} {held}; "
                 f"sessions held {int(metrics.get('quoridor_sessions', -1))}")  # fmt: skip


async def computer(port: int, end: float, tally: Tally, notes: list[str]) -> None:
    async def hog(n: int) -> None:
        ws = await client(port, "127.0.0.2", f"hog{n}", tally)
        await send(ws, {"type": "create", "ai": {"level": 5, "seconds": 5}}, tally)
        tally[outcome(await until(ws, tally, lambda m: m["type"] in ("joined", "error")))] += 1
        await send(ws, {"type": "move", "move": "e2", "ply": 0}, tally)
        await drain(ws, tally, "bytes received")

    hogs = [asyncio.create_task(hog(n)) for n in range(8)]
    await asyncio.sleep(1.0)
    replies: list[float] = []
    victim: Tally = Counter()

    async def play_the_computer() -> None:
        ws = await client(port, "127.0.0.3", "victim", victim)
        await send(ws, {"type": "create", "ai": {"level": 1, "seconds": 0.1}}, victim)
        reply = await until(ws, victim, lambda m: m["type"] in ("joined", "error"))
        victim[outcome(reply)] += 1
        if reply["type"] == "joined":
            await until(ws, victim, lambda m: m["type"] == "state")
            sent = time.monotonic()
            await send(ws, {"type": "move", "move": "e2", "ply": 0}, victim)
            await until(ws, victim, lambda m: m["type"] == "state" and m["ply"] >= 2)
            replies.append(time.monotonic() - sent)
        await ws.close()
        await asyncio.sleep(0.5)

    while time.monotonic() < end:
        try:
            await asyncio.wait_for(play_the_computer(), 60)
        except TimeoutError:
            victim["no reply in 60 s"] += 1
    for task in hogs:
        task.cancel()
    await asyncio.gather(*hogs, return_exceptions=True)
    shown = ", ".join(f"{r:.2f}" for r in replies[:12])
    notes.append(f"another user's computer replies (0.1 s searches): {len(replies)} in "
                 f"{len(replies) and (sum(replies) / len(replies)):.2f} s on average, "
                 f"longest {max(replies, default=float('nan')):.2f} s [{shown}]; "
                 f"its games: {counts(victim)}")  # fmt: skip


Pair = tuple[ClientConnection, ClientConnection, str, str]


async def seated_pair(port: int, tally: Tally) -> Pair:
    a = await client(port, "127.0.0.2", "ann", tally)
    b = await client(port, "127.0.0.2", "bob", tally)
    await send(a, {"type": "create"}, tally)
    joined = await until(a, tally, lambda m: m["type"] == "joined")
    await send(b, {"type": "join", "room": joined["room"]}, tally)
    await until(b, tally, lambda m: m["type"] == "joined")
    return a, b, joined["room"], joined["secret"]


async def chat(port: int, end: float, tally: Tally, notes: list[str]) -> None:
    a, b, room, first_secret = await seated_pair(port, tally)
    secret = [first_secret]  # a reclaimed seat may get a new secret: the attacker keeps up
    audience: Tally = Counter()
    spectators = []
    for n in range(200):
        try:
            ws = await client(port, f"127.0.0.{10 + n // 20}", f"s{n}", audience)
        except Exception:
            audience["spectators refused a connection"] += 1
            continue
        await send(ws, {"type": "watch", "room": room}, audience)
        audience[outcome(await until(ws, audience, lambda m: m["type"] != "state"))] += 1
        spectators.append(ws)
    readers = [asyncio.create_task(drain(ws, audience, "bytes to spectators")) for ws in spectators]
    heard: Tally = Counter()

    async def listen() -> None:  # the other player: the chat lines that got through
        while True:
            message = await receive(b, heard, "bytes")
            heard[message["type"]] += 1

    readers.append(asyncio.create_task(listen()))
    lines = iter(range(10**9))

    async def reclaim_and_chat() -> None:
        ws = await client(port, "127.0.0.3", "ann", tally)
        await send(ws, {"type": "join", "room": room, "seat": 0, "secret": secret[0]}, tally)
        reply = await until(ws, tally, lambda m: m["type"] in ("joined", "error"))
        tally[outcome(reply)] += 1
        secret[0] = reply.get("secret") or secret[0]
        for _ in range(10):
            await send(ws, {"type": "chat", "text": f"spam {next(lines)}"}, tally)
        await asyncio.sleep(0.2)
        await ws.close()

    start = time.monotonic()
    await for_a_while(end, reclaim_and_chat, tally)
    await asyncio.sleep(0.5)
    for reader in readers:
        reader.cancel()
    for ws in [a, b, *spectators]:
        ws.transport.abort()  # a close handshake would wait behind all they did not read
    seconds = time.monotonic() - start
    notes.append(f"chat lines the other player got: {heard['chat_line']} in {seconds:.0f} s "
                 f"(the documented limit: 5 at once, then one every 2 s)")  # fmt: skip
    sent = audience["bytes to spectators"] / 1e6
    notes.append(f"spectators: {counts(audience)}; {sent:.1f} MB sent to them in {seconds:.0f} s")


async def spectators(port: int, end: float, tally: Tally, notes: list[str]) -> None:
    a, b, room, _ = await seated_pair(port, tally)
    players: Tally = Counter()
    readers = [asyncio.create_task(drain(ws, players, "bytes to the players")) for ws in (a, b)]

    async def churn(source: str, n: int) -> None:
        ws = await client(port, source, f"w{n}", tally)
        while time.monotonic() < end:
            await send(ws, {"type": "watch", "room": room}, tally)
            tally[outcome(await until(ws, tally, lambda m: m["type"] in ("joined", "error")))] += 1
            await send(ws, {"type": "leave"}, tally)
            await until(ws, tally, lambda m: m["type"] in ("left", "error"))
            await asyncio.sleep(0.1)  # the rate limit's own pace (20 a second)
        await ws.close()

    churning = [churn(f"127.0.0.{3 + s}", s * 20 + c) for s in range(5) for c in range(20)]
    await asyncio.gather(*churning, return_exceptions=True)
    for reader in readers:
        reader.cancel()
    sent = tally["bytes sent"]
    out = players["bytes to the players"] + tally["bytes received"]
    notes.append(f"bytes to the two players {players['bytes to the players'] / 1e6:.2f} MB; "
                 f"all bytes the server sent {out / 1e6:.2f} MB for {sent / 1e3:.0f} KB of "
                 f"requests (x{out / max(1, sent):.0f})")  # fmt: skip
    a.transport.abort()
    b.transport.abort()


async def slowloris(port: int, end: float, tally: Tally, notes: list[str]) -> None:
    held: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    for _ in range(300):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                           local_addr=("127.0.0.2", 0))  # fmt: skip
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")
            tally["requests"] += 1
            held.append((reader, writer))
        except OSError:
            tally["sockets refused"] += 1
    others: Tally = Counter()
    while time.monotonic() < end:
        try:
            ws = await client(port, "127.0.0.3", "newcomer", others)
            others["a newcomer from another address got in"] += 1
            await ws.close()
        except Exception as error:
            others[f"a newcomer failed: {type(error).__name__}"] += 1
        for _, writer in held:
            if not writer.is_closing():
                writer.write(b"X")  # one more byte of a header that never ends
        await asyncio.sleep(1.0)
    answers: Tally = Counter()
    for reader, writer in held:
        try:  # an answer (429, 503), or the server's close; else held silently
            got = await asyncio.wait_for(reader.read(200), 0.01)
            answers[got.split(b"\r\n", 1)[0].decode() if got else "closed"] += 1
        except TimeoutError:
            answers["held, unanswered"] += 1
        except OSError:  # the server closed it, and our next byte was refused
            answers["closed"] += 1
        writer.close()
    notes.append(f"half-open sockets opened {len(held)}; at the end: {dict(answers)}; "
                 f"{counts(others)}")  # fmt: skip


# -- one measured run -----------------------------------------------------------------------


def attack_process(name: str, port: int, start: float, end: float, out: Path) -> None:
    async def run() -> dict[str, Any]:
        await asyncio.sleep(max(0.0, start - time.monotonic()))
        tally: Tally = Counter()
        notes: list[str] = []
        try:
            await ATTACK[name](port, end, tally, notes)
        except Exception as error:  # said, with what was counted until then
            notes.append(f"the attack stopped: {type(error).__name__}: {error}")
        return {"tally": tally, "notes": notes}

    out.write_text(json.dumps(asyncio.run(run())))


ATTACK: dict[str, Callable[[int, float, Tally, list[str]], Awaitable[None]]] = {
    "rooms": rooms,
    "computer": computer,
    "chat": chat,
    "spectators": spectators,
    "slowloris": slowloris,
}


def read(path: Path, missing: str) -> str:
    return path.read_text() if path.exists() else missing


def measure(root: Path, name: str, games: int, seconds: float) -> None:
    server, port = start_server(root, 256 if name == "slowloris" else None, "ERROR")
    folder = Path(f"/tmp/abuse-figures-{os.getpid()}-{name}")
    folder.mkdir(exist_ok=True)
    try:
        start = time.monotonic() + 4.0  # the games seated first
        end = start + seconds
        spawn = multiprocessing.get_context("spawn")
        players = spawn.Process(target=play_games,
                                args=(port, games, start, end, folder / "rtts.json"))  # fmt: skip
        attacker = spawn.Process(target=attack_process,
                                 args=(name, port, start, end, folder / "attack.json"))  # fmt: skip
        players.start()
        attacker.start()
        time.sleep(max(0.0, start - time.monotonic()))
        cpu, rss = cpu_seconds(server.pid), rss_mb(server.pid)
        time.sleep(max(0.0, end - time.monotonic()))
        cpu, rss_after = cpu_seconds(server.pid) - cpu, rss_mb(server.pid)
        attacker.join(120)
        players.join(60)
        load = os.getloadavg()[0]
        for late in (attacker, players):
            late.kill()  # if still there: its figures are missing, and said so below
        rtts = [r * 1000 for r in json.loads(read(folder / "rtts.json", "[]"))]
        result = json.loads(read(folder / "attack.json", '{"tally": {}, "notes": ["no figures"]}'))
    finally:
        stop(server)
    tally = Counter(result["tally"])
    print(f"{name} (point {POINTS[name]}) against {root}, {seconds:g} s, load average {load:.1f}")
    print(f"  attack: {tally['requests']} requests, {tally['bytes sent'] / 1e3:.0f} KB sent, "
          f"{tally['bytes received'] / 1e6:.2f} MB received; {counts(tally)}")  # fmt: skip
    for note in result["notes"]:
        print(f"  {note}")
    print(f"  server: CPU {cpu / seconds * 100:.0f}% of a core, RSS {rss:.0f} -> "
          f"{rss_after:.0f} MB")  # fmt: skip
    p50, p99, worst = percentile(rtts, 0.5), percentile(rtts, 0.99), max(rtts, default=math.nan)
    print(f"  other games: {len(rtts)} moves, round trip p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
          f"max {worst:.1f} ms")  # fmt: skip
    sys.stdout.flush()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--server-root", type=Path, default=_HERE.parent)
    parser.add_argument("--attack", choices=[*ATTACKS, "all"], default="all")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    for name in ATTACKS if args.attack == "all" else [args.attack]:
        measure(args.server_root.resolve(), name, args.games, args.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
