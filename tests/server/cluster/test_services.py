"""A node that loses PostgreSQL or Redis mid-game: it says so (``/readyz``, metrics), refuses
what it cannot do with a clear error, loses nothing acknowledged, and recovers by itself."""

from __future__ import annotations

import asyncio
import time

import psycopg

from protocol.messages import (
    VERSION,
    Create,
    Error,
    Hello,
    Join,
    Joined,
    MoveRequest,
    State,
    Watch,
    Welcome,
)
from server.pgstore import WATCH_EVERY, PgStore
from tests.http import get as http_get
from tests.server.cluster.harness import DEFAULT_TTL, running_cluster
from tests.server.cluster.test_node import resume_anywhere, saved_moves
from tests.server.test_store import GAME, play, seat_two
from tests.services import PostgresServer, RedisServer
from tests.wsclient import Client


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


async def test_a_commit_that_fails_lets_every_room_go_and_counts_and_says_it(
    own_postgres: PostgresServer, redis_server: RedisServer, redis_prefix: str
) -> None:
    """The node's PostgreSQL session ends just before a move's commit (ended from another
    session, as a PostgreSQL restart or a network cut would): nothing of that commit is
    acknowledged, every room is let go (players closed with 1012, to resume), and the
    operator is told: the log line says how many rooms went and which way, and
    ``leases_lost`` counts them (an operator's review saw rooms go with it at 0)."""
    url = own_postgres.create_database("game")
    async with running_cluster(url, redis_server.url, redis_prefix, 1) as cluster:
        node = cluster.node(0)
        a, b, _code = await seat_two(node.url)
        await play([a, b], GAME[:2], 0)
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as other:
            await other.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        await a.send(MoveRequest(move=GAME[2], ply=2))
        assert (await a.closed(10))[0] == 1012
        assert all(not isinstance(m, State) or m.ply < 3 for m in a.seen)  # not acknowledged
        log = node.log.decode()
        assert "PostgreSQL connection lost (" in log
        assert "a commit failed (" in log
        assert "letting every room go (1)" in log
        _status, metrics = await http_get(node.port, "/metrics")
        assert 'quoridor_cluster_leases_lost_total{node="n1"} 1.0' in metrics
        await asyncio.gather(a.close(), b.close())


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


async def test_a_resume_while_postgresql_is_away_is_told_at_once_to_try_again(
    own_postgres: PostgresServer, redis_server: RedisServer, redis_prefix: str
) -> None:
    # A node that does not know the token looks for its session in PostgreSQL: it used to
    # wait for PostgreSQL to come back (no answer for 8 s and more), then close the client,
    # which had said hello, with 1008 'no hello in time'.
    url = own_postgres.create_database("game")
    hello_within = 3.0
    args = ("--hello-timeout", str(hello_within))
    async with running_cluster(url, redis_server.url, redis_prefix, 2, *args) as cluster:
        a, b, _code = await seat_two(cluster.node(0).url)
        await play([a, b], GAME[:2], 0)
        assert a.welcome is not None
        resume = Hello(version=VERSION, name="alice", resume=a.welcome.resume_token)
        own_postgres.stop()
        elsewhere = await Client.connect(cluster.node(1).url, hello=False)
        await asyncio.sleep(hello_within - 1)  # the hello comes late in its deadline
        for _ in range(2):  # PostgreSQL not yet known to be away, then known
            asked = time.monotonic()
            await elsewhere.send(resume)
            refused = await elsewhere.error("service_unavailable")
            assert time.monotonic() - asked < 3
            assert "try again" in refused.message
            await asyncio.sleep(1.5)  # past the deadline of the connection's opening
        assert elsewhere.ws.close_code is None  # it said hello: not closed
        own_postgres.start()
        # The same connection, saying hello again every second (each answer gives it
        # another hello deadline) until PostgreSQL is back: resumed, through the relay.
        async with asyncio.timeout(20):
            while True:
                await elsewhere.send(resume)
                reply = await elsewhere.recv(5)
                if isinstance(reply, Welcome):
                    break
                assert isinstance(reply, Error)
                assert reply.code == "service_unavailable", reply
                await asyncio.sleep(1)
        assert reply.room == _code
        assert (await elsewhere.state()).ply == 2
        await asyncio.gather(a.close(), b.close(), elsewhere.close())


async def test_redis_restarted_empty_within_a_ttl_closes_nobody_and_no_node_takes_a_room(
    postgres_url: str, own_redis: RedisServer, redis_prefix: str
) -> None:
    # Redis restarted empty: the other node found the room's lease gone (its orphan sweep,
    # or a spectator's watch as here) and took the room over before the owner, alive, took
    # its lease again at its next renewal: every game closed with 1012 ('room moved'). The
    # owner is held (SIGSTOP) for the moment of the restart, so the other node asks first.
    ttl = 2.0
    args = ("--lease-ttl", str(ttl))
    async with running_cluster(postgres_url, own_redis.url, redis_prefix, 2, *args) as cluster:
        owner, other = cluster.node(0), cluster.node(1)
        a = await Client.connect(owner.url, "alice")
        b = await Client.connect(other.url, "bob")  # played through the relay
        await a.send(Create())
        code = (await a.expect(Joined)).room
        await b.send(Join(room=code))
        await b.expect(Joined)
        await play([a, b], GAME[:3], 0)
        owner.pause()
        own_redis.restart()
        watcher = await Client.connect(other.url, "carol")
        await watcher.send(Watch(room=code))
        await asyncio.sleep(ttl / 4)
        owner.resume()  # its renewal finds its lease gone and takes it again
        joined = await watcher.expect(Joined, within=ttl * 3)
        assert joined.seat is None  # watching, through the relay to the owner
        await asyncio.sleep(ttl)  # every node's renewals, and a sweep of each
        assert a.ws.close_code is None
        assert b.ws.close_code is None
        final = await play([a, b], GAME[3:], 3)  # on the same connections
        assert final.result is not None
        await asyncio.gather(a.close(), b.close(), watcher.close())
        assert "room taken over at epoch" not in other.log.decode()
        assert "room fenced off" not in owner.log.decode()
        assert "lease lost and taken again" in owner.log.decode()

    assert await saved_moves(postgres_url, code) == GAME


async def test_a_takeover_long_after_a_redis_restart_does_not_wait_for_it(
    postgres_url: str, own_redis: RedisServer, redis_prefix: str
) -> None:
    """The wait after a Redis restart counts from the restart (Redis's uptime), not from the
    moment a node first looks: an operator stopped a node 11 s after Redis came back, and
    the other node, which had hosted nothing meanwhile, still waited a whole TTL before
    taking the stopped node's rooms over."""
    ttl = 2.0
    args = ("--lease-ttl", str(ttl))
    async with running_cluster(postgres_url, own_redis.url, redis_prefix, 2, *args) as cluster:
        owner, other = cluster.node(0), cluster.node(1)
        a = await Client.connect(owner.url, "alice")
        await a.send(Create())
        code = (await a.expect(Joined)).room
        own_redis.restart()
        await asyncio.sleep(ttl + 1.5)  # Redis's uptime, in whole seconds, is past the TTL
        await owner.stop()
        watcher = await Client.connect(other.url, "carol")
        await watcher.send(Watch(room=code))
        await watcher.expect(Joined, within=ttl * 3)
        log = other.log.decode()
        assert "room taken over at epoch" in log
        assert "waiting after Redis's restart" not in log
        await asyncio.gather(a.close(), watcher.close())
