"""Seats kept on a machine two players share: one entry per seat, each player's own seat
back, stale entries said and dropped (client.seats)."""

from __future__ import annotations

import asyncio
import io
import subprocess
import time

from client.__main__ import default_name, dispatch, parse
from client.connection import invoked_as
from client.seats import STALE_AFTER, SavedSeat, SeatBook
from tests.client.recorder import until
from tests.client.test_leaving import SlowKeyboard, alice_leaves_a_game, run_client


def _dead_pid() -> int:
    finished = subprocess.Popen(["true"])
    finished.wait()
    return finished.pid


def _write(book: SeatBook, *seats: SavedSeat) -> None:
    """The file as clients that have quit left it (their pids dead, newest last)."""
    pid = _dead_pid()
    for order, seat in enumerate(seats):
        seat.pid, seat.saved = pid, time.time() - 60 + order
    book._write(list(seats))


async def test_taking_a_seat_back_replaces_its_entry(url: str) -> None:
    """The server hands out a new secret with the seat: the entry with the old one goes."""
    room, bob = await alice_leaves_a_game(url)
    book = SeatBook()
    [before] = book.seats(url)
    keyboard, out = SlowKeyboard(), io.StringIO()
    argv = ["--server", url, "--name", "Alice", "join", room]
    task = asyncio.create_task(dispatch(parse(argv), keyboard, out, io.StringIO()))
    await until(lambda: f"You have seat 0 in room {room}." in out.getvalue() or None)
    [after] = book.seats(url)  # two before: the old secret's entry stayed
    assert after.secret != before.secret
    assert (after.room, after.seat, after.name) == (room, 0, "Alice")
    keyboard.press("quit")
    keyboard.press("y")
    assert await asyncio.wait_for(task, 5) == 0
    await bob.close()


def test_join_prefers_the_seat_kept_under_your_name(state_home: object) -> None:
    book = SeatBook()
    alice = SavedSeat(server="ws://h:1", room="r", seat=0, secret="sa", name="Alice")
    bob = SavedSeat(server="ws://h:1", room="r", seat=1, secret="sb", name="Bob")
    _write(book, alice, bob)  # Bob's entry is the newer one
    found = book.find("ws://h:1", "r", "Alice")
    assert found is not None
    assert found.secret == "sa"
    assert book.find("ws://h:1", "r", "Carol") is None  # never another player's seat
    newest = book.find("ws://h:1", "r")
    assert newest is not None
    assert newest.secret == "sb"  # no name given: the newest


async def test_another_name_never_takes_the_seat_kept_on_the_machine(url: str) -> None:
    """Alice left; Carol, on the same machine, joins the room under her own name: Alice's
    kept seat is not hers to take (it was, the only seat kept for the room), and the room
    is full. Alice's name takes it back."""
    room, bob = await alice_leaves_a_game(url)
    code, text = await run_client(["--server", url, "--name", "Carol", "join", room], "")
    assert code == 1
    assert "You have seat" not in text
    assert f"watch {room}" in text  # full: the room's two seats are Alice's and Bob's
    # Given, the login name is a name as any other (it was taken for no name given).
    argv = ["--server", url, "--name", default_name(), "join", room]
    code, text = await run_client(argv, "")
    assert code == 1
    assert "You have seat" not in text
    code, text = await run_client(["--server", url, "--name", "Alice", "join", room], "")
    assert code == 0, text
    assert f"You have seat 0 in room {room}." in text
    await bob.close()


async def test_a_stale_entry_is_told_as_such_and_the_next_run_works(url: str) -> None:
    """Another player's out-of-date entry for the room is tried first: the refusal says so,
    not 'nothing to go back to', and running the command again takes the seat back."""
    room, bob = await alice_leaves_a_game(url)
    book = SeatBook()
    [alice] = book.seats(url)
    stale = SavedSeat(server=url, room=room, seat=1, secret="x" * 24, name="Bob")
    _write(book, alice, stale)
    code, text = await run_client(["--server", url, "join", room], "e2\n")
    assert code == 1
    assert "nothing to go back to" not in text
    assert f"The seat kept for room {room} was refused: its secret is out of date" in text
    assert "run the same command again" in text
    code, text = await run_client(["--server", url, "join", room], "")
    assert code == 0, text
    assert f"You have seat 0 in room {room}." in text
    await bob.close()


async def test_the_last_stale_entry_says_how_to_watch(url: str) -> None:
    room, bob = await alice_leaves_a_game(url)
    book = SeatBook()
    _write(book, SavedSeat(server=url, room=room, seat=0, secret="x" * 24, name="Alice"))
    code, text = await run_client(["--server", url, "join", room], "")
    assert code == 1
    assert f"watch {room}" in text.splitlines()[-1]
    await bob.close()


async def test_a_plain_quoridor_with_a_name_offers_that_players_seats(url: str) -> None:
    book = SeatBook()
    alice = SavedSeat(server=url, room="alices", seat=0, secret="sa", name="Alice")
    bob = SavedSeat(server=url, room="bobs", seat=0, secret="sb", name="Bob")
    _write(book, alice, bob)
    _, text = await run_client(["--server", url, "--name", "Alice"], "")
    assert "room alices" in text
    assert "bobs" not in text
    _, text = await run_client(["--server", url, "--name", "Carol"], "")
    assert f"No game of Carol's is in progress on {url}." in text


async def test_rooms_gone_are_all_dropped_in_one_run(url: str) -> None:
    book = SeatBook()
    older = SavedSeat(server=url, room="gone1", seat=0, secret="s" * 24, name="Alice")
    newer = SavedSeat(server=url, room="gone2", seat=0, secret="t" * 24, name="Alice")
    _write(book, older, newer)
    keyboard, out = SlowKeyboard(), io.StringIO()
    task = asyncio.create_task(dispatch(parse(["--server", url]), keyboard, out, io.StringIO()))
    assert await asyncio.wait_for(task, 5) == 1
    assert "Resume it?" not in out.getvalue()  # both asked of the server first
    assert "Your game in room gone2 is gone" in out.getvalue()
    assert "Your game in room gone1 is gone" in out.getvalue()
    assert book.seats(url) == []


def test_entries_of_clients_long_gone_are_dropped(state_home: object) -> None:
    book = SeatBook()
    old = SavedSeat(server="ws://h:1", room="old", seat=0, secret="so")
    new = SavedSeat(server="ws://h:1", room="new", seat=0, secret="sn")
    _write(book, old, new)
    seats = book.seats()
    seats[1].saved -= STALE_AFTER  # "old", a day and more ago
    book._write(seats)
    assert [s.room for s in book.seats()] == ["new"]
    book.keep(SavedSeat(server="ws://h:1", room="third", seat=0, secret="st"))
    assert "old" not in book.path.read_text()  # the file does not keep it either


async def test_the_hints_to_come_back_are_the_exact_commands(url: str) -> None:
    """Every hint runs as printed: the path and --server (plain 'quoridor create' did not),
    and --name when it is not the default (the title bar said the login name)."""
    command = invoked_as(url)
    _, text = await run_client(["--server", url], "")
    assert f"Start one:\n  {command} create\nor join one:\n  {command} join CODE\n" in text
    _, text = await run_client(["--server", url, "--name", "Bob", "play", "--vs-ai", "1"], "")
    room = SeatBook().seats(url)[0].room
    assert f"To come back:\n  {command} --name Bob join {room}\n" in text
    assert f"resume your game):\n  {command} --name Bob\n" in text
    _, text = await run_client(["--server", url], "")
    assert f"Your game in room {room}:\n  {command} --name Bob join {room}\n" in text


async def test_a_game_open_in_another_terminal_is_not_called_no_game(url: str) -> None:
    """A newcomer's review: with Newbie's game open in another terminal, a plain ``quoridor
    --name Newbie`` said "No game of Newbie's is in progress"."""
    other = await asyncio.create_subprocess_exec("sleep", "30")  # the other terminal's client
    try:
        book = SeatBook()
        seat = SavedSeat(server=url, room="opened", seat=0, secret="so", name="Newbie")
        seat.pid, seat.saved = other.pid, time.time()
        book._write([seat])
        code, text = await run_client(["--server", url, "--name", "Newbie"], "")
        assert code == 0
        assert (
            text.strip() == "Your game in room opened is open in another terminal: play on there."
        )
    finally:
        other.kill()
        await other.wait()
