"""The pushed state is spliced from parts encoded earlier: it must be the very bytes that
encoding the whole ``State`` gives, in every situation a room can be in."""

from __future__ import annotations

import msgspec

from protocol.codec import decode_server_message, encode
from protocol.messages import (
    Create,
    Draw,
    Join,
    MoveRequest,
    Rematch,
    Resign,
    State,
    TimeControl,
    VariantSpec,
    Watch,
)
from server.rooms import StateFrame
from tests.server.driver import Driver


def assert_same_bytes(driver: Driver) -> None:
    now = driver.core.clock()
    for room in driver.core.rooms.values():
        spliced = room.state_frame(now, "r1")
        assert spliced == encode(room.state(now, "r1"))
        assert isinstance(decode_server_message(spliced), State)


def seat_two(driver: Driver, **create: object) -> tuple[int, int, str]:
    a, _ = driver.greet("ann")
    b, _ = driver.greet("bob")
    driver.send(a, Create(**create))  # type: ignore[arg-type]
    room = driver.joined(a).room
    driver.send(b, Join(room=room))
    return a, b, room


def test_frame_fields_follow_the_state_message() -> None:
    names = [field.encode_name for field in msgspec.structs.fields(State)]
    assert [field.encode_name for field in msgspec.structs.fields(StateFrame)] == names
    assert StateFrame.__struct_config__.tag == "state"
    # Defaults too: a field given a default in State, and not set by the room, is the same.
    defaults = {field.name: (field.default, field.default_factory) for field in
                msgspec.structs.fields(State)}  # fmt: skip
    for field in msgspec.structs.fields(StateFrame):
        assert (field.default, field.default_factory) == defaults[field.name]


def test_spliced_states_are_the_whole_states_bytes_through_a_game() -> None:
    driver = Driver()
    a, b, room = seat_two(driver, clock=TimeControl(base=60, increment=1))
    assert_same_bytes(driver)
    watcher, _ = driver.greet("eve")
    driver.send(watcher, Watch(room=room))
    assert_same_bytes(driver)
    for ply, (conn, move) in enumerate([(a, "e2"), (b, "e8"), (a, "e3h"), (b, "d7v")]):
        driver.send(conn, MoveRequest(move=move, ply=ply))
        assert_same_bytes(driver)
    driver.send(a, Draw(action="offer"))
    assert_same_bytes(driver)
    driver.drop(b)  # away during a game: a claim countdown, never reused
    assert_same_bytes(driver)
    driver.clock.advance(5)
    assert_same_bytes(driver)
    driver.send(a, Resign())
    assert_same_bytes(driver)
    driver.send(a, Rematch())
    assert_same_bytes(driver)


def test_spliced_states_while_waiting_in_four_player_rooms_and_matches() -> None:
    driver = Driver()
    first, _ = driver.greet("solo")
    driver.send(first, Create(variant=VariantSpec(players=4, size=9)))
    assert_same_bytes(driver)
    room = driver.joined(first).room
    for name in ("b", "c", "d"):
        conn, _ = driver.greet(name)
        driver.send(conn, Join(room=room))
        assert_same_bytes(driver)
    a, _, _ = seat_two(driver, variant=VariantSpec(players=2, size=5, walls=3), match=True)
    driver.send(a, MoveRequest(move="c2", ply=0))
    assert_same_bytes(driver)
