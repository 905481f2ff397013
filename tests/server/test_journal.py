"""What the journal hands the database: every change, and no row that did not change."""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
import pytest

from protocol.messages import (
    VERSION,
    AiSpec,
    Create,
    Draw,
    Hello,
    Join,
    Leave,
    MoveRequest,
    Rematch,
    Resign,
    TimeControl,
    VariantSpec,
)
from server.database import Batch, Database, saved_rooms
from server.records import RoomRecord
from server.snapshot import room_record
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
    # Only what to add to the room's last record; no session row.
    assert batch.rooms == []
    assert [(delta.code, delta.actions, delta.movers) for delta in batch.moved] == [
        (room, ["e2"], [0])
    ]
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


# -- records brought up to date move by move equal records built afresh ----------------


class Saved:
    """A driver's changes written to a real database after every request, checked: each
    room the batch touched must read back as a record built afresh from the room."""

    def __init__(self, driver: Driver, path: Path) -> None:
        self.driver = driver
        self.database = Database(path)

    def check(self) -> int:
        core = self.driver.core
        now = core.clock()
        batch = core.take_changes()
        self.database.write(batch)
        touched = [record.code for record, _ in batch.rooms] + [d.code for d in batch.moved]
        saved = saved_rooms(self.database.db)
        statuses = dict(self.database.db.execute("SELECT code, status FROM rooms").fetchall())
        for code in touched:
            room = core.rooms[code]
            assert saved[code] == room_record(room, now), code
            assert statuses[code] == room.status, code
        # A move rewrites the room's small moves row, not its record.
        records = dict(self.database.db.execute("SELECT code, record FROM rooms").fetchall())
        for delta in batch.moved:
            record = msgspec.json.decode(records[delta.code], type=RoomRecord)
            assert len(record.actions) < len(saved[delta.code].actions), delta.code
        return len(touched)


def play_randomly(
    driver: Driver, saved: Saved, conns: list[int], code: str, rng: random.Random
) -> None:
    """Random legal moves, with draw offers and refusals mixed in, to the end of the game."""
    room = driver.core.rooms[code]
    while room.status == "playing":
        game = room.game
        seat = game.turn
        holder = room.seats[seat]
        assert holder is not None
        conn = holder.session.conn
        assert conn is not None
        if rng.random() < 0.1:
            driver.send(conn, Draw(action="offer"))
            saved.check()
            other = conns[(conns.index(conn) + 1) % len(conns)]
            driver.send(other, Draw(action="decline" if rng.random() < 0.5 else "offer"))
            saved.check()
            continue
        driver.clock.advance(rng.random())
        driver.send(conn, MoveRequest(move=rng.choice(game.legal_moves()), ply=game.ply))
        assert saved.check() == 1


@pytest.mark.parametrize("seed", range(4))
def test_records_follow_timed_match_games_with_offers_and_rematches(
    seed: int, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    driver = persistent_driver()
    saved = Saved(driver, tmp_path / "follow.db")
    a, _ = driver.greet("alice")
    b, _ = driver.greet("bob")
    driver.send(a, Create(clock=TimeControl(base=600, increment=2), match=seed % 2 == 0))
    code = driver.joined(a).room
    driver.send(b, Join(room=code))
    saved.check()
    for _ in range(3):
        play_randomly(driver, saved, [a, b], code, rng)
        room = driver.core.rooms[code]
        if room.match_game and not room.match_over():
            continue  # the match's next game started by itself
        driver.send(a, Rematch())
        driver.send(b, Rematch())
        saved.check()


def test_records_follow_a_four_player_game_with_a_retirement(tmp_path: Path) -> None:
    rng = random.Random(7)
    driver = persistent_driver()
    saved = Saved(driver, tmp_path / "four.db")
    conns = [driver.greet(name)[0] for name in ("a", "b", "c", "d")]
    driver.send(conns[0], Create(variant=VariantSpec(players=4, size=9)))
    code = driver.joined(conns[0]).room
    for conn in conns[1:]:
        driver.send(conn, Join(room=code))
    saved.check()
    room = driver.core.rooms[code]
    for _ in range(9):
        seat = room.game.turn
        driver.send(
            conns[seat], MoveRequest(move=rng.choice(room.game.legal_moves()), ply=room.game.ply)
        )
        saved.check()
    driver.send(conns[room.game.turn], Resign())
    saved.check()
    play_randomly(driver, saved, conns, code, rng)


def test_records_follow_the_computers_moves(tmp_path: Path) -> None:
    driver = persistent_driver()
    saved = Saved(driver, tmp_path / "computer.db")
    human, _ = driver.greet("human")
    driver.send(human, Create(ai=AiSpec(level=1)))
    code = driver.last_state(human).room
    saved.check()
    room = driver.core.rooms[code]
    rng = random.Random(3)
    while room.status == "playing" and room.game.ply < 30:
        if room.game.turn == 0:
            driver.send(
                human, MoveRequest(move=rng.choice(room.game.legal_pawn_moves()), ply=room.game.ply)
            )
        else:
            move = rng.choice(room.game.legal_moves())
            driver.run(driver.core.bot_move(code, 1, room.game.ply, move))
        saved.check()
