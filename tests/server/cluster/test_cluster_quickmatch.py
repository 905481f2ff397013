"""Quick match across the nodes of a real cluster: players who arrived on different nodes
are paired (through the shared queue in Redis), the node that found the pair hosts the room,
and the other player's connection is moved there; nobody is paired twice or with themselves.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from protocol.messages import (
    Error,
    Joined,
    Leave,
    MoveRequest,
    Queued,
    QuickMatch,
    State,
    VariantSpec,
)
from tests.server.cluster.harness import running_cluster
from tests.server.cluster.test_cluster_metrics import figures
from tests.services import RedisServer
from tests.wsclient import Client


async def seated(client: Client, within: float = 10.0) -> tuple[Joined, State]:
    """The ``joined`` of a pairing, then the room's first state with every seat taken."""
    joined = await client.expect(Joined, within)
    state = await client.state()
    while state.status != "playing":
        state = await client.state()
    return joined, state


async def test_players_of_two_nodes_are_paired_into_one_room_on_the_finders_node(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2) as cluster:
        alice = await Client.connect(cluster.node(0).url, "alice")
        bob = await Client.connect(cluster.node(1).url, "bob")
        await alice.send(QuickMatch(id="a"))
        await alice.expect(Queued)
        await asyncio.sleep(0.3)  # alice waits in the shared queue
        await bob.send(QuickMatch(id="b"))
        await bob.expect(Queued)
        (joined_a, state_a), (joined_b, state_b) = await asyncio.gather(seated(alice), seated(bob))
        assert joined_a.id == "a"
        assert joined_b.id == "b"
        assert joined_a.room == joined_b.room
        assert (joined_a.seat, joined_b.seat) == (0, 1)  # the first to come moves first
        assert [p.name for p in state_a.players] == ["alice", "bob"]
        assert state_b.players == state_a.players
        # The game is played through the relay: alice's connection now goes to node 2.
        await alice.send(MoveRequest(move="e2", ply=0))
        for client in (alice, bob):
            state = await client.state()
            assert state.ply == 1
        # Node 2 found the pair (bob came second): it counts one pair across nodes.
        finder = await figures(cluster.node(1).port, "n2")
        assert (finder["pairs_across"], finder["pairs_here"]) == (1.0, 0.0)
        await asyncio.gather(alice.close(), bob.close())


async def test_many_players_on_two_nodes_each_paired_once_never_with_themselves(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2) as cluster:
        names = [f"p{n}" for n in range(16)]
        # Seven players on node 1 and nine on node 2, interleaved: an odd number on each node
        # cannot all be paired among themselves, so some pair must cross (however the
        # arrivals interleave), and only a shared queue can make it.
        nodes = [0 if n % 2 == 0 and n < 14 else 1 for n in range(16)]
        clients = [
            await Client.connect(cluster.node(nodes[n]).url, name) for n, name in enumerate(names)
        ]
        # Everyone asks at once, and every fourth player asks twice.
        requests = []
        for n, client in enumerate(clients):
            requests.append(client.send(QuickMatch(id=n)))
            if n % 4 == 0:
                requests.append(client.send(QuickMatch(id=100 + n)))
        await asyncio.gather(*requests)
        results = await asyncio.gather(*(seated_once(client) for client in clients))
        rooms: dict[str, dict[int, str]] = {}
        for name, (joined, _) in zip(names, results, strict=True):
            assert joined.seat is not None
            seats = rooms.setdefault(joined.room, {})
            assert joined.seat not in seats, f"{joined.room}: seat {joined.seat} twice"
            seats[joined.seat] = name
        assert len(rooms) == len(names) // 2  # everyone seated once, two to a room
        for name, (joined, state) in zip(names, results, strict=True):
            seats = rooms[joined.room]
            assert sorted(seats) == [0, 1]
            assert seats[0] != seats[1], f"{name} paired with themselves"
            assert [p.name for p in state.players] == [seats[0], seats[1]]
        across = sum(nodes[names.index(s[0])] != nodes[names.index(s[1])] for s in rooms.values())
        assert across > 0, "no pair across nodes: the queue is not shared"
        # Four-player games are paired among one node's players, as on one server.
        four = [await Client.connect(cluster.node(1).url, f"q{n}") for n in range(4)]
        await asyncio.gather(*(c.send(QuickMatch(variant=VariantSpec(players=4))) for c in four))
        foursome = await asyncio.gather(*(seated_once(client) for client in four))
        assert len({joined.room for joined, _ in foursome}) == 1
        assert sorted(joined.seat or 0 for joined, _ in foursome) == [0, 1, 2, 3]
        await asyncio.gather(*(client.close() for client in clients + four))


async def seated_once(client: Client) -> tuple[Joined, State]:
    """The client's pairing: ``queued`` (one per request; a second request while queued is
    refused ``already_in_room``), then one ``joined`` and the playing state; nothing else."""
    replies: Counter[str] = Counter()
    while True:
        message = await client.recv(15.0)
        if isinstance(message, Queued):
            replies["queued"] += 1
        elif isinstance(message, Error):
            assert message.code == "already_in_room", message
            replies["refused"] += 1
        elif isinstance(message, Joined):
            state = await client.state()
            while state.status != "playing":
                state = await client.state()
            return message, state
        else:
            raise AssertionError(f"unexpected {message!r}")


async def test_a_queue_request_while_redis_is_away_is_retried_ever_more_slowly_warned_once(
    postgres_url: str, own_redis: RedisServer, redis_prefix: str
) -> None:
    # A player leaving the queue while Redis is away: the request waits and is asked again.
    # It was asked every 0.2 s, each time with a warning.
    async with running_cluster(postgres_url, own_redis.url, redis_prefix, 1) as cluster:
        node = cluster.node(0)
        alice = await Client.connect(node.url, "alice")
        await alice.send(QuickMatch(id="a"))
        await alice.expect(Queued)
        own_redis.stop()
        await alice.send(Leave(id="l"))
        await asyncio.sleep(3)
        warned = node.log.decode().count("quick-match queue unreachable")
        own_redis.start()
        assert warned == 1
        await alice.close()
