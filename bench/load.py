"""Load-test the game server as a real process, next to bare websockets ceilings.

Run from the repository root::

    python bench/load.py                      # the full report (about 3 minutes)
    python bench/load.py --mode paced --games 1000 --duration 30 --db memory
    python bench/load.py --mode saturate --profile /tmp/prof   # with a cProfile of the server
    python bench/load.py --against /tmp/main  # and the server of another checkout, same run
    python bench/load.py --mode soak --duration 300            # RSS and fds over time
    python bench/load.py --db cluster --compact off            # SQLite, 1 node, 2 nodes
    python bench/load.py --db cluster:2 --mode paced --games 1000  # one 2-node cluster alone

Everything runs on 127.0.0.1. The server is started as ``python -m server``
(``--db ""`` for memory, or a SQLite file in a temporary folder; the per-IP cap
and the rate limit lifted; logging at WARNING), and the ceilings as
``bench/_load_echo.py``, with the same socket settings:

echo
    every frame straight back to its sender: one frame in, one out;
fanout
    every frame to both sockets of its pair, as a state goes to both players:
    the game server's I/O for a move, without the game;
sansio (``--sansio``)
    the fanout on websockets' sans-I/O ``ServerProtocol`` from a plain
    ``asyncio.Protocol``: no task, queue or future per connection.

Players replay complete legal games (a mix of pawn moves and walls, played to
the end) computed with the rules engine before anything is measured, so the
load generator never runs the engine. It runs in worker processes
(``bench/_load_worker.py``, ``--workers``) on a lean websocket client
(``bench/_load_wire.py``), because on 2 cores it shares the CPU with the
server. Each game is two connections (plus ``--spectators``); after a finished
game the players leave and start a new room (create, join), so rooms come and
go. The ceilings' "games" are pairs of sockets taking turns in the same way,
with frames as large as the states were. Every state carries what the server
works out for it, the seat to move's legal walls (``legal_walls``) included,
so their cost is in the server's figures.

Modes:

paced
    ``--games`` games each move once a second (their phases spread over the
    second); the round trip of a move (sent, to its state pushed back to the
    mover) over ``--duration`` seconds, p50/p90/p99/max. Echo twin: the same
    schedule.
saturate
    ``--saturate-games`` games move as soon as the state arrives: moves per
    second. Echo and fanout twins: as many sockets, as many frames in flight.
    ``--rounds`` rounds of each, median reported; the echo ceiling's rounds
    interleave with the game servers' (one after each of their rounds, for
    every store), so that a drift of the machine's speed during the run falls
    on both sides of the ratio (on a shared 2-core machine, echo alone made
    23,495 to 41,726 msgs/s over the six rounds of one run).
idle
    ``--idle`` greeted connections held open on a fresh server: its RSS growth
    (``VmRSS``) per connection. Echo twin: connections that sent one frame.
abuse
    ``--games`` (default 200 here) paced games while ``--attackers`` addresses
    (default 20) flood the lobby as hard as the per-IP limits allow: the move
    round trip p99 must stay under 50 ms (``bench/_load_abuse.py``).
soak
    ``--saturate-games`` games flat out, players reconnecting as new sessions
    after every other game: RSS, open fds, connections, rooms and sessions
    sampled over time; then every client leaves and the server must be back to
    empty (no room, session or extra fd left). Default 180 s (20 s in ``all``).
all (the default)
    idle, paced and saturate for the memory and the SQLite server and the
    ceilings, then a short soak; the targets, PASS or FAIL (exit status 1 if
    any fails).

A cluster (``--db cluster``): the paced and saturated runs on the SQLite server, then on
one node and on two nodes of a cluster (``--redis``, on a PostgreSQL and a Redis the
benchmark starts, as the tests do), next to the echo ceiling, in one run. Game ``n``'s first
player connects to node ``n % 2``; its second to the same node or, in a ``--cross`` share of
the games (default 0.5, what a balancer placing connections at random gives with two nodes),
to the other one, whose relay carries it to the room's node: the report states the share.
The cluster's CPU is its nodes', PostgreSQL's and Redis's; the report adds each node's CPU
per move it served (the games are spread evenly) and PostgreSQL's and Redis's. A node that
cannot start games for a moment (Redis or PostgreSQL away) answers creates
``service_unavailable``; the players ask again 50 ms later, as a client would.

Before and after a change: ``--against PATH`` runs the game server of another
checkout too (``git archive main | tar -x -C /tmp/main``), in the same
invocation, under the same load; both servers run side by side and their
saturation rounds alternate, so a busy spell of a shared machine falls on both.
Its columns are labelled ``memory@main`` and so on (the folder's name).
``--compiled`` adds this checkout's server as ``deploy/compile.py`` builds it (the
engine and the move path compiled by mypyc, what ``make run`` starts where a C compiler is
there): ``memory@compiled``; without it the servers run interpreted (``make run COMPILE=no``).

The server's CPU comes from ``/proc/PID/stat`` (utime + stime, all threads,
plus its child processes: the SQLite server's database process) over the
measured window, its memory and descriptors likewise, summed; its own
request and commit timings from its ``/metrics``. The report also shows the
load generator's CPU and what every other process on the machine used
meanwhile: figures taken while something else keeps the CPUs busy are flagged
as unreliable (``--quiet-wait`` waits for a quiet machine first).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import multiprocessing
import os
import platform
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path: put the repo root there.
_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_ROOT))

from bench import _load_abuse  # noqa: E402
from bench._load_worker import Job, Kind, Mode, Result, work  # noqa: E402
from deploy.compile import build as build_compiled  # noqa: E402
from engine import Game  # noqa: E402
from server.cluster.keys import CONNECTIONS as REDIS_CONNECTIONS  # noqa: E402

HOST = "127.0.0.1"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE = 1024

TARGET_P99_MS = 5.0
TARGET_WORST_MS = 25.0
TARGET_GAMES = 1000
TARGET_SATURATION_RATIO = {"memory": 0.40, "sqlite": 0.33}
"""Moves/s against the echo ceiling's msgs/s, the median of the rounds of each."""
TARGET_IDLE_KIB = 14.0
TARGET_CPU_US = {"memory": 50.0}
"""Server CPU microseconds per move at saturation."""
ROUNDS = 3
"""Saturation runs per server (single runs vary by +-15 %): the median is reported."""
SCRIPT_SEED = 20240608
SOAK_GRACE = 2.0
"""The soak server's ``--deliberate-grace``: how long a waiting room keeps the seat of a
player who closed, so that the empty server can be checked soon after the soak."""
WALL_SHARE = 0.3
"""Chance that a scripted player with walls left places one rather than moves."""


# -- scripts ------------------------------------------------------------------------


def make_scripts(count: int, seed: int = SCRIPT_SEED, size: int = 9) -> list[list[str]]:
    """``count`` complete legal two-player games: mostly shortest-path steps, some walls."""
    rng = random.Random(seed)
    scripts: list[list[str]] = []
    while len(scripts) < count:
        game = Game(2, size)
        while game.winner is None and game.ply < 200:
            seat = game.turn
            walls = game.legal_walls() if game.walls_left[seat] else []
            if walls and rng.random() < WALL_SHARE:
                move = rng.choice(walls)
            else:
                steps = game.legal_pawn_moves()
                if rng.random() < 0.1:
                    move = rng.choice(steps)
                else:
                    move = min(steps, key=lambda step: _distance_after(game, step, seat))
            game.play(move)
        if game.winner is not None:
            scripts.append(list(game.moves))
    return scripts


def _distance_after(game: Game, step: str, seat: int) -> int:
    game.play(step)
    distance = game.distance(seat)
    game.undo()
    return distance


# -- processes --------------------------------------------------------------------


class ServerProcess:
    """A server process (ours or the echo) on 127.0.0.1, a free port, stderr kept."""

    def __init__(self, label: str, argv: list[str], root: Path = _ROOT) -> None:
        self.label = label
        self.argv = argv
        self.root = root
        """The checkout it runs from (``python -m server`` imports the server from there)."""
        self.log: list[str] = []
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.fds_kept = 0
        """Descriptors the server keeps open by design once its clients are gone."""
        self._reader: threading.Thread | None = None
        self.database: Callable[[], list[int]] = list
        """The processes of a database server it uses (PostgreSQL's), counted as its own."""
        self.ports: list[int] = []
        """A cluster's nodes (``ClusterServer``); empty for one server."""
        self.cross = 0.0
        """A cluster: the share of games whose two players connect to different nodes."""

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, within: float = 30.0) -> ServerProcess:
        """Start it on a free port; ready once that port accepts connections."""
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [*self.argv, "--port", str(self.port)], cwd=self.root, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + within
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                socket.create_connection((HOST, self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.label} did not start:\n" + "".join(self.log[-20:]))

    def _read(self) -> None:
        assert self.proc is not None
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            if len(self.log) < 10_000:
                self.log.append(raw.decode(errors="replace"))

    def stop(self, within: float = 30.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            status = self.proc.wait(within)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            status = self.proc.wait()
        if self._reader is not None:
            self._reader.join(5)
        return status

    def family(self) -> list[int]:
        """The server and its child processes (the game server's database process), and the
        processes of the PostgreSQL server it uses."""
        return [*self.own(), *self.database()]

    def own(self) -> list[int]:
        """The server's own processes: itself and its children (no database server)."""
        return [self.pid, *children(self.pid)]

    def own_rss(self) -> int:
        """Resident memory of ``own`` in bytes: what the soak judges, because a database
        server's backends count the shared buffers they touch, more as a run goes on."""
        return sum(map(process_rss, self.own()))

    def cpu(self) -> float:
        """CPU seconds used so far (user + system, every thread, child processes too)."""
        return sum(map(process_cpu, self.family()))

    def node_cpus(self) -> list[float]:
        """CPU seconds of each node (the server and its children, no database server)."""
        return [sum(map(process_cpu, self.own()))]

    def rss(self) -> int:
        """Resident memory in bytes, child processes included."""
        return sum(map(process_rss, self.family()))

    def fds(self) -> int:
        """Open file descriptors, child processes included."""
        total = 0
        for pid in self.family():
            with contextlib.suppress(OSError):
                total += len(os.listdir(f"/proc/{pid}/fd"))
        return total

    def metrics(self) -> dict[str, float]:
        """The game server's Prometheus gauges and counters (empty for the echo)."""
        try:
            with socket.create_connection((HOST, self.port), timeout=5) as sock:
                sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
                chunks = []
                while chunk := sock.recv(65536):
                    chunks.append(chunk)
        except OSError:
            return {}
        values: dict[str, float] = {}
        for line in b"".join(chunks).decode(errors="replace").splitlines():
            if line.startswith("quoridor_") and " " in line:
                name, _, value = line.rpartition(" ")
                try:
                    values[name] = float(value)
                except ValueError:
                    continue
        return values


def our_server(
    db: str, profile: Path | None, label: str, *extra: str, root: Path = _ROOT
) -> ServerProcess:
    python = [sys.executable]
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
        python += ["-m", "cProfile", "-o", str(profile / f"server-{label}.prof")]
    argv = [
        *python, "-m", "server", "--host", HOST, "--db", db,
        "--max-per-ip", "1000000", "--rate", "1000000", "--burst", "1000000",
        "--rooms-per-ip", "1000000", "--max-rooms", "1000000", "--hello-burst", "1000000",
        "--log-level", "WARNING", *extra,
    ]  # fmt: skip
    return ServerProcess(label, argv, root)


class ClusterServer(ServerProcess):
    """The nodes of one cluster (``--redis``, one PostgreSQL database, one Redis prefix),
    measured as one server: CPU, memory and descriptors summed over the nodes, PostgreSQL
    and Redis; metrics summed over the nodes. The load generator connects each game's
    players to the nodes as ``Job.nodes_of`` says (``cross``: the share of games whose
    players are on different nodes, served through the relay)."""

    def __init__(
        self, label: str, nodes: list[ServerProcess], services: Callable[[], list[int]],
        cross: float,
    ) -> None:  # fmt: skip
        super().__init__(label, [])
        self.nodes = nodes
        self.services = services
        self.cross = cross if len(nodes) > 1 else 0.0
        # Each node's Redis pool keeps the connections a burst opened, up to its size:
        # both ends are counted here (the node's socket and Redis').
        self.fds_kept = 2 * REDIS_CONNECTIONS * len(nodes)

    @property
    def pid(self) -> int:
        return self.nodes[0].pid

    def start(self, within: float = 30.0) -> ServerProcess:
        for node in self.nodes:  # one at a time: the first creates the tables
            node.start(within)
        self.port = self.nodes[0].port
        self.ports = [node.port for node in self.nodes]
        return self

    def stop(self, within: float = 30.0) -> int | None:
        statuses = [node.stop(within) for node in self.nodes]
        self.log = [line for node in self.nodes for line in node.log]
        return next((status for status in statuses if status), statuses[0])

    def family(self) -> list[int]:
        return self.own() + self.services()

    def own(self) -> list[int]:
        return [pid for node in self.nodes for pid in node.own()]

    def node_cpus(self) -> list[float]:
        return [cpu for node in self.nodes for cpu in node.node_cpus()]

    def metrics(self) -> dict[str, float]:
        summed: dict[str, float] = {}
        for node in self.nodes:
            for name, value in node.metrics().items():
                summed[name] = summed.get(name, 0.0) + value
        return summed


def echo_server(fanout: bool = False, sansio: bool = False) -> ServerProcess:
    argv = [sys.executable, str(_HERE / "_load_echo.py"), "--host", HOST]
    if fanout:
        argv.append("--fanout")
    if sansio:
        argv.append("--sansio")
    return ServerProcess("sansio" if sansio else "fanout" if fanout else "echo", argv)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def process_cpu(pid: int) -> float:
    """CPU seconds process ``pid`` used so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid:
            found.append(int(entry))
    return found


def process_rss(pid: int) -> int:
    """Resident memory of process ``pid`` in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * PAGE
    except OSError:
        pass
    return 0


def other_load(pids: list[int], seconds: float = 1.0) -> float:
    """Cores used by every process but ``pids`` (and this one) over ``seconds``."""
    mine = [*pids, os.getpid()]
    before, busy, at = sum(map(process_cpu, mine)), machine_busy(), time.monotonic()
    time.sleep(seconds)
    used = machine_busy() - busy - (sum(map(process_cpu, mine)) - before)
    return max(0.0, used / (time.monotonic() - at))


def wait_for_quiet(pids: list[int], limit: float, log: Callable[[str], None]) -> None:
    """Wait up to ``limit`` seconds for other processes to use under a quarter of a core."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        load = other_load(pids)
        if load < 0.25:
            return
        log(f"  other processes use {load * 100:.0f} % of a core: waiting for quiet")


def machine_busy() -> float:
    """CPU seconds all processors spent busy since boot."""
    with open("/proc/stat") as stat:
        values = [int(v) for v in stat.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values[:8]) - idle) / CLOCK_TICKS


# -- one run ------------------------------------------------------------------------


@dataclass
class Run:
    """What one run of one mode against one server measured."""

    label: str
    kind: Kind
    mode: Mode
    games: int = 0
    connections: int = 0
    duration: float = 0.0
    latencies: list[float] = field(default_factory=list)
    replies: int = 0
    games_finished: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    closed_unexpectedly: int = 0
    late: int = 0
    loadgen_stall: float = 0.0
    """The longest a load generator worker's own event loop woke up late (seconds)."""
    server_cpu: float = 0.0
    """Fraction of one core over the window."""
    loadgen_cpu: float = 0.0
    other_cpu: float = 0.0
    """Every other process on the machine, fraction of one core."""
    rss: int = 0
    fds: int = 0
    state_bytes: float = 0.0
    reconnects: int = 0
    samples: list[dict[str, float]] = field(default_factory=list)
    before: dict[str, float] = field(default_factory=dict)
    """Soak: the fresh server, before any client."""
    fds_kept: int = 0
    """Soak: descriptors the server may keep open by design once its clients are gone."""
    after: dict[str, float] = field(default_factory=dict)
    """Soak: the server once every client has gone."""
    metrics: dict[str, float] = field(default_factory=dict)
    """The server's own histograms and counters, over the window (ours only)."""
    analyses: int = 0
    """Computer analyses the analysts received during the window."""
    analyses_refused: int = 0
    rounds: list[Run] = field(default_factory=list)
    """Saturation: every run of this server; this one is their median by moves/s."""
    node_cpu: list[float] = field(default_factory=list)
    """Each node's CPU over the window, fraction of one core (no database server)."""
    cross: float = 0.0
    """A cluster: the share of games whose players were on different nodes."""

    def histogram(self, name: str, label: str = "") -> tuple[float, float, dict[float, float]]:
        """(count, sum, {bucket bound: count up to it}) of a server histogram over the window."""
        count = total = 0.0
        buckets: dict[float, float] = {}
        for key, value in self.metrics.items():
            if label not in key:
                continue
            if key.startswith(f"{name}_count"):
                count += value
            elif key.startswith(f"{name}_sum"):
                total += value
            elif key.startswith(f"{name}_bucket") and (bound := re.search(r'le="([^"]+)"', key)):
                buckets[float(bound.group(1))] = value
        return count, total, buckets

    @property
    def rate(self) -> float:
        return self.replies / self.duration if self.duration else 0.0

    @property
    def cpu_per_move(self) -> float:
        """Server CPU microseconds per move (the ceilings: per message sent back)."""
        return self.server_cpu / self.rate * 1e6 if self.rate else float("nan")

    def percentile(self, q: float) -> float:
        """Milliseconds; nearest rank."""
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
        return ordered[rank] * 1000


@dataclass
class Settings:
    workers: int
    warmup: float
    scripts: list[list[str]]
    spectators: int
    echo_size: int = 700
    log: Callable[[str], None] = print
    quiet_wait: float = 0.0
    """Seconds to wait, before each measurement, for other processes to quieten."""
    analysts: int = 0
    """Clients asking for computer analyses of finished games throughout a run (ours only)."""


def _split(total: int, parts: int) -> list[int]:
    parts = max(1, min(parts, total))
    return [total // parts + (1 if n < total % parts else 0) for n in range(parts)]


class Workers:
    """Worker processes for one run, and the pipe conversation with them."""

    def __init__(self, jobs: list[Job]) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes: list[Connection] = []
        self.processes: list[multiprocessing.process.BaseProcess] = []
        for job in jobs:
            ours, theirs = context.Pipe()
            process = context.Process(target=work, args=(theirs, job), daemon=True)
            process.start()
            theirs.close()
            self.pipes.append(ours)
            self.processes.append(process)

    def gather(self, expected: str, within: float) -> list[Any]:
        replies = []
        deadline = time.monotonic() + within
        for pipe, process in zip(self.pipes, self.processes, strict=True):
            while not pipe.poll(0.2):
                if not process.is_alive():
                    raise RuntimeError(f"a load worker died (exit {process.exitcode})")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"load workers did not answer {expected!r} in time")
            kind, payload = pipe.recv()
            if kind == "failed":
                raise RuntimeError(f"a load worker failed:\n{payload}")
            if kind != expected:
                raise RuntimeError(f"worker said {kind!r}, expected {expected!r}")
            replies.append(payload)
        return replies

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self.processes if process.pid is not None]

    def tell(self, *message: object) -> None:
        for pipe in self.pipes:
            pipe.send(message)

    def finish(self) -> None:
        self.tell("stop")
        try:
            self.gather("closed", 60)
        finally:
            for process in self.processes:
                process.join(10)
                if process.is_alive():
                    process.kill()


def run_games(
    server: ServerProcess,
    kind: Kind,
    mode: Mode,
    games: int,
    duration: float,
    settings: Settings,
    churn: int = 0,
    sample_every: float = 0.0,
    compact: bool = False,
) -> Run:
    """Seat ``games`` games, play them for a warm-up then ``duration`` seconds, measure
    (``compact``: the clients ask for ``moved`` events; the run's label says "+compact")."""
    run = Run(server.label + ("+compact" if compact else ""), kind, mode, games=games)
    if sample_every > 0:
        run.before = _sample(server, 0.0, server.cpu(), time.monotonic())
        run.fds_kept = server.fds_kept
    first = 0
    jobs = []
    for count in _split(games, settings.workers):
        jobs.append(
            Job(
                kind=kind, mode=mode, host=HOST, port=server.port, games=count, first=first,
                total=games, scripts=settings.scripts,
                spectators=settings.spectators if kind == "ours" else 0,
                echo_size=settings.echo_size, churn=churn, compact=compact,
                ports=server.ports, cross=server.cross,
            )
        )  # fmt: skip
        first += count
    workers = Workers(jobs)
    try:
        ready = workers.gather("ready", 180)
        run.connections = sum(info["connections"] for info in ready)
        if settings.quiet_wait > 0:
            wait_for_quiet([*server.family(), *workers.pids], settings.quiet_wait, settings.log)
        start = time.monotonic() + settings.warmup
        end = start + duration
        analysts = [
            Analyst(server.port, start, end)
            for _ in range(settings.analysts if kind == "ours" else 0)
        ]
        for analyst in analysts:
            analyst.start()
        workers.tell("go", start, end)
        time.sleep(max(0.0, start - time.monotonic()))
        metrics0 = server.metrics()
        nodes0 = server.node_cpus() if kind == "ours" else []
        cpu0, busy0, at0 = server.cpu(), machine_busy(), time.monotonic()
        if sample_every > 0:
            run.samples.append(_sample(server, at0 - start, cpu0, at0))
            previous = (cpu0, at0)
            while (now := time.monotonic()) < end - 0.05:
                time.sleep(min(sample_every, end - now))
                sample = _sample(server, time.monotonic() - start, *previous)
                previous = (server.cpu(), time.monotonic())
                run.samples.append(sample)
                settings.log(
                    f"  {sample['t']:6.0f} s  rss {sample['rss'] / 2**20:7.1f} MiB "
                    f"(server {sample['own_rss'] / 2**20:5.1f})  "
                    f"fds {sample['fds']:5.0f}  rooms {sample['rooms']:6.0f}  "
                    f"sessions {sample['sessions']:6.0f}  cpu {sample['cpu'] * 100:3.0f} %"
                )
        else:
            time.sleep(max(0.0, end - time.monotonic()))
        cpu1, busy1, at1 = server.cpu(), machine_busy(), time.monotonic()
        nodes1 = server.node_cpus() if kind == "ours" else []
        metrics1 = server.metrics()
        run.rss, run.fds = server.rss(), server.fds()
        results: list[Result] = workers.gather("done", 60)
        for analyst in analysts:
            analyst.join(30)
            run.analyses += analyst.done
            run.analyses_refused += analyst.refused
    except BaseException:
        for process in workers.processes:
            process.kill()
        raise
    workers.finish()
    if sample_every > 0:
        time.sleep(SOAK_GRACE + 1.5)  # every client gone: what is left should be the empty server
        run.after = _sample(server, time.monotonic() - start, server.cpu(), time.monotonic())
    run.metrics = {
        name: metrics1[name] - metrics0.get(name, 0.0)
        for name in metrics1
        if "_seconds_" in name or name.startswith("quoridor_moves")
    }
    window = at1 - at0
    run.duration = duration
    run.server_cpu = (cpu1 - cpu0) / window
    run.node_cpu = [(after - before) / window for before, after in zip(nodes0, nodes1, strict=True)]
    run.cross = server.cross
    loadgen = sum(result.cpu for result in results)
    run.loadgen_cpu = loadgen / window
    run.other_cpu = max(0.0, (busy1 - busy0) - (cpu1 - cpu0) - loadgen) / window
    states = 0
    for result in results:
        run.latencies += result.latencies
        run.replies += result.replies
        run.games_finished += result.games_finished
        run.errors.update(result.errors)
        run.closed_unexpectedly += result.closed_unexpectedly
        run.late += result.late
        run.loadgen_stall = max(run.loadgen_stall, result.stall)
        run.state_bytes += result.state_bytes
        run.reconnects += result.reconnects
        states += result.states
    run.state_bytes = run.state_bytes / states if states else 0.0
    return run


def median_of(runs: list[Run]) -> Run:
    """The run with the median moves/s, carrying every run in ``rounds``."""
    ordered = sorted(runs, key=lambda run: run.rate)
    middle = ordered[(len(ordered) - 1) // 2]
    middle.rounds = runs
    return middle


def saturate(server: ServerProcess, kind: Kind, games: int, duration: float,
             settings: Settings, rounds: int) -> Run:  # fmt: skip
    """``rounds`` saturation runs on the same server, one after the other: their median."""
    runs = []
    for number in range(rounds):
        if rounds > 1:
            settings.log(f"  round {number + 1} of {rounds}")
        runs.append(run_games(server, kind, "saturate", games, duration, settings))
    return median_of(runs)


class Analyst(threading.Thread):
    """Asks for the computer analysis of one finished game after another, from ``start`` to
    ``end``, as a player reviewing games would: the analysis runs in the server's worker
    processes while the measured games go on."""

    def __init__(self, port: int, start: float, end: float) -> None:
        super().__init__(daemon=True)
        self.port, self.start_at, self.end = port, start, end
        self.done = self.refused = 0

    def run(self) -> None:
        from websockets.sync.client import connect

        asked: set[int] = set()
        with connect(f"ws://{HOST}:{self.port}", max_size=2**22) as ws:
            ws.send(json.dumps({"type": "hello", "version": "1.0", "name": "analyst"}))
            ws.recv()
            time.sleep(max(0.0, self.start_at - time.monotonic()))
            while (left := self.end - time.monotonic()) > 0:
                ws.send(json.dumps({"type": "history", "limit": 100}))
                games = [g["game"] for g in json.loads(ws.recv(timeout=left))["games"]]
                fresh = [game for game in games if game not in asked]
                if not fresh:
                    time.sleep(0.2)
                    continue
                asked.add(fresh[0])
                ws.send(json.dumps({"type": "analyse", "game": fresh[0]}))
                try:
                    reply = json.loads(ws.recv(timeout=max(0.1, self.end - time.monotonic())))
                except TimeoutError:
                    return
                if reply["type"] == "analysis":
                    self.done += 1
                else:
                    self.refused += 1


def _sample(
    server: ServerProcess, t: float, cpu_before: float, at_before: float
) -> dict[str, float]:
    metrics = server.metrics()
    now, cpu = time.monotonic(), server.cpu()
    return {
        "t": t,
        "rss": float(server.rss()),
        "own_rss": float(server.own_rss()),
        "fds": float(server.fds()),
        "rooms": sum(v for k, v in metrics.items() if k.startswith("quoridor_rooms")),
        "sessions": metrics.get("quoridor_sessions", 0.0),
        "connections": metrics.get("quoridor_connections", 0.0),
        "moves": metrics.get('quoridor_moves_total{outcome="accepted"}', 0.0),
        "cpu": (cpu - cpu_before) / max(1e-9, now - at_before),
    }


@dataclass
class Idle:
    label: str
    connections: int
    rss_before: int
    rss_after: int
    rss_closed: int
    fds_before: int
    fds_after: int

    @property
    def per_connection(self) -> float:
        """Bytes of server RSS per idle connection."""
        return (self.rss_after - self.rss_before) / max(1, self.connections)


def run_idle(server: ServerProcess, kind: Kind, count: int, settings: Settings) -> Idle:
    """RSS growth per greeted idle connection (after a small warm-up on the same server)."""

    def hold(connections: int, measure: Callable[[], None] | None = None) -> int:
        job = Job(kind=kind, mode="idle", host=HOST, port=server.port, games=connections,
                  first=0, total=connections)  # fmt: skip
        workers = Workers([job])
        held = int(workers.gather("ready", 120)[0]["connections"])
        if measure is not None:
            measure()
        workers.tell("go", 0.0, 0.0)
        workers.gather("done", 30)
        workers.finish()
        return held

    hold(min(100, count))  # first-use allocations: code paths, caches, pools
    time.sleep(1.0)
    rss_before, fds_before = server.rss(), server.fds()
    after: dict[str, int] = {}

    def measure() -> None:
        time.sleep(1.0)
        after["rss"], after["fds"] = server.rss(), server.fds()

    held = hold(count, measure)
    time.sleep(1.0)
    return Idle(
        server.label, held, rss_before, after["rss"], server.rss(), fds_before, after["fds"]
    )


# -- the report ---------------------------------------------------------------------


def _ms(value: float) -> str:
    return "-" if value != value else f"{value:.2f}"


def _ratio(ours: float, echo: float) -> str:
    return f"{ours / echo:.2f}" if echo and ours == ours and echo == echo else "-"


def table(title: str, runs: list[Run], log: Callable[[str], None]) -> None:
    """One row per figure, one column per server, then each of ours / each reference."""
    ours = [run for run in runs if run.kind == "ours"]
    references = [run for run in runs if run.kind != "ours"]
    columns = [*ours, *references]
    pairs = [(run, reference) for reference in references for run in ours]
    rows: list[tuple[str, list[str], list[str]]] = []

    def row(name: str, value: Callable[[Run], str], ratio: Callable[[Run], float] | None) -> None:
        ratios = [_ratio(ratio(run), ratio(ref)) if ratio else "" for run, ref in pairs]
        rows.append((name, [value(run) for run in columns], ratios))

    unit = " (ceilings: msgs/s)" if references else ""
    row("games held (ceilings: pairs)" if references else "games held", lambda r: str(r.games),
        None)  # fmt: skip
    row("connections held", lambda r: str(r.connections), None)
    row(f"moves/s{unit}", lambda r: f"{r.rate:.0f}", lambda r: r.rate)
    if any(run.rounds for run in columns):
        row("moves/s, each round", lambda r: _each(r, lambda x: f"{x.rate:.0f}"), None)
    row("round trip p50 ms", lambda r: _ms(r.percentile(50)), lambda r: r.percentile(50))
    row("round trip p90 ms", lambda r: _ms(r.percentile(90)), lambda r: r.percentile(90))
    row("round trip p99 ms", lambda r: _ms(r.percentile(99)), lambda r: r.percentile(99))
    row("round trip max ms", lambda r: _ms(r.percentile(100)), lambda r: r.percentile(100))
    row("round trips measured", lambda r: str(len(r.latencies)), None)
    row("server CPU % of a core", lambda r: f"{r.server_cpu * 100:.0f}", lambda r: r.server_cpu)
    row("server CPU us per move (ceilings: msg)", lambda r: _us(r.cpu_per_move),
        lambda r: r.cpu_per_move)  # fmt: skip
    if any(run.rounds for run in columns):
        row("CPU us per move, each round", lambda r: _each(r, lambda x: _us(x.cpu_per_move)),
            None)  # fmt: skip
    if any(len(run.node_cpu) > 1 or run.label.startswith("cluster") for run in ours):
        row("nodes (cross-node games)", _nodes, None)
        row("CPU us per move, each node", _per_node, None)
        row("PostgreSQL+Redis CPU us per move", _services, None)
    row("server RSS MiB", lambda r: f"{r.rss / 2**20:.1f}", lambda r: float(r.rss))
    row("server open fds", lambda r: str(r.fds), None)
    row("server's own time per move, us", lambda r: _handling(r), None)
    row("GC pauses gen 0/1/2", lambda r: _gc(r, "count"), None)
    row("GC pause mean ms", lambda r: _gc(r, "mean"), None)
    row("GC pauses over 5 ms", lambda r: _gc(r, "slow"), None)
    row("db commits per second", lambda r: _commits(r, "rate"), None)
    row("db commit mean ms", lambda r: _commits(r, "mean"), None)
    row("db commits over 10 ms", lambda r: _commits(r, "slow"), None)
    row("load generator CPU %", lambda r: f"{r.loadgen_cpu * 100:.0f}", None)
    row("other processes CPU %", lambda r: f"{r.other_cpu * 100:.0f}", None)
    row("games finished", lambda r: str(r.games_finished) if r.kind == "ours" else "-", None)
    row("mean frame pushed, bytes", lambda r: f"{r.state_bytes:.0f}", None)
    row("late sends (>5 ms)", lambda r: str(r.late) if r.mode == "paced" else "-", None)
    row("load generator's longest stall ms", lambda r: _ms(r.loadgen_stall * 1000), None)
    row("errors", lambda r: _errors(r), None)
    if any(run.analyses or run.analyses_refused for run in columns):
        row("analyses done (refused)", lambda r: f"{r.analyses} ({r.analyses_refused})", None)
    headers = [run.label for run in columns] + [f"{run.label}/{ref.label}" for run, ref in pairs]
    width = max(len(name) for name, _, _ in rows) + 1
    column = max(9, *(len(text) + 2 for text in headers + [v for _, vs, _ in rows for v in vs]))
    log("")
    log(title)
    log(" " * width + "".join(f"{header:>{column}}" for header in headers))
    for name, values, ratios in rows:
        log(f"{name:<{width}}" + "".join(f"{value:>{column}}" for value in values + ratios))


def _us(value: float) -> str:
    return "-" if value != value else f"{value:.0f}"


def _each(run: Run, show: Callable[[Run], str]) -> str:
    """One figure per saturation round, in the order run."""
    return "/".join(show(each) for each in run.rounds) if run.rounds else show(run)


def _nodes(run: Run) -> str:
    return f"{len(run.node_cpu)} ({run.cross:.0%})" if run.node_cpu else "-"


def _per_node(run: Run) -> str:
    """Each node's CPU per move it served (the games are spread evenly over the nodes)."""
    if not run.node_cpu or not run.rate:
        return "-"
    share = run.rate / len(run.node_cpu)
    return "/".join(_us(cpu / share * 1e6) for cpu in run.node_cpu)


def _services(run: Run) -> str:
    """The CPU of the database server and Redis (the server's CPU less its nodes')."""
    if not run.node_cpu or not run.rate:
        return "-"
    return _us(max(0.0, run.server_cpu - sum(run.node_cpu)) / run.rate * 1e6)


def _gc(run: Run, what: str) -> str:
    """The server's garbage collections over the window (``quoridor_gc_pause_seconds``)."""
    if run.kind != "ours":
        return "-"
    counts = []
    total = pauses = slow = 0.0
    for generation in range(3):
        count, seconds, buckets = run.histogram(
            "quoridor_gc_pause_seconds", f'generation="{generation}"'
        )
        counts.append(count)
        pauses += count
        total += seconds
        slow += count - buckets.get(0.005, count)
    if what == "count":
        return "/".join(f"{count:.0f}" for count in counts)
    if what == "mean":
        return f"{total / pauses * 1000:.2f}" if pauses else "-"
    return f"{slow:.0f}"


def _handling(run: Run) -> str:
    """Mean time the server spent in the core for one move (its request histogram)."""
    count, total, _ = run.histogram("quoridor_request_seconds", 'type="move"')
    return f"{total / count * 1e6:.0f}" if count else "-"


def _commits(run: Run, what: str) -> str:
    count, total, buckets = run.histogram("quoridor_db_write_seconds")
    if not count:
        return "-"
    if what == "rate":
        return f"{count / run.duration:.0f}"
    if what == "mean":
        return f"{total / count * 1000:.2f}"
    return f"{(count - buckets.get(0.01, count)) / count:.1%}"


def _errors(run: Run) -> str:
    count = sum(run.errors.values()) + run.closed_unexpectedly
    if not count:
        return "0"
    parts = [f"{code} {n}" for code, n in run.errors.most_common()]
    if run.closed_unexpectedly:
        parts.append(f"dropped {run.closed_unexpectedly}")
    return ", ".join(parts)


def idle_table(idles: list[Idle], log: Callable[[str], None]) -> None:
    log("")
    log(f"idle: {idles[0].connections} connections held open (greeted), on a fresh server")
    log(f"{'':<34}" + "".join(f"{idle.label:>14}" for idle in idles))
    rows = [
        ("server RSS before, MiB", [f"{i.rss_before / 2**20:.1f}" for i in idles]),
        ("server RSS with them open, MiB", [f"{i.rss_after / 2**20:.1f}" for i in idles]),
        ("server RSS after closing, MiB", [f"{i.rss_closed / 2**20:.1f}" for i in idles]),
        ("RSS per connection, KiB", [f"{i.per_connection / 1024:.1f}" for i in idles]),
        ("open fds with them open", [str(i.fds_after) for i in idles]),
    ]
    for name, values in rows:
        log(f"{name:<34}" + "".join(f"{value:>14}" for value in values))


@dataclass
class Verdict:
    name: str
    passed: bool | None
    detail: str

    def line(self) -> str:
        mark = "n/a " if self.passed is None else "PASS" if self.passed else "FAIL"
        return f"  [{mark}] {self.name}: {self.detail}"


def soak_verdict(run: Run) -> Verdict:
    """Flat: after the first third, the server's own RSS (``own_rss``: its processes, no
    database server) stays within 5 % (+2 MiB) of where it was; once every client has
    gone, no connection, room or session is left and the fds are back."""
    samples, before, after = run.samples, run.before, run.after
    if len(samples) < 4 or not after:
        return Verdict("soak: RSS and fds flat", None, "too few samples")
    base = samples[len(samples) // 3]
    peak_rss = max(s["own_rss"] for s in samples[len(samples) // 3 :])
    rss_ok = peak_rss <= base["own_rss"] * 1.05 + 2 * 2**20
    empty = after["connections"] == after["rooms"] == after["sessions"] == 0
    fds_ok = after["fds"] <= before["fds"] + 1 + run.fds_kept
    kept = f", Redis pools up to {run.fds_kept} more" if run.fds_kept else ""
    services = ""
    if base["rss"] != base["own_rss"]:
        services = (
            f" (with the database servers {base['rss'] / 2**20:.1f} MiB, then at most "
            f"{max(s['rss'] for s in samples[len(samples) // 3 :]) / 2**20:.1f})"
        )
    detail = (
        f"the server's RSS {base['own_rss'] / 2**20:.1f} MiB at {base['t']:.0f} s, peak "
        f"{peak_rss / 2**20:.1f} after{services}; {run.games_finished} games, "
        f"{run.reconnects} reconnections; all gone: "
        f"{after['connections']:.0f} connections, {after['rooms']:.0f} rooms, "
        f"{after['sessions']:.0f} sessions, fds {after['fds']:.0f} (fresh server "
        f"{before['fds']:.0f}{kept}), RSS {after['rss'] / 2**20:.1f} MiB"
    )
    passed = rss_ok and empty and fds_ok and not run.errors and not run.closed_unexpectedly
    return Verdict("soak: RSS flat, nothing left behind", passed, detail)


def _contended(*runs: Run) -> str:
    """A warning when other processes took a noticeable share of the CPU meanwhile."""
    worst = max(run.other_cpu for run in runs)
    if worst < 0.25:
        return ""
    return f" [other processes used up to {worst * 100:.0f} % of a core meanwhile: unreliable]"


def verdicts(
    paced: list[Run], saturated: list[Run], idles: list[Idle], soaks: list[Run]
) -> list[Verdict]:
    found: list[Verdict] = []
    paced_echo = next((run for run in paced if run.kind == "echo"), None)
    for run in (r for r in paced if r.kind == "ours"):
        p99, worst = run.percentile(99), run.percentile(100)
        moving = run.rate >= 0.95 * run.games and not run.errors and not run.closed_unexpectedly
        enough = run.games >= TARGET_GAMES
        passed = (p99 < TARGET_P99_MS and worst < TARGET_WORST_MS and moving) if enough else None
        detail = (
            f"{run.games} games, {run.rate:.0f} moves/s, p99 {p99:.2f} ms, worst {worst:.2f} ms"
            + ("" if moving else " (games did not keep pace or failed)")
            + ("" if enough else f" (fewer than {TARGET_GAMES} games)")
            + f"; the load generator's own longest stall {run.loadgen_stall * 1000:.2f} ms"
            + (
                ""
                if paced_echo is None
                else f"; echo in the same run: p99 {paced_echo.percentile(99):.2f} ms, worst "
                f"{paced_echo.percentile(100):.2f} ms"
            )
        )
        found.append(
            Verdict(
                f"paced, {run.label}: {TARGET_GAMES} games, p99 < {TARGET_P99_MS:g} ms, "
                f"worst < {TARGET_WORST_MS:g} ms",
                passed,
                detail + _contended(run),
            )
        )
    echo = next((run for run in saturated if run.kind == "echo"), None)
    for run in (r for r in saturated if r.kind == "ours"):
        # memory@main: the server of another checkout; memory+compact: moved events.
        store = run.label.split("@")[0].split("+")[0]
        target = TARGET_SATURATION_RATIO.get(store, min(TARGET_SATURATION_RATIO.values()))
        if echo is None:
            found.append(Verdict(f"saturation, {run.label}", None, "no echo run"))
        else:
            ratio = run.rate / echo.rate if echo.rate else 0.0
            detail = (
                f"median {run.rate:.0f} moves/s vs {echo.rate:.0f} echo msgs/s: ratio {ratio:.3f}"
            )
            if run.rate and echo.rate and run.server_cpu and echo.server_cpu:
                # Per CPU second, which other load on the machine disturbs less.
                per_cpu = (run.rate / run.server_cpu) / (echo.rate / echo.server_cpu)
                detail += f"; per server CPU second {per_cpu:.3f}"
            found.append(
                Verdict(
                    f"saturation, {run.label}: moves/s >= {target:g} x echo msgs/s",
                    ratio >= target and not run.errors,
                    detail + _contended(run, echo),
                )
            )
        ceilings = ", ".join(
            f"{ref.label} {ref.cpu_per_move:.0f} per msg" for ref in saturated if ref.kind != "ours"
        )
        limit = TARGET_CPU_US.get(store)
        found.append(
            Verdict(
                f"CPU per move, {run.label}"
                + ("" if limit is None else f": < {limit:g} us at saturation"),
                None if limit is None else run.cpu_per_move < limit,
                f"{run.cpu_per_move:.0f} us per move (rounds "
                f"{_each(run, lambda x: _us(x.cpu_per_move))})"
                + (f"; ceilings: {ceilings}" if ceilings else "")
                + _contended(run),
            )
        )
    for idle in (i for i in idles if i.label != "echo"):
        kib = idle.per_connection / 1024
        found.append(
            Verdict(
                f"idle, {idle.label}: <= {TARGET_IDLE_KIB:g} KiB per greeted connection",
                kib <= TARGET_IDLE_KIB,
                f"{kib:.1f} KiB per greeted connection ({idle.connections} held)",
            )
        )
    found += [soak_verdict(run) for run in soaks]
    return found


# -- main -----------------------------------------------------------------------------


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Load-test the game server next to bare websockets ceilings (echo, fanout)."
    )
    parser.add_argument("--mode", choices=["all", "paced", "saturate", "idle", "soak", "abuse"],
                        default="all")  # fmt: skip
    parser.add_argument("--attackers", type=int, default=20,
                        help="abuse: addresses flooding the lobby (default 20)")  # fmt: skip
    parser.add_argument("--games", type=int, default=1000, help="paced games (default 1000)")
    parser.add_argument("--saturate-games", type=int, default=200,
                        help="games in saturation and soak (default 200)")  # fmt: skip
    parser.add_argument("--idle", type=int, default=2000,
                        help="idle connections (default 2000)")  # fmt: skip
    parser.add_argument("--duration", type=float, default=None,
                        help="seconds measured: paced 20, saturate 8, soak 180 "
                        "(20 in --mode all)")  # fmt: skip
    parser.add_argument(
        "--rounds",
        type=int,
        default=ROUNDS,
        help=f"saturation runs per server, median reported (default {ROUNDS})",
    )
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    parser.add_argument("--db", choices=["both", "memory", "sqlite", "postgresql", "all",
                                         "cluster", "cluster:1", "cluster:2"],
                        default="both",
                        help="the server's storage: memory (--db ''), sqlite, both of those, "
                        "postgresql (a PostgreSQL the benchmark starts, as the tests do: "
                        "fsync off, so it survives a crash of PostgreSQL but not of the "
                        "machine, like SQLite's synchronous=normal; its processes' CPU "
                        "counts as the server's), all three, or cluster: SQLite, then one "
                        "node and two nodes of a cluster (--redis, on PostgreSQL and a Redis "
                        "the benchmark starts; their CPU counts as the cluster's); cluster:1 or "
                        "cluster:2 runs only that one")  # fmt: skip
    parser.add_argument("--cross", type=float, default=0.5,
                        help="cluster: the share of games whose two players connect to "
                        "different nodes (default 0.5, what a balancer placing connections "
                        "at random gives with two nodes)")  # fmt: skip
    parser.add_argument("--spectators", type=int, default=0,
                        help="spectators per game (ours only)")  # fmt: skip
    parser.add_argument("--workers", type=int, default=1, help="load generator processes")
    parser.add_argument("--quiet-wait", type=float, default=0.0,
                        help="before each measurement, wait up to this many seconds for "
                        "other processes to use under a quarter of a core")  # fmt: skip
    parser.add_argument("--scripts", type=int, default=64, help="distinct games to replay")
    parser.add_argument(
        "--analysts",
        type=int,
        default=0,
        help="also run paced again with N clients asking for analyses of the "
        "finished games meanwhile (the moves' round trip must not suffer)",
    )
    parser.add_argument("--compact", choices=["off", "on", "both"], default="both",
                        help="paced and saturated games of ours with whole states after each "
                        "move (off), with compact move events (on: PROTOCOL.md section 7a), "
                        "or both, labelled +compact (the default)")  # fmt: skip
    parser.add_argument("--no-echo", action="store_true", help="skip the echo and fanout ceilings")
    parser.add_argument("--sansio", action="store_true",
                        help="one more ceiling: the fanout on websockets' sans-I/O core from a "
                        "plain asyncio.Protocol (no task per connection)")  # fmt: skip
    parser.add_argument("--against", type=Path, default=None,
                        help="also run the game server of this checkout (another branch, "
                        "main) in the same run, after this one's: before and after")  # fmt: skip
    parser.add_argument("--compiled", action="store_true",
                        help="also run this checkout's server as deploy/compile.py builds it "
                        "(engine and move path compiled by mypyc), in the same run")  # fmt: skip
    parser.add_argument("--profile", type=Path, default=None,
                        help="run the server under cProfile, save .prof files here, "
                        "print the hot spots")  # fmt: skip
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    if args.mode == "abuse":  # a run of its own: see bench/_load_abuse.py
        games = 200 if args.games == 1000 else args.games
        return _load_abuse.run(_ROOT, games, args.attackers, args.duration or 20.0)
    began = time.monotonic()

    def log(text: str) -> None:
        print(text, flush=True)

    def progress(text: str) -> None:
        print(f"[{time.monotonic() - began:5.0f} s] {text}", file=sys.stderr, flush=True)

    modes = ["idle", "paced", "saturate", "soak"] if args.mode == "all" else [args.mode]
    durations = {"paced": 20.0, "saturate": 8.0, "soak": 20.0 if args.mode == "all" else 180.0}
    if args.duration is not None:
        durations = dict.fromkeys(durations, args.duration)
    dbs = {
        "both": ["memory", "sqlite"],
        "all": ["memory", "sqlite", "postgresql"],
        "cluster": ["sqlite", "cluster:1", "cluster:2"],
    }.get(args.db, [args.db])

    progress(f"computing {args.scripts} game scripts with the engine")
    scripts = make_scripts(args.scripts)
    plies = [len(script) for script in scripts]
    walls = sum(move[-1] in "hv" for script in scripts for move in script)
    settings = Settings(
        args.workers, args.warmup, scripts, args.spectators, log=progress,
        quiet_wait=args.quiet_wait,
    )  # fmt: skip

    paced: list[Run] = []
    saturated: list[Run] = []
    idles: list[Idle] = []
    soaks: list[Run] = []
    temp = Path(tempfile.mkdtemp(prefix="quoridor-load-"))
    postgres = redis = None
    if "postgresql" in dbs or args.db.startswith("cluster"):
        from tests.services import PostgresServer

        progress("starting PostgreSQL")
        postgres = PostgresServer().start()
    if args.db.startswith("cluster"):
        from tests.services import RedisServer

        progress("starting Redis")
        redis = RedisServer().start()
    databases = itertools.count(1)

    def storage(db: str, name: str) -> str:
        if db == "memory":
            return ""
        if db == "postgresql" or db.startswith("cluster"):
            assert postgres is not None
            return postgres.create_database(f"bench{next(databases)}")
        return str(temp / name)

    checkouts = [(_ROOT, "")]
    if args.against is not None:
        checkouts.append((args.against.resolve(), f"@{args.against.resolve().name}"))
    if args.compiled:
        progress("building the compiled server (deploy/compile.py, about a minute)")
        checkouts.append((build_compiled(temp / "compiled"), "@compiled"))

    def ours(
        path: str, profile: Path | None, db: str, *extra: str, root: Path = _ROOT, suffix: str = ""
    ) -> ServerProcess:
        if db.startswith("cluster"):
            return cluster(path, profile, db + suffix, int(db.split(":")[1]), root).start()
        server = our_server(path, profile, db + suffix, *extra, root=root)
        if postgres is not None and db == "postgresql":
            server.database = postgres.pids
        return server.start()

    def cluster(
        path: str, profile: Path | None, label: str, size: int, root: Path
    ) -> ServerProcess:
        assert postgres is not None
        assert redis is not None
        process = redis.process
        assert process is not None
        prefix = f"bench{next(databases)}:"
        nodes = [
            our_server(
                path, profile, f"{label}-n{number}", "--redis", redis.url, "--redis-prefix",
                prefix, "--node-id", f"n{number}", "--cluster-secret", "benchmark cluster",
                root=root,
            )
            for number in range(1, size + 1)
        ]  # fmt: skip
        return ClusterServer(label, nodes, lambda: [*postgres.pids(), process.pid], args.cross)

    # The echo ceiling's saturation rounds interleave with the game servers' (one after each
    # round of theirs), so that the ratio compares figures taken minutes apart at most.
    echo: ServerProcess | None = None
    echo_rounds: list[Run] = []
    if "saturate" in modes and not args.no_echo:
        echo = echo_server().start()
    try:
        for db in dbs:
            paths = [storage(db, f"bench{suffix}.db") for _, suffix in checkouts]
            if "idle" in modes and not db.startswith("cluster"):
                for (root, suffix), path in zip(checkouts, paths, strict=True):
                    server = ours(path, None, db, root=root, suffix=suffix)
                    try:
                        progress(f"{server.label}: idle, {args.idle} connections")
                        idles.append(run_idle(server, "ours", args.idle, settings))
                    finally:
                        server.stop()
            if "paced" in modes or "saturate" in modes:
                if db == "postgresql" or db.startswith("cluster"):  # a fresh database
                    paths = [storage(db, f"bench{suffix}.db") for _, suffix in checkouts]
                servers: list[ServerProcess] = []
                try:
                    for (root, suffix), path in zip(checkouts, paths, strict=True):
                        servers.append(ours(path, args.profile, db, root=root, suffix=suffix))
                    runs = measure_ours(
                        servers, modes, durations, settings, args, progress, echo, echo_rounds
                    )
                    paced += runs[0]
                    saturated += runs[1]
                finally:
                    for server in servers:
                        server.stop()
                        _check_exit(server, progress)
            for path in paths:
                if db == "sqlite" and Path(path).exists():
                    Path(path).unlink()
        settings.echo_size = echo_frame_size(paced + saturated)
        if not args.no_echo and {"idle", "paced", "saturate"} & set(modes):
            if "idle" in modes:
                server = echo_server().start()
                try:
                    progress(f"echo: idle, {args.idle} connections")
                    idles.append(run_idle(server, "echo", args.idle, settings))
                finally:
                    server.stop()
            if "paced" in modes or "saturate" in modes:
                server = echo_server().start()
                try:
                    if "paced" in modes:
                        progress(f"echo: paced, {args.games} pairs, {settings.echo_size} B")
                        paced.append(
                            run_games(
                                server, "echo", "paced", args.games, durations["paced"], settings
                            )
                        )
                    if "saturate" in modes and echo_rounds:
                        saturated.append(median_of(echo_rounds))
                    elif "saturate" in modes:
                        progress(f"echo: saturate, {args.saturate_games} pairs")
                        saturated.append(
                            saturate(server, "echo", args.saturate_games,
                                     durations["saturate"], settings, args.rounds)
                        )  # fmt: skip
                finally:
                    server.stop()
            if "saturate" in modes:
                for sansio in [False, True] if args.sansio else [False]:
                    server = echo_server(fanout=True, sansio=sansio).start()
                    try:
                        progress(f"{server.label}: saturate, {args.saturate_games} pairs")
                        saturated.append(
                            saturate(server, "fanout", args.saturate_games,
                                     durations["saturate"], settings, args.rounds)
                        )  # fmt: skip
                    finally:
                        server.stop()
        if "soak" in modes:
            db = dbs[0]
            path = storage(db, "soak.db")
            server = ours(path, None, db, "--deliberate-grace", str(SOAK_GRACE))
            try:
                progress(f"{db}: soak, {args.saturate_games} games, {durations['soak']:.0f} s")
                every = max(2.0, durations["soak"] / 15)
                soaks.append(
                    run_games(
                        server,
                        "ours",
                        "soak",
                        args.saturate_games,
                        durations["soak"],
                        settings,
                        churn=2,
                        sample_every=every,
                    )
                )
            finally:
                server.stop()
    finally:
        if echo is not None:
            echo.stop()
        shutil.rmtree(temp, ignore_errors=True)
        if postgres is not None:
            postgres.close()
        if redis is not None:
            redis.close()

    log("Quoridor server load benchmark (bench/load.py)")
    log(
        f"machine: {os.cpu_count()} CPUs, {platform.python_implementation()} "
        f"{platform.python_version()}, websockets {metadata.version('websockets')}, "
        f"msgspec {metadata.version('msgspec')}, uvloop {_version('uvloop')}; "
        f"load generator: {args.workers} process(es), lean client (bench/_load_wire.py)"
    )
    log(
        f"scripts: {len(scripts)} legal 9x9 games, {statistics.mean(plies):.0f} plies on "
        f"average ({min(plies)}-{max(plies)}), {walls / sum(plies):.0%} of moves are walls; "
        f"spectators per game: {args.spectators}; warm-up {args.warmup:g} s"
    )
    log(
        "round trip: a move sent -> its state pushed back to the mover. Ceilings, on the same "
        "sockets and schedule with frames of a state's size: echo (each frame back to its "
        "sender) and fanout (each frame to both sockets of the pair, as a state goes to both "
        "players: the game server's I/O without the game). Ratios: ours / ceiling."
    )
    if idles:
        idle_table(idles, log)
    if paced:
        table(
            f"paced: each game moves once a second, {durations['paced']:g} s measured",
            paced,
            log,
        )
    if saturated:
        table(
            f"saturate: every game moves as soon as its state arrives, "
            f"{durations['saturate']:g} s measured",
            saturated,
            log,
        )
    for run in soaks:
        log("")
        log(
            f"soak ({run.label}): {run.games} games flat out, players reconnect after every "
            f"other game, {run.duration:g} s; {run.rate:.0f} moves/s, errors {_errors(run)}"
        )
        log(
            f"{'t s':>6}{'RSS MiB':>10}{'fds':>7}{'conns':>7}{'rooms':>8}{'sessions':>10}"
            f"{'moves':>10}{'CPU %':>7}"
        )
        for s in run.samples:
            log(
                f"{s['t']:6.0f}{s['rss'] / 2**20:10.1f}{s['fds']:7.0f}{s['connections']:7.0f}"
                f"{s['rooms']:8.0f}{s['sessions']:10.0f}{s['moves']:10.0f}{s['cpu'] * 100:7.0f}"
            )
    found = verdicts(paced, saturated, idles, soaks)
    log("")
    log("targets (2-core machine):")
    for verdict in found:
        log(verdict.line())
    if args.profile is not None:
        _print_profiles(args.profile, log)
    log(f"\ntotal time {time.monotonic() - began:.0f} s")
    return 1 if any(v.passed is False for v in found) else 0


def measure_ours(
    servers: list[ServerProcess],
    modes: list[str],
    durations: dict[str, float],
    settings: Settings,
    args: argparse.Namespace,
    progress: Callable[[str], None],
    echo: ServerProcess | None = None,
    echo_rounds: list[Run] | None = None,
) -> tuple[list[Run], list[Run]]:
    """Paced and saturated runs of the game servers (this checkout's, and ``--against``'s):
    saturation rounds alternate between them, so a busy spell of a shared machine falls on
    both rather than on one. With ``echo``, a saturation round of the echo ceiling follows
    each round of theirs, appended to ``echo_rounds``."""
    paced: list[Run] = []
    kinds = {server.label: client_kinds(server, args.compact) for server in servers}
    for server in servers:
        for compact in kinds[server.label] if "paced" in modes else []:
            progress(f"{server.label}: paced, {args.games} games{_compact(compact)}")
            paced.append(
                run_games(
                    server, "ours", "paced", args.games, durations["paced"], settings,
                    compact=compact,
                )
            )  # fmt: skip
        if "paced" in modes and args.analysts:
            progress(f"{server.label}: paced, {args.games} games, {args.analysts} analysts")
            settings.analysts = args.analysts
            run = run_games(server, "ours", "paced", args.games, durations["paced"], settings)
            settings.analysts = 0
            run.label += "+analyses"
            paced.append(run)
    if "saturate" not in modes:
        return paced, []
    rounds: dict[tuple[str, bool], list[Run]] = {
        (server.label, compact): [] for server in servers for compact in kinds[server.label]
    }
    for number in range(args.rounds):
        for server in servers:
            for compact in kinds[server.label]:
                progress(
                    f"{server.label}: saturate, {args.saturate_games} games{_compact(compact)}, "
                    f"round {number + 1} of {args.rounds}"
                )
                rounds[server.label, compact].append(
                    run_games(
                        server, "ours", "saturate", args.saturate_games, durations["saturate"],
                        settings, compact=compact,
                    )
                )  # fmt: skip
        if echo is not None and echo_rounds is not None:
            settings.echo_size = echo_frame_size(paced + [r for rs in rounds.values() for r in rs])
            progress(
                f"echo: saturate, {args.saturate_games} pairs, {settings.echo_size} B, "
                f"after round {number + 1} of {args.rounds}"
            )
            echo_rounds.append(
                run_games(echo, "echo", "saturate", args.saturate_games, durations["saturate"],
                          settings)
            )  # fmt: skip
    return paced, [median_of(runs) for runs in rounds.values()]


def echo_frame_size(runs: list[Run]) -> int:
    """The ceilings' frame size: the mean whole state of the runs so far (not the compact
    events'), or 700 bytes when there is none."""
    sizes = [r.state_bytes for r in runs if r.state_bytes and not r.label.endswith("+compact")]
    return round(statistics.mean(sizes)) if sizes else 700


def _compact(compact: bool) -> str:
    return ", compact move events" if compact else ""


def client_kinds(server: ServerProcess, choice: str) -> list[bool]:
    """Whether its clients ask for compact move events, run by run: ``--compact`` off
    (whole states), on, or both; never on for a server that does not send them (a
    checkout of ``--against`` from before them)."""
    wanted = {"off": [False], "on": [True], "both": [False, True]}[choice]
    if True in wanted and not speaks_compact(server.port):
        return [False]
    return wanted


def speaks_compact(port: int) -> bool:
    """Whether the server at ``port`` welcomes a ``hello`` asking for compact events."""
    from websockets.sync.client import connect

    with connect(f"ws://{HOST}:{port}", compression=None) as ws:
        ws.send(json.dumps({"type": "hello", "version": "1.0", "name": "probe", "compact": True}))
        return bool(json.loads(ws.recv(timeout=10)).get("compact"))


def _check_exit(server: ServerProcess, progress: Callable[[str], None]) -> None:
    errors = [line for line in server.log if "Traceback" in line or "ERROR" in line]
    if errors:
        progress(f"{server.label}: the server logged errors:\n" + "".join(server.log[-40:]))
    warnings = Counter(
        re.sub(r"\d+", "N", line.strip())[:160] for line in server.log if "WARNING" in line
    )
    if warnings:
        top = "".join(f"  {count} x {line}\n" for line, count in warnings.most_common(8))
        progress(f"{server.label}: the server logged warnings:\n{top}")


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def _print_profiles(folder: Path, log: Callable[[str], None]) -> None:
    import io
    import pstats

    for path in sorted(folder.glob("server-*.prof")):
        stream = io.StringIO()
        stats = pstats.Stats(str(path), stream=stream)
        stats.strip_dirs().sort_stats("tottime").print_stats(25)
        log(f"\nprofile {path} (by own time):")
        log(stream.getvalue())


if __name__ == "__main__":
    raise SystemExit(main())
