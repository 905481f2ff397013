"""A rolling restart of every node of a real cluster while 50 games are played through the
load balancer: no acknowledged move lost, and each game's longest wait measured."""

from __future__ import annotations

import asyncio
import signal
import statistics
import time

from websockets.protocol import OPEN

from protocol.messages import MoveRequest, State, Welcome
from server.pgstore import PgStore
from tests.server.cluster.harness import running_cluster
from tests.server.cluster.test_node import resume_anywhere
from tests.server.test_store import GAME, seat_two
from tests.services import RedisServer
from tests.wsclient import Client

GAMES = 50
PACE = 0.3
"""Seconds between two moves of a game: the games last about five seconds, across the
restarts."""


class Seat:
    """One player, who resumes through the load balancer whenever its connection closes."""

    def __init__(self, client: Client, name: str, url: str) -> None:
        self.client, self.name, self.url = client, name, url
        self.welcome: Welcome | None = client.welcome
        self.resumes = 0

    async def ready(self) -> int | None:
        """Resume if the connection is gone: the game's ply then, or None if it was open."""
        if self.client.ws.state is OPEN:
            return None
        self.client = await resume_anywhere(self.url, self.welcome, self.name, within=20)
        self.welcome = self.client.welcome
        self.resumes += 1
        state = await self.client.state()
        return state.ply

    async def moved(self, ply: int) -> bool:
        """Wait until this connection sees the game at ``ply`` or later (the move's
        acknowledgement); False if the connection closed first."""
        closed = asyncio.ensure_future(self.client.ws.wait_closed())
        try:
            while True:
                message = asyncio.ensure_future(self.client.inbox.get())
                await asyncio.wait([message, closed], return_when=asyncio.FIRST_COMPLETED)
                if not message.done():
                    message.cancel()
                    return False
                found = message.result()
                if isinstance(found, State) and found.ply >= ply:
                    return True
        finally:
            closed.cancel()


async def drive(seats: list[Seat]) -> float:
    """Play GAME to its end whatever the restarts do; the longest wait between two
    acknowledged moves, beyond the pace."""
    ply, longest, last = 0, 0.0, time.monotonic()
    while ply < len(GAME):
        for seat in seats:
            resumed = await seat.ready()
            if resumed is not None:
                ply = resumed
        if ply >= len(GAME):
            break
        mover = seats[ply % 2]
        try:
            await mover.client.send(MoveRequest(move=GAME[ply], ply=ply))
        except Exception:  # closed under our feet: resume and look again
            continue
        if not await mover.moved(ply + 1):
            continue
        ply += 1
        now = time.monotonic()
        longest, last = max(longest, now - last), now
        await asyncio.sleep(PACE)
        last += PACE
    return longest


async def test_a_rolling_restart_of_every_node_during_50_games_loses_no_move(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    many = ("--max-per-ip", "1000", "--rooms-per-ip", "1000", "--hello-burst", "1000",
            "--address-share", "1000")  # fmt: skip
    # every player is 127.0.0.1
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2, *many) as cluster:
        # Seated on the nodes in turn (joining a room of another node is the relay's); every
        # reconnection goes through the load balancer.
        nodes = len(cluster.nodes)
        games = [await seat_two(cluster.node(index % nodes).url) for index in range(GAMES)]
        codes = [code for *_, code in games]
        seats = [[Seat(a, "alice", cluster.url), Seat(b, "bob", cluster.url)] for a, b, _ in games]
        drivers = [asyncio.create_task(drive(pair)) for pair in seats]
        await asyncio.sleep(1.0)
        for index in range(len(cluster.nodes)):
            assert await cluster.node(index).stop(signal.SIGTERM) == 0
            await cluster.restart(index)
        waits = await asyncio.gather(*drivers)
        moved = sum(1 for pair in seats if any(seat.resumes for seat in pair))
        print(
            f"rolling restart of 2 nodes during {GAMES} games ({moved} moved to another "
            f"node at least once): longest wait between two acknowledged moves of a game, "
            f"beyond the pace: median {statistics.median(waits):.2f} s, "
            f"worst {max(waits):.2f} s"
        )
        assert moved == GAMES  # every game was on a node when it restarted
        assert max(waits) < 4.0

    store = PgStore(postgres_url)
    await store.open()
    finished = {g.room: g.moves for g in (await store.load()).games}
    await store.close()
    assert all(finished[code] == GAME for code in codes)
