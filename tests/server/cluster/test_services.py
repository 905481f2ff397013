"""A node that loses PostgreSQL or Redis mid-game: it says so (``/readyz``, metrics), refuses
what it cannot do with a clear error, loses nothing acknowledged, and recovers by itself."""

from __future__ import annotations

import asyncio
import time

from protocol.messages import Create, MoveRequest, State
from server.pgstore import WATCH_EVERY, PgStore
from tests.http import get as http_get
from tests.server.cluster.harness import DEFAULT_TTL, running_cluster
from tests.server.cluster.test_node import resume_anywhere, saved_moves
from tests.server.test_store import GAME, play, seat_two
from tests.services import PostgresServer, RedisServer


async def _until_ready(port: int, within: float = 15.0) -> str:
    deadline = time.monotonic() + within
    while True:
        status, body = await http_get(port, "/readyz")
        if status == 200 or time.monotonic() > deadline:
            return body
        await asyncio.sleep(0.1)


async def test_postgresql_restarted_mid_game_moves_are_refused_while_away_then_go_on(
    own_postgres: PostgresServer, redis_server: RedisServer, redis_prefix: str
) -> None:
    url = own_postgres.create_database("game")
    async with running_cluster(url, redis_server.url, redis_prefix, 1) as cluster:
        node = cluster.node(0)
        a, b, _code = await seat_two(node.url)
        await play([a, b], GAME[:4], 0)
        own_postgres.stop()
        await asyncio.sleep(WATCH_EVERY * 2.5)  # the node notices while idle

        await a.send(MoveRequest(move=GAME[4], ply=4))
        refused = await a.error("service_unavailable")
        assert "database is unreachable" in refused.message
        status, body = await http_get(node.port, "/readyz")
        assert (status, body.strip()) == (503, "unreachable: postgresql")
        _status, metrics = await http_get(node.port, "/metrics")
        assert 'quoridor_cluster_postgresql_up{node="n1"} 0.0' in metrics
        await b.send(Create())
        await b.error("already_in_room")  # (in a room: the state machine answers first)

        own_postgres.start()
        assert (await _until_ready(node.port)).strip() == "ready"
        await a.send(MoveRequest(move=GAME[4], ply=4))  # sent again: played now
        state = await a.state()
        assert state.ply == 5
        final = await play([a, b], GAME[5:], 5)
        assert final.result is not None
        acknowledged = {m.ply for m in a.seen if isinstance(m, State)}
        assert max(acknowledged) == len(GAME)
        await asyncio.gather(a.close(), b.close())

    store = PgStore(url)
    await store.open()
    (finished,) = (await store.load()).games
    assert finished.moves == GAME  # every acknowledged move
    await store.close()


async def test_redis_restarted_mid_game_the_game_goes_on_with_every_move(
    postgres_url: str, own_redis: RedisServer, redis_prefix: str
) -> None:
    async with running_cluster(postgres_url, own_redis.url, redis_prefix, 2) as cluster:
        a, b, code = await seat_two(cluster.node(0).url)
        await play([a, b], GAME[:5], 0)
        own_redis.stop()
        await asyncio.sleep(DEFAULT_TTL * 1.5)
        status, body = await http_get(cluster.node(0).port, "/readyz")
        assert (status, body.strip()) == (503, "unreachable: redis")
        own_redis.start()
        # Redis came back empty: the rooms' leases are gone, so their node stops hosting
        # them (1012) and the players resume, through the load balancer, wherever the room
        # is taken over again.
        assert (await a.closed(DEFAULT_TTL * 5))[0] == 1012
        a2, b2 = await asyncio.gather(
            resume_anywhere(cluster.url, a.welcome, "alice"),
            resume_anywhere(cluster.url, b.welcome, "bob"),
        )
        assert a2.welcome is not None
        assert a2.welcome.room == code
        state = await a2.state()
        assert state.ply == 5
        for node in cluster.nodes:
            assert (await _until_ready(node.port)).strip() == "ready"
        final = await play([a2, b2], GAME[5:], 5)
        assert final.result is not None
        await asyncio.gather(a2.close(), b2.close())

    assert await saved_moves(postgres_url, code) == GAME
