"""Where each live node of a cluster can be reached: one Redis key per node.

A node publishes its ``--advertise`` address (``host:port``) under ``address:{node}`` with
a TTL and refreshes it every third of that TTL, so a dead node's address goes within a
TTL, as its leases do. The relay (``server.cluster.relay``) reads it to open a connection
to the node that owns a room. A node that is gone, or whose key Redis lost (a restart),
has no address until its next refresh; so does a live node that stalled past its refresh
(a slow start, a long pause), which is why the relay waits for an address (``reach``)
up to a TTL, as the leases' owner lookup waits for liveness.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.cluster.keys import Keys, stop_if_cancelled, text

log = logging.getLogger("quoridor.cluster")


class NodeAddresses:
    """This node's address in Redis, kept fresh; the other nodes' addresses, read."""

    def __init__(self, redis: Redis, keys: Keys, node: str, address: str, ttl: float) -> None:
        self.redis = redis
        self.keys = keys
        self.node = node
        self.address = address
        """``host:port`` where the other nodes reach this one."""
        self.ttl = ttl
        self._task: asyncio.Task[None] | None = None

    async def publish(self) -> None:
        await self.redis.set(self.keys.address(self.node), self.address, px=int(self.ttl * 1000))

    async def keep(self) -> None:
        """Publish now and every third of the TTL until cancelled (errors are logged and
        retried at the next turn: Redis away is the leases' concern too). Warned once an
        outage, not at every turn."""
        failing = False
        while True:
            try:
                await self.publish()
                failing = False
            except (RedisError, OSError) as error:
                stop_if_cancelled()
                if not failing:
                    log.warning("cannot publish this node's address: %s", error)
                failing = True
            stop_if_cancelled()
            await asyncio.sleep(self.ttl / 3)

    def start(self) -> None:
        self._task = asyncio.create_task(self.keep())

    async def stop(self) -> None:
        """Stop refreshing and withdraw the address (a graceful stop)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        with contextlib.suppress(RedisError, OSError):
            await self.redis.delete(self.keys.address(self.node))

    async def of(self, node: str) -> str | None:
        """``host:port`` of ``node`` if it is alive (its key is fresh), else None."""
        if node == self.node:
            return self.address
        value = await self.redis.get(self.keys.address(node))
        return None if value is None else text(value)

    async def reach(self, node: str) -> str | None:
        """``of(node)``, waiting up to a TTL for a missing address: a live node publishes
        again within that time, a dead one stays missing and costs the caller one TTL."""
        deadline = time.monotonic() + self.ttl
        while True:
            where = await self.of(node)
            if where is not None or time.monotonic() >= deadline:
                return where
            await asyncio.sleep(min(0.05, self.ttl / 10))
