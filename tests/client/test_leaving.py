"""Leaving and coming back: seats kept in the state directory, questions before resigning or
leaving, Ctrl-C with a move queued, premoves on the full screen, one reconnection line."""

from __future__ import annotations

import asyncio
import fcntl
import io
import os
import pty
import queue
import re
import select
import signal
import stat
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.__main__ import dispatch, parse
from client.connection import invoked_as
from client.plain import PlainView
from client.printed import ProseAndCommand
from client.seats import SavedSeat, SeatBook
from protocol.messages import (
    Abort,
    AiSpec,
    Create,
    Join,
    Joined,
    MoveRequest,
    Queued,
    QuickMatch,
    Resign,
    State,
)
from server.app import GameServer
from server.config import Config
from tests.client.recorder import start, until
from tests.client.shown import unbroken
from tests.client.terminal import full_screen, room_of
from tests.client.test_e2e import WITHIN, client, environment
from tests.wsclient import Client


class Keyboard(io.StringIO):
    """Standard input that says it is a terminal: a person types these lines."""

    def isatty(self) -> bool:
        return True


class SlowKeyboard(Keyboard):
    """A terminal whose person types a line when the test says so (``press``)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: queue.Queue[str] = queue.Queue()

    def press(self, line: str) -> None:
        self.lines.put(line + "\n")

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        return self.lines.get()

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        return iter(self.readline, "")


async def run_client(argv: list[str], typed: str = "", tty: bool = False) -> tuple[int, str]:
    out = io.StringIO()
    stdin = Keyboard(typed) if tty else io.StringIO(typed)
    code = await dispatch(parse(argv), stdin, out, io.StringIO())
    return code, out.getvalue()


async def alice_creates(url: str) -> tuple[asyncio.subprocess.Process, str]:
    """Alice's ``quoridor create`` process, once it shows the room's code; and the code."""
    alice = await client(url, "Alice", "create")
    assert alice.stdout is not None
    async with asyncio.timeout(WITHIN):
        while not (
            found := re.search(rb"joins with: .* join (\w+)", await alice.stdout.readline())
        ):
            pass
    return alice, found.group(1).decode()


async def alice_leaves_a_game(url: str) -> tuple[str, Client]:
    """Alice creates a room in a ``quoridor`` process, Bob joins, and she quits: the room."""
    alice, room = await alice_creates(url)
    assert alice.stdin is not None
    assert alice.stdout is not None
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    assert (await bob.expect(Joined)).seat == 1
    async with asyncio.timeout(WITHIN):
        while b"The game starts." not in await alice.stdout.readline():
            pass
    alice.stdin.write(b"quit\n")
    await alice.stdin.drain()
    out, _ = await asyncio.wait_for(alice.communicate(), WITHIN)
    assert b"You left a game in progress" in out
    return room, bob


async def test_join_takes_your_own_seat_back_from_the_state_directory(
    url: str, state_home: Path
) -> None:
    room_code, bob = await alice_leaves_a_game(url)
    room = re.search(r"(\w+)", room_code)
    assert room is not None
    seats = state_home / "quoridor" / "seats.json"
    assert stat.S_IMODE(seats.stat().st_mode) == 0o600
    assert stat.S_IMODE(seats.parent.stat().st_mode) == 0o700
    saved = SeatBook().find(url, room.group(1))
    assert saved is not None
    assert saved.seat == 0
    # Alice comes back with nothing but the room's code: her own seat, not "room is full".
    code, text = await run_client(["--server", url, "join", room.group(1)], "e2\n")
    assert code == 0, text
    assert f"You have seat 0 in room {room.group(1)}." in text
    assert "You moved to e2." in text
    await bob.close()


async def test_a_plain_quoridor_offers_the_game_in_progress(url: str) -> None:
    _, text = await run_client(["--server", url], "")
    assert "No game of yours is in progress" in text
    room_code, bob = await alice_leaves_a_game(url)
    room = re.search(r"(\w+)", room_code)
    assert room is not None
    keyboard, out = SlowKeyboard(), io.StringIO()
    task = asyncio.create_task(dispatch(parse(["--server", url]), keyboard, out, io.StringIO()))
    await until(lambda: "Resume it? [Y/n]" in out.getvalue() or None)
    assert out.getvalue().startswith(
        f"You have a game in room {room.group(1)} (seat 0, as Alice) on {url}. Resume it?"
    )
    keyboard.press("")  # Enter: yes
    await until(lambda: f"You have seat 0 in room {room.group(1)}." in out.getvalue() or None)
    keyboard.press("quit")
    keyboard.press("y")
    assert await asyncio.wait_for(task, 5) == 0
    await bob.close()


def test_ctrl_c_at_the_resume_question_ends_the_client_at_once() -> None:
    """A real ``quoridor`` process on a terminal asks "Resume it?"; one Ctrl-C ends it, with
    status 130 (a newcomer review: it waited for Enter or a third Ctrl-C, as if frozen)."""
    url = "ws://127.0.0.1:9"  # nothing is connected to before the answer
    seat = SavedSeat(server=url, room="k3m9qr2xvb", seat=0, secret="s" * 24, name="Alice")
    quit_before = subprocess.Popen(["true"])  # the seat is a client's that has quit
    quit_before.wait()
    seat.pid, seat.saved = quit_before.pid, time.time()
    SeatBook()._write([seat])
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "client", "--server", url],
        stdin=terminal,
        stdout=terminal,
        stderr=subprocess.PIPE,
        env=environment(),
    )
    os.close(terminal)
    try:
        shown, deadline = b"", time.monotonic() + WITHIN
        while b"Resume it? [Y/n]" not in shown and time.monotonic() < deadline:
            if select.select([controller], [], [], 0.05)[0]:
                shown += os.read(controller, 4096)  # EIO if it exited: its stderr tells
        assert b"Resume it? [Y/n]" in shown
        process.send_signal(signal.SIGINT)
        assert process.wait(5) == 130
        assert process.stderr is not None
        assert process.stderr.read() == b"quoridor: interrupted\n"
    finally:
        process.kill()
        process.wait()
        os.close(controller)


async def test_a_finished_game_is_forgotten(url: str) -> None:
    alice_moves = "e2 e3 e4 e5 e6 e7 e8 e9".split()
    bob_moves = "d9 d8 d7 d6 d5 d4 d3".split()
    task = asyncio.create_task(
        run_client(["--server", url, "--name", "Alice", "create"], "\n".join(alice_moves) + "\n")
    )
    book = SeatBook()
    saved = await until(lambda: book.seats(url)[0] if book.seats(url) else None)
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=saved.room))
    await bob.expect(Joined)
    for ply, move in enumerate(bob_moves):
        while (await bob.expect(State)).ply != 2 * ply + 1:
            pass
        await bob.send(MoveRequest(move=move, ply=2 * ply + 1))
    code, text = await asyncio.wait_for(task, WITHIN)
    assert code == 0
    assert "Game over: you win!" in text
    assert book.seats(url) == []
    await bob.close()


async def test_resigning_and_leaving_a_running_game_are_asked_first(url: str) -> None:
    alice, view, task = await start(url, "Alice", Create())
    alice.interactive = True
    room = await until(lambda: alice.room)
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    await view.wait_for("The game starts.")
    alice.type("resign")
    assert await view.wait_for("Resign this game?") == (
        "Resign this game? y and Enter resigns; anything else plays on."
    )
    alice.type("n")
    await view.wait_for("Not resigning.")
    alice.type("quit")
    await view.wait_for("Leave this game in progress?")
    alice.type("e2")  # anything else: she stays, and the line runs
    await view.wait_for("You moved to e2.")
    alice.type("quit")
    alice.type("quit")  # Ctrl-C twice
    assert await asyncio.wait_for(task, 5) == 0
    assert view.has("You left a game in progress")
    assert alice.state is not None
    assert alice.state.result is None  # she left; she did not resign
    await bob.close()


async def test_ending_a_quick_match_before_every_first_move_is_asked_first(url: str) -> None:
    """Aborting or resigning before both have moved walks out of the pairing (a wait before
    the next quick match): asked, with the wait said, as the browser asks."""
    alice, view, task = await start(url, "Alice", QuickMatch(), interactive=True)
    bob = await Client.connect(url, "Bob")
    await bob.send(QuickMatch())
    await bob.expect(Queued)
    await bob.expect(Joined)
    await view.wait_for("Your move (move 1)")
    alice.type("abort")
    asked = await view.wait_for("Abort this game?")
    assert "makes you wait before your next quick match" in asked
    alice.type("n")
    await view.wait_for("Not aborting.")
    alice.type("resign")
    assert "makes you wait before your next quick match" in await view.wait_for("Resign this")
    alice.type("y")
    assert await asyncio.wait_for(task, WITHIN) == 0
    assert alice.state is not None
    assert alice.state.quick
    assert alice.state.result is not None
    assert alice.state.result.reason == "resign"
    await bob.close()


async def test_ctrl_c_quits_at_once_with_a_move_queued(tmp_path: Path, url: str) -> None:
    alice = await Client.connect(url, "Alice")
    await alice.send(Create())
    room = (await alice.expect(Joined)).room
    bob = await client(url, "Bob", "--plain", "join", room)
    assert bob.stdin is not None
    assert bob.stdout is not None
    async with asyncio.timeout(WITHIN):
        while b"Alice to move." not in await bob.stdout.readline():
            pass
    bob.stdin.write(b"e8\n")  # not his turn: it waits for it
    await bob.stdin.drain()
    async with asyncio.timeout(WITHIN):
        while b"sent when it is your turn" not in await bob.stdout.readline():
            pass
    bob.send_signal(signal.SIGINT)
    out, _ = await asyncio.wait_for(bob.communicate(), 5)  # not when Alice moves: now
    assert bob.returncode == 0
    assert b"You left a game in progress" in out
    await alice.close()


async def test_the_full_screen_keeps_a_move_typed_out_of_turn_like_plain_mode(url: str) -> None:
    async with full_screen(url, "Alice", Create()) as alice:
        room = await room_of(alice)
        async with full_screen(url, "Bob", Join(room=room)) as bob:
            await bob.showing("Alice to move.")
            bob.type("e8\r")
            assert await bob.shows("e8:") == "e8: sent when it is your turn (cancel drops it)."
            alice.type("e2\r")
            await bob.at(2)  # his e8 went as soon as Alice had moved
            assert bob.controller.state is not None
            assert bob.controller.state.moves == ["e2", "e8"]
            assert not [t for t in bob.log() if "refused" in t]


async def test_reconnecting_is_one_line_that_updates() -> None:
    async with GameServer(Config(port=0)).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        alice, view, task = await start(url, "Alice", Create())
        await until(lambda: alice.room)
    await until(lambda: "(try 3," in alice.link_note or None)
    lost = [text for text in view.texts() if "Connection lost" in text]
    assert lost == ["Connection lost: the server is restarting. Reconnecting..."]
    assert "?." not in alice.link_note
    assert alice.link_note.startswith("Reconnecting (try ")
    assert ": nothing answers at 127.0.0.1:" in alice.link_note
    alice.type("quit")
    assert await asyncio.wait_for(task, 5) == 0


async def test_ctrl_c_on_the_full_screen_asks_before_leaving_a_running_game(url: str) -> None:
    async with full_screen(url, "Alice", Create(), interactive=True) as alice:
        bob = await Client.connect(url, "Bob")
        await bob.send(Join(room=await room_of(alice)))
        await alice.showing("Your move.")
        alice.type("\x03")  # Ctrl-C
        screen = await alice.showing("y/n?")
        assert screen[-1].startswith("y/n?")
        assert any("Leave this game in progress?" in row for row in screen)
        assert not alice.task.done()
        alice.type("\x03")  # again: leave
        assert await asyncio.wait_for(alice.task, 5) == 0
        await bob.close()
    assert "To come back:\n  quoridor join" in alice.out.getvalue()


async def test_leaving_a_game_against_the_computer_says_how_soon_it_is_lost(url: str) -> None:
    """It said "come back soon, or the others may claim it": there are no others, and the
    game was lost 15 s later (PROTOCOL.md section 17a)."""
    async with full_screen(url, "Alice", Create(ai=AiSpec(level=1)), interactive=True) as alice:
        await alice.showing("Your move.")
        alice.type("\x03")  # Ctrl-C
        screen = " ".join(row.strip() for row in await alice.showing("y/n?"))
        # Asked, it says so too (it said "the others may claim the game").
        assert "Leave this game against the computer?" in screen
        assert "claim" not in screen
        alice.type("\x03")  # again: leave
        assert await asyncio.wait_for(alice.task, 5) == 0
    out = alice.out.getvalue()
    assert "You left a game against the computer: it is lost unless you come back" in out
    assert "the others may claim it" not in out


async def test_the_last_words_wrap_at_spaces_with_each_command_whole(url: str) -> None:
    """At 80 columns a terminal broke the commands to come back mid-word ("--name Alic" /
    "e)") and "within sec" / "onds" (a newcomer review): prose is wrapped at spaces to the
    terminal's width, each command is alone on an indented row, and one wider goes on over
    rows with a shell's line continuation (``unbroken`` reads them back)."""
    async with full_screen(url, "Alice", Create(ai=AiSpec(level=1)), interactive=True) as alice:
        alice.controller.own_command = "/home/alice/quoridor/.venv/bin/quoridor --server " + (
            f"{url} --name Alice"
        )
        await alice.showing("Your move.")
        alice.type("\x03")
        await alice.showing("y/n?")
        alice.type("\x03")
        assert await asyncio.wait_for(alice.task, 5) == 0
    room, secret = alice.controller.room, alice.controller.secret
    command = alice.controller.own_command
    rows = alice.out.getvalue().splitlines()
    assert rows[3].endswith(" \\")  # this command is wider than the terminal
    assert unbroken(rows, 80) == [
        "You left a game against the computer: it is lost unless you come back within 15",
        "seconds (a server's default; nobody else waits).",
        "To come back:",
        f"  {command} join {room}",
        "Or simply (it asks to resume your game):",
        f"  {command}",
        "From another machine, HOST being this machine's address:",
        f"  {command.replace('127.0.0.1', 'HOST')} join {room} --seat 0 --secret {secret}",
    ]


def keep_a_seat_left_before(url: str, name: str = "Alice") -> None:
    """``name``'s seat in room k3m9qr2xvb, kept by a client that has quit."""
    seat = SavedSeat(server=url, room="k3m9qr2xvb", seat=0, secret="s" * 24, name=name)
    quit_before = subprocess.Popen(["true"])
    quit_before.wait()
    seat.pid, seat.saved = quit_before.pid, time.time()
    SeatBook()._write([seat])


class Terminal(io.StringIO):
    """Standard output that says it is a terminal (its width: ``COLUMNS``)."""

    def isatty(self) -> bool:
        return True


async def test_the_resume_question_and_its_hint_wrap_at_spaces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What plain ``quoridor`` prints before any screen is wrapped to the terminal's width
    at spaces, and the command to come back later is alone on its row, whole."""
    monkeypatch.setenv("COLUMNS", "60")
    url = "ws://127.0.0.1:9"  # nothing is connected to when the answer is no
    keep_a_seat_left_before(url)
    out = Terminal()
    assert await dispatch(parse(["--server", url]), Keyboard("n\n"), out, io.StringIO()) == 0
    assert unbroken(out.getvalue().splitlines(), 60) == [
        "You have a game in room k3m9qr2xvb (seat 0, as Alice) on",
        "ws://127.0.0.1:9. Resume it? [Y/n] Later, then:",
        f"  {invoked_as(url)} --name Alice join k3m9qr2xvb",
    ]


async def test_a_name_of_wide_characters_is_wrapped_by_its_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each CJK character takes two columns: textwrap counted it as one, so the question's
    first row, "山田太郎山田太郎山田) on" at its end, ran 3 columns past an 80-column terminal,
    which broke it there."""
    monkeypatch.setenv("COLUMNS", "80")
    url = "ws://127.0.0.1:9"
    keep_a_seat_left_before(url, "山田太郎山田太郎山田")
    out = Terminal()
    assert await dispatch(parse(["--server", url]), Keyboard("n\n"), out, io.StringIO()) == 0
    command = f"{invoked_as(url)} --name '山田太郎山田太郎山田' join k3m9qr2xvb"
    assert unbroken(out.getvalue().splitlines(), 80) == [
        # 72 columns: counted by characters, 62, and the address would have fitted after it.
        "You have a game in room k3m9qr2xvb (seat 0, as 山田太郎山田太郎山田) on",
        "ws://127.0.0.1:9. Resume it? [Y/n] Later, then:",
        f"  {command}",
    ]


def test_two_terminals_of_one_user_keep_two_seats_of_one_room(state_home: Path) -> None:
    book = SeatBook()
    alice = SavedSeat(server="ws://h:1", room="r", seat=0, secret="sa", name="Alice")
    bob = SavedSeat(server="ws://h:1", room="r", seat=1, secret="sb", name="Bob")
    book.keep(alice)
    book.keep(bob)  # the second terminal's seat does not push the first one out
    assert {s.secret for s in book.seats("ws://h:1")} == {"sa", "sb"}
    finished = subprocess.Popen(["true"])
    finished.wait()
    seats = book.seats()
    for seat in seats:  # Alice's client has quit; Bob's still runs (our parent, say)
        seat.pid = finished.pid if seat.secret == "sa" else os.getppid()
    book._write(seats)
    found = book.find("ws://h:1", "r")
    assert found is not None
    assert found.secret == "sa"  # "join r" is Alice coming back, not Bob's seat taken
    book.forget("ws://h:1", "r", "sa")
    assert [s.secret for s in book.seats()] == ["sb"]


async def test_a_kept_game_that_is_gone_is_told_so_and_forgotten(url: str) -> None:
    """The room of a kept seat no longer exists (its game was aborted, say): asked of the
    server before anything is offered, it is said so in words, and never offered again."""
    book = SeatBook()
    book.keep(SavedSeat(server=url, room="gone4ever", seat=0, secret="s" * 24, name="Alice"))
    keyboard, out = SlowKeyboard(), io.StringIO()
    task = asyncio.create_task(dispatch(parse(["--server", url]), keyboard, out, io.StringIO()))
    assert await asyncio.wait_for(task, 5) == 1
    rows = out.getvalue().splitlines()
    assert "Resume it?" not in out.getvalue()
    assert rows[0] == (
        "Your game in room gone4ever is gone: it ended, or was aborted, while you were away."
    )
    # Then what to do instead (a newcomer review: it ended there, with status 1).
    assert rows[1] == f"No other game of yours is in progress on {url}. Start one:"
    assert rows[2].endswith(" create")
    assert book.seats(url) == []


async def test_a_kept_game_decided_while_away_is_told_with_its_result(url: str) -> None:
    """Alice quit, and Bob resigned meanwhile: plain ``quoridor`` asked "Resume it?" of a game
    that was over (a newcomer's review). It says how the game ended, and forgets it."""
    room_code, bob = await alice_leaves_a_game(url)
    room = re.search(r"(\w+)", room_code)
    assert room is not None
    await bob.send(Resign())
    while (await bob.state()).status != "finished":
        pass
    code, text = await run_client(["--server", url], "", tty=True)
    assert code == 1
    assert "Resume it?" not in text
    assert text.startswith(
        f"Your game in room {room.group(1)} ended while you were away. Game over: you win"
    )
    assert SeatBook().seats(url) == []
    await bob.close()
    _, text = await run_client(["--server", url], "")
    assert "No game of yours is in progress" in text


async def test_a_game_over_forgets_only_its_own_seat_of_the_shared_file(url: str) -> None:
    """The README's first game, two players in two terminals of one machine: Alice quit, Bob
    resigned, and Bob's client forgot every seat kept for the room, Alice's too, so that
    Alice, back with the room's code, was told "room ... is full; you can watch it" instead
    of how her game ended."""
    alice, room = await alice_creates(url)  # another process: her seat is in use
    assert alice.stdin is not None
    keys, out = SlowKeyboard(), io.StringIO()
    argv = ["--server", url, "--name", "Bob", "join", room]
    bob = asyncio.create_task(dispatch(parse(argv), keys, out, io.StringIO()))
    await until(lambda: f"You have seat 1 in room {room}." in out.getvalue() or None)
    alice.stdin.write(b"quit\n")
    await alice.stdin.drain()
    await asyncio.wait_for(alice.communicate(), WITHIN)
    await until(lambda: "Alice is away" in out.getvalue() or None)
    keys.press("resign")
    keys.press("y")
    await until(lambda: "Game over: you lose" in out.getvalue() or None)
    keys.press("quit")
    assert await asyncio.wait_for(bob, 5) == 0
    code, text = await run_client(["--server", url, "--name", "Alice", "join", room])
    assert "is full" not in text
    assert f"You have seat 0 in room {room}." in text
    assert "Game over: you win (by resignation)!" in text
    assert code == 0, text


async def test_quitting_a_waiting_room_says_the_seat_is_kept_a_while(url: str) -> None:
    """Gone from a room still waiting for its opponent, the client said nothing: the seat is
    held for the grace period, and the command to come back is printed."""
    argv = ["--server", url, "--name", "Eve", "create"]
    code, text = await asyncio.wait_for(run_client(argv, "quit\n"), WITHIN)
    assert code == 0
    room = re.search(r"You have seat 0 in room (\w+)", text)
    assert room is not None, text
    assert f"You left room {room.group(1)} before its game began" in text
    assert re.search(rf"^ +\S*quoridor .*join {room.group(1)}$", text, re.MULTILINE), text
    argv = ["--server", url, "--name", "Eve", "join", room.group(1)]
    code, text = await asyncio.wait_for(run_client(argv, "quit\n"), WITHIN)
    assert code == 0, text
    assert f"You have seat 0 in room {room.group(1)}." in text


async def test_a_room_the_full_server_closes_is_said_and_ends_the_client() -> None:
    """A full server gives the room of a game over for its grace period to a new game (an
    outside review filled one with such rooms): the player still in it is told why it went,
    and the client ends as after the game."""
    config = Config(port=0, rate=1000, burst=1000, max_rooms=1, grace=0.3)
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        # Private: in a public room Bob's abort would only put him out of it (section 14).
        create = Create(private=True)
        controller, view, task = await start(url, "Alice", create, exit_when_over=False)
        room = await until(lambda: controller.room)
        bob = await Client.connect(url, "Bob")
        await bob.send(Join(room=room))
        await bob.expect(Joined)
        await bob.send(Abort())
        await until(lambda: controller.state and controller.state.result)
        await bob.close()
        await asyncio.sleep(0.4)
        newcomer = await Client.connect(url, "Carol")
        await newcomer.send(Create(id="new"))
        assert (await newcomer.expect(Joined)).id == "new"
        assert await asyncio.wait_for(task, WITHIN) == 0
        assert view.has("The server is full and closed this room to make space for new games")
        assert not view.has("taken back")
        await newcomer.close()


async def test_a_terminal_too_small_for_the_board_starts_no_game(server: GameServer) -> None:
    """The full screen said the terminal was too small once the game had begun, its first
    move's countdown running (a newcomer's review): now nothing is asked of the server, and
    the command to play in words is given."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 18, 60, 0, 0))
    url = f"ws://127.0.0.1:{server.port}"
    argv = ["--server", url, "--name", "Ann", "create", "--computer", "1"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client", *argv, stdin=terminal, stdout=terminal,
        stderr=asyncio.subprocess.PIPE, env=environment(),
    )  # fmt: skip
    os.close(terminal)
    try:
        _, err = await asyncio.wait_for(process.communicate(), WITHIN)
        assert process.returncode == 1
        said = " ".join(err.decode().split())
        assert said.startswith("This terminal is 60x18: a 9x9 board needs at least 69x20.")
        assert said.endswith(f"--plain --server {url} --name Ann create --computer 1")
        assert server.core.rooms == {}
    finally:
        os.close(controller)


def test_the_opponent_s_command_stays_whole_in_plain_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal it was wrapped with the prose before it, "... with: quoridor" / "--server
    ... join CODE" (a newcomer's review); to a pipe it stays on the sentence's one line."""
    said = ProseAndCommand(
        "You have seat 0 in room k3m9qr2xvb. Your opponent joins with:",
        "quoridor --server ws://127.0.0.1:8765 join k3m9qr2xvb",
    )
    monkeypatch.setenv("COLUMNS", "60")
    terminal = Terminal()
    PlainView(terminal).notice("info", said)
    assert terminal.getvalue().splitlines() == [
        "You have seat 0 in room k3m9qr2xvb. Your opponent joins",
        "  with:",
        "  quoridor --server ws://127.0.0.1:8765 join k3m9qr2xvb",
    ]
    pipe = io.StringIO()
    PlainView(pipe).notice("info", said)
    assert pipe.getvalue() == f"{said.prose} {said.command}\n"
