"""Many clients that stop reading, each under its own 1 MiB, cannot add up past the server's
budget for backlogs: the largest are cut off first (an outside review grew the server by
380 MB with 600 of them)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from protocol.messages import Joined, Watch
from server.app import GameServer
from server.config import Config
from server.wire import WRITE_BUFFER_LIMIT
from tests.faults.conftest import Connect
from tests.faults.play import WITHIN, seat_pair
from tests.faults.proxy import Proxy
from tests.faults.test_slow_reader import RACE, Shuffler, server_link

BUDGET_MIB = 1
SLOW = 4
"""Spectators that stop reading, one every ``STAGGER`` seconds: four times a 1 MiB budget
when each reaches its own cap."""
STAGGER = 0.15


@pytest.fixture
async def server() -> AsyncIterator[GameServer]:
    config = Config(
        port=0,
        max_per_ip=10000,
        rooms_per_ip=10000,
        rate=1000,
        burst=1000,
        hello_burst=10000,
        backlog_budget=BUDGET_MIB,
    )
    async with GameServer(config).running() as running:
        yield running


def backlogs(server: GameServer) -> int:
    return sum(link.transport.get_write_buffer_size() for link in server.sockets.values())


async def test_the_largest_backlogs_are_cut_off_past_the_servers_budget(
    server: GameServer,
    proxy: Proxy,
    connect: Connect,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("server.rooms.PLY_CAP", 1_000_000)  # the busy room never ends
    direct = f"ws://127.0.0.1:{server.port}"
    a, b = await connect(direct, "a"), await connect(direct, "b")
    room = (await seat_pair(a, b, RACE))[0]
    busy = Shuffler(a, b, pace=1 / 600)

    proxy.upstream_rcvbuf = 4096
    for n in range(SLOW):
        spectator = await connect(proxy.url, f"slow{n}")
        await spectator.send(Watch(room=room))
        await spectator.expect(Joined, WITHIN)
    links = [server_link(server, link) for link in proxy.links[-SLOW:]]

    stop = asyncio.Event()
    peak = 0

    async def stop_reading_one_by_one() -> None:
        nonlocal peak
        for link in proxy.links[-SLOW:]:
            link.pause()
            await asyncio.sleep(STAGGER)
        # Until the first one, the largest backlog, is cut off (each is cut off at its own
        # 1 MiB sooner or later: none of them reads).
        await asyncio.wait_for(links[0].wait_closed(), WITHIN)
        peak = max(peak, backlogs(server))
        stop.set()

    async def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, backlogs(server))
            await asyncio.sleep(0.005)

    with caplog.at_level(logging.WARNING, "quoridor.server"):
        await asyncio.wait_for(
            asyncio.gather(stop_reading_one_by_one(), sample(), busy.play(stop)), 30
        )

    print(f"peak of all backlogs together: {peak} B")
    assert "passed --backlog-budget" in caplog.text
    # Cut off before any of them reached its own cap, and all of them together stayed near
    # the budget (it is summed every 0.1 s: the busy room writes about 0.7 MB/s to each).
    assert peak < (BUDGET_MIB << 20) + WRITE_BUFFER_LIMIT // 2
    # The one that stopped reading last, with the least waiting, is still there.
    assert links[-1].conn in server.sockets
    metrics = server.metrics.render().decode().splitlines()
    (cutoffs,) = [line for line in metrics if line.startswith("quoridor_backlog_cutoffs_total ")]
    assert float(cutoffs.split()[1]) >= 1
