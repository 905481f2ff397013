"""Dropped connections over real websockets: resume, replay, and the server's own timers."""

from __future__ import annotations

import asyncio

from protocol.messages import (
    VERSION,
    Chat,
    ChatMessage,
    Create,
    Hello,
    Join,
    Joined,
    MoveRequest,
    State,
    TimeControl,
    Welcome,
)
from server.app import GameServer
from server.config import Config
from tests.server.conftest import Connect
from tests.wsclient import Client


async def test_a_dropped_player_resumes_with_no_event_lost_or_repeated(
    server: GameServer, connect: Connect
) -> None:
    a, b = await connect("alice"), await connect("bob")
    await a.send(Create())
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    await a.send(MoveRequest(move="e2", ply=0))
    await b.send(MoveRequest(move="e8", ply=1))
    while (await a.state()).ply < 2:
        pass
    assert a.welcome is not None
    seen = [m.event for m in a.seen if isinstance(m, State | ChatMessage)]
    # The link dies without a close handshake, like a Wi-Fi drop.
    a.ws.transport.abort()
    gone = await b.state()
    while gone.players[0].connected:
        gone = await b.state()
    assert gone.players[0].claim_in_ms is not None
    await b.send(Chat(text="still there?"))
    await b.expect(ChatMessage)

    back = await Client.connect(f"ws://127.0.0.1:{server.port}", hello=False)
    token = a.welcome.resume_token
    await back.send(Hello(version=VERSION, name="alice", resume=token, last_event=seen[-1]))
    welcome = await back.expect(Welcome)
    assert (welcome.room, welcome.seat) == (room, 0)
    replayed: list[int] = []
    while True:
        message = await back.recv()
        assert isinstance(message, State | ChatMessage)
        replayed.append(message.event)
        if isinstance(message, State) and message.players[0].connected:
            break
    assert replayed == list(range(seen[-1] + 1, seen[-1] + 1 + len(replayed)))
    assert any(isinstance(m, ChatMessage) for m in back.seen)
    await back.send(MoveRequest(move="e3", ply=2))
    assert (await back.state()).ply == 3
    await back.close()


async def test_the_server_flags_on_its_own_timer() -> None:
    async with GameServer(Config(port=0)).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b = await Client.connect(url, "a"), await Client.connect(url, "b")
        await a.send(Create(clock=TimeControl(base=0.3)))
        room = (await a.expect(Joined)).room
        await b.send(Join(room=room))
        await b.expect(Joined)
        await a.send(MoveRequest(move="e2", ply=0))
        await b.send(MoveRequest(move="e8", ply=1))
        state = await b.state()
        while state.result is None:
            state = await b.state()
        assert state.result.reason == "time"
        assert state.result.winner == 1
        await asyncio.gather(a.close(), b.close())
