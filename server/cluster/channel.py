"""The channel between nodes: Redis pub/sub, one channel per node, resubscribed after Redis
comes back.

A node receives on its own channel and sends to another node's. Pub/sub is
at-most-once: a message sent while the receiver is not subscribed (Redis
restarting, the receiver reconnecting) is lost, and ``send`` says so by
returning 0 receivers. Whatever rides on it must therefore be a request with a
timeout that can be asked again, never the only copy of anything: moves are
durable in PostgreSQL before they are announced.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.cluster.keys import Keys, connect, stop_if_cancelled

log = logging.getLogger("quoridor.cluster")
RETRY_EVERY = 0.2
"""Seconds before the first attempt to subscribe again after a loss; each failed attempt
doubles the wait, up to ``RETRY_AT_MOST``, and a subscription that held starts it again."""
RETRY_AT_MOST = 5.0
WARN_EVERY = 5.0
"""Seconds at least between two warnings of a lost channel (a Redis away for long had the
log say so four times a second)."""


class NodeChannel:
    """Receives this node's messages (``handler`` is called with each payload, in order) and
    sends to other nodes. ``run`` keeps the subscription until cancelled."""

    def __init__(self, url: str, keys: Keys, node: str, handler: Callable[[bytes], None]) -> None:
        self.url = url
        self.keys = keys
        self.node = node
        self.handler = handler
        self.subscribed = asyncio.Event()
        """Set while the subscription is live."""
        self.subscriptions = 0
        """How many times it subscribed (1 + each resubscription after a loss)."""
        self.failures = 0
        """Attempts to subscribe, or subscriptions, that failed."""
        self._sender: Redis = connect(url)

    async def send(self, node: str, payload: bytes) -> int:
        """Publish ``payload`` to ``node``: how many subscribers got it; 0 when nobody did
        (nobody listens there, or Redis is away: the caller asks again or gives up)."""
        try:
            return int(await self._sender.publish(self.keys.channel(node), payload))
        except (RedisError, OSError) as error:
            log.debug("node channel: cannot send to %s (%s)", node, error)
            return 0

    async def run(self) -> None:
        wait = RETRY_EVERY
        warned = -math.inf
        failures = 0  # attempts that failed since the last warning
        while True:
            before = self.subscriptions
            try:
                await self._listen()
            except Exception as error:  # whatever broke the subscription, make a new one
                stop_if_cancelled()
                self.subscribed.clear()
                if self.subscriptions != before:  # it held a while: Redis was there
                    wait = RETRY_EVERY
                failures += 1
                self.failures += 1
                now = time.monotonic()
                if now - warned >= WARN_EVERY:
                    log.warning(
                        "node channel lost (%r); subscribing again in %.1f s%s",
                        error,
                        wait,
                        f" ({failures} attempts failed since the last warning)"
                        if failures > 1
                        else "",
                    )
                    warned, failures = now, 0
            stop_if_cancelled()
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETRY_AT_MOST)

    async def _listen(self) -> None:
        # A client of its own, so a lost connection is replaced whole (redis-py does not
        # subscribe again on its own after a reconnect).
        client = Redis.from_url(self.url, socket_connect_timeout=2.0, health_check_interval=1)
        try:
            async with client.pubsub() as pubsub:
                await pubsub.subscribe(self.keys.channel(self.node))
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is None:
                        await pubsub.ping()  # a dead connection shows up here within a second
                        continue
                    if message["type"] == "subscribe":
                        self.subscriptions += 1
                        self.subscribed.set()
                    elif message["type"] == "message":
                        self.handler(message["data"])
        finally:
            self.subscribed.clear()
            await client.aclose()

    async def close(self) -> None:
        await self._sender.aclose()
