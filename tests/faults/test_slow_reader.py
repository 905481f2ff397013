"""A client that stops reading must cost the other games nothing, and gets cut off."""

from __future__ import annotations

import asyncio
import logging
import socket
import statistics
import time

import pytest

from protocol.messages import Joined, MoveRequest, VariantSpec, Watch
from server.app import SEND_BUFFER, GameServer
from server.wire import WRITE_BUFFER_LIMIT
from server.wire import Link as ServerLink
from tests.faults.conftest import Connect
from tests.faults.play import WITHIN, next_state, past, seat_pair
from tests.faults.proxy import Link, Proxy
from tests.wsclient import Client

RACE = VariantSpec(size=9, walls=0)
"""No walls: the pawns can step back and forth for ever."""
BUSY_PLIES_PER_SECOND = 1200
"""The busy room's pace: each player stays under the test server's 1000 requests a second."""


class Shuffler:
    """Two players stepping back and forth (e1-e2, e9-e8): a game that never ends."""

    def __init__(self, a: Client, b: Client, pace: float) -> None:
        self.players = [a, b]
        self.pace = pace
        """Seconds from one move to the next (at least)."""
        self.ply = 0
        self.trips: list[float] = []
        self.spectators = 0
        """As the latest state said."""

    @staticmethod
    def step(ply: int) -> str:
        forward = (ply // 2) % 2 == 0
        if ply % 2 == 0:
            return "e2" if forward else "e1"
        return "e8" if forward else "e9"

    async def play(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            ply, mover = self.ply, self.players[self.ply % 2]
            started = time.perf_counter()
            await mover.send(MoveRequest(id=ply, move=self.step(ply), ply=ply))
            state = await next_state(mover, past(ply))
            elapsed = time.perf_counter() - started
            self.trips.append(elapsed)
            self.spectators = state.spectators
            self.ply += 1
            await asyncio.sleep(max(0.0, self.pace - elapsed))


def server_link(server: GameServer, link: Link) -> ServerLink:
    """The server's connection for the client that comes through ``link``."""
    assert link.server.transport is not None
    port = link.server.transport.get_extra_info("sockname")[1]
    (found,) = [ws for ws in server.sockets.values() if ws.remote_address[1] == port]
    return found


def server_side(server: GameServer, link: Link) -> socket.socket:
    """The server's socket for the connection that comes through ``link``."""
    sock: socket.socket = server_link(server, link).transport.get_extra_info("socket")
    return sock


async def test_a_client_that_stops_reading_does_not_slow_other_games(
    server: GameServer,
    proxy: Proxy,
    connect: Connect,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The busy room plays thousands of plies: past the move limit, which would end its game.
    monkeypatch.setattr("server.rooms.PLY_CAP", 1_000_000)
    direct = f"ws://127.0.0.1:{server.port}"
    pairs = [(await connect(direct, f"a{n}"), await connect(direct, f"b{n}")) for n in range(5)]
    rooms = [(await seat_pair(a, b, RACE))[0] for a, b in pairs]
    busy = Shuffler(*pairs[0], pace=1 / BUSY_PLIES_PER_SECOND)
    others = [Shuffler(a, b, pace=0.01) for a, b in pairs[1:]]

    proxy.upstream_rcvbuf = 4096
    slow = await connect(proxy.url, "slow")
    link = proxy.links[-1]
    await slow.send(Watch(room=rooms[0]))
    await slow.expect(Joined, WITHIN)
    # The server pins the kernel's send buffer (Linux would grow it to 4 MiB on loopback): the
    # backlog reaches the server's own write buffer after a quarter of a megabyte.
    kernel = server_side(server, link).getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    assert kernel == 2 * SEND_BUFFER  # Linux doubles what it is asked for

    # Baseline: the other games' round trips while the spectator still reads.
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(1.0, stop.set)
    await asyncio.gather(*(shuffler.play(stop) for shuffler in (busy, *others)))
    assert busy.spectators == 1
    baseline = [trip for other in others for trip in other.trips]

    # The spectator stops reading; the busy room goes on pushing to it.
    for other in others:
        other.trips.clear()
    link.pause()
    stop = asyncio.Event()
    backlog: list[int] = []

    async def watch_backlog() -> None:
        # Until the spectator is cut off, and a second at least (enough round trips).
        while (busy.spectators or time.monotonic() < started + 1.0) and not stop.is_set():
            backlog.append(
                max(ws.transport.get_write_buffer_size() for ws in server.sockets.values())
            )
            await asyncio.sleep(0.005)
        stop.set()

    started, plies = time.monotonic(), busy.ply
    with caplog.at_level(logging.WARNING, "quoridor.server"):
        await asyncio.wait_for(
            asyncio.gather(watch_backlog(), *(shuffler.play(stop) for shuffler in (busy, *others))),
            20,
        )
    stalled_for = time.monotonic() - started
    stalled = [trip for other in others for trip in other.trips]
    print(
        f"baseline median {statistics.median(baseline) * 1000:.2f} ms, stalled median "
        f"{statistics.median(stalled) * 1000:.2f} ms max {max(stalled) * 1000:.2f} ms, "
        f"{len(stalled)} trips; backlog peak {max(backlog)} B after {stalled_for:.2f} s; "
        f"busy {(busy.ply - plies) / stalled_for:.0f} plies/s"
    )

    # It was cut off: logged, and the room's next state counts no spectator.
    assert caplog.text.count("cutting off a client that stopped reading") == 1  # logged once
    assert busy.spectators == 0
    # Its backlog did grow toward the limit before that (sampled every 5 ms).
    assert max(backlog) > WRITE_BUFFER_LIMIT // 2
    # The busy room never waited for it: it kept its pace throughout.
    assert (busy.ply - plies) / stalled_for > BUSY_PLIES_PER_SECOND / 8
    # Nor did the other games: their round trips stayed about what they were.
    # (Wide margins: the machine is shared; the busy room takes CPU either way.)
    assert statistics.median(stalled) < max(0.02, 5 * statistics.median(baseline))
    assert max(stalled) < 0.5
    assert len(stalled) > 10 * len(others)

    # Once the link flows again, the spectator reads what was on its way, then the end.
    link.resume()
    await slow.closed(WITHIN)
    assert slow.ws.close_code == 1006  # cut off: no closing handshake
