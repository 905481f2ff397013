"""The first-move limit over real sockets: a game nobody starts is aborted by the server."""

from __future__ import annotations

import time

from protocol.messages import Create, Join, Joined, MoveRequest, Result, State
from server.app import GameServer
from server.config import Config
from tests.wsclient import Client


async def until_finished(client: Client, within: float = 5.0) -> State:
    while True:
        state = await client.expect(State, within)
        if state.status == "finished":
            return state


async def test_the_server_aborts_a_game_whose_first_move_never_comes() -> None:
    async with GameServer(Config(port=0, first_move=0.5)).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        alice, bob = await Client.connect(url, "Alice"), await Client.connect(url, "Bob")
        await alice.send(Create())
        room = (await alice.expect(Joined)).room
        await bob.send(Join(room=room))
        await bob.expect(Joined)
        started = await bob.expect(State)
        assert started.status == "playing"
        assert started.first_move_in_ms is not None
        assert 0 < started.first_move_in_ms <= 500
        await alice.send(MoveRequest(move="e2", ply=0))  # Alice moves; Bob never does
        since = time.monotonic()
        over = await until_finished(bob)
        assert time.monotonic() - since >= 0.4  # Bob had his own half second
        assert over.result == Result(winner=None, reason="aborted", game_id=1)
        assert over.moves == ["e2"]
        assert (await until_finished(alice)).result == over.result
        await alice.close()
        await bob.close()
