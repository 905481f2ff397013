"""``load.py --mode abuse``: games in play while the lobby is flooded within every limit.

Run from the repository root (or with ``--server-root`` pointing at another checkout, to
measure an older server the same way)::

    python bench/load.py --mode abuse                    # 200 games, 20 abusive addresses
    python bench/_load_abuse.py --server-root /tmp/old   # the same against another checkout

The server runs as ``python -m server`` on 127.0.0.1 with its default limits (20
connections an address, 20 requests a second a connection), in memory. Loopback gives
every 127.x.y.z address to this machine, so each client binds its own source address and
the server sees distinct IPs:

- ``--games`` games (default 200) between players from 127.0.1.1 upwards (10 games an
  address), each moving once a second (phases spread over the second); the round trip of a
  move (sent, to the state carrying it back to the mover) is measured;
- ``--attackers`` addresses (default 20) from 127.0.0.2 upwards, each holding as many
  connections as the per-IP cap allows, each sending ``replay`` requests of the largest
  game a frame can carry (600 moves) as fast as the connection's rate limit allows
  (``--replay-rate``: 1.25 a second now that a replay costs a request per 40 moves; pass
  20 to attack an older server as hard as its own limits allowed).

It prints the move round trip p50/p99/max (goal: p99 under 50 ms), the server's CPU, and
what the attackers got (replays answered, refused, bytes). The two halves run in two
processes so the load generator does not take turns with itself. On a shared 2-core
machine the figures are noisy: compare runs made back to back.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TypeVar

from websockets.asyncio.client import ClientConnection, connect

T = TypeVar("T")
SHUFFLE = ["e2", "e8", "e1", "e9"]
"""Legal moves forever: both pawns step forward and back."""
REPLAY_MOVES = 600
"""As many moves as a 4 KiB frame carries."""
PER_ADDRESS = 20
RATE = 20.0
REPLAY_RATE = RATE / (1 + REPLAY_MOVES / 40)
"""Replays a second a connection may send within its rate limit: each costs one request
and one more per 40 moves. Before replays were paid for by the move, the limit allowed 20."""


def hello(name: str) -> str:
    return json.dumps({"type": "hello", "version": "1.0", "name": name})


async def open_client(port: int, source: str, name: str) -> ClientConnection:
    ws = await connect(
        f"ws://127.0.0.1:{port}/",
        local_addr=(source, 0),
        max_size=None,
        compression=None,
        ping_interval=None,
    )
    await ws.send(hello(name))
    await ws.recv()
    return ws


# -- the games --------------------------------------------------------------------------


async def _until(ws: ClientConnection, kind: str, ply: int | None = None) -> dict[str, object]:
    while True:
        message: dict[str, object] = json.loads(await ws.recv())
        if message["type"] == kind and (ply is None or message.get("ply") == ply):
            return message


async def one_game(port: int, source: str, n: int, start: float, end: float,
                   rtts: list[float]) -> None:  # fmt: skip
    a = await open_client(port, source, f"a{n}")
    b = await open_client(port, source, f"b{n}")
    await a.send(json.dumps({"type": "create"}))
    room = (await _until(a, "joined"))["room"]
    await b.send(json.dumps({"type": "join", "room": room}))
    await _until(b, "joined")
    await _until(b, "state")
    players, ply = (a, b), 0
    await asyncio.sleep(max(0.0, start - time.monotonic()) + (n % 100) / 100)
    while time.monotonic() < end:
        mover = players[ply % 2]
        sent = time.monotonic()
        await mover.send(json.dumps({"type": "move", "move": SHUFFLE[ply % 4], "ply": ply}))
        await _until(mover, "state", ply + 1)
        rtts.append(time.monotonic() - sent)
        ply += 1
        await asyncio.sleep(max(0.0, sent + 1.0 - time.monotonic()))
    await a.close()
    await b.close()


def play_games(port: int, games: int, start: float, end: float, out: Path) -> None:
    async def run() -> list[float]:
        rtts: list[float] = []
        tasks = []
        for n in range(games):
            source = f"127.0.1.{1 + n // (PER_ADDRESS // 2)}"
            tasks.append(asyncio.create_task(one_game(port, source, n, start, end, rtts)))
            await asyncio.sleep(0.005)
        # A move still unanswered 10 s after the end counts as a 10 s round trip (an
        # overwhelmed server may answer nothing).
        _done, late = await asyncio.wait(tasks, timeout=max(0.0, end - time.monotonic()) + 10)
        rtts.extend(10.0 for _ in late)
        for task in late:
            task.cancel()
        return rtts

    out.write_text(json.dumps(_run(run())))


# -- the abuse --------------------------------------------------------------------------


async def flood(
    port: int, source: str, n: int, end: float, rate: float, tally: dict[str, int]
) -> None:
    try:
        ws = await open_client(port, source, f"x{n}")
    except Exception:
        tally["refused_connections"] += 1
        return
    request = json.dumps({"type": "replay", "moves": (SHUFFLE * REPLAY_MOVES)[:REPLAY_MOVES]})

    async def read() -> None:
        while True:  # bytes, not decoded: the flood must cost the load generator little
            frame = await ws.recv(decode=False)
            tally["bytes"] += len(frame)
            answered = frame.startswith(b'{"type":"replay_frames"')
            tally["answered" if answered else "refused"] += 1

    reader = asyncio.create_task(read())
    try:
        while time.monotonic() < end:
            await ws.send(request)
            tally["sent"] += 1
            await asyncio.sleep(1 / rate)
    except Exception:
        pass
    reader.cancel()
    await ws.close()


def abuse(port: int, attackers: int, rate: float, start: float, end: float, out: Path) -> None:
    async def run() -> dict[str, int]:
        tally = dict.fromkeys(["sent", "answered", "refused", "bytes", "refused_connections"], 0)
        await asyncio.sleep(max(0.0, start - time.monotonic()))
        tasks = [
            asyncio.create_task(
                flood(port, f"127.0.0.{2 + a}", a * PER_ADDRESS + c, end, rate, tally)
            )
            for a in range(attackers)
            for c in range(PER_ADDRESS)
        ]
        await asyncio.gather(*tasks, return_exceptions=True)
        return tally

    out.write_text(json.dumps(_run(run())))


def _run(main: Coroutine[None, None, T]) -> T:
    """On uvloop where it is installed: the load generator's own speed matters here."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


# -- the run ------------------------------------------------------------------------------


def start_server(
    root: Path, open_files: int | None = None, log_level: str = "WARNING"
) -> tuple[subprocess.Popen[bytes], int]:
    """A memory-only server from the source tree ``root`` on a free port, once it accepts;
    ``open_files`` lowers its file-descriptor limit (a slowloris attack's target)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])

    def limit_files() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    env = dict(os.environ, PYTHONPATH=str(root))  # that tree's packages first
    argv = [sys.executable, "-m", "server", "--port", str(port), "--db", "",
            "--log-level", log_level]  # fmt: skip
    server = subprocess.Popen(argv, cwd=root, env=env, preexec_fn=limit_files)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, port
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("the server did not start")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def run(root: Path, games: int, attackers: int, duration: float, rate: float = REPLAY_RATE) -> int:
    server, port = start_server(root)
    folder = Path(f"/tmp/abuse-{os.getpid()}")
    folder.mkdir(exist_ok=True)
    try:
        warmup = 8.0  # games seated before the flood and the measurement start
        start = time.monotonic() + warmup
        end = start + duration
        context = multiprocessing.get_context("spawn")
        players = context.Process(
            target=play_games, args=(port, games, start, end, folder / "rtts.json")
        )
        # The flood starts a little before the measurement: its connections are open by then.
        flooders = context.Process(
            target=abuse, args=(port, attackers, rate, start - 3.0, end, folder / "tally.json")
        )
        players.start()
        if attackers:
            flooders.start()
        time.sleep(max(0.0, start - time.monotonic()))
        cpu_before = cpu_seconds(server.pid)
        time.sleep(max(0.0, end - time.monotonic()))
        cpu = cpu_seconds(server.pid) - cpu_before
        players.join(60)
        if attackers:
            flooders.join(60)
        rtts = [rtt * 1000 for rtt in json.loads((folder / "rtts.json").read_text())]
        tally = json.loads((folder / "tally.json").read_text()) if attackers else {}
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()  # a server still choking on the flood: its figures are taken
            server.wait()
    p99 = percentile(rtts, 0.99)
    print(f"server {root}: {games} games, {attackers} abusive addresses x {PER_ADDRESS} "
          f"connections x {rate:g} replays/s of {REPLAY_MOVES} moves, {duration:g} s")  # fmt: skip
    worst = max(rtts, default=float("nan"))
    print(f"  moves: {len(rtts)}  round trip p50 {percentile(rtts, 0.5):.1f} ms  "
          f"p99 {p99:.1f} ms  max {worst:.1f} ms  (goal p99 < 50 ms)")  # fmt: skip
    print(f"  server CPU: {cpu / duration * 100:.0f}% of a core")
    if tally:
        print(f"  replays sent {tally['sent']}, answered {tally['answered']}, refused "
              f"{tally['refused']}, {tally['bytes'] / 1e6:.1f} MB back; connections refused "
              f"{tally['refused_connections']}")  # fmt: skip
    print("  PASS" if p99 < 50 else "  FAIL")
    return 0 if p99 < 50 else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--server-root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--attackers", type=int, default=20)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--replay-rate", type=float, default=REPLAY_RATE,
                        help="replays a second per connection: the most the server's limits "
                        f"allow (default {REPLAY_RATE:g}; 20 for a server before replays "
                        "were paid for by the move)")  # fmt: skip
    args = parser.parse_args(argv)
    return run(args.server_root, args.games, args.attackers, args.duration, args.replay_rate)


if __name__ == "__main__":
    sys.exit(main())
