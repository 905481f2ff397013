"""The load generator's worker process: scripted games over lean websockets.

The orchestrator (``bench/load.py``) starts one or more of these with
``multiprocessing`` and talks to each over a pipe::

    worker                              orchestrator
      <- Job (what to open, which mode)
      -> ("ready", info)                 every game seated, every idle socket greeted
      <- ("go", start, end)              measure moves sent in [start, end) (time.monotonic)
      -> ("done", Result)
      <- ("stop",)
      -> ("closed", None)                every connection closed

Games are callback-driven state machines (no task per message): a frame is
decoded in ``data_received``, and the next move goes out from there (or from a
timer in paced mode). Every game replays a precomputed legal script, so the
worker never runs the rules engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import time
import traceback
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Literal

import msgspec

from bench._load_wire import Wire
from protocol.codec import encode
from protocol.messages import VERSION, Create, Hello, Join, Leave, MoveRequest, Resign, Watch

Kind = Literal["ours", "echo", "fanout"]
Mode = Literal["paced", "saturate", "idle", "soak"]

STALL_PROBE = 0.005
"""Seconds between two wake-ups of the worker's stall probe (``Stalls``)."""
OPEN_CONCURRENCY = 64
"""Connections opened at once during set-up (the server's listen backlog is 1024)."""


@dataclass
class Job:
    kind: Kind
    mode: Mode
    host: str
    port: int
    games: int
    """Games this worker plays (idle mode: connections it opens)."""
    first: int
    """Global index of this worker's first game, to spread paced phases."""
    total: int
    """Games over all workers."""
    scripts: list[list[str]] = field(default_factory=list)
    spectators: int = 0
    period: float = 1.0
    """Paced mode: seconds between two moves of one game."""
    echo_size: int = 700
    """Echo: bytes in each message."""
    churn: int = 0
    """Soak: every ``churn``-th game of a pair ends with both reconnecting (0: never)."""
    compact: bool = False
    """Ours: the players and spectators ask for ``moved`` events (PROTOCOL.md, section 7a)."""
    ports: list[int] = field(default_factory=list)
    """A cluster's nodes (ours only; empty: ``port`` alone). Game ``n``'s first player
    connects to node ``n % len(ports)``; its second to the same node, or to the next one
    in a ``cross`` share of the games (spread evenly over the game numbers)."""
    cross: float = 0.0

    def nodes_of(self, game: int) -> tuple[int, int]:
        """The ports game ``game``'s two players connect to."""
        if not self.ports:
            return self.port, self.port
        first = game % len(self.ports)
        crossing = int((game + 1) * self.cross) > int(game * self.cross)
        second = (first + 1) % len(self.ports) if crossing else first
        return self.ports[first], self.ports[second]


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)
    """Round trips (seconds) of moves sent inside the window."""
    replies: int = 0
    """Replies received inside the window."""
    games_finished: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    closed_unexpectedly: int = 0
    late: int = 0
    """Paced: moves sent more than 5 ms after their tick (the client fell behind)."""
    stall: float = 0.0
    """The longest this worker's event loop woke up late inside the window (seconds): a
    stall of the load generator's own, which the round trips it measured then include."""
    state_bytes: int = 0
    states: int = 0
    connections: int = 0
    games: int = 0
    cpu: float = 0.0
    """This worker's CPU seconds inside the window."""
    reconnects: int = 0


class Msg(msgspec.Struct):
    """The few fields the players look at, whatever the message type."""

    type: str
    room: str | None = None
    status: str = ""
    ply: int = 0
    code: str = ""


_decode = msgspec.json.Decoder(Msg).decode


class Runner:
    """Everything one worker drives, and what it measured."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.loop = asyncio.get_running_loop()
        self.result = Result()
        self.start = float("inf")
        self.end = float("inf")
        self.sending = False
        """True from "go" until the window closed: moves may be sent."""
        self.tearing_down = False
        self.go_at = 0.0
        self.wires: set[Wire] = set()
        self.limit = asyncio.Semaphore(OPEN_CONCURRENCY)
        self.frames = [
            [encode(MoveRequest(id=ply, move=move, ply=ply)) for ply, move in enumerate(script)]
            for script in job.scripts
        ]
        self.tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = self.loop.create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def open(
        self, on_message: Callable[[Wire, bytes], None], owner: object, port: int = 0
    ) -> Wire:
        async with self.limit:
            for attempt in range(5):
                try:
                    wire = await Wire.connect(
                        self.job.host, port or self.job.port, on_message, self.closed, owner
                    )
                    break
                except OSError:
                    if attempt == 4:
                        raise
                    await asyncio.sleep(0.2 * (attempt + 1))
        self.wires.add(wire)
        self.result.connections = max(self.result.connections, len(self.wires))
        return wire

    def closed(self, wire: Wire) -> None:
        self.wires.discard(wire)
        if not self.tearing_down and not wire.closing:
            self.result.closed_unexpectedly += 1

    def record(self, sent: float, now: float) -> None:
        if self.start <= sent < self.end:
            self.result.latencies.append(now - sent)
        if self.start <= now < self.end:
            self.result.replies += 1

    async def close_all(self) -> None:
        self.tearing_down = True
        wires = list(self.wires)
        await asyncio.gather(*(wire.close() for wire in wires), return_exceptions=True)


class OurGame:
    """Two players (and spectators) replaying scripts, game after game, in new rooms."""

    def __init__(self, runner: Runner, index: int) -> None:
        self.runner = runner
        self.index = index
        job = runner.job
        self.phase = (index / max(1, job.total)) * job.period
        self.script = index % len(runner.frames)
        self.frames = runner.frames[self.script]
        self.sent = [0.0] * len(self.frames)
        self.a: Wire | None = None
        self.b: Wire | None = None
        self.watchers: list[Wire] = []
        self.room: str | None = None
        self.finished_seen = 0
        self.left = 0
        self.played = 0
        """Games this pair finished."""
        self.tick = 0.0
        self.ready: asyncio.Future[None] = runner.loop.create_future()
        self.failed = False

    def members(self) -> list[Wire]:
        return [wire for wire in (self.a, self.b, *self.watchers) if wire is not None]

    async def connect(self) -> None:
        runner = self.runner
        port_a, port_b = runner.job.nodes_of(self.index)
        self.a = await runner.open(self.on_message, "a", port_a)
        self.b = await runner.open(self.on_message, "b", port_b)
        self.watchers = [
            await runner.open(self.on_message, "watcher", port_a)
            for _ in range(runner.job.spectators)
        ]
        for number, wire in enumerate(self.members()):
            hello = Hello(
                version=VERSION, name=f"g{self.index}-{number}", compact=runner.job.compact
            )
            wire.send(encode(hello))
        self.new_room()

    def new_room(self) -> None:
        assert self.a is not None
        self.room = None
        self.finished_seen = self.left = 0
        self.sent = [0.0] * len(self.frames)
        self.a.send(encode(Create(private=True)))

    def mover(self, ply: int) -> Wire | None:
        return self.a if ply % 2 == 0 else self.b

    def on_message(self, wire: Wire, data: bytes) -> None:
        now = time.perf_counter()
        msg = _decode(data)
        kind = msg.type
        runner = self.runner
        if kind == "state" or kind == "moved":
            runner.result.states += 1
            runner.result.state_bytes += len(data)
            if kind == "moved":
                msg.status = "playing"  # a ``moved`` event comes only while the game goes on
            self.on_state(wire, msg, now)
        elif kind == "joined":
            if wire is self.a and msg.room is not None:
                self.room = msg.room
                assert self.b is not None
                self.b.send(encode(Join(room=msg.room)))
                for watcher in self.watchers:
                    watcher.send(encode(Watch(room=msg.room)))
        elif kind == "left":
            self.left += 1
            if self.left == len(self.members()) and not runner.tearing_down:
                self.next_game()
        elif kind == "error" and msg.code == "service_unavailable" and self.room is None:
            # A cluster node that cannot start games for a moment (Redis or PostgreSQL
            # away) asks to try again in a moment: as a client would.
            runner.loop.call_later(0.05, self.new_room)
        elif kind == "error" and not runner.tearing_down:
            runner.result.errors[msg.code] += 1
            self.failed = True

    def on_state(self, wire: Wire, msg: Msg, now: float) -> None:
        if wire.owner == "watcher":
            return
        ply = msg.ply
        # self.sent[ply]: 0 not yet, -2 scheduled, > 0 the time it was sent, -1 answered.
        if ply > 0 and self.mover(ply - 1) is wire and self.sent[ply - 1] > 0:
            self.runner.record(self.sent[ply - 1], now)
            self.sent[ply - 1] = -1.0
        if msg.status == "playing":
            if not self.ready.done():
                self.ready.set_result(None)
            if (
                self.runner.sending
                and self.mover(ply) is wire
                and ply < len(self.frames)
                and self.sent[ply] == 0.0
            ):
                self.sent[ply] = -2.0
                self.schedule(ply)
        elif msg.status == "finished" and ply == len(self.frames):
            self.finished_seen += 1
            if self.finished_seen == 2:
                self.played += 1
                self.runner.result.games_finished += 1
                self.end_game()

    def schedule(self, ply: int) -> None:
        runner = self.runner
        if not runner.sending or self.failed:
            return
        if runner.job.mode != "paced":
            self.send_move(ply)
            return
        period = runner.job.period
        if self.tick == 0.0:
            self.tick = runner.go_at + self.phase
        now = time.monotonic()
        if self.tick <= now:
            if now - self.tick > 0.005:
                runner.result.late += 1
            # Never bunch moves up to catch up: the next tick is a period after this move.
            self.tick = max(self.tick, now - period * 0.5)
            self.send_move(ply)
        else:
            runner.loop.call_later(self.tick - now, self.send_move, ply)

    def send_move(self, ply: int) -> None:
        runner = self.runner
        if not runner.sending or self.failed:
            return
        wire = self.mover(ply)
        assert wire is not None
        self.tick += runner.job.period
        self.sent[ply] = time.perf_counter()
        wire.send(self.frames[ply])

    def end_game(self) -> None:
        runner = self.runner
        churn = runner.job.churn
        if churn and self.played % churn == 0:
            runner.spawn(self.reconnect())
            return
        for wire in self.members():
            wire.send(encode(Leave()))

    def next_game(self) -> None:
        self.script = (self.script + 1) % len(self.runner.frames)
        self.frames = self.runner.frames[self.script]
        self.new_room()

    async def reconnect(self) -> None:
        """Churn: everyone closes and comes back as a new session, to a new room."""
        runner = self.runner
        old = self.members()
        await asyncio.gather(*(wire.close() for wire in old), return_exceptions=True)
        if runner.tearing_down:
            return
        runner.result.reconnects += len(old)
        try:
            await self.connect_again()
        except OSError:
            runner.result.errors["reconnect_failed"] += 1
            self.failed = True

    async def connect_again(self) -> None:
        self.script = (self.script + 1) % len(self.runner.frames)
        self.frames = self.runner.frames[self.script]
        await self.connect()

    def resign(self) -> None:
        """End a game in progress before leaving, so that the server can forget its room."""
        for wire in (self.a, self.b):
            if wire is not None:
                wire.send(encode(Resign()))


class EchoGame:
    """A game's twin for the ceilings: two sockets taking turns, one frame a turn.

    echo: the frame comes back to its sender only. fanout: the server sends it
    to both sockets, as the game server sends a state; the turn passes when the
    other socket has it, and the round trip is timed on the sender's copy.
    """

    def __init__(self, runner: Runner, index: int) -> None:
        self.runner = runner
        self.index = index
        job = runner.job
        self.fanout = job.kind == "fanout"
        self.phase = (index / max(1, job.total)) * job.period
        pad = max(0, job.echo_size - 40)
        self.payload = b'{"type":"echo","id":%d,"pad":"%s"}' % (index, b"x" * pad)
        self.a: Wire | None = None
        self.b: Wire | None = None
        self.turn = 0
        """The frame to send next (even: a's, odd: b's)."""
        self.sent: dict[int, float] = {}
        self.counts = {"a": 0, "b": 0}
        """Frames each socket received: frame n is turn n's."""
        self.tick = 0.0
        self.ready: asyncio.Future[None] = runner.loop.create_future()
        self.failed = False

    async def connect(self) -> None:
        self.a = await self.runner.open(self.on_message, "a")
        self.b = await self.runner.open(self.on_message, "b")
        if self.fanout:
            key = b"pair-%d" % self.index
            self.a.send(key)
            self.b.send(key)
        self.ready.set_result(None)

    def members(self) -> list[Wire]:
        return [wire for wire in (self.a, self.b) if wire is not None]

    def on_message(self, wire: Wire, data: bytes) -> None:
        now = time.perf_counter()
        result = self.runner.result
        result.states += 1
        result.state_bytes += len(data)
        if not self.fanout:
            n = self.turn
        else:
            n = self.counts[str(wire.owner)]
            self.counts[str(wire.owner)] = n + 1
        if (wire is self.a) == (n % 2 == 0):  # the sender's copy
            sent = self.sent.pop(n, 0.0)
            if sent > 0:
                self.runner.record(sent, now)
            if self.fanout:
                return
        self.turn = n + 1
        self.schedule()

    def schedule(self) -> None:
        runner = self.runner
        if not runner.sending:
            return
        if runner.job.mode != "paced":
            self.send_move()
            return
        if self.tick == 0.0:
            self.tick = runner.go_at + self.phase
        now = time.monotonic()
        if self.tick <= now:
            if now - self.tick > 0.005:
                runner.result.late += 1
            self.tick = max(self.tick, now - runner.job.period * 0.5)
            self.send_move()
        else:
            runner.loop.call_later(self.tick - now, self.send_move)

    def send_move(self) -> None:
        if not self.runner.sending:
            return
        wire = self.a if self.turn % 2 == 0 else self.b
        assert wire is not None
        self.tick += self.runner.job.period
        self.sent[self.turn] = time.perf_counter()
        wire.send(self.payload)

    def resign(self) -> None:
        pass


async def _open_idle(runner: Runner, count: int) -> int:
    """Open ``count`` connections, greet each (ours) or echo once (echo); hold them."""
    job = runner.job
    greeted = 0
    done = runner.loop.create_future()

    def on_message(wire: Wire, data: bytes) -> None:
        nonlocal greeted
        greeted += 1
        if greeted == count and not done.done():
            done.set_result(None)

    async def one(number: int) -> None:
        wire = await runner.open(on_message, "idle")
        if job.kind == "ours":
            wire.send(encode(Hello(version=VERSION, name=f"idle{job.first + number}")))
        else:
            wire.send(b'{"type":"hello","version":"1.0","name":"idle"}')

    await asyncio.gather(*(one(number) for number in range(count)))
    await asyncio.wait_for(done, 60)
    return greeted


class Stalls:
    """Wakes up every ``STALL_PROBE`` seconds and keeps the longest lateness seen: how long
    the worker itself (its event loop, the CPU it waits for on a shared machine) held up
    the replies it timed."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.longest = 0.0
        self._due = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._due = time.monotonic() + STALL_PROBE
        self._timer = self.loop.call_later(STALL_PROBE, self._wake)

    def stop(self) -> float:
        if self._timer is not None:
            self._timer.cancel()
        return self.longest

    def _wake(self) -> None:
        now = time.monotonic()
        self.longest = max(self.longest, now - self._due)
        self._due = now + STALL_PROBE
        self._timer = self.loop.call_later(STALL_PROBE, self._wake)


async def _serve(pipe: Connection, job: Job) -> None:
    runner = Runner(job)
    loop = runner.loop

    async def receive() -> Any:
        return await loop.run_in_executor(None, pipe.recv)

    games: list[OurGame] | list[EchoGame] = []
    if job.mode == "idle":
        held = await _open_idle(runner, job.games)
        runner.result.connections = held
        pipe.send(("ready", {"connections": held}))
        await receive()  # "go": nothing to do but hold the connections
        pipe.send(("done", runner.result))
    else:
        if job.kind == "ours":
            games = [OurGame(runner, job.first + n) for n in range(job.games)]
        else:
            games = [EchoGame(runner, job.first + n) for n in range(job.games)]
        await asyncio.gather(*(game.connect() for game in games))
        await asyncio.wait_for(asyncio.gather(*(game.ready for game in games)), 60)
        runner.result.games = len(games)
        # Quiet now (every game waits for "go"): no collection pauses mid-measurement.
        gc.collect()
        gc.freeze()
        pipe.send(("ready", {"connections": len(runner.wires), "games": len(games)}))
        message = await receive()
        _, runner.start, runner.end = message
        runner.go_at = time.monotonic()
        runner.sending = True
        for game in games:
            if isinstance(game, OurGame):
                # The first move of each game: seat 0 holds the playing state already.
                game.sent = [0.0] * len(game.frames)
                game.sent[0] = -2.0
                game.schedule(0)
            else:
                game.schedule()
        await asyncio.sleep(max(0.0, runner.start - time.monotonic()))
        before = os.times()
        runner.result.late = 0
        # No collections of the worker's own in the window (a few MiB of garbage at most
        # waits): a pause here would count in the server's round trips.
        gc.disable()
        stalls = Stalls(loop)
        stalls.start()
        await asyncio.sleep(max(0.0, runner.end - time.monotonic()))
        runner.result.stall = stalls.stop()
        gc.enable()
        after = os.times()
        runner.sending = False
        runner.result.cpu = (after.user + after.system) - (before.user + before.system)
        await asyncio.sleep(0.5)  # the replies still in flight
        runner.result.games = len(games)
        pipe.send(("done", runner.result))
    await receive()  # "stop"
    runner.tearing_down = True
    for game in games:
        game.resign()
    for task in list(runner.tasks):
        task.cancel()
    await runner.close_all()
    pipe.send(("closed", None))


def work(pipe: Connection, job: Job) -> None:
    """The worker process's entry point."""
    try:
        try:
            import uvloop
        except ImportError:  # pragma: no cover - uvloop is a server dependency
            asyncio.run(_serve(pipe, job))
        else:
            uvloop.run(_serve(pipe, job))
    except BaseException:
        with contextlib.suppress(OSError):
            pipe.send(("failed", traceback.format_exc()))
        raise
    finally:
        with contextlib.suppress(OSError):
            pipe.close()
