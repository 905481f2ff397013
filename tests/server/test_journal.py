"""What the journal hands the database: every change, and no row that did not change."""

from __future__ import annotations

from protocol.messages import (
    VERSION,
    Create,
    Hello,
    Join,
    Leave,
    MoveRequest,
    Rematch,
    Resign,
    VariantSpec,
)
from server.database import Batch
from tests.server.driver import Driver


def persistent_driver() -> Driver:
    driver = Driver()
    driver.core.persistent = True
    return driver


def seats(batch: Batch) -> dict[str, tuple[str | None, int | None]]:
    return {s.name: (s.room, s.seat) for s in batch.sessions}


def test_seating_writes_the_sessions_and_a_move_only_the_room() -> None:
    driver = persistent_driver()
    a, _ = driver.greet("alice")
    b, _ = driver.greet("bob")
    driver.send(a, Create())
    room = driver.joined(a).room
    driver.send(b, Join(room=room))
    batch = driver.core.take_changes()
    assert [record.code for record, _ in batch.rooms] == [room]
    assert seats(batch) == {"alice": (room, 0), "bob": (room, 1)}

    driver.send(a, MoveRequest(move="e2", ply=0))
    batch = driver.core.take_changes()
    assert [(record.code, record.actions) for record, _ in batch.rooms] == [(room, ["e2"])]
    assert batch.sessions == []
    assert not driver.core.has_changes()


def test_a_resume_rewrites_the_session_with_its_new_token() -> None:
    driver = persistent_driver()
    a, welcome = driver.greet("alice")
    b, _ = driver.greet("bob")
    driver.send(a, Create())
    driver.send(b, Join(room=driver.joined(a).room))
    first = {s.name: s.token_digest for s in driver.core.take_changes().sessions}
    driver.drop(a)
    driver.core.take_changes()
    again = driver.open()
    driver.send(again, Hello(version=VERSION, name="alice", resume=welcome.resume_token))
    (alice,) = driver.core.take_changes().sessions
    assert alice.name == "alice"
    assert alice.token_digest != first["alice"]


def test_turned_seats_are_rewritten_and_leavers_dropped() -> None:
    driver = persistent_driver()
    a, welcome = driver.greet("alice")
    b, _ = driver.greet("bob")
    driver.send(a, Create())
    room = driver.joined(a).room
    driver.send(b, Join(room=room))
    driver.send(a, Resign())
    driver.core.take_changes()
    driver.send(a, Rematch())
    driver.send(b, Rematch())
    # The seats turned for the new game: both rows change.
    assert seats(driver.core.take_changes()) == {"alice": (room, 1), "bob": (room, 0)}

    driver.send(a, Resign())
    driver.send(a, Leave())
    assert welcome.session in driver.core.take_changes().dropped_sessions


def test_a_row_dropped_is_written_again_when_the_same_seat_is_taken_again() -> None:
    driver = persistent_driver()
    a, _ = driver.greet("alice")
    b, _ = driver.greet("bob")
    driver.send(a, Create(variant=VariantSpec(players=4, size=9)))
    room = driver.joined(a).room
    driver.send(b, Join(room=room))
    assert seats(driver.core.take_changes()) == {"alice": (room, 0), "bob": (room, 1)}
    driver.send(a, Leave())
    assert driver.core.take_changes().dropped_sessions != []
    # Back to the very seat: the row says what it said before it was deleted.
    driver.send(a, Join(room=room))
    assert seats(driver.core.take_changes()) == {"alice": (room, 0)}
