"""The channel between nodes on a real Redis: messages in order, and again after Redis
restarts."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import pytest

from server.cluster.channel import NodeChannel
from server.cluster.keys import Keys
from tests.services import RedisServer, free_port


async def send_until_heard(sender: NodeChannel, node: str, payload: bytes) -> None:
    async with asyncio.timeout(10):
        while not await sender.send(node, payload):  # noqa: ASYNC110 (asking Redis again)
            await asyncio.sleep(0.05)


async def test_nodes_talk_in_order_and_again_after_redis_restarts(
    own_redis: RedisServer, redis_prefix: str
) -> None:
    keys = Keys(redis_prefix)
    heard: list[bytes] = []
    arrived = asyncio.Event()

    def hear(payload: bytes) -> None:
        heard.append(payload)
        arrived.set()

    a = NodeChannel(own_redis.url, keys, "node-a", lambda payload: None)
    b = NodeChannel(own_redis.url, keys, "node-b", hear)
    listening = asyncio.create_task(b.run())
    await asyncio.wait_for(b.subscribed.wait(), 10)
    for n in range(20):
        assert await a.send("node-b", f"m{n}".encode()) == 1
    async with asyncio.timeout(10):
        while len(heard) < 20:
            arrived.clear()
            await arrived.wait()
    assert heard == [f"m{n}".encode() for n in range(20)]
    assert await a.send("node-c", b"nobody") == 0  # nobody listens there: the sender knows

    own_redis.restart()
    # Pub/sub is at-most-once: a message racing the resubscription may be lost, so the
    # sender asks again, as every user of the channel must (server/cluster/channel.py).
    async with asyncio.timeout(15):
        while b"after" not in heard:
            arrived.clear()
            await send_until_heard(a, "node-b", b"after")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(arrived.wait(), 1.0)
    assert b.subscriptions >= 2  # subscribed again
    listening.cancel()
    await asyncio.gather(listening, return_exceptions=True)
    await a.close()
    await b.close()


async def test_a_redis_away_for_long_is_retried_ever_more_slowly_and_warned_rarely(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Nothing listens there: every attempt to subscribe fails at once. It used to be tried
    # again every 0.2 s and logged at every attempt (about four warnings a second).
    keys = Keys("quoridor:")
    channel = NodeChannel(f"redis://127.0.0.1:{free_port()}/0", keys, "node-a", lambda _: None)
    caplog.set_level(logging.WARNING, "quoridor.cluster")
    listening = asyncio.create_task(channel.run())
    await asyncio.sleep(3.5)
    listening.cancel()
    await asyncio.gather(listening, return_exceptions=True)
    await channel.close()
    lost = [r for r in caplog.records if "node channel lost" in r.getMessage()]
    # Attempts at 0, 0.2, 0.6, 1.4 and 3.0 s (the wait doubling), one warning.
    assert len(lost) == 1
    assert channel.failures <= 5
