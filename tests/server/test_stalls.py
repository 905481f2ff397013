"""No clock is charged for the server's own slowness (server.stalls).

The tests share the server's event loop, so a plain ``time.sleep`` in a test is a
real stall of the server: its loop cannot run, moves wait in the socket and the
flag timer cannot fire, exactly as during a long garbage collection.
"""

from __future__ import annotations

import asyncio
import time

from protocol.messages import Create, Join, Joined, MoveRequest, State, TimeControl
from server.app import GameServer
from server.config import Config
from server.stalls import BEAT, SLACK, StallClock
from tests.wsclient import Client

BASE = 1.5
"""Seconds on each clock: shorter than the stall, so today's server would flag."""
STALL = 2.0


async def until_ply(client: Client, ply: int) -> State:
    while (state := await client.state()).ply < ply and state.status != "finished":
        pass
    return state


async def test_a_stalled_server_charges_no_clock_and_drops_no_flag() -> None:
    async with GameServer(Config(port=0)).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b = await Client.connect(url, "ann"), await Client.connect(url, "bob")
        await a.send(Create(clock=TimeControl(base=BASE)))
        await b.send(Join(room=(await a.expect(Joined)).room))
        await b.expect(Joined)
        await a.send(MoveRequest(move="e2", ply=0))
        await until_ply(b, 1)
        await b.send(MoveRequest(move="e8", ply=1))
        started = await until_ply(a, 2)  # the free first moves are made: ann's clock runs
        assert started.clock is not None
        assert started.clock.running == 0

        # Blocking on purpose: the server cannot run; ann's move waits in the socket.
        time.sleep(STALL)  # noqa: ASYNC251
        await a.send(MoveRequest(move="e3", ply=2))
        moved = await until_ply(a, 3)
        assert moved.status == "playing", moved.result  # not flagged by the stall
        assert moved.clock is not None
        ann, bob = moved.clock.remaining_ms
        assert ann > (BASE - 0.5) * 1000, ann  # charged a round trip or two, not the stall
        assert bob == BASE * 1000

        # The server runs: bob's time is charged as usual, less any stall of a loaded
        # machine during the wait (left out by the same rule; counted by the clock).
        stalled_before = server.stall_clock.stalled
        await asyncio.sleep(0.6)
        await b.send(MoveRequest(move="e7", ply=3))
        after = await until_ply(a, 4)
        assert after.clock is not None
        stalled_ms = (server.stall_clock.stalled - stalled_before) * 1000
        charged_ms = BASE * 1000 - after.clock.remaining_ms[1]
        assert charged_ms >= 600 - stalled_ms - 1, (charged_ms, stalled_ms)
        assert server.stall_clock.stalled >= STALL - 3 * (BEAT + SLACK)
        await a.close()
        await b.close()


def test_the_clock_stands_still_from_a_missed_beat_and_never_goes_back() -> None:
    """The rule itself, on a clock driven by hand: a late heartbeat is a stall from
    ``BEAT + SLACK`` after the last beat, even before the heartbeat runs again."""
    now = [100.0]
    clock = StallClock(lambda: now[0])
    assert clock.now() == 100.0  # not started: plain monotonic time
    clock.beat()
    now[0] += BEAT + SLACK / 2  # a little late: no stall
    assert clock.now() == now[0]
    clock.beat()
    last_beat = now[0]
    readings = []
    for step in range(1, 101):  # a two-second stall, read as the loop comes back
        now[0] = last_beat + step * 0.02
        readings.append(clock.now())
    assert readings == sorted(readings)
    assert readings[-1] == last_beat + BEAT + SLACK
    clock.beat()  # the heartbeat runs at last: the stall is noted, the clock runs on
    assert clock.now() == last_beat + BEAT + SLACK
    assert clock.stalls == 1
    assert abs(clock.stalled - (2.0 - BEAT - SLACK)) < 1e-9
    now[0] += 0.01
    assert abs(clock.now() - (last_beat + BEAT + SLACK + 0.01)) < 1e-9
