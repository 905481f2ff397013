"""Failover and fencing with real processes, real Redis and real PostgreSQL.

The owner is ``owner_node.py`` (a stand-in node that writes moves and says
which are acknowledged); the test takes over as another node would
(``server.cluster.ownership``), after SIGKILL or while the owner is paused by
SIGSTOP.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from server.cluster.keys import Keys, connect
from server.cluster.leases import Leases
from server.cluster.ownership import Ownership, TakenOver
from server.database import Batch, MoveDelta
from server.pgstore import PgStore
from tests.server.cluster.owner_node import FENCED_EXIT, move
from tests.services import RedisServer

TTL = 0.5
ROOM = "fail"


@dataclass
class OwnerNode:
    process: asyncio.subprocess.Process
    lines: list[str] = field(default_factory=list)

    async def read_until(self, prefix: str, within: float = 20.0) -> str:
        assert self.process.stdout is not None
        async with asyncio.timeout(within):
            while True:
                line = (await self.process.stdout.readline()).decode().strip()
                if not line:
                    raise AssertionError(f"the owner exited: {self.lines}")
                self.lines.append(line)
                if line.startswith(prefix):
                    return line

    async def acks(self, at_least: int) -> None:
        while self.acked < at_least:
            await self.read_until("ack ")

    @property
    def acked(self) -> int:
        acks = [int(line.split()[1]) for line in self.lines if line.startswith("ack ")]
        return max(acks, default=0)

    async def drain(self) -> None:
        """Read what it printed before it died or stopped."""
        assert self.process.stdout is not None
        for line in (await self.process.stdout.read()).decode().split("\n"):
            if line.strip():
                self.lines.append(line.strip())


@asynccontextmanager
async def cluster(redis_url: str, postgres_url: str, prefix: str) -> AsyncIterator[Ownership]:
    """The taking-over node's view: its own store and leases."""
    store = PgStore(postgres_url)
    await store.open()
    redis = connect(redis_url)
    yield Ownership(store, Leases(redis, Keys(prefix), "taker", ttl=TTL))
    await store.close()
    await redis.aclose()


async def start_owner(redis_url: str, postgres_url: str, prefix: str) -> OwnerNode:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.server.cluster.owner_node",
        redis_url, postgres_url, prefix, ROOM, str(TTL),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    owner = OwnerNode(process)
    await owner.read_until("owner epoch")
    return owner


async def take_over(ownership: Ownership, within: float = 10.0) -> TakenOver:
    """Try as a node watching for orphaned rooms would, until the old lease expires."""
    async with asyncio.timeout(within):
        while (taken := await ownership.take_over(ROOM)) is None:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    return taken


async def test_sigkill_of_the_owner_mid_game_loses_no_acknowledged_move(
    redis_server: RedisServer, postgres_url: str, redis_prefix: str
) -> None:
    owner = await start_owner(redis_server.url, postgres_url, redis_prefix)
    await owner.acks(10)
    owner.process.kill()
    killed = time.monotonic()
    await owner.drain()
    await owner.process.wait()
    async with cluster(redis_server.url, postgres_url, redis_prefix) as ownership:
        taken = await take_over(ownership)
        took = time.monotonic() - killed
        assert taken.room is not None
        acked = owner.acked
        # Every acknowledged move is there, in order (and perhaps one committed whose
        # acknowledgement the kill cut off, never more).
        assert taken.room.actions[:acked] == [move(n) for n in range(1, acked + 1)]
        assert len(taken.room.actions) in (acked, acked + 1)
        assert taken.lease.epoch == 2
        assert took < TTL + 1.0  # playable again soon after the lease ran out


async def test_a_paused_owner_that_wakes_after_the_takeover_cannot_write(
    redis_server: RedisServer, postgres_url: str, redis_prefix: str
) -> None:
    owner = await start_owner(redis_server.url, postgres_url, redis_prefix)
    await owner.acks(5)
    os.kill(owner.process.pid, signal.SIGSTOP)
    async with cluster(redis_server.url, postgres_url, redis_prefix) as ownership:
        taken = await take_over(ownership)
        assert taken.room is not None
        before = list(taken.room.actions)
        mine = MoveDelta(
            code=ROOM, status="playing", event=len(before) + 1, actions=["new1"], movers=[0],
            draw_offers=[], clock=None,
        )  # fmt: skip
        await ownership.store.write(Batch(moved=[mine]))

        os.kill(owner.process.pid, signal.SIGCONT)  # it wakes, and writes on as if it owned
        async with asyncio.timeout(20):
            assert await owner.process.wait() == FENCED_EXIT
        await owner.drain()
        assert "fenced" in owner.lines
        room, _sessions = await ownership.store.load_room(ROOM)
        assert room is not None
        assert room.actions == [*before, "new1"]  # nothing of the old owner's after takeover
        assert before[: owner.acked] == [move(n) for n in range(1, owner.acked + 1)]
