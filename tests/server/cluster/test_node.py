"""The real server as a node of a cluster (``--redis``): its rooms' leases, their loss,
and players resuming on another node after their node died.

Real processes on the session's PostgreSQL and Redis, through the test load balancer
(``harness``).
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import psycopg
import pytest
from redis.asyncio import Redis
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from protocol.messages import VERSION, Create, Hello, Join, Joined, MoveRequest, State, Welcome
from server.cluster.keys import Keys, text
from server.database import Batch
from server.history import GameHistory
from server.pgstore import PgStore
from tests.process import ServerProcess
from tests.server.cluster.harness import DEFAULT_TTL, Cluster, Node, running_cluster
from tests.server.test_store import GAME, play, seat_two
from tests.server.test_store_contract import game
from tests.services import RedisServer, free_port
from tests.wsclient import Client


async def resume_anywhere(
    url: str,
    welcome: Welcome | None,
    name: str,
    within: float = 10.0,
    refusals: list[str] | None = None,
) -> Client:
    """Resume the session through ``url`` (the load balancer), trying again while the
    cluster answers "reconnect" (1012: the room is still on its way to a node). A hello
    answered with anything but a welcome is noted in ``refusals``."""
    assert welcome is not None
    deadline = time.monotonic() + within
    while True:
        client: Client | None = None
        try:
            client = await Client.connect(url, hello=False)
            await client.send(Hello(version=VERSION, name=name, resume=welcome.resume_token))
            reply = asyncio.ensure_future(client.expect(Welcome))
            await asyncio.wait([reply, asyncio.ensure_future(client.ws.wait_closed())],
                               return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            if reply.done():
                client.welcome = reply.result()
                return client
            reply.cancel()
            raise ConnectionClosed(None, None)
        except (ConnectionClosed, InvalidHandshake, OSError, AssertionError, TimeoutError) as error:
            if isinstance(error, AssertionError) and refusals is not None:
                refusals.append(str(error))
            # A refused attempt (an error instead of a welcome) leaves its connection open:
            # close it, or the retries add up to the node's per-address cap (429).
            if client is not None:
                await client.close()
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def saved_moves(postgres_url: str, code: str) -> list[str]:
    """The moves of the room's one finished game, as PostgreSQL holds them."""
    store = PgStore(postgres_url)
    await store.open()
    (finished,) = [g for g in (await store.load()).games if g.room == code]
    await store.close()
    return list(finished.moves)


async def lease_of(redis: Redis, prefix: str, code: str) -> tuple[str, int] | None:
    value = await redis.get(Keys(prefix).lease(code))
    if value is None:
        return None
    node, epoch = text(value).rsplit(" ", 1)
    return node, int(epoch)


async def test_redis_without_a_postgresql_database_is_refused(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    server = ServerProcess(tmp_path / "games.db", "--redis", redis_server.url)
    with pytest.raises(RuntimeError, match="--redis needs a PostgreSQL --db"):
        await server.start()
    assert server.process is not None
    assert await server.process.wait() == 2  # a bad setting, as documented (it was 1)


async def test_a_node_that_cannot_reach_redis_is_refused_at_start_and_touches_nothing(
    postgres_url: str,
) -> None:
    # It used to start, say ready for a second or two, then 503 for good, its log filling
    # with "node channel lost"; an unreachable PostgreSQL is refused at start, so is Redis.
    nowhere = f"redis://:hidden@127.0.0.1:{free_port()}/0"
    server = ServerProcess(
        postgres_url, "--redis", nowhere, "--cluster-secret", "a long enough secret"
    )
    with pytest.raises(RuntimeError, match="server exited"):
        await server.start()
    assert server.process is not None
    assert await server.process.wait() == 1
    (line,) = server.log.decode().strip().splitlines()
    assert line.startswith(
        f"quoridor-server: cannot reach Redis at {nowhere.replace('hidden', '***')} ("
    )
    assert line.endswith("): start it, or correct --redis")
    async with await psycopg.AsyncConnection.connect(postgres_url) as connection:
        cursor = await connection.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        )
        assert await cursor.fetchone() == (0,)  # the database untouched: not even migrated


async def test_a_room_opened_on_a_node_is_leased_to_it_and_the_lease_renewed(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2) as cluster:
        a, b, code = await seat_two(cluster.node(1).url)
        lease = await lease_of(redis, redis_prefix, code)
        assert lease is not None
        assert lease[0] == "n2"
        await play([a, b], GAME[:3], 0)
        await asyncio.sleep(DEFAULT_TTL * 2.5)  # renewed meanwhile, or it would be gone
        assert await lease_of(redis, redis_prefix, code) == lease
        await play([a, b], GAME[3:6], 3)
        await asyncio.gather(a.close(), b.close())


async def test_a_node_that_loses_a_rooms_lease_stops_hosting_it_and_closes_with_1012(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 1) as cluster:
        a, b, code = await seat_two(cluster.node(0).url)
        await play([a, b], GAME[:2], 0)
        # Another owner, as if the lease had expired and been taken.
        await redis.set(Keys(redis_prefix).lease(code), b"elsewhere 99", px=60_000)
        codes = await asyncio.gather(a.closed(DEFAULT_TTL * 3), b.closed(DEFAULT_TTL * 3))
        assert [close[0] for close in codes] == [1012, 1012]
        assert b"lease lost" in cluster.node(0).log


async def test_a_lease_gone_from_redis_is_taken_again_and_nobody_is_closed(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 1) as cluster:
        a, b, code = await seat_two(cluster.node(0).url)
        await play([a, b], GAME[:2], 0)
        before = await lease_of(redis, redis_prefix, code)
        assert before is not None
        # Gone, as when Redis restarts empty: no other node holds it.
        await redis.delete(Keys(redis_prefix).lease(code))
        deadline = time.monotonic() + DEFAULT_TTL * 3
        while (after := await lease_of(redis, redis_prefix, code)) is None:
            assert time.monotonic() < deadline, "the lease was not taken again"
            await asyncio.sleep(0.05)
        assert after[0] == before[0]
        assert after[1] > before[1]  # a new epoch, claimed in PostgreSQL's fence too
        final = await play([a, b], GAME[2:], 2)  # the same connections, never closed
        assert final.result is not None
        assert a.ws.close_code is None
        assert b"lease lost and taken again" in cluster.node(0).log
        assert b"no longer hosting" not in cluster.node(0).log
        await asyncio.gather(a.close(), b.close())
    assert await saved_moves(postgres_url, code) == GAME


async def test_sigkill_of_the_owner_node_both_players_resume_elsewhere_with_every_move(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    # A short hello deadline: a resumed player must not be held to it (nor to the idle one).
    hello_timeout = 2.0
    async with running_cluster(
        postgres_url, redis_server.url, redis_prefix, 3, "--hello-timeout", str(hello_timeout)
    ) as cluster:
        a, b, code = await seat_two(cluster.node(0).url)
        half = 7
        await play([a, b], GAME[:half], 0)  # each move acknowledged to both players
        acknowledged = max(m.ply for m in a.seen if isinstance(m, State))
        killed = time.monotonic()
        assert await cluster.node(0).stop(signal.SIGKILL) == -signal.SIGKILL

        refusals: list[str] = []
        a2, b2 = await asyncio.gather(
            resume_anywhere(cluster.url, a.welcome, "alice", refusals=refusals),
            resume_anywhere(cluster.url, b.welcome, "bob", refusals=refusals),
        )
        # While the dead node's leases run, a resume is told to reconnect (1012), as after a
        # restart, never refused with an error a client would take as final.
        assert refusals == []
        for client in (a2, b2):
            assert client.welcome is not None
            assert (client.welcome.room, client.welcome.seat) == (code, [a2, b2].index(client))
        state = await a2.state()
        while not all(p.connected for p in state.players):
            state = await a2.state()
        assert state.ply == acknowledged == half
        mover = [a2, b2][half % 2]
        await mover.send(MoveRequest(move=GAME[half], ply=half))
        while (await mover.state()).ply != half + 1:
            pass
        while (await [a2, b2][1 - half % 2].state()).ply != half + 1:
            pass
        playable = time.monotonic() - killed
        print(f"SIGKILL to the first move accepted on the new owner: {playable:.2f} s")
        assert playable < 5.0
        owner = await lease_of(redis, redis_prefix, code)
        assert owner is not None
        assert owner[0] in ("n2", "n3")
        await asyncio.sleep(hello_timeout + 0.5)  # the resumed players stay connected
        final = await play([a2, b2], GAME[half + 1 :], half + 1)
        assert final.result is not None
        await asyncio.gather(a2.close(), b2.close())

    # Every acknowledged move, in order, and the rest.
    assert await saved_moves(postgres_url, code) == GAME


async def test_a_waiting_room_of_a_killed_node_comes_back_elsewhere_and_a_friend_joins_it(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    """A node that takes a dead node's rooms over takes its waiting rooms as its games in
    progress: the creator resumes there, and a friend joins with the code."""
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 3) as cluster:
        alice = await Client.connect(cluster.node(0).url, "alice")
        await alice.send(Create(private=True))
        code = (await alice.expect(Joined)).room
        await alice.state()
        assert await cluster.node(0).stop(signal.SIGKILL) == -signal.SIGKILL

        alice2 = await resume_anywhere(cluster.url, alice.welcome, "alice")
        assert alice2.welcome is not None
        assert (alice2.welcome.room, alice2.welcome.seat) == (code, 0)
        state = await alice2.state()
        while not state.players[0].connected:
            state = await alice2.state()
        assert state.status == "waiting"
        owner = await lease_of(redis, redis_prefix, code)
        assert owner is not None
        assert owner[0] in ("n2", "n3")
        bob = await Client.connect(cluster.url, "bob")  # on whichever node: relayed there
        await bob.send(Join(room=code))
        assert (await bob.expect(Joined)).seat == 1
        while (await bob.state()).status != "playing":
            pass
        while (await alice2.state()).status != "playing":
            pass
        final = await play([alice2, bob], GAME, 0)
        assert final.result is not None
        await asyncio.gather(alice2.close(), bob.close())
    assert await saved_moves(postgres_url, code) == GAME


async def test_a_waiting_room_of_a_killed_node_nobody_comes_back_to_is_swept_and_closes(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    """The orphan sweep takes a dead node's waiting rooms over too: one nobody comes back to
    closes after the grace period, its rows with it (they stayed in PostgreSQL for ever)."""
    async with running_cluster(
        postgres_url, redis_server.url, redis_prefix, 2, "--grace", "1"
    ) as cluster:
        alice = await Client.connect(cluster.node(0).url, "alice")
        await alice.send(Create())
        code = (await alice.expect(Joined)).room
        await alice.state()
        assert await cluster.node(0).stop(signal.SIGKILL) == -signal.SIGKILL
        async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as db:

            async def rows(table: str, column: str) -> int:
                query = f"SELECT count(*) FROM {table} WHERE {column} = %s"
                row = await (await db.execute(query.encode(), (code,))).fetchone()
                assert row is not None
                return int(row[0])

            assert (await rows("rooms", "code"), await rows("sessions", "room")) == (1, 1)
            deadline = time.monotonic() + 20
            while await rows("rooms", "code") or await rows("sessions", "room"):
                assert time.monotonic() < deadline, "the waiting room was never closed"
                await asyncio.sleep(0.1)
        assert b"room taken over" in cluster.node(1).log


async def test_sigterm_hands_the_rooms_over_and_the_players_resume_at_once(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2) as cluster:
        a, b, code = await seat_two(cluster.node(0).url)
        await play([a, b], GAME[:5], 0)
        stopped = time.monotonic()
        assert await cluster.node(0).stop(signal.SIGTERM) == 0
        assert [(await a.closed())[0], (await b.closed())[0]] == [1012, 1012]
        # Released, not left to expire: free, or already taken by the survivor's sweep for
        # orphaned rooms, which may come before the players resume.
        lease = await lease_of(redis, redis_prefix, code)
        assert lease is None or lease[0] == cluster.node(1).node_id, lease
        a2, b2 = await asyncio.gather(
            resume_anywhere(cluster.url, a.welcome, "alice"),
            resume_anywhere(cluster.url, b.welcome, "bob"),
        )
        await play([a2, b2], GAME[5:6], 5)
        interrupted = time.monotonic() - stopped
        print(f"SIGTERM to the first move accepted on the next owner: {interrupted:.2f} s")
        assert interrupted < DEFAULT_TTL  # no waiting for the lease to expire
        final = await play([a2, b2], GAME[6:], 6)
        assert final.result is not None
        await asyncio.gather(a2.close(), b2.close())


async def test_game_ids_come_from_blocks_no_two_nodes_share(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2) as cluster:
        games = [await seat_two(cluster.node(index).url) for index in (0, 1, 0, 1)]
        await asyncio.gather(*(play([a, b], GAME, 0) for a, b, _code in games))
        for a, b, _code in games:
            await asyncio.gather(a.close(), b.close())
    store = PgStore(postgres_url)
    await store.open()
    finished = (await store.load()).games
    await store.close()
    assert sorted(game.room for game in finished) == sorted(code for *_, code in games)
    assert len({game.id for game in finished}) == 4


async def test_reserved_game_id_blocks_are_disjoint_and_above_every_saved_game(
    postgres_url: str,
) -> None:
    first, second = PgStore(postgres_url), PgStore(postgres_url)
    await first.open()
    await second.open()
    await first.write(Batch(games=[game(41)]))
    blocks = await asyncio.gather(
        *(store.reserve_game_ids(100) for store in (first, second, first, second))
    )
    numbers = [number for block in blocks for number in block]
    assert len(set(numbers)) == 400
    assert min(numbers) == 42
    await first.close()
    await second.close()


def test_the_history_numbers_games_from_its_reserved_blocks() -> None:
    history = GameHistory(10)
    asked: list[int] = []
    history.running_low = lambda: asked.append(1)
    history.reserved(range(101, 105))
    ids = [history._take_id() for _ in range(3)]
    assert ids == [101, 102, 103]
    assert asked == [1]  # fewer than half the block left after the third
    history.reserved(range(301, 305))
    assert [history._take_id() for _ in range(2)] == [104, 301]


async def test_a_paused_owner_that_wakes_after_a_takeover_cannot_write_and_drops_the_room(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str, redis: Redis
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 3) as cluster:
        a, b, code = await seat_two(cluster.node(0).url)
        half = 7
        await play([a, b], GAME[:half], 0)
        old = cluster.node(0)
        old.pause()
        a2, b2 = await asyncio.gather(
            resume_anywhere(cluster.url, a.welcome, "alice"),
            resume_anywhere(cluster.url, b.welcome, "bob"),
        )
        owner = await lease_of(redis, redis_prefix, code)
        assert owner is not None
        assert owner[0] != "n1"
        await play([a2, b2], GAME[half : half + 1], half)  # bob's d7, on the new owner

        # The old owner wakes up still holding the room in memory, and bob's old connection
        # plays another move at the same ply there: it must never be acknowledged.
        seen_before = len(b.seen)
        await b.send(MoveRequest(move="c8", ply=half))
        old.resume()
        assert (await b.closed(DEFAULT_TTL * 5))[0] == 1012
        assert (await a.closed(DEFAULT_TTL * 5))[0] == 1012
        late = [m for m in b.seen[seen_before:] if isinstance(m, State) and m.ply > half]
        assert late == []
        assert b"lease lost" in old.log or b"fenced" in old.log

        final = await play([a2, b2], GAME[half + 1 :], half + 1)  # unaffected
        assert final.result is not None
        await asyncio.gather(a2.close(), b2.close())

    assert await saved_moves(postgres_url, code) == GAME


async def keep_alive_until(cluster: Cluster, killed: Node, url: str, prefix: str) -> None:
    """Renew the liveness mark of node 0's name, as its live process did, until its next
    process (started after ``killed``) logs that it waits for the mark to go (20 s at most)."""
    redis = Redis.from_url(url)
    key = Keys(prefix).alive("n1")
    try:
        async with asyncio.timeout(20):
            while cluster.node(0) is killed or b"waiting up to" not in cluster.node(0).log:
                # Half a TTL: once it is told, the mark is gone well before the node gives up.
                await redis.set(key, "1", px=int(DEFAULT_TTL * 500))
                await asyncio.sleep(DEFAULT_TTL / 10)
    finally:
        await redis.aclose()


async def test_a_second_live_node_of_one_name_is_refused_and_a_killed_ones_name_comes_back(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 1) as cluster:
        # Two live nodes named n1 would each renew and take the other's leases as its own.
        twin = Node(postgres_url, "n1", *cluster.common)
        with pytest.raises(RuntimeError, match="server exited"):
            await twin.start()
        assert (
            "another node of this cluster is named 'n1' and alive: give each node its own "
            "--node-id" in twin.log.decode()
        )
        assert twin.process is not None
        assert await twin.process.wait() == 1
        # A node killed and started again straight away waits for its old mark to expire.
        assert await cluster.node(0).stop(signal.SIGKILL) == -signal.SIGKILL
        # The mark expires within a TTL of the last renewal, which a start on a busy machine
        # can outlast (then there is nothing to wait for, nor to say: the test failed now and
        # then). So it is kept alive here, as the dead node's would be, until the new one says
        # it waits; then it expires within half a TTL, inside the 1.5 TTL the node waits.
        killed = cluster.node(0)
        mark = asyncio.create_task(
            keep_alive_until(cluster, killed, redis_server.url, redis_prefix)
        )
        started = time.monotonic()
        await cluster.restart(0)
        await mark
        assert time.monotonic() - started < DEFAULT_TTL * 1.5 + 5
        # ... and says why it waits (an outside operator review saw a silent pause), and
        # which node of which cluster it is.
        log = cluster.node(0).log.decode()
        assert f"waiting up to {DEFAULT_TTL * 1.5:g} s" in log  # 4.5 s, not "4 s"
        assert "for the node named 'n1' to be gone" in log
        assert f"; node n1 of the cluster on {redis_server.url}" in log
        # Stopped gracefully, it lets its name go at once.
        assert await cluster.node(0).stop(signal.SIGTERM) == 0
        started = time.monotonic()
        await cluster.restart(0)
        assert "waiting up to" not in cluster.node(0).log.decode()
        waited = time.monotonic() - started
        print(f"restart after SIGTERM: {waited:.2f} s")


async def test_a_node_with_another_cluster_secret_is_refused_at_start(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    """It would say ready, then every client handed between it and the others would be
    refused (the other nodes' logs alone said why)."""
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 1) as cluster:
        stranger = Node(postgres_url, "n2", *cluster.common, "--cluster-secret", "x" * 20)
        with pytest.raises(RuntimeError, match="server exited"):
            await stranger.start()
        assert stranger.process is not None
        assert await stranger.process.wait() == 1
        assert (
            "the running nodes of this cluster use another --cluster-secret: give every node "
            "the same one" in stranger.log.decode()
        )
        assert "Traceback" not in stranger.log.decode()
        # One with the cluster's secret, under the same name, joins.
        friend = Node(postgres_url, "n2", *cluster.common)
        try:
            await friend.start()
            assert friend.running
        finally:
            await friend.stop()
