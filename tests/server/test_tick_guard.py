"""The room host's tick acts on each room once: whatever a room's rules do with its deadlines,
the event loop serves everyone else in between.

Apart from tests/server/test_ai_games.py because it changes a method of ``Room`` to recreate
the bug it guards against, which the compiled build (deploy/compile.py, whose test runs that
file) cannot do: its classes are native."""

from __future__ import annotations

import pytest

from protocol.messages import Ping, Pong
from server.rooms import Room
from tests.server.test_ai_games import _leave_a_match_against_the_computer


def test_a_tick_acts_on_a_room_once_however_its_deadlines_fall(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The guard behind the fix above: a room whose every new game is overdue at once (the
    match rule as it was, put back here) is acted on once a tick, so the event loop serves
    the others in between, instead of looping inside one tick for ever."""
    monkeypatch.setattr(Room, "_ends_match", lambda room: False)
    driver, _, code = _leave_a_match_against_the_computer(moved=False)
    room = driver.core.rooms[code]
    driver.run(driver.core.tick())
    assert room.number == 2  # aborted once, replayed: overdue again, left for the next tick
    other, _ = driver.greet("other")  # served, after acting on the room once more
    assert room.number == 3
    (pong,) = driver.send(other, Ping(id=1))  # likewise
    assert isinstance(pong, Pong)
    assert room.number == 4
