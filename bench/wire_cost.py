"""What one move costs the whole server in user space: its connections, websockets' frame
parsing and the core, with the kernel and the event loop's sockets left out.

Run from the repository root::

    python bench/wire_cost.py                  # CPU us per move (about 20 s)
    python bench/wire_cost.py --callgrind      # instructions per move (a few minutes)

bench/core_cost.py measures the core alone; bench/load.py the server over real sockets,
where the kernel's share and the machine's other work make the figure vary by +-15 %
from run to run. This one sits in between: a real ``GameServer`` (memory store) whose
connections (``server.wire.Link``) are handed transports that keep what is written in
memory instead of sockets, fed real masked client frames made by websockets' own client
protocol. Every move goes through ``Link.data_received``, websockets' parser, the
server's dispatch, the core, and ``_write`` to both players, as on a live server; only
the ``write`` system calls and the epoll loop are missing. Under ``--callgrind`` the
count of instructions per move is exact, so a change to the path between the socket and
the core shows in it however busy the machine is.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_ROOT))

from websockets.client import ClientProtocol  # noqa: E402
from websockets.uri import parse_uri  # noqa: E402

from bench.core_cost import callgrind_per_move  # noqa: E402
from bench.load import make_scripts  # noqa: E402
from protocol.codec import encode  # noqa: E402
from protocol.messages import VERSION, Create, Hello, Join, Leave, MoveRequest  # noqa: E402
from server.__main__ import freeze_heap, tune_interpreter  # noqa: E402
from server.app import GameServer  # noqa: E402
from server.config import Config  # noqa: E402
from server.gcclock import Collections  # noqa: E402
from server.wire import Link  # noqa: E402

_ROOM = re.compile(rb'"room":"([^"]+)"')
WARM_UP = 5000
"""Moves played before measuring (under callgrind too: both runs play them)."""


class MemoryTransport(asyncio.Transport):
    """A transport that keeps what the server writes (a socket without the kernel)."""

    def __init__(self, peer: tuple[str, int]) -> None:
        super().__init__()
        self.peer = peer
        self.written: list[bytes] = []
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.peer if name == "peername" else default

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written.append(bytes(data))

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass  # nothing is ever waiting

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.protocol = protocol

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        """As a socket's transport does: the protocol hears it is gone soon after."""
        if not self.closing:
            self.closing = True
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)

    def abort(self) -> None:
        self.close()

    def can_write_eof(self) -> bool:
        return False

    def take(self) -> bytes:
        data = b"".join(self.written)
        self.written.clear()
        return data


class Client:
    """One player: a ``Link`` of the server and websockets' client protocol for its frames."""

    def __init__(self, server: GameServer, number: int) -> None:
        config = server.config
        self.link = Link(server, config.max_message, config.ping_interval)
        self.transport = MemoryTransport((f"10.{number >> 16 & 255}.{number >> 8 & 255}.1", 1))
        self.protocol = ClientProtocol(parse_uri("ws://127.0.0.1:8765/"))
        self.transport.set_protocol(self.link)
        self.link.connection_made(self.transport)
        self.protocol.send_request(self.protocol.connect())
        self.link.data_received(b"".join(self.protocol.data_to_send()))
        self.protocol.receive_data(self.transport.take())
        assert self.protocol.handshake_exc is None, self.protocol.handshake_exc

    def frame(self, payload: bytes) -> bytes:
        """``payload`` as a masked text frame from this client (made once, sent many times)."""
        self.protocol.send_text(payload)
        return b"".join(self.protocol.data_to_send())

    def send(self, payload: bytes) -> None:
        self.link.data_received(self.frame(payload))


class Bench:
    """``games`` games between pairs of connections, replaying scripts, as core_cost's."""

    def __init__(
        self, server: GameServer, games: int, scripts: list[list[str]], per_tick: int
    ) -> None:
        self.server = server
        self.per_tick = per_tick
        self.collections = Collections()
        self.scripts = scripts
        self.moves_sent = [
            [encode(MoveRequest(move=move, ply=ply)) for ply, move in enumerate(script)]
            for script in scripts
        ]
        self.numbers = itertools.count(1)
        self.tables: list[tuple[Client, Client, list[int]]] = []
        hello = encode(Hello(version=VERSION, name="bench", compact=True))
        for number in range(games):
            a, b = Client(server, next(self.numbers)), Client(server, next(self.numbers))
            a.send(hello)
            b.send(hello)
            self.tables.append((a, b, [number % len(scripts), 0]))
        # Every move's frame, masked once (by one client: the mask is the client's to pick).
        maker = self.tables[0][0]
        self.frames = [[maker.frame(move) for move in script] for script in self.moves_sent]

    async def start(self) -> None:
        await asyncio.sleep(0)
        for a, b, _ in self.tables:
            await self._new_room(a, b)

    async def settle(self) -> None:
        """Let the event loop turn until the replies so far are written (with a database,
        once their commit is answered)."""
        await asyncio.sleep(0)
        if self.server.store is not None:
            await self.server._drain()
            await asyncio.sleep(0)

    async def _new_room(self, a: Client, b: Client) -> None:
        await self._new_rooms([(a, b)])

    async def _new_rooms(self, pairs: list[tuple[Client, Client]]) -> None:
        """Each pair's first player opens a room, the second joins it."""
        if self.server.store is not None:
            await self.settle()  # the replies to the last game's moves and leaves are out
        for a, _ in pairs:
            a.transport.take()
            a.send(encode(Create(private=True)))
        await self.settle()
        for a, b in pairs:
            found = _ROOM.search(a.transport.take())
            assert found is not None
            b.send(encode(Join(room=found.group(1).decode())))
        await self.settle()

    async def moves(self, count: int) -> None:
        """Play ``count`` moves, round robin over the games (the event loop turns once per
        round, when the server writes what it has to send), with the server's collection
        clock ticking every ``per_tick`` moves.

        With a database, the replies wait for their commit, so the players of a finished
        game could only learn their next room's code once it is committed: the games that
        finished during a round open their next rooms together after it (two commits waited
        for), so that a round's moves share a few commits, as on a busy server."""
        leave, frames = encode(Leave()), self.frames
        played = 0
        finished: list[tuple[Client, Client]] = []
        while played < count:
            for a, b, table in self.tables:
                script, ply = table
                mover = a if ply % 2 == 0 else b
                mover.link.data_received(frames[script][ply])
                played += 1
                if self.per_tick and played % self.per_tick == 0:
                    self.collections.tick()
                if ply + 1 == len(self.moves_sent[script]):
                    await asyncio.sleep(0)
                    a.send(leave)
                    b.send(leave)
                    table[0], table[1] = (script + 1) % len(self.scripts), 0
                    if self.server.store is None:
                        await self._new_room(a, b)
                    else:
                        finished.append((a, b))
                else:
                    table[1] = ply + 1
                if played == count:
                    break
            await asyncio.sleep(0)
            if finished:
                await self._new_rooms(finished)
                finished.clear()
            for a, b, _ in self.tables:
                a.transport.written.clear()
                b.transport.written.clear()


async def run(args: argparse.Namespace, rounds: int) -> list[float]:
    """CPU microseconds per move, each round, with the server's interpreter settings (under
    callgrind, ``--run-only``: one round of ``--moves`` after the same warm-up)."""
    moves = args.moves
    with tempfile.TemporaryDirectory(prefix="wire-cost-") as folder:
        db = str(Path(folder) / "games.db") if args.sqlite else ""
        return await _run(args, rounds, moves, db)


async def _run(args: argparse.Namespace, rounds: int, moves: int, db: str) -> list[float]:
    config = Config(
        port=0, db=db, max_per_ip=10**6, rate=1e9, burst=1e9, rooms_per_ip=10**6, hello_burst=1e9,
        max_rooms=10**6, log_level="WARNING",
        # Under valgrind on a busy machine a player can wait longer than a keepalive round
        # for its turn (its link dropped mid-run); the bench has no clock to honour.
        ping_interval=1e6, hello_timeout=1e6, idle_timeout=1e6,
    )  # fmt: skip
    server = GameServer(config)
    async with server.running():
        bench = Bench(server, args.games, make_scripts(args.scripts), args.moves_per_tick)
        await bench.start()
        freeze_heap()  # as the server does once started
        await bench.moves(WARM_UP)
        results = []
        await bench.settle()
        for _ in range(rounds):
            started = time.process_time()
            await bench.moves(moves)
            if db:
                await bench.settle()  # every commit answered, every reply written
            results.append((time.process_time() - started) / moves * 1e6 if moves else 0.0)
        return results


def callgrind(args: argparse.Namespace) -> None:
    extra = ["--games", str(args.games), "--scripts", str(args.scripts)]
    extra += ["--moves-per-tick", str(args.moves_per_tick)]
    if args.sqlite:
        extra += ["--sqlite"]
    ir, malloc = callgrind_per_move(__file__, args.moves, extra)
    store = ", saved in SQLite" if args.sqlite else ""
    print(f"wire cost under callgrind: {args.games} games open, {args.moves} moves{store}")
    print(f"  instructions per move: {ir:,.0f}")
    print(f"  _PyObject_Malloc calls per move: {malloc:.1f}")


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games open (default 200)")
    parser.add_argument("--moves", type=int, default=20000, help="moves per round")
    parser.add_argument("--rounds", type=int, default=3, help="CPU rounds (median shown)")
    parser.add_argument("--scripts", type=int, default=64, help="distinct games to replay")
    parser.add_argument(
        "--moves-per-tick",
        type=int,
        default=500,
        help="moves between two ticks of the collection clock (server.gcclock): 500, as at "
        "10,000 moves/s (0: the interpreter's thresholds alone)",
    )
    parser.add_argument(
        "--sqlite",
        action="store_true",
        help="save the games in SQLite (a fresh file), as the server does with --db: each "
        "move's reply waits for its commit; only the server process is counted, not its "
        "database process",
    )
    parser.add_argument(
        "--callgrind",
        action="store_true",
        help="count instructions under valgrind instead of CPU time",
    )
    parser.add_argument("--run-only", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    if args.callgrind:
        callgrind(args)
        return
    rounds = 1 if args.run_only else args.rounds
    tune_interpreter()
    results = asyncio.run(run(args, rounds))
    if args.run_only:
        return
    shown = ", ".join(f"{r:.1f}" for r in results)
    print(
        f"wire cost: {args.games} games open{', saved in SQLite' if args.sqlite else ''}, "
        f"{args.moves} moves a round, compact move events, "
        f"a young collection every {args.moves_per_tick} moves"
    )
    print(f"  CPU us per move, median of {rounds}: {statistics.median(results):.1f} ({shown})")


if __name__ == "__main__":
    main()
