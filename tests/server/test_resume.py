"""Dropped connections over real websockets: resume, replay, and the server's own timers."""

from __future__ import annotations

import asyncio

from protocol.messages import (
    VERSION,
    Chat,
    ChatMessage,
    Claim,
    Create,
    Error,
    Hello,
    Join,
    Joined,
    MoveRequest,
    Ping,
    Pong,
    Queued,
    QuickMatch,
    Rematch,
    State,
    TimeControl,
    VariantSpec,
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


async def test_a_ping_behind_the_resuming_hello_marks_where_the_replay_ends(
    server: GameServer, connect: Connect
) -> None:
    """Section 21: with the old connection still open, replayed states show the seat
    connected already, like the state of step 4; the pong of a ping sent right behind the
    hello comes after that state, and nothing of the room after the pong (an outside client
    answered a replayed state with a move)."""
    a, b = await connect("alice"), await connect("bob")
    await a.send(Create())
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    first = await a.state()
    await a.send(MoveRequest(move="e2", ply=0))
    await b.send(MoveRequest(move="e8", ply=1))
    while (await a.state()).ply < 2:
        pass
    assert a.welcome is not None
    back = await Client.connect(f"ws://127.0.0.1:{server.port}", hello=False)
    token = a.welcome.resume_token
    await back.send(Hello(version=VERSION, name="alice", resume=token, last_event=first.event))
    await back.send(Ping(id="end"))
    assert isinstance(await back.recv(), Welcome)
    frames = []
    while not isinstance(message := await back.recv(), Pong):
        assert isinstance(message, State)
        frames.append(message)
    assert message.id == "end"
    replayed, final = frames[:-1], frames[-1]
    assert replayed
    assert all(state.players[0].connected for state in replayed)
    assert (final.event, final.ply) == (replayed[-1].event + 1, 2)
    await back.quiet()
    assert back.seen[-1] == message
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


async def _race(url: str, moves: str) -> tuple[Client, Client]:
    """Alice and Bob in a 5x5 room without walls, ``moves`` played (each seen by both)."""
    a, b = await Client.connect(url, "alice"), await Client.connect(url, "bob")
    await a.send(Create(variant=VariantSpec(size=5, walls=0)))
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    for ply, move in enumerate(moves.split()):
        await (a, b)[ply % 2].send(MoveRequest(move=move, ply=ply))
        for client in (a, b):
            while (await client.state()).ply <= ply:
                pass
    return a, b


async def test_a_rematch_waits_for_a_player_who_went_away() -> None:
    """Section 15: a rematch agreed while a player is away starts when it comes back;
    meanwhile nothing counts down against it and nobody can claim."""
    config = Config(port=0, grace=0.2, deliberate_grace=0.2)
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b = await _race(url, "c2 d5 c3 d4 c4 d3 c5")
        await a.send(Rematch())
        while (await b.state()).rematch != [0]:
            pass
        assert a.welcome is not None
        a.ws.transport.abort()
        while (await b.state()).players[0].connected:
            pass
        await b.send(Rematch(id="r"))
        asked = await b.state()
        assert (asked.id, asked.status, asked.rematch, asked.game) == ("r", "finished", [0, 1], 1)
        assert [p.claim_in_ms for p in asked.players] == [None, None]
        await asyncio.sleep(0.3)  # longer than the grace period
        await b.send(Claim(id="c"))
        assert (await b.expect(Error)).code == "game_over"

        back = await Client.connect(url, hello=False)
        await back.send(Hello(version=VERSION, name="alice", resume=a.welcome.resume_token))
        assert (await back.expect(Welcome)).seat == 0
        assert (await back.state()).players[0].connected
        assert (await back.expect(Joined)).seat == 1  # the seats turned
        assert (await b.state()).players[0].connected
        assert (await b.expect(Joined)).seat == 0
        for client in (back, b):
            new_game = await client.state()
            assert (new_game.status, new_game.ply, new_game.rematch) == ("playing", 0, [])
            assert [(p.connected, p.claim_in_ms) for p in new_game.players] == [(True, None)] * 2
        await asyncio.gather(back.close(), b.close())


async def test_a_player_who_dropped_before_the_end_comes_back_to_the_result() -> None:
    """A finished room that nobody is in is kept for a player whose connection dropped,
    for that player's grace period: long enough to come back and see how it ended."""
    config = Config(port=0, grace=1.0, deliberate_grace=1.0)
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"

        async def game_bob_drops_before_the_end() -> Welcome:
            a, b = await _race(url, "c2 d5 c3 d4 c4 d3")
            assert b.welcome is not None
            b.ws.transport.abort()  # Bob's link dies after his move
            while (await a.state()).players[1].connected:
                pass
            await a.send(MoveRequest(move="c5", ply=6))  # Alice wins, and goes
            while (await a.state()).status != "finished":
                pass
            await a.close()
            return b.welcome

        bob = await game_bob_drops_before_the_end()
        back = await Client.connect(url, hello=False)
        await back.send(Hello(version=VERSION, name="bob", resume=bob.resume_token))
        assert (await back.expect(Welcome)).seat == 1
        state = await back.state()
        while not state.players[1].connected:
            state = await back.state()
        assert state.status == "finished"
        assert state.result is not None
        assert (state.result.winner, state.result.reason) == (0, "goal")
        await back.close()

        # Past his grace, with nobody there, the room and Bob's seat in it are gone.
        bob = await game_bob_drops_before_the_end()
        await asyncio.sleep(1.3)
        late = await Client.connect(url, hello=False)
        await late.send(Hello(version=VERSION, name="bob", resume=bob.resume_token))
        assert (await late.expect(Error)).code == "bad_token"
        await late.close()
        assert not server.core.rooms


async def test_a_resumed_session_still_in_the_quick_match_queue_is_told(
    server: GameServer, connect: Connect
) -> None:
    a = await connect("alice")
    await a.send(QuickMatch(id="q", variant=VariantSpec(size=5), clock=TimeControl(base=60)))
    await a.expect(Queued)
    assert a.welcome is not None
    # A second connection takes the session over while the first is still open.
    again = await connect("alice", hello=False)
    await again.send(Hello(version=VERSION, name="alice", resume=a.welcome.resume_token))
    welcome = await again.expect(Welcome)
    assert (welcome.room, welcome.seat) == (None, None)
    queued = await again.expect(Queued)
    assert queued.id is None
    assert queued.variant == VariantSpec(size=5, walls=10)
    assert queued.clock == TimeControl(base=60)
    assert await a.closed() == (4000, "session resumed on another connection")
    b = await connect("bob")
    await b.send(QuickMatch(variant=VariantSpec(size=5), clock=TimeControl(base=60)))
    await b.expect(Queued)
    joined = await again.expect(Joined)
    assert (joined.id, joined.seat) == ("q", 0)


async def test_an_address_saying_hello_too_often_is_refused() -> None:
    config = Config(
        port=0, rate=1000, burst=1000, trusted_proxies="127.0.0.1", hellos_per_second=0.001
    )  # the default burst, refilled too slowly to matter however slow the machine
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        for _ in range(20):  # the burst: a whole address's connections coming back at once
            client = await Client.connect(url, address="10.0.0.1")
            await client.close()
        late = await Client.connect(url, hello=False, address="10.0.0.1")
        await late.send(Hello(id=7, version=VERSION, name="late"))
        refused = await late.error("rate_limited")
        assert refused.id == 7
        await late.quiet()  # still waiting for a hello: nothing else came
        await late.close()
        other = await Client.connect(url, address="10.0.0.2")  # another address is not held up
        assert other.welcome is not None
        await other.close()


async def test_resumes_that_replay_a_long_log_are_paid_for_by_the_byte() -> None:
    config = Config(
        port=0, rate=1000, burst=1000, trusted_proxies="127.0.0.1", hellos_per_second=0.001
    )
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a = await Client.connect(url, "alice", address="10.0.0.1")
        b = await Client.connect(url, "bob", address="10.0.0.2")
        await a.send(Create())
        room = (await a.expect(Joined)).room
        await b.send(Join(room=room))
        await b.expect(Joined)
        shuffle = ["e2", "e8", "e1", "e9"] * 30  # 120 states: more than 64 KiB of log
        for ply, move in enumerate(shuffle):
            await (a, b)[ply % 2].send(MoveRequest(move=move, ply=ply))
            while (await a.state()).ply < ply + 1:
                pass
        assert a.welcome is not None
        token = a.welcome.resume_token
        await a.close()
        resumed = 0
        while True:  # each resume asks for the whole log again
            again = await Client.connect(url, hello=False, address="10.0.0.1")
            await again.send(Hello(version=VERSION, name="alice", resume=token, last_event=1))
            answer = await again.recv()
            await again.close()
            if isinstance(answer, Error):
                assert answer.code == "rate_limited"
                break
            assert isinstance(answer, Welcome)
            token = answer.resume_token
            resumed += 1
            assert resumed < 20, "never limited"
        # The burst of 20 hellos, less alice's first, and the log replayed from event 2 is
        # between 128 and 192 KiB: each resume costs three (plain hellos: 19 would pass).
        assert resumed == 6
        # The refused hello changed nothing: the token takes the session back elsewhere.
        back = await Client.connect(url, hello=False, address="10.0.0.3")
        await back.send(Hello(version=VERSION, name="alice", resume=token, last_event=1))
        assert (await back.expect(Welcome)).room == room
        await back.close()
        await b.close()
