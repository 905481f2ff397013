"""The relay between two real servers in this process, over real websockets and a real
Redis (the node addresses): a client of node A served by node B, and sent back.

Where a room is hosted is read here from the servers' own rooms (the room leases'
stand-in: these servers have no PostgreSQL); tests/server/cluster/test_cluster.py runs
the same through real node processes and their leases.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import TypeVar, cast

import pytest
from prometheus_client import CollectorRegistry
from redis.asyncio import Redis
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from protocol.codec import encode
from protocol.messages import (
    VERSION,
    Create,
    ErrorCode,
    Hello,
    Join,
    Joined,
    Leave,
    Left,
    Moved,
    MoveRequest,
    Pong,
    State,
    Watch,
    Welcome,
)
from server.app import GameServer
from server.cluster.keys import Keys
from server.cluster.nodes import NodeAddresses
from server.cluster.relay import CLIENT_HEADER, NODE_PATH, SECRET_HEADER, Relay, RelayHost
from server.config import Config
from tests.server.test_games import play
from tests.services import free_port
from tests.wsclient import Client

T = TypeVar("T")
SECRET = "a shared secret"
Nodes = dict[str, GameServer]
Connect = Callable[[GameServer, str], Awaitable[Client]]


@pytest.fixture
async def nodes(redis: Redis, keys: Keys) -> AsyncIterator[Nodes]:
    servers: Nodes = {}

    async def where(code: str) -> str | None:
        return next((n for n, s in servers.items() if code in s.core.rooms), None)

    async with AsyncExitStack() as stack:
        for name in ("a", "b"):
            config = Config(port=0, rate=1000, burst=1000, cluster_secret=SECRET)
            server = await stack.enter_async_context(GameServer(config).running())
            addresses = NodeAddresses(redis, keys, name, f"127.0.0.1:{server.port}", ttl=5)
            await addresses.publish()
            stack.push_async_callback(addresses.stop)
            server.enable_relay(name, addresses.reach, where)
            servers[name] = server
        yield servers


@pytest.fixture
async def client() -> AsyncIterator[Connect]:
    clients: list[Client] = []

    async def open_client(server: GameServer, name: str) -> Client:
        opened = await Client.connect(f"ws://127.0.0.1:{server.port}", name)
        clients.append(opened)
        return opened

    yield open_client
    for opened in clients:
        await opened.close()


async def until(player: Client, kind: type[T]) -> T:
    """The next message of type ``kind``, skipping others (the room's states)."""
    while not isinstance(message := await player.recv(), kind):
        pass
    return message


def relayed(node: GameServer) -> float | None:
    return node.metrics.registry.get_sample_value("quoridor_relayed_connections")


async def room_on(node: GameServer, player: Client) -> str:
    await player.send(Create(id="c"))
    return (await player.expect(Joined)).room


async def test_a_client_of_one_node_plays_in_a_room_of_the_other(
    nodes: Nodes, client: Connect
) -> None:
    a, b = nodes["a"], nodes["b"]
    host = await client(b, "host")
    room = await room_on(b, host)
    guest = await client(a, "guest")
    await guest.send(Join(id="j", room=room))
    joined = await guest.expect(Joined)
    assert joined.id == "j"
    assert joined.room == room
    assert joined.seat == 1
    assert relayed(a) == 1
    assert not a.core.connections, "the guest's session lives on node b now"
    guest_session = guest.welcome.session if guest.welcome else ""
    assert any(s.id == guest_session for s in b.core.sessions.values())
    await host.state()
    await host.state()
    await guest.state()
    largest = b'{"type":"ping","id":"big"}'.ljust(4096)  # --max-message's default, in full
    await guest.send_raw(largest.decode())
    assert (await guest.expect(Pong)).id == "big"
    moves = "e2 d9 e3 d8 e4 a6h e5 d7 e6 d6 e7 d5 e8 d4 e9".split()
    final = await play([host, guest], moves)
    assert final.status == "finished"
    assert final.result is not None


async def test_a_relayed_client_keeps_its_compact_move_events(
    nodes: Nodes, client: Connect
) -> None:
    """``hello.compact`` said on node a holds on node b, which serves the client."""
    a, b = nodes["a"], nodes["b"]
    host = await client(b, "host")
    room = await room_on(b, host)
    compact = await Client.connect(f"ws://127.0.0.1:{a.port}", hello=False)
    await compact.send(Hello(version=VERSION, name="guest", compact=True))
    assert (await compact.expect(Welcome)).compact
    await compact.send(Join(id="j", room=room))
    assert (await compact.expect(Joined)).room == room
    assert relayed(a) == 1
    await until(compact, State)  # the game's start: a whole state
    await host.send(MoveRequest(move="e2", ply=0))
    moved = await until(compact, Moved)
    assert (moved.move, moved.ply) == ("e2", 1)
    await until(host, State)  # not compact: whole states
    await compact.send(MoveRequest(move="e8", ply=1))
    assert (await until(compact, Moved)).move == "e8"
    await compact.close()


async def test_a_spectator_elsewhere_sees_every_move(nodes: Nodes, client: Connect) -> None:
    a, b = nodes["a"], nodes["b"]
    host, other = await client(b, "host"), await client(b, "other")
    room = await room_on(b, host)
    await other.send(Join(room=room))
    await other.expect(Joined)
    watcher = await client(a, "watcher")
    await watcher.send(Watch(id="w", room=room))
    assert (await watcher.expect(Joined)).room == room
    first = (await watcher.state()).event
    for player in (host, host, other):
        await player.state()
    for ply, move in enumerate("e2 e8 e3 e7".split()):
        await [host, other][ply % 2].send(MoveRequest(move=move, ply=ply))
        state = await watcher.state()
        assert (state.ply, state.event) == (ply + 1, first + ply + 1)


async def test_an_unknown_room_is_not_found_after_asking_every_node(
    nodes: Nodes, client: Connect
) -> None:
    guest = await client(nodes["a"], "guest")
    await guest.send(Join(id=5, room="NOPE"))
    error = await guest.error(ErrorCode.ROOM_NOT_FOUND)
    assert error.id == 5
    await guest.send(Create(id=6))  # served here as ever
    assert (await guest.expect(Joined)).id == 6


async def test_served_elsewhere_then_sent_back_to_a_room_of_its_first_node(
    nodes: Nodes, client: Connect
) -> None:
    a, b = nodes["a"], nodes["b"]
    room_b = await room_on(b, await client(b, "on b"))
    room_a = await room_on(a, await client(a, "on a"))
    guest = await client(a, "guest")
    await guest.send(Watch(room=room_b))
    await guest.expect(Joined)
    await guest.send(Leave(id="l"))  # back in the lobby, on node b
    assert (await until(guest, Left)).id == "l"
    await guest.send(Join(id="back", room=room_a))  # b sends it on: here, node a
    joined = await until(guest, Joined)
    assert (joined.id, joined.room) == ("back", room_a)
    assert relayed(a) == 0
    assert any(c.session and c.session.room for c in a.core.connections.values())


async def test_the_serving_node_gone_closes_the_client_with_1012(
    nodes: Nodes, client: Connect
) -> None:
    a, b = nodes["a"], nodes["b"]
    room = await room_on(b, await client(b, "host"))
    guest = await client(a, "guest")
    await guest.send(Join(room=room))
    await guest.expect(Joined)
    for link in list(b.sockets.values()):
        if link.relay is not None:
            link.transport.abort()  # the node link breaks without a close: b died
    code, _ = await guest.closed()
    assert code == 1012


async def test_the_client_gone_is_the_serving_nodes_disconnect(
    nodes: Nodes, client: Connect
) -> None:
    a, b = nodes["a"], nodes["b"]
    host = await client(b, "host")
    room = await room_on(b, host)
    guest = await client(a, "guest")
    await guest.send(Join(room=room))
    await guest.expect(Joined)
    await guest.close()
    for _ in range(50):
        if not b.core.connections or len(b.core.connections) == 1:
            break
        await asyncio.sleep(0.02)
    assert len(b.core.connections) == 1, "only the host is connected to node b now"
    seat = b.core.rooms[room].holder(1)
    assert seat is not None
    assert seat.session.conn is None


async def test_a_node_link_without_the_secret_is_refused(nodes: Nodes) -> None:
    url = f"ws://127.0.0.1:{nodes['b'].port}{NODE_PATH}"
    for headers in ({SECRET_HEADER: "wrong", CLIENT_HEADER: "1.2.3.4"}, {CLIENT_HEADER: "1.2.3.4"}):
        with pytest.raises(InvalidStatus) as refused:
            await connect(url, additional_headers=headers)
        assert refused.value.response.status_code == 403
    ok = await connect(url, additional_headers={SECRET_HEADER: SECRET, CLIENT_HEADER: "1.2.3.4"})
    await ok.close()


async def test_the_entry_point_moves_a_lobby_client_with_its_requests(
    nodes: Nodes, client: Connect
) -> None:
    """``Relay.move`` (what quick match across nodes uses): a client of node a waiting in
    the lobby is moved to node b with a ``join`` that b runs first; then back to a."""
    a, b = nodes["a"], nodes["b"]
    room_b = await room_on(b, await client(b, "host"))
    guest = await client(a, "guest")
    (conn,) = a.core.connections
    assert a.relay is not None
    a.relay.move(conn, "b", [encode(Join(id="moved", room=room_b))])
    joined = await guest.expect(Joined)
    assert (joined.id, joined.room) == ("moved", room_b)
    await guest.send(Leave(id="l"))
    await until(guest, Left)
    (inbound,) = (c for c in b.core.connections.values() if c.session and c.session.name == "guest")
    assert b.relay is not None
    room_a = await room_on(a, await client(a, "other"))
    b.relay.move(inbound.id, "a", [encode(Watch(id="w", room=room_a))])  # back, no chain
    watching = await until(guest, Joined)
    assert (watching.id, watching.room) == ("w", room_a)
    assert relayed(a) == 0


async def test_a_relayed_connection_is_freed_by_reference_counting(
    nodes: Nodes, client: Connect
) -> None:
    """As any connection (tests/server/test_wire.py): a client served through the relay
    leaves nothing on the node it connected to once it is gone, without the collector."""
    a, b = nodes["a"], nodes["b"]
    host = await client(b, "host")
    room = await room_on(b, host)
    guest = await Client.connect(f"ws://127.0.0.1:{a.port}", "guest")
    gc.disable()
    try:
        await guest.send(Join(id="j", room=room))
        await guest.expect(Joined)
        assert relayed(a) == 1
        (link,) = a.sockets.values()
        protocol = weakref.ref(link.protocol)
        del link
        await guest.close()
        async with asyncio.timeout(5):
            while protocol() is not None:  # noqa: ASYNC110 (freed, not signalled)
                await asyncio.sleep(0.01)
        assert not a.sockets
    finally:
        gc.enable()


async def test_a_node_link_that_cannot_be_opened_is_warned_of_once_in_a_while(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The operators' review: with a node dead, the others logged `cannot open a node link`
    16 times in 2 s (the channel's warning had a rate limit, this one none)."""
    nowhere = f"127.0.0.1:{free_port()}"

    async def address_of(node: str) -> str:
        return nowhere

    async def where(room: str) -> str | None:
        return None

    relay = Relay(
        cast(RelayHost, None), "n1", "s" * 32, address_of, where, CollectorRegistry(), 20.0
    )
    with caplog.at_level(logging.WARNING, "quoridor.cluster"):
        for _ in range(10):
            assert await relay._open("n2", "127.0.0.1") is None
            assert await relay._open("n3", "127.0.0.1") is None
    assert caplog.text.count("cannot open a node link to n2") == 1
    assert caplog.text.count("cannot open a node link to n3") == 1
    # Refused: said as a node stopped or dead, not only as errno 111 (an operator's review).
    assert caplog.text.count("the node looks stopped or dead") == 2
