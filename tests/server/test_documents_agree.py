"""What PROTOCOL.md says where the documents once disagreed, checked over real sockets:
a drawn game's draw_offers, aborted games in the history, departures nobody is left to
hear, and a waiting room kept through the grace period."""

from __future__ import annotations

import asyncio

from protocol.messages import (
    VERSION,
    Abort,
    Create,
    Draw,
    FetchGame,
    GameRecordReply,
    Hello,
    History,
    HistoryList,
    Join,
    Joined,
    Leave,
    Left,
    Rematch,
    Resign,
    State,
    Watch,
    Welcome,
)
from server.app import GameServer
from server.config import Config
from tests.server.conftest import Connect
from tests.wsclient import Client


async def seat_two(connect: Connect) -> tuple[Client, Client, str]:
    a, b = await connect("alice"), await connect("bob")
    await a.send(Create())
    room = (await a.expect(Joined)).room
    await b.send(Join(room=room))
    await b.expect(Joined)
    while (await a.state()).status != "playing":
        pass
    await b.state()
    return a, b, room


async def until(client: Client, event_id: object = None, game: int | None = None) -> State:
    """Read past other messages to the state with this request id (or of this game)."""
    while True:
        message = await client.recv()
        if isinstance(message, State) and (message.id == event_id or message.game == game):
            return message


async def test_a_drawn_game_ends_with_draw_offers_empty(connect: Connect) -> None:
    a, b, _ = await seat_two(connect)
    await a.send(Draw(action="offer"))
    assert (await b.state()).draw_offers == [0]
    await a.state()
    await b.send(Draw(action="accept"))
    drawn = await a.state()
    assert drawn.result is not None
    assert (drawn.status, drawn.result.reason, drawn.draw_offers) == ("finished", "draw", [])


async def test_an_aborted_game_has_an_id_and_a_record_but_is_not_listed(
    connect: Connect,
) -> None:
    a, b, _ = await seat_two(connect)
    await a.send(Abort())
    assert (await b.state()).result is not None
    await a.state()
    for client in (a, b):
        await client.send(Rematch())
    await until(a, "never", game=2)
    await a.send(Resign(id="r"))
    await until(a, "r")
    await a.send(History())
    listed = (await a.expect(HistoryList)).games
    assert [(g.number, g.reason) for g in listed] == [(2, "resign")]
    aborted_id = listed[0].game - 1  # ids count up as games end: the abort came first
    await a.send(FetchGame(game=aborted_id))
    record = await a.expect(GameRecordReply)
    assert (record.summary.number, record.summary.reason) == (1, "aborted")
    assert record.summary.winner is None


async def test_the_last_one_to_go_makes_no_event(connect: Connect) -> None:
    a, b, room = await seat_two(connect)
    await a.send(Leave())
    await a.expect(Left)
    last = (await b.state()).event  # alice away: the last event anyone heard
    await b.send(Leave())  # nobody is left to hear it: no event
    await b.expect(Left)
    watcher = await connect("watcher")
    await watcher.send(Watch(room=room))
    await watcher.expect(Joined)
    arrived = await watcher.state()
    assert arrived.event == last  # a spectator's arrival is no event (section 5, watch)
    await watcher.send(Leave())  # nor its going
    await watcher.expect(Left)
    again = await connect("again")
    await again.send(Watch(room=room))
    await again.expect(Joined)
    assert (await again.expect(State)).event == arrived.event


async def test_a_waiting_room_is_kept_through_the_grace_period() -> None:
    """Section 11 agrees with sections 3 and 13: the creator's link blinks, the room stays
    for the grace period with nobody connected, and is forgotten after it."""
    async with GameServer(Config(port=0, grace=0.4, deliberate_grace=0.4)).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a = await Client.connect(url, "alice")
        await a.send(Create())
        room = (await a.expect(Joined)).room
        a.ws.transport.abort()
        b = await Client.connect(url, "bob")
        await asyncio.sleep(0.1)
        await b.send(Watch(room=room))
        await b.expect(Joined)
        kept = await b.state()
        assert (kept.status, kept.players[0].name, kept.players[0].connected) == (
            "waiting",
            "alice",
            False,
        )
        freed = await b.state()  # the grace period ends: the seat is given up
        assert freed.players[0].name is None
        await b.send(Leave())
        await b.expect(Left)
        await b.send(Watch(room=room))
        assert (await b.error("room_not_found")).code == "room_not_found"
        await b.close()


async def test_a_spectator_keeps_a_room_every_player_left() -> None:
    """Section 13: the game every player went away from is aborted; the room, finished, is
    forgotten once no spectator is left either. Until then a player may resume into it."""
    async with GameServer(Config(port=0, grace=0.3, deliberate_grace=0.3)).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        a, b = await Client.connect(url, "alice"), await Client.connect(url, "bob")
        await a.send(Create())
        room = (await a.expect(Joined)).room
        await b.send(Join(room=room))
        await b.expect(Joined)
        watcher = await Client.connect(url, "watcher")
        await watcher.send(Watch(room=room))
        await watcher.expect(Joined)
        tokens = []
        for client in (a, b):
            assert client.welcome is not None
            tokens.append(client.welcome.resume_token)
            client.ws.transport.abort()
        while (aborted := await watcher.state()).status != "finished":
            pass
        assert aborted.result is not None
        assert aborted.result.reason == "aborted"
        back = await Client.connect(url, hello=False)
        await back.send(Hello(version=VERSION, name="alice", resume=tokens[0]))
        assert (await back.expect(Welcome)).room == room
        await back.close()  # alice goes again (a clean close: 0.3 s), and the watcher too
        await watcher.send(Leave())
        while not isinstance(await watcher.recv(), Left):  # past alice's coming and going
            pass
        await asyncio.sleep(0.5)
        late = await Client.connect(url, hello=False)
        await late.send(Hello(version=VERSION, name="bob", resume=tokens[1]))
        await late.error("bad_token")
        await late.close()


async def test_only_a_hello_read_as_one_counts_toward_the_hello_limit() -> None:
    """Section 1: a frame that is not a readable hello (invalid_field) costs the address no
    hello; a refused hello (bad_token) does."""
    config = Config(port=0, hellos_per_second=0.01, hello_burst=3, rate=1000, burst=1000)
    async with GameServer(config).running() as server:
        client = await Client.connect(f"ws://127.0.0.1:{server.port}", hello=False)
        for _ in range(5):
            await client.send_raw('{"type": "hello", "version": "1.0", "name": ""}')
            await client.error("invalid_field")
        for _ in range(3):
            await client.send(Hello(version=VERSION, name="alice", resume="unknown"))
            await client.error("bad_token")
        await client.send(Hello(version=VERSION, name="alice"))
        await client.error("rate_limited")
        await client.close()
