"""The room's event log: bounded in events and in bytes, and all rooms' logs together."""

from __future__ import annotations

from protocol.messages import VariantSpec
from server.rooms import LOG_BYTES, LOG_FLOOR, LOG_LENGTH, LogBudget, Room


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


def test_the_logs_of_all_rooms_keep_to_the_server_budget() -> None:
    """An outside review's rooms held 1.4 MiB each at the 1000-ply cap, 5000 of them 7 GiB:
    past the server's budget a room that logs an event keeps only ``LOG_FLOOR`` of its log."""
    budget = LogBudget(limit=LOG_BYTES)
    rooms = [new_room() for _ in range(4)]
    for room in rooms:
        room.log_budget = budget
    frame = b"x" * (LOG_FLOOR // 4)
    for event in range(1, 400):
        for room in rooms:
            room.remember(event, frame)
            assert budget.held <= budget.limit + LOG_FLOOR + len(frame)
            assert room.log_events[-1] == event  # the last is always kept
    assert budget.held == sum(sum(map(len, room.log_frames)) for room in rooms)
    assert min(len(room.log_events) for room in rooms) >= LOG_FLOOR // len(frame) - 1
    rooms[0].forget_log()  # closed: its bytes are given back
    assert budget.held == sum(sum(map(len, room.log_frames)) for room in rooms[1:])
    rooms[1].forget_log()
    rooms[1].log_budget = LogBudget(limit=LOG_BYTES * 10)  # under budget: 1 MiB, as before
    for event in range(400, 800):
        rooms[1].remember(event, frame)
    assert sum(map(len, rooms[1].log_frames)) == LOG_BYTES
