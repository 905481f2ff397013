"""The room's event log: bounded in events and in bytes."""

from __future__ import annotations

from protocol.messages import VariantSpec
from server.rooms import LOG_BYTES, LOG_LENGTH, Room


def new_room() -> Room:
    return Room("abc", VariantSpec(players=2, size=9, walls=10), public=True, created=0.0)


def test_the_log_keeps_the_last_events() -> None:
    room = new_room()
    for event in range(1, LOG_LENGTH + 100):
        room.remember(event, b"x" * 100)
    assert len(room.log_events) == len(room.log_frames) == LOG_LENGTH
    assert list(room.log_events) == list(range(100, LOG_LENGTH + 100))


def test_the_log_of_a_very_long_game_is_bounded_in_bytes() -> None:
    room = new_room()
    size = LOG_BYTES // 40
    for event in range(1, 101):
        room.remember(event, b"x" * size)
    assert sum(len(frame) for frame in room.log_frames) <= LOG_BYTES
    assert list(room.log_events) == list(range(61, 101))
    # The last event is always kept, however large.
    room.remember(101, b"y" * (LOG_BYTES + 1))
    assert list(room.log_events) == [101]
    room.remember(102, b"z")
    assert list(room.log_events) == [102]
