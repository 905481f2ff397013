"""Every error code: provoked over a real socket, answered, and nothing changed.

Each test checks the error (and the echoed id), that the connection still
works (a ping gets its pong), and that the room did not change: same event
number, same moves, nothing pushed to the other player.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
from msgspec.structs import replace

from protocol.messages import (
    Create,
    Error,
    ErrorCode,
    Hello,
    Join,
    Joined,
    Leave,
    Left,
    ListRooms,
    MoveRequest,
    Ping,
    Pong,
    Rooms,
    Watch,
    Welcome,
)
from server.app import GameServer
from server.config import Config
from tests.server.test_games import seat_players
from tests.wsclient import Client

Connect = Callable[..., Awaitable[Client]]
LONG = "9" * 4040


@dataclass
class Table:
    """Two seated players at ply 0 of a fresh game."""

    server: GameServer
    a: Client
    b: Client
    room: str

    def snapshot(self) -> tuple[int, list[str], str]:
        room = self.server.core.rooms[self.room]
        return room.event, room.game.moves, str(room.game)

    async def unchanged(self, before: tuple[int, list[str], str], *clients: Client) -> None:
        assert self.snapshot() == before
        for client in clients or (self.a, self.b):
            await client.send(Ping(id="still-there"))
            assert (await client.expect(Pong)).id == "still-there"


@pytest.fixture
async def table(server: GameServer, connect: Connect) -> Table:
    (a, b), room = await seat_players(connect)
    return Table(server, a, b, room)


async def test_malformed_json(table: Table) -> None:
    before = table.snapshot()
    await table.a.send_raw("{not json")
    error = await table.a.error(ErrorCode.MALFORMED_JSON)
    assert "malformed" in error.message
    # A lone surrogate escape at the end of a string: msgspec says "truncated", the frame
    # is whole (a protocol review).
    await table.a.send_raw('{"type": "ping", "id": "\\ud800"}')
    error = await table.a.error(ErrorCode.MALFORMED_JSON)
    assert error.message == "JSON is malformed: invalid utf-16 surrogate pair"
    await table.a.send_raw('{"type": "ping", "id": 1')
    assert (await table.a.error(ErrorCode.MALFORMED_JSON)).message == "Input data was truncated"
    await table.b.quiet()
    await table.unchanged(before)


@pytest.mark.parametrize(
    "frame",
    [
        '{"type": "ping", "x": ' + "[" * 1000 + "]" * 1000 + "}",
        '{"type": "ping", "x": ' + '[{"":' * 500 + "1" + "}]" * 500 + "}",
        '{"":' * 500 + "[" * 500 + "]" * 500 + "}" * 500,
    ],
)
async def test_deep_nesting_is_malformed_json(
    table: Table, frame: str, caplog: pytest.LogCaptureFixture
) -> None:
    before = table.snapshot()
    await table.a.send_raw(frame)
    error = await table.a.error(ErrorCode.MALFORMED_JSON)
    assert error.id is None
    assert "nested too deeply" in error.message
    await table.unchanged(before)  # the connection is kept
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


@pytest.mark.parametrize(
    "name",
    ["\u3164", "\u2800\u2800", " \u115f\u1160 ", "\u200b\u2060", "a" + "\u0301" * 3, "\u0301" * 30],
)
async def test_names_that_show_nothing_are_refused(connect: Connect, name: str) -> None:
    client = await connect(hello=False)
    await client.send(Hello(id=1, version="1.0", name=name))
    error = await client.error(ErrorCode.INVALID_FIELD)
    assert "`$.name`" in error.message
    await client.send(Hello(version="1.0", name="Ngô \u0110\u1ee9c"))  # two marks: fine
    assert (await client.expect(Welcome)).name == "Ngô \u0110\u1ee9c"


async def test_terminal_escape_sequences_are_removed_whole_from_names(connect: Connect) -> None:
    """Only the ESC of a colour code went, which left "[31mred" (an outside review)."""
    client = await connect(hello=False)
    await client.send(Hello(version="1.0", name="\x1b[1;31mRed\x1b[0m \x1b]0;title\x07Al"))
    assert (await client.expect(Welcome)).name == "Red Al"


async def test_unknown_type(table: Table) -> None:
    before = table.snapshot()
    await table.a.send_raw('{"type": "dance", "id": 5}')
    assert (await table.a.error(ErrorCode.UNKNOWN_TYPE)).id == 5
    await table.a.send_raw('{"id": 6, "move": "e2"}')
    assert (await table.a.error(ErrorCode.UNKNOWN_TYPE)).id == 6
    await table.unchanged(before)


async def test_invalid_field_names_the_path(table: Table) -> None:
    before = table.snapshot()
    await table.a.send_raw('{"type": "move", "move": 3, "ply": 0, "id": "m"}')
    error = await table.a.error(ErrorCode.INVALID_FIELD)
    assert error.id == "m"
    assert "`$.move`" in error.message
    await table.a.send_raw('{"type": "move", "move": "e2", "ply": -1}')
    assert "`$.ply`" in (await table.a.error(ErrorCode.INVALID_FIELD)).message
    # Past 2^53, where a JavaScript number is no longer exact (as for ``id``).
    await table.a.send_raw('{"type": "move", "move": "e2", "ply": 9007199254740993}')
    assert "`$.ply`" in (await table.a.error(ErrorCode.INVALID_FIELD)).message
    await table.a.send_raw('{"type": "fetch_game", "game": -9007199254740993}')
    assert "`$.game`" in (await table.a.error(ErrorCode.INVALID_FIELD)).message
    await table.a.send_raw("[1, 2]")
    await table.a.error(ErrorCode.INVALID_FIELD)
    await table.unchanged(before)


async def test_integers_of_thousands_of_digits_are_refused_unread(table: Table) -> None:
    """A 4050-digit ``id`` took 150 us to refuse, 16 pings' worth (an outside review):
    Python reads such an integer in time that grows with the square of its digits. With
    Python refusing to read more than 640 digits, the documented error still comes back."""
    before = table.snapshot()
    kept = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        await table.a.send_raw('{"type": "ping", "id": #}'.replace("#", "9" * 4050))
        error = await table.a.error(ErrorCode.INVALID_FIELD)
        assert (error.id, error.message) == (None, f"Expected `int` <= {2**53} - at `$.id`")
        await table.a.send_raw(
            '{"type": "move", "move": "e2", "id": 3, "ply": -#}'.replace("#", LONG)
        )
        error = await table.a.error(ErrorCode.INVALID_FIELD)
        assert (error.id, error.message) == (3, "Expected `int` >= 0 - at `$.ply`")
        await table.b.send_raw('{"type": "fetch_game", "game": #}'.replace("#", LONG))
        error = await table.b.error(ErrorCode.INVALID_FIELD)
        assert error.message == f"Expected `int` <= {2**53} - at `$.game`"
    finally:
        sys.set_int_max_str_digits(kept)
    await table.unchanged(before)


async def test_a_missing_field_is_named_by_its_path(table: Table) -> None:
    before = table.snapshot()
    await table.a.send_raw('{"type": "move", "move": "e2", "id": 1}')
    error = await table.a.error(ErrorCode.INVALID_FIELD)
    assert error.message == "Object missing required field `ply` - at `$.ply`"
    await table.a.send_raw('{"type": "chat"}')
    assert (await table.a.error(ErrorCode.INVALID_FIELD)).message.endswith("at `$.text`")
    await table.a.send_raw("[1, 2]")  # not an object: the frame's own path
    error = await table.a.error(ErrorCode.INVALID_FIELD)
    assert error.message == "Expected `object`, got `array` - at `$`"
    await table.unchanged(before)
    lobby = table.b  # a nested object: the whole path
    await lobby.send(Leave())
    await lobby.expect(Left)
    await table.a.state()
    await lobby.send_raw('{"type": "create", "clock": {"increment": 1}}')
    error = await lobby.error(ErrorCode.INVALID_FIELD)
    assert error.message == "Object missing required field `base` - at `$.clock.base`"
    await lobby.send_raw('{"id": 6}')
    assert (await lobby.error(ErrorCode.UNKNOWN_TYPE)).message.endswith("at `$.type`")


@pytest.mark.parametrize(
    ("version", "accepted"),
    [("1.0", True), ("1", True), ("1.7", True), ("10.0", False), ("01", False), ("2.0", False)],
)
async def test_the_version_rule(connect: Connect, version: str, accepted: bool) -> None:
    """PROTOCOL.md section 4: the part before the first dot must be exactly 1."""
    client = await connect(hello=False)
    await client.send(Hello(id=1, version=version, name="v"))
    if accepted:
        await client.expect(Welcome)
    else:
        await client.error(ErrorCode.UNSUPPORTED_VERSION)


async def test_unknown_fields_are_ignored(table: Table) -> None:
    await table.a.send_raw('{"type": "move", "move": "e2", "ply": 0, "future": [1]}')
    assert (await table.a.state()).ply == 1


async def test_unsupported_version_closes_cleanly(connect: Connect) -> None:
    client = await connect(hello=False)
    await client.send(Hello(id=1, version="2.0", name="future"))
    error = await client.error(ErrorCode.UNSUPPORTED_VERSION)
    assert error.id == 1
    assert "1.0" in error.message
    assert await client.closed() == (1008, "unsupported protocol version")


async def test_hello_required_then_hello_works(connect: Connect) -> None:
    client = await connect(hello=False)
    await client.send(Create(id=1))
    assert (await client.error(ErrorCode.HELLO_REQUIRED)).id == 1
    await client.send(Hello(version="1.3", name="late"))
    assert (await client.expect(Welcome)).name == "late"


async def test_already_greeted(table: Table) -> None:
    before = table.snapshot()
    await table.a.send(Hello(version="1.0", name="again"))
    await table.a.error(ErrorCode.ALREADY_GREETED)
    await table.unchanged(before)


async def test_bad_token(connect: Connect) -> None:
    client = await connect(hello=False)
    await client.send(Hello(version="1.0", name="x", resume="not-a-token"))
    await client.error(ErrorCode.BAD_TOKEN)
    await client.send(Hello(version="1.0", name="x"))
    await client.expect(Welcome)


async def test_invalid_variant_is_an_invalid_field(connect: Connect, server: GameServer) -> None:
    client = await connect()
    for variant in ('{"size": 6}', '{"size": 13}', '{"players": 3}', '{"walls": 31}'):
        await client.send_raw(f'{{"type": "create", "id": 2, "variant": {variant}}}')
        error = await client.error(ErrorCode.INVALID_FIELD)
        assert "$.variant." in error.message
    assert server.core.rooms == {}


async def test_a_clock_that_rounds_to_no_time_is_an_invalid_field(
    connect: Connect, server: GameServer
) -> None:
    client = await connect()
    for kind in ("create", "quick_match"):
        for base in ("0.0001", "0.0005"):  # 0 ms once rounded (half to even)
            await client.send_raw(f'{{"type": "{kind}", "clock": {{"base": {base}}}}}')
            error = await client.error(ErrorCode.INVALID_FIELD)
            assert error.message.endswith("- at `$.clock.base`")
    assert server.core.rooms == {}
    await client.send_raw('{"type": "create", "clock": {"base": 0.0006}}')  # 1 ms: a clock
    assert (await client.expect(Joined)).room in server.core.rooms


async def test_already_in_room(table: Table) -> None:
    before = table.snapshot()
    await table.a.send(Create(id=3))
    assert (await table.a.error(ErrorCode.ALREADY_IN_ROOM)).id == 3
    await table.a.send(Join(room=table.room))
    await table.a.error(ErrorCode.ALREADY_IN_ROOM)
    assert len(table.server.core.rooms) == 1
    await table.unchanged(before)


async def test_not_in_room(connect: Connect) -> None:
    client = await connect()
    await client.send(MoveRequest(move="e2", ply=0))
    await client.error(ErrorCode.NOT_IN_ROOM)
    await client.send(Leave())
    await client.error(ErrorCode.NOT_IN_ROOM)


async def test_room_not_found(connect: Connect) -> None:
    client = await connect()
    for request in (Join(id=1, room="nosuchroom"), Watch(id=1, room="nosuchroom")):
        await client.send(request)
        assert "nosuchroom" in (await client.error(ErrorCode.ROOM_NOT_FOUND)).message


async def test_room_full_and_seat_taken(table: Table, connect: Connect) -> None:
    before = table.snapshot()
    third = await connect("third")
    await third.send(Join(room=table.room))
    await third.error(ErrorCode.ROOM_FULL)
    await third.send(Join(room=table.room, seat=0))
    await third.error(ErrorCode.SEAT_TAKEN)
    await third.send(Join(room=table.room, seat=3))
    error = await third.error(ErrorCode.INVALID_FIELD)
    # Section 19: an invalid_field message ends with the field's path (an outside client
    # found this one without it).
    assert error.message == "seat 3 does not exist: this room has 2 seats - at `$.seat`"
    await table.unchanged(before, third)


async def test_bad_secret(table: Table, connect: Connect) -> None:
    before = table.snapshot()
    thief = await connect("thief")
    await thief.send(Join(room=table.room, seat=0, secret="guess"))
    await thief.error(ErrorCode.BAD_SECRET)
    await table.a.quiet()
    await table.unchanged(before, thief)


async def test_not_a_player(table: Table, connect: Connect) -> None:
    watcher = await connect("watcher")
    await watcher.send(Watch(room=table.room))
    await watcher.expect(Joined)
    assert (await watcher.state()).spectators == 1
    await table.a.quiet()  # a spectator's arrival is no event for the others
    before = table.snapshot()
    await watcher.send(MoveRequest(move="e2", ply=0))
    await watcher.error(ErrorCode.NOT_A_PLAYER)
    await table.unchanged(before, watcher)


async def test_game_not_started(connect: Connect, server: GameServer) -> None:
    client = await connect()
    await client.send(Create())
    room = (await client.expect(Joined)).room
    await client.state()
    await client.send(MoveRequest(move="e2", ply=0))
    await client.error(ErrorCode.GAME_NOT_STARTED)
    assert server.core.rooms[room].game.moves == []


async def test_not_your_turn(table: Table) -> None:
    before = table.snapshot()
    await table.b.send(MoveRequest(id=4, move="e8", ply=0))
    error = await table.b.error(ErrorCode.NOT_YOUR_TURN)
    assert error.state is not None
    assert (error.state.turn, error.state.ply) == (0, 0)
    await table.a.quiet()
    await table.unchanged(before)


async def test_illegal_move_carries_the_engine_reason(table: Table) -> None:
    before = table.snapshot()
    await table.a.send(MoveRequest(move="e3", ply=0))
    assert "e3" in (await table.a.error(ErrorCode.ILLEGAL_MOVE)).message
    await table.a.send(MoveRequest(move="z9", ply=0))
    await table.a.error(ErrorCode.ILLEGAL_MOVE)
    await table.unchanged(before)
    await table.a.send(MoveRequest(move="e3v", ply=0))
    await table.a.state()
    await table.b.state()
    before = table.snapshot()
    await table.b.send(MoveRequest(move="e3h", ply=1))
    error = await table.b.error(ErrorCode.ILLEGAL_MOVE)
    assert error.message == "wall e3h crosses e3v"
    await table.unchanged(before)


async def test_stale_ply_and_resend(table: Table) -> None:
    await table.a.send(MoveRequest(id=1, move="e2", ply=0))
    applied = await table.a.state()
    await table.b.state()
    before = table.snapshot()
    # The same move again (a resend after a lost reply): answered, not applied.
    await table.a.send(MoveRequest(id=1, move="e2", ply=0))
    again = await table.a.state()
    # The same state, but for the first-move countdown, which ran on meanwhile.
    assert replace(again, first_move_in_ms=None) == replace(applied, first_move_in_ms=None)
    assert again.first_move_in_ms is not None
    assert applied.first_move_in_ms is not None
    assert again.first_move_in_ms <= applied.first_move_in_ms
    await table.b.quiet()
    # A different move for a ply already played is stale.
    await table.a.send(MoveRequest(id=2, move="d1", ply=0))
    error = await table.a.error(ErrorCode.STALE_PLY)
    assert error.state is not None
    assert error.state.ply == 1
    await table.b.send(MoveRequest(move="e8", ply=7))
    await table.b.error(ErrorCode.STALE_PLY)
    await table.unchanged(before)


async def test_game_over(connect: Connect) -> None:
    (a, b), _ = await seat_players(connect, size=5)
    for ply, move in enumerate("c2 b5 c3 b4 c4 b3 c5".split()):
        await [a, b][ply % 2].send(MoveRequest(move=move, ply=ply))
        await a.state()
        await b.state()
    await b.send(MoveRequest(move="b2", ply=7))
    error = await b.error(ErrorCode.GAME_OVER)
    assert error.state is not None
    assert error.state.result is not None
    assert error.state.result.winner == 0


async def test_server_shutting_down_refuses_new_rooms(connect: Connect, server: GameServer) -> None:
    client = await connect()
    server.core.accepting = False
    await client.send(Create(id=1))
    await client.error(ErrorCode.SERVER_SHUTTING_DOWN)
    await client.send(ListRooms())
    await client.expect(Rooms)


@pytest.fixture
async def strict_server() -> AsyncIterator[GameServer]:
    config = Config(port=0, rate=1, burst=3, trusted_proxies="127.0.0.1")
    async with GameServer(config).running() as running:
        yield running


async def test_rate_limited_then_closed(strict_server: GameServer) -> None:
    url = f"ws://127.0.0.1:{strict_server.port}"
    flooder = await Client.connect(url, "flood", address="203.0.113.1")
    bystander = await Client.connect(url, "calm", address="198.51.100.1")
    for _ in range(2):
        await flooder.send(Ping())
        await flooder.expect(Pong)
    await flooder.send(Ping(id="over"))
    error = await flooder.error(ErrorCode.RATE_LIMITED)
    assert error.id == "over"
    for _ in range(strict_server.core.limits.strikes + 5):
        await flooder.send_raw('{"type": "ping"}')
    assert await flooder.closed() == (1008, "rate limit exceeded")
    await bystander.send(Ping(id="fine"))
    assert (await bystander.expect(Pong)).id == "fine"
    await bystander.close()


async def test_the_connections_of_one_address_share_a_request_rate(
    strict_server: GameServer,
) -> None:
    """50 addresses of 20 connections each, every one just under its own rate, sent 19,000
    requests a second and the honest players' moves waited (an outside review): the
    connections of an address may send ``--address-share`` connections' worth together."""
    url = f"ws://127.0.0.1:{strict_server.port}"
    share = strict_server.core.limits.address_share
    crowd = [await Client.connect(url, f"c{n}", address="203.0.113.9") for n in range(10)]
    # Each within its own burst (3, its hello one of them): 30 together, past the address's
    # 5 x 3 (and the few tokens that came back meanwhile).
    for client in crowd:
        for n in range(2):
            await client.send(Ping(id=n))
    replies = [await client.recv() for client in crowd for _ in range(2)]
    refused = [r for r in replies if isinstance(r, Error)]
    assert len(refused) >= 30 - share * 3 - 5
    for error in refused:
        assert error.code == ErrorCode.RATE_LIMITED
        assert "your address sent more than 5 requests a second" in error.message
    other = await Client.connect(url, "other", address="198.51.100.9")
    await other.send(Ping(id="fine"))
    assert (await other.expect(Pong)).id == "fine"
    for client in (*crowd, other):
        await client.close()


async def test_leave_and_seat_reclaim(table: Table, connect: Connect) -> None:
    joined = next(m for m in table.a.seen if isinstance(m, Joined))
    assert joined.secret is not None
    await table.a.send(MoveRequest(move="e2", ply=0))
    await table.a.state()
    await table.b.state()
    await table.a.send(Leave(id="bye"))
    assert (await table.a.expect(Left)).id == "bye"
    gone = await table.b.state()
    assert not gone.players[0].connected
    # A new connection takes seat 0 back with its secret and plays on.
    back = await connect("p0 again")
    await back.send(Join(room=table.room, seat=0, secret=joined.secret))
    assert (await back.expect(Joined)).seat == 0
    assert (await back.state()).players[0].connected
    await table.b.state()
    await table.b.send(MoveRequest(move="e8", ply=1))
    assert (await back.state()).ply == 2


async def test_random_frames_over_a_socket_get_errors_only(table: Table, connect: Connect) -> None:
    import random

    rng = random.Random(7)
    before = table.snapshot()
    junk = await connect("junk")
    frames: list[str | bytes] = [rng.randbytes(rng.randint(0, 40)) for _ in range(20)]
    frames += ['{"type": "move", "move": "e2"', "null", "[]", '{"type": 1}', '{"a": {"b": [1]}}']
    frames += [f'{{"type": "{t}", "room": {rng.random()}}}' for t in ("join", "watch", "move")]
    for frame in frames:
        await junk.send_raw(frame)
        await junk.expect(Error)
    await table.unchanged(before, junk)
    await table.a.send(MoveRequest(move="e2", ply=0))
    assert (await table.b.state()).ply == 1
