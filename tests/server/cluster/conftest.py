"""Redis clients for the cluster modules' tests, on the session's real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from server.cluster.keys import Keys, connect
from tests.services import RedisServer


@pytest.fixture
def keys(redis_prefix: str) -> Keys:
    return Keys(redis_prefix)


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[Redis]:
    client = connect(redis_server.url)
    yield client
    await client.aclose()


@pytest.fixture
async def other_redis(redis_server: RedisServer) -> AsyncIterator[Redis]:
    """A second connection, as a second node would have."""
    client = connect(redis_server.url)
    yield client
    await client.aclose()
