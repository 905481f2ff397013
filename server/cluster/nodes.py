"""Where each live node of a cluster can be reached: one Redis key per node.

A node publishes its ``--advertise`` address (``host:port``) under ``address:{node}`` with
a TTL and refreshes it every third of that TTL, so a dead node's address goes within a
TTL, as its leases do. The relay (``server.cluster.relay``) reads it to open a connection
to the node that owns a room. A node that is gone, or whose key Redis lost (a restart),
has no address until its next refresh; so does a live node that stalled past its refresh
(a slow start, a long pause), which is why the relay waits for an address (``reach``)
up to a TTL, as the leases' owner lookup waits for liveness.

Beside the addresses goes a mark of the nodes' ``--cluster-secret``: a node started with
another secret than the live nodes' would say ready, then every client handed between it
and them would be refused; it is refused at start instead (``check_secret``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import math
import time

from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.cluster.keys import Keys, stop_if_cancelled, text

log = logging.getLogger("quoridor.cluster")

SECRET_MARK = b"quoridor: the cluster secret's mark"
"""The text whose HMAC under a cluster secret marks it (``secret_mark``)."""
MISMATCH_LOG_EVERY = 300.0
"""Seconds between two errors logged about nodes of another secret, while there are some."""


def secret_mark(secret: str) -> bytes:
    """What a node publishes of its cluster secret: equal for equal secrets, and never the
    secret itself (an HMAC of a fixed text under it)."""
    return hmac.new(secret.encode(), SECRET_MARK, hashlib.sha256).hexdigest()[:32].encode()


class SecretDiffers(RuntimeError):
    """The cluster's live nodes use another ``--cluster-secret`` than this node's."""


class NodeAddresses:
    """This node's address in Redis, kept fresh; the other nodes' addresses, read."""

    def __init__(
        self, redis: Redis, keys: Keys, node: str, address: str, ttl: float, secret: str = ""
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.node = node
        self.address = address
        """``host:port`` where the other nodes reach this one."""
        self.ttl = ttl
        self.mark = secret_mark(secret)
        self.mismatches = 0
        """Refreshes that found another secret's mark (a metric: nodes of two secrets)."""
        self._mismatch_logged = -math.inf
        self._task: asyncio.Task[None] | None = None

    async def check_secret(self) -> None:
        """At start: ``SecretDiffers`` if the live nodes' mark is another secret's; else the
        mark is this node's (it may be the first)."""
        key, ttl = self.keys.secret(), int(self.ttl * 1000)
        if await self.redis.set(key, self.mark, nx=True, px=ttl):
            return
        if await self.redis.get(key) not in (self.mark, None):  # None: it just expired
            raise SecretDiffers(
                "the running nodes of this cluster use another --cluster-secret: give every "
                "node the same one (to change it, stop every node, then start them with the "
                f"new one {self.ttl:g} s later)"
            )

    async def publish(self) -> None:
        ttl = int(self.ttl * 1000)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(self.keys.address(self.node), self.address, px=ttl)
            # GET, then SET, rather than SET ... GET: that one needs Redis 6.2.
            pipe.get(self.keys.secret())
            pipe.set(self.keys.secret(), self.mark, px=ttl)
            _, before, _ = await pipe.execute()
        if before is not None and before != self.mark:
            self._another_secret()

    def _another_secret(self) -> None:
        """A node of another secret refreshed the mark since this one did (both started
        while Redis had lost it): log it now and then, as the clients it concerns fail."""
        self.mismatches += 1
        now = time.monotonic()
        if now - self._mismatch_logged >= MISMATCH_LOG_EVERY:
            self._mismatch_logged = now
            log.error(
                "a node of this cluster uses another --cluster-secret than this one: clients "
                "handed between them are refused; give every node the same one"
            )

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
