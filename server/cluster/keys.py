"""Redis connections and key names shared by the cluster modules."""

from __future__ import annotations

import asyncio

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError, TimeoutError

RedisClient = Redis
"""``redis.asyncio.Redis`` with bytes replies (no decoding)."""


CONNECTIONS = 64
"""Redis connections a client opens at most; more commands at once wait for one."""
CONNECTION_WAIT = 5.0
"""Seconds a command waits for a free connection before it fails (as for a Redis away)."""


def connect(url: str) -> Redis:
    """A client for ``url`` (``redis://host:port/db``) that reconnects by itself on the next
    command after Redis comes back (commands in between fail with ``ConnectionError``).

    Its pool makes a command wait for a free connection: redis-py's default pool fails any
    command beyond its 100th at once ("Too many connections"), which a burst of hundreds
    of relayed joins (each locating its room) met, and which the lease keeper took for
    Redis being away."""
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=CONNECTIONS,
        timeout=CONNECTION_WAIT,
        socket_connect_timeout=2.0,
        socket_timeout=5.0,
        # A connection Redis closed (it restarted) is replaced and the command sent again.
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=3),
        retry_on_error=[ConnectionError, TimeoutError],
    )
    return Redis.from_pool(pool)


class Keys:
    """Every key of one cluster, under its prefix (several clusters, or tests, can share a
    Redis)."""

    def __init__(self, prefix: str = "quoridor:") -> None:
        self.prefix = prefix

    def lease(self, room: str) -> str:
        return f"{self.prefix}lease:{room}"

    def epoch(self, room: str) -> str:
        return f"{self.prefix}epoch:{room}"

    def alive(self, node: str) -> str:
        return f"{self.prefix}alive:{node}"

    def address(self, node: str) -> str:
        return f"{self.prefix}address:{node}"

    def secret(self) -> str:
        """The live nodes' mark of their cluster secret (``server.cluster.nodes``)."""
        return f"{self.prefix}secret"

    def lobby(self, node: str) -> str:
        return f"{self.prefix}lobby:{node}"

    def nodes(self) -> str:
        return f"{self.prefix}nodes"

    def queue(self, pool: str) -> str:
        return f"{self.prefix}queue:{pool}"

    def queued(self, pool: str) -> str:
        return f"{self.prefix}queued:{pool}"

    def matched(self, session: str) -> str:
        return f"{self.prefix}matched:{session}"

    def channel(self, node: str) -> str:
        return f"{self.prefix}node:{node}"


def stop_if_cancelled() -> None:
    """Raise ``CancelledError`` if the running task was cancelled: called where a Redis error
    is caught and retried, because redis-py can turn a cancellation that arrives during a
    command into a connection error, and a loop that retries on those would swallow it and
    never end (a node's SIGTERM then waited for it for ever)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def text(value: bytes | str) -> str:
    """A Redis reply as text (replies are bytes; the client's types also allow str)."""
    return value.decode() if isinstance(value, bytes) else value
