"""Requests sent right behind a ``hello`` that resumes on a node of a cluster, without
waiting for its ``welcome``: real node processes on one PostgreSQL and one Redis.

A node that does not know the resume token looks for its session in the shared database.
The requests sent after that ``hello`` used to be served at once, before it: a `ping`
answered ahead of the `welcome`, a `sync` or a `move` refused `hello_required`. They now
wait for it, as behind a `hello` with a login token (PROTOCOL.md, section 6)."""

from __future__ import annotations

import asyncio
import signal
import time

from protocol.messages import (
    VERSION,
    Hello,
    MoveRequest,
    Ping,
    Pong,
    ServerMessage,
    State,
    Sync,
    Welcome,
)
from tests.server.cluster.harness import running_cluster
from tests.server.cluster.test_node import saved_moves
from tests.server.test_store import GAME, play, resume, seat_two
from tests.services import RedisServer
from tests.wsclient import Client


async def pipelined_resume(
    url: str, welcome: Welcome | None, name: str, move: str, ply: int
) -> tuple[Client, list[ServerMessage]] | None:
    """Say ``hello`` with ``welcome``'s resume token and, without waiting, a ``ping``, a
    ``sync`` and the ``move`` for ``ply``: the client and what it received up to the
    move's answer, or None if the node closed it (the room still on its way: 1012)."""
    assert welcome is not None
    client = await Client.connect(url, hello=False)
    await client.send(Hello(id="h", version=VERSION, name=name, resume=welcome.resume_token))
    await client.send(Ping(id="p"))
    await client.send(Sync(id="s"))
    await client.send(MoveRequest(id="m", move=move, ply=ply))
    received: list[ServerMessage] = []
    try:
        while not (received and getattr(received[-1], "id", None) == "m"):
            received.append(await client.recv())  # up to the move's answer
    except TimeoutError:
        if client.ws.close_code is None:
            raise
    if client.ws.close_code is not None:
        assert client.ws.close_code == 1012, client.ws.close_reason
        return None
    client.welcome = next((m for m in received if isinstance(m, Welcome)), None)
    return client, received


def served_in_order(received: list[ServerMessage], ply: int) -> None:
    """The welcome first, then the replies to the ping, the sync and the move, in order,
    and no error (the room's pushed states may come between them)."""
    assert isinstance(received[0], Welcome), received[0]
    replies = [m for m in received if getattr(m, "id", None) in ("p", "s", "m")]
    assert [(type(m), getattr(m, "id", None)) for m in replies] == [
        (Pong, "p"),
        (State, "s"),
        (State, "m"),
    ], received
    moved = replies[-1]
    assert isinstance(moved, State)
    assert moved.ply == ply + 1


async def test_requests_behind_a_resume_on_another_node_wait_for_its_welcome(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2) as cluster:
        owner, other = cluster.node(0), cluster.node(1)
        alice, bob, code = await seat_two(owner.url)
        await play([alice, bob], GAME[:2], 0)
        await alice.close()
        # Alice's token on the node that does not host her room: it finds the session in
        # PostgreSQL and hands the connection over to the owner, the requests after it.
        found = await pipelined_resume(other.url, alice.welcome, "alice", GAME[2], 2)
        assert found is not None
        alice, received = found
        served_in_order(received, 2)
        while (await bob.state()).ply != 3:  # the move was played, for everyone
            pass

        # The owner dies: Bob's token on the survivor, which takes the room over (once
        # the dead node's lease has run out) and resumes him there.
        await owner.stop(signal.SIGKILL)
        await bob.close()
        deadline = time.monotonic() + 10
        while (found := await pipelined_resume(other.url, bob.welcome, "bob", GAME[3], 3)) is None:
            assert time.monotonic() < deadline, "the room was never taken over"
            await asyncio.sleep(0.1)
        bob, received = found
        assert isinstance(received[0], Welcome)
        assert received[0].room == code
        served_in_order(received, 3)
        await alice.closed()  # relayed to the dead node: 1012
        alice = await resume(other.url, alice.welcome, "alice")
        final = await play([alice, bob], GAME[4:], 4)
        assert final.result is not None
        await asyncio.gather(alice.close(), bob.close())
    assert await saved_moves(postgres_url, code) == GAME  # every move, each once
