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
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.cluster.keys import Keys, connect, stop_if_cancelled

log = logging.getLogger("quoridor.cluster")
RETRY_EVERY = 0.2
"""Seconds between attempts to subscribe again while Redis is away."""


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
        while True:
            try:
                await self._listen()
            except Exception as error:  # whatever broke the subscription, make a new one
                stop_if_cancelled()
                log.warning("node channel lost (%r); subscribing again", error)
                self.subscribed.clear()
            stop_if_cancelled()
            await asyncio.sleep(RETRY_EVERY)

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
