"""What ``list_rooms`` and ``history`` cost, and that their cheaper replies say the same.

The room host's indexes (``RoomHost.note``): the rooms the public list may show, and those
nobody is connected to (closed first when the server is full). ``list_rooms`` reads the
first, so its cost follows what it may list, not every room the server holds; random play
checks both against what the rooms are, after every step. ``history`` encodes each game's
summary once.

Apart from tests/server/test_lobby.py because one test changes a method of ``Room``, which
the compiled build (deploy/compile.py, whose test runs that file) cannot do: its classes are
native."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import decode_server_message, encode
from protocol.messages import (
    VERSION,
    Claim,
    Create,
    Hello,
    Join,
    Leave,
    ListRooms,
    MoveRequest,
    Rematch,
    Resign,
    RoomInfo,
    Rooms,
    State,
    VariantSpec,
    Watch,
    Welcome,
)
from server.core import Limits, Send
from server.directory import fair
from server.history import GameHistory
from server.records import GameRecord
from server.retention import SHORT_KEPT
from server.rooms import Absence, Room
from tests.server.driver import Driver, indexes_agree

GENEROUS = Limits(
    rate=1e6,
    burst=1e6,
    hellos_per_second=1e6,
    hello_burst=1e6,
    rooms_per_address=10_000,
    waiting_rooms_per_address=10_000,
    absence=Absence(grace=60, deliberate_grace=15, hard_limit=600, first_move=0),
)


def left_behind(driver: Driver, rooms: int) -> None:
    """``rooms`` games of two players who made their first moves and dropped (within their
    grace period: their rooms are kept, none listed)."""
    for n in range(rooms):
        a, _ = driver.greet(f"a{n}", f"10.0.{n // 200}.{n % 200}")
        b, _ = driver.greet(f"b{n}", f"10.1.{n // 200}.{n % 200}")
        driver.send(a, Create())
        driver.send(b, Join(room=driver.joined(a).room))
        driver.send(a, MoveRequest(move="e2", ply=0))
        driver.send(b, MoveRequest(move="e8", ply=1))
        driver.drop(a)
        driver.drop(b)


def test_list_rooms_looks_only_at_the_rooms_it_may_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """An outside review: with 1392 rooms left behind by players who went away (none listed,
    the reply empty), ``list_rooms`` took 192 us of CPU against 12 us on an empty server, and
    15 addresses asking 19 times a second each slowed everyone's moves."""
    driver = Driver(limits=GENEROUS)
    left_behind(driver, 200)
    waiting = []
    for n in range(3):
        creator, _ = driver.greet(f"creator{n}", f"192.0.2.{n}")
        driver.send(creator, Create())
        waiting.append(driver.joined(creator).room)
        driver.clock.advance(1)
    lobby, _ = driver.greet("lobby", "198.51.100.1")
    looked: list[str] = []
    listable = Room.listable

    def counted(room: Room) -> bool:
        looked.append(room.code)
        return listable(room)

    monkeypatch.setattr(Room, "listable", counted)
    (sent,) = driver.core.receive(lobby, encode(ListRooms()))  # the driver would look too
    assert isinstance(sent, Send)
    reply = decode_server_message(sent.payload)
    assert isinstance(reply, Rooms)
    assert [info.room for info in reply.rooms] == waiting[::-1]
    assert len(driver.core.rooms) == 203
    assert set(looked) <= set(waiting)  # it looked at no room left behind


def full_scan(driver: Driver, limit: int) -> list[RoomInfo]:
    """What ``list_rooms`` answered when it looked at every room, as it is now (the order:
    newest first)."""
    rooms = sorted(
        (room for room in driver.core.rooms.values() if room.listable()),
        key=lambda room: (room.created, room.serial),
        reverse=True,
    )
    return [room.info() for room in fair(rooms)[:limit]]


KINDS = (
    ["greet"] * 3
    + ["create"] * 3
    + ["private", "four"]
    + ["join"] * 4
    + ["watch"]
    + ["move"] * 6
    + ["leave", "drop", "drop", "resume", "resume", "resign", "claim", "rematch"]
    + ["wait", "wait", "long wait"]
)
STEP = st.tuples(st.sampled_from(KINDS), st.integers(0, 15), st.integers(0, 15))


def to_move(driver: Driver, pick: int) -> tuple[int, State] | None:
    """A connected player whose turn it is in some room, and that room's state."""
    turns = []
    for code in sorted(driver.core.rooms):
        room = driver.core.rooms[code]
        if room.status == "playing" and room.bot_to_move() is None:
            conn = room.holder(room.game.turn).session.conn
            if conn is not None and room.connected(room.game.turn):
                turns.append((conn, room.state(driver.clock.now)))
    return turns[pick % len(turns)] if turns else None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(STEP, min_size=20, max_size=150), full=st.integers(2, 6))
def test_the_indexes_say_what_the_rooms_are_after_any_play(
    steps: list[tuple[str, int, int]], full: int
) -> None:
    """Random players greet, create, join, watch, move, leave, drop, resume, resign, claim,
    ask for rematches and wait, on a server of a few rooms (``full``): after every step the
    indexes agree with the rooms (``indexes_agree``, run by the driver), and ``list_rooms``
    answers what looking at every room would."""
    driver = Driver(limits=Limits(**{**GENEROUS.__dict__, "max_rooms": full}))
    conns: list[int] = []
    tokens: list[str] = []
    lobby, _ = driver.greet("lobby", "198.51.100.1")
    for kind, who, other in steps:
        conn = conns[who % len(conns)] if conns else None
        if conn is not None and conn not in driver.core.connections and kind != "resume":
            continue  # dropped: it may only come back
        if kind == "greet" or conn is None:
            conn, welcome = driver.greet(f"p{len(conns)}", f"10.0.0.{len(conns) % 3}")
            conns.append(conn)
            tokens.append(welcome.resume_token)
        elif kind in ("create", "private", "four"):
            variant = VariantSpec(players=4 if kind == "four" else 2)
            driver.send(conn, Create(variant=variant, private=kind == "private"))
        elif kind in ("join", "watch"):
            codes = sorted(driver.core.rooms)
            if kind == "join":
                codes = [code for code in codes if driver.core.rooms[code].free_seat() is not None]
            if codes:
                code = codes[other % len(codes)]
                driver.send(conn, Join(room=code) if kind == "join" else Watch(room=code))
        elif kind == "move":
            if (turn := to_move(driver, other)) is not None:
                mover, state = turn
                square = state.legal_pawn_moves[who % len(state.legal_pawn_moves)]
                driver.send(mover, MoveRequest(move=square, ply=state.ply))
        elif kind in ("leave", "resign", "claim", "rematch"):
            request = {"leave": Leave, "resign": Resign, "claim": Claim, "rematch": Rematch}
            driver.send(conn, request[kind]())
        elif kind == "drop":
            driver.drop(conn)
        elif kind == "resume":
            index = who % len(tokens)
            again = driver.open(f"10.0.0.{index % 3}")
            replies = driver.send(again, Hello(version=VERSION, name="back", resume=tokens[index]))
            back = next((m for m in replies if isinstance(m, Welcome)), None)
            if back is not None:
                conns[index], tokens[index] = again, back.resume_token
        else:
            driver.clock.advance(20 if kind == "wait" else 300)
            driver.run(driver.core.tick())
        indexes_agree(driver.core)
        (reply,) = driver.send(lobby, ListRooms())
        assert isinstance(reply, Rooms)
        assert reply.rooms == full_scan(driver, GENEROUS.rooms_listed)  # made afresh or not
        assert len(driver.core.rooms) <= full


def test_the_history_reply_is_its_listing_encoded_whatever_comes_and_goes() -> None:
    """``history`` replies with summaries encoded once and a list read again only after a
    game was archived (``GameHistory.listing_json``): the same bytes as encoding the listing
    afresh, as games come, push others out, and get their id from a cluster's database."""
    history = GameHistory(4)
    variant = VariantSpec(players=2, size=9, walls=10)

    def game(number: int, reason: str = "goal", plies: int = 4) -> GameRecord:
        return GameRecord(
            id=number,
            room=f"room{number}",
            number=1,
            variant=variant,
            players=["a", "b"],
            winner=None if reason == "aborted" else 0,
            reason=reason,
            moves=["e2", "e8"] * (plies // 2),
            finished=float(number),
        )

    def agree() -> None:
        for limit in (1, 2, 3, 100):
            expected = msgspec.json.encode(history.listing(limit))
            assert history.listing_json(limit) == expected, limit

    agree()
    history.load([game(1), game(2, "aborted"), game(3, plies=1), game(4)])
    agree()
    unnumbered = game(0)  # a cluster node out of reserved ids: the database numbers it
    history.load([unnumbered])
    agree()
    unnumbered.id = 9
    agree()
    for number in range(10, 1000):  # the oldest pushed out, and their summaries forgotten
        history.load([game(number, "aborted" if number % 7 == 0 else "goal", plies=number % 6)])
        history.listing_json(100)
        if number % 50 == 0 or number < 40:
            agree()
    agree()
    assert len(history._entries) <= 2 * (4 + SHORT_KEPT)
