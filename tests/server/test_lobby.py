"""The public room list over real sockets: only rooms someone can really join or watch."""

from __future__ import annotations

from protocol.messages import Create, Join, Joined, ListRooms, Rooms
from server.app import GameServer
from server.config import Config
from tests.client.recorder import until
from tests.wsclient import Client


async def listed(url: str) -> dict[str, str]:
    """The room list as a stranger sees it: code -> status."""
    stranger = await Client.connect(url, "Stranger")
    await stranger.send(ListRooms())
    rooms = await stranger.expect(Rooms)
    await stranger.close()
    return {room.room: room.status for room in rooms.rooms}


async def test_the_list_leaves_out_rooms_nobody_can_play_in() -> None:
    async with GameServer(Config(port=0)).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        alice = await Client.connect(url, "Alice")
        await alice.send(Create())
        waiting = (await alice.expect(Joined)).room
        assert (await listed(url))[waiting] == "waiting"
        await alice.close()  # the creator goes: her seat is kept, but nobody can start a game
        await until(lambda: None if server.core.rooms[waiting].connected(0) else True)
        assert waiting not in await listed(url)

        carol, dave = await Client.connect(url, "Carol"), await Client.connect(url, "Dave")
        await carol.send(Create())
        playing = (await carol.expect(Joined)).room
        await dave.send(Join(room=playing))
        await dave.expect(Joined)
        assert (await listed(url))[playing] == "playing"
        await carol.close()
        assert (await listed(url))[playing] == "playing"  # Dave is still at the board
        await dave.close()
        await until(lambda: None if server.core.rooms[playing].connected(1) else True)
        assert playing in server.core.rooms  # the game is kept for them to come back...
        assert playing not in await listed(url)  # ...but there is nothing to watch


async def test_one_address_shows_at_most_three_rooms_in_the_list() -> None:
    config = Config(port=0, rate=1000, burst=1000, trusted_proxies="127.0.0.1")
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        real = await Client.connect(url, "Alice", address="10.0.0.1")
        await real.send(Create())
        alice = (await real.expect(Joined)).room
        flooders = [await Client.connect(url, f"f{n}", address="10.0.0.2") for n in range(5)]
        flooded = []
        for flooder in flooders:  # one address re-creating public rooms, one a connection
            await flooder.send(Create())
            flooded.append((await flooder.expect(Joined)).room)
        shown = await listed(url)
        assert alice in shown  # the older room of another address still shows
        assert [room for room in flooded if room in shown] == flooded[-3:]
        for client in [real, *flooders]:
            await client.close()
