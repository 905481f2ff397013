"""The database process's side: writes in few statements, reads back, and its channel."""

from __future__ import annotations

import io
import sqlite3
import time
from pathlib import Path

import msgspec

from protocol.messages import VariantSpec
from server.database import (
    CHECKPOINT_EVERY,
    DONE,
    FAILED,
    ROWS_PER_STATEMENT,
    SCHEMA_VERSION,
    WAL_BACKSTOP_PAGES,
    WAL_KEPT_BYTES,
    Batch,
    Database,
    LoadRequest,
    MoveDelta,
    OpenRequest,
    WriteReply,
    WriteRequest,
    frame,
    migrate,
    read_message,
    saved_rooms,
    serve,
)
from server.records import GameRecord, RoomRecord, SessionRecord

VARIANT = VariantSpec(players=2, size=9, walls=10)


def room(code: str, actions: list[str]) -> RoomRecord:
    return RoomRecord(
        code=code,
        variant=VARIANT,
        public=True,
        created=1.0,
        time_control=None,
        match=False,
        event=len(actions),
        number=1,
        match_game=0,
        started=True,
        actions=actions,
        movers=[ply % 2 for ply in range(len(actions))],
        result=None,
        draw_offers=[],
        rematch=[],
        seats=[None, None],
        clock=None,
    )


def game(number: int) -> GameRecord:
    return GameRecord(
        id=number,
        room=f"r{number}",
        number=1,
        variant=VARIANT,
        players=["a", "b"],
        winner=0,
        reason="goal",
        moves=["e2"],
        finished=float(number),
    )


def test_more_rows_than_one_statement_takes_are_all_written(tmp_path: Path) -> None:
    count = 2 * ROWS_PER_STATEMENT + 17
    database = Database(tmp_path / "many.db")
    rooms = [(room(f"room{n}", ["e2"] * (n % 5)), "playing") for n in range(count)]
    sessions = [SessionRecord(id="s0", name="p", token_digest="00", room="room0", seat=0)]
    sessions += [
        SessionRecord(id=f"t{n}", name="p", token_digest="00", room="room1", seat=1)
        for n in range(count)
    ]
    games = [game(n + 1) for n in range(count)]
    assert database.write(Batch(rooms=rooms, sessions=sessions, games=games)).seconds >= 0

    loaded = database.load()
    assert sorted(r.code for r in loaded.rooms) == sorted(f"room{n}" for n in range(count))
    assert {r.code: r.actions for r in loaded.rooms}["room7"] == ["e2", "e2"]
    assert len(loaded.sessions) == count + 1
    assert [g.id for g in loaded.games] == list(range(1, count + 1))

    # Dropping more keys than one statement takes drops every one of them.
    dropped = [f"room{n}" for n in range(count - 1)]
    database.write(Batch(dropped_rooms=dropped, dropped_sessions=[f"t{n}" for n in range(count)]))
    loaded = database.load()
    assert [r.code for r in loaded.rooms] == [f"room{count - 1}"]
    assert [s.id for s in loaded.sessions] == ["s0"]
    database.close()


def test_a_replaced_room_keeps_its_latest_record(tmp_path: Path) -> None:
    database = Database(tmp_path / "replace.db")
    database.write(Batch(rooms=[(room("abc", ["e2"]), "playing")]))
    database.write(Batch(rooms=[(room("abc", ["e2", "e8"]), "playing")]))
    (saved,) = database.load().rooms
    assert saved.actions == ["e2", "e8"]
    database.close()


def test_a_move_updates_its_room_row_in_place(tmp_path: Path) -> None:
    """A room saved again keeps its row (and rowid): its page of the table is rewritten, not
    a deleted row and a new one at the table's end."""
    database = Database(tmp_path / "in_place.db")
    database.write(Batch(rooms=[(room("abc", []), "playing"), (room("xyz", []), "playing")]))
    (before,) = database.db.execute("SELECT rowid FROM rooms WHERE code = 'abc'").fetchone()
    delta = MoveDelta(code="abc", status="playing", event=1, actions=["e2"], movers=[0],
                      draw_offers=[], clock=None)  # fmt: skip
    database.write(Batch(moved=[delta]))
    database.write(Batch(rooms=[(room("abc", ["e2", "e8"]), "finished")]))
    row = database.db.execute("SELECT rowid, status FROM rooms WHERE code = 'abc'").fetchone()
    assert row == (before, "finished")
    assert {r.code: r.actions for r in database.load().rooms}["abc"] == ["e2", "e8"]
    database.close()


def moved(code: str, actions: list[str], first: int, status: str = "playing") -> MoveDelta:
    return MoveDelta(code=code, status=status, event=first + len(actions), actions=actions,
                     movers=[(first + n) % 2 for n in range(len(actions))], draw_offers=[1],
                     clock=None)  # fmt: skip


def test_moves_go_to_their_own_row_until_the_record_is_written_whole(tmp_path: Path) -> None:
    """A move rewrites the room's small ``room_moves`` row, never its record; writing the
    record whole again (or dropping the room) deletes that row; reading back adds the
    moves to the record."""
    database = Database(tmp_path / "moves.db")
    db = database.db
    database.write(Batch(rooms=[(room("abc", ["e2"]), "playing"), (room("xyz", []), "playing")]))
    (record,) = db.execute("SELECT record FROM rooms WHERE code = 'abc'").fetchone()
    database.write(Batch(moved=[moved("abc", ["e8"], 1)]))
    database.write(Batch(moved=[moved("abc", ["e3", "e7"], 2), moved("xyz", ["e2"], 0)]))
    assert db.execute("SELECT record FROM rooms WHERE code = 'abc'").fetchone() == (record,)
    assert db.execute("SELECT count(*) FROM room_moves").fetchone() == (2,)
    # Bytes are bound as they are (``sqlite3.register_adapter(bytes, bytes)``): blobs.
    assert db.execute("SELECT DISTINCT typeof(record) FROM rooms").fetchall() == [("blob",)]
    assert db.execute("SELECT DISTINCT typeof(moves) FROM room_moves").fetchall() == [("blob",)]
    expected = room("abc", ["e2", "e8", "e3", "e7"])
    expected.draw_offers = [1]
    assert saved_rooms(db)["abc"] == expected
    assert {r.code: r for r in database.load().rooms}["abc"] == expected
    assert saved_rooms(db)["xyz"].actions == ["e2"]

    database.write(Batch(rooms=[(room("abc", ["e2", "e8", "e3", "e7", "e4"]), "playing")]))
    assert db.execute("SELECT code FROM room_moves").fetchall() == [("xyz",)]
    database.write(Batch(moved=[moved("abc", ["e6"], 5, status="finished")]))
    assert saved_rooms(db)["abc"].actions == ["e2", "e8", "e3", "e7", "e4", "e6"]
    assert db.execute("SELECT status FROM rooms WHERE code = 'abc'").fetchone() == ("finished",)

    database.write(Batch(dropped_rooms=["abc", "xyz"]))
    assert db.execute("SELECT count(*) FROM room_moves").fetchone() == (0,)
    assert database.load().rooms == []
    database.close()


def test_a_room_whose_moves_do_not_read_back_is_quarantined(tmp_path: Path) -> None:
    database = Database(tmp_path / "bad_moves.db")
    database.write(Batch(rooms=[(room("abc", ["e2"]), "playing"), (room("xyz", []), "playing")]))
    database.write(Batch(moved=[moved("abc", ["e8"], 1), moved("xyz", ["e2"], 0)]))
    database.db.execute("UPDATE room_moves SET moves = '{not json' WHERE code = 'abc'")
    loaded = database.load()
    assert [r.code for r in loaded.rooms] == ["xyz"]
    (bad,) = loaded.unreadable
    assert (bad.table, bad.key) == ("rooms", "abc")
    assert "moves" in bad.reason
    status = database.db.execute("SELECT status FROM rooms WHERE code = 'abc'").fetchone()
    assert status == ("quarantined",)
    assert database.db.execute("SELECT count(*) FROM room_moves").fetchone() == (2,)  # kept
    database.close()


def test_a_database_of_schema_6_loads_its_rooms_and_saves_moves_apart(tmp_path: Path) -> None:
    """Rooms saved whole before ``room_moves`` existed read back as they were, and their
    next moves go to the new table."""
    path = tmp_path / "old.db"
    old = sqlite3.connect(path, isolation_level=None)
    migrate(old, target=6)
    saved = room("abc", ["e2", "e8"])
    row = ("abc", "playing", msgspec.json.encode(saved), 1.0)
    old.execute("INSERT INTO rooms VALUES (?, ?, ?, ?)", row)
    old.close()
    database = Database(path)
    assert database.versions == (6, SCHEMA_VERSION)
    assert database.load().rooms == [saved]
    database.write(Batch(rooms=[(saved, "playing")]))
    database.write(Batch(moved=[moved("abc", ["e3"], 2)]))
    assert database.db.execute("SELECT count(*) FROM room_moves").fetchone() == (1,)
    assert database.load().rooms[0].actions == ["e2", "e8", "e3"]
    database.close()


def test_checkpoints_copy_the_log_beside_the_writer(tmp_path: Path) -> None:
    """The log is copied into the database file by the checkpoints thread, not by a commit
    (the writer's own checkpoint is only a backstop), and closing stops the thread."""
    database = Database(tmp_path / "checkpoints.db")
    assert database.db.execute("PRAGMA wal_autocheckpoint").fetchone() == (WAL_BACKSTOP_PAGES,)
    for n in range(30):
        database.write(Batch(rooms=[(room(f"r{n}", ["e2"] * n), "playing")]))
    deadline = time.monotonic() + 10 * CHECKPOINT_EVERY
    while database.checkpoints.done == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert database.checkpoints.done > 0
    # Everything in the log is in the database file now: a reader of the file alone (the
    # log set aside) sees every room.
    copy = tmp_path / "copy.db"
    copy.write_bytes((tmp_path / "checkpoints.db").read_bytes())
    with sqlite3.connect(copy) as alone:
        assert alone.execute("SELECT count(*) FROM rooms").fetchone() == (30,)
    database.close()
    assert not database.checkpoints.is_alive()


def test_the_log_file_is_cut_back_once_copied(tmp_path: Path) -> None:
    """A burst of writes grows the write-ahead log's file; once the checkpoints copied it,
    the next commit starts the log again and cuts the file back to ``WAL_KEPT_BYTES`` (here
    lowered, so that a small burst passes it)."""
    database = Database(tmp_path / "cut.db")
    assert database.db.execute("PRAGMA journal_size_limit").fetchone() == (WAL_KEPT_BYTES,)
    database.db.execute("PRAGMA journal_size_limit = 65536")
    log = tmp_path / "cut.db-wal"
    for n in range(40):
        database.write(Batch(rooms=[(room(f"r{n}", ["e2", "e8"] * 200), "playing")]))
    grown = log.stat().st_size
    assert grown > 4 * 65536
    copied = database.checkpoints.done
    deadline = time.monotonic() + 10 * CHECKPOINT_EVERY
    while database.checkpoints.done < copied + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    database.write(Batch(rooms=[(room("last", ["e2"]), "playing")]))
    assert log.stat().st_size <= 65536
    assert len(database.load().rooms) == 41
    database.close()


def run_channel(*requests: bytes) -> list[bytes]:
    """Feed framed requests to ``serve`` and split what it answered."""
    replies = io.BytesIO()
    serve(io.BytesIO(b"".join(frame(r) for r in requests)), replies)
    replies.seek(0)
    answers = []
    while (answer := read_message(replies)) is not None:
        answers.append(answer)
    return answers


def test_the_channel_answers_each_request_in_order(tmp_path: Path) -> None:
    encode = msgspec.msgpack.encode
    path = str(tmp_path / "channel.db")
    opened, written, loaded = run_channel(
        encode(OpenRequest(path, "normal")),
        encode(WriteRequest(Batch(rooms=[(room("abc", ["e2"]), "playing")]))),
        encode(LoadRequest()),
    )
    assert opened[:1] == DONE
    assert msgspec.msgpack.decode(opened[1:]) == [0, SCHEMA_VERSION]
    assert written[:1] == DONE
    assert msgspec.msgpack.decode(written[1:], type=WriteReply).seconds >= 0
    assert loaded[:1] == DONE
    assert "abc" in loaded.decode(errors="replace")


def test_the_channel_reports_failures_and_carries_on(tmp_path: Path) -> None:
    encode = msgspec.msgpack.encode
    path = str(tmp_path / "fail.db")
    before_open, junk, opened = run_channel(
        encode(LoadRequest()), b"\xc1 not msgpack", encode(OpenRequest(path, "full"))
    )
    assert before_open[:1] == FAILED
    assert b"not open" in before_open
    assert junk[:1] == FAILED
    assert opened[:1] == DONE


def test_a_truncated_message_ends_the_channel() -> None:
    assert read_message(io.BytesIO(b"\x00\x00\x00\x09abc")) is None
    assert read_message(io.BytesIO(b"\x00\x00")) is None
