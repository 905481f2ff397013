"""A real node under many rooms at once: room codes never run out."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from protocol.messages import Create, Joined
from tests.server.cluster.harness import running_cluster
from tests.server.cluster.test_node import lease_of
from tests.services import RedisServer
from tests.wsclient import Client

ROOMS = 100


async def test_a_node_opens_100_rooms_at_once_without_a_refusal_each_under_its_lease(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    many = ("--max-per-ip", "1000", "--rooms-per-ip", "1000")  # every player is 127.0.0.1
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 1, *many) as cluster:
        url = cluster.node(0).url
        clients = await asyncio.gather(*(Client.connect(url, f"p{i}") for i in range(ROOMS)))
        # Far more creates at once than the node keeps codes leased in advance.
        await asyncio.gather(*(client.send(Create()) for client in clients))
        replies = await asyncio.gather(*(client.recv() for client in clients))
        refused = [reply for reply in replies if not isinstance(reply, Joined)]
        assert refused == []
        codes = {reply.room for reply in replies if isinstance(reply, Joined)}
        assert len(codes) == ROOMS
        # Rooms opened past the spare codes are leased right after: each room's lease is
        # the node's, at epoch 1 (a code nobody leased before).
        for _ in range(50):
            leases = [await lease_of(redis, redis_prefix, code) for code in sorted(codes)]
            if all(lease is not None for lease in leases):
                break
            await asyncio.sleep(0.02)
        assert leases == [("n1", 1)] * ROOMS
        for client in clients:
            await client.close()
