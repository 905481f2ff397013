"""What a resume finds on a cluster when its session holds no seat: such a session lives
only on the node its connection reached (PROTOCOL.md section 21, "In a cluster of
servers"), so its token works there and nowhere else, while the old connection is open."""

from __future__ import annotations

import asyncio

from protocol.messages import (
    VERSION,
    Create,
    Hello,
    Joined,
    Ping,
    Pong,
    Queued,
    QuickMatch,
    Watch,
    Welcome,
)
from tests.server.cluster.harness import running_cluster
from tests.services import RedisServer
from tests.wsclient import Client


async def resumed(url: str, client: Client, name: str) -> Client:
    """A new connection through ``url`` saying hello with ``client``'s resume token."""
    assert client.welcome is not None
    again = await Client.connect(url, hello=False)
    await again.send(Hello(version=VERSION, name=name, resume=client.welcome.resume_token))
    return again


async def test_a_session_without_a_seat_resumes_only_on_its_own_node(
    postgres_url: str, redis_server: RedisServer, redis_prefix: str
) -> None:
    async with running_cluster(postgres_url, redis_server.url, redis_prefix, 2) as cluster:
        home, other = cluster.node(0).url, cluster.node(1).url
        host = await Client.connect(home, "host")
        await host.send(Create())
        room = (await host.expect(Joined)).room
        lobby = await Client.connect(home, "alice")
        queued = await Client.connect(home, "quinn")
        await queued.send(QuickMatch())
        await queued.expect(Queued)
        watcher = await Client.connect(home, "sam")
        await watcher.send(Watch(room=room))
        await watcher.expect(Joined)
        for old, name in ((lobby, "alice"), (queued, "quinn"), (watcher, "sam")):
            # Another node knows nothing of it: bad_token, and the old connection is
            # left alone (it is still served).
            elsewhere = await resumed(other, old, name)
            await elsewhere.error("bad_token")
            await old.send(Ping(id="still"))
            while not isinstance(await old.recv(), Pong):
                pass
            # Its own node takes it back, closing the old connection.
            again = await resumed(home, old, name)
            await again.expect(Welcome)
            assert await old.closed() == (4000, "session resumed on another connection")
            await asyncio.gather(elsewhere.close(), again.close())
        await host.close()
