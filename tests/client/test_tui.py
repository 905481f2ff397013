"""The full-screen client, headless: keys through a pipe, a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import urllib.parse

from client.notation import rounds
from client.render import render_board
from client.tui import move_list
from protocol.messages import Create, Join, MoveRequest, TimeControl, VariantSpec
from tests.client.recorder import until
from tests.client.shown import unbroken
from tests.client.terminal import full_screen, room_of
from tests.wsclient import Client


async def test_a_player_types_a_whole_game_and_wins(url: str) -> None:
    moves = "e2 d9 e3 d8 e4 a6h e5 d7 e6 d6 e7 d5 e8 d4 e9".split()
    async with full_screen(url, "Alice", Create()) as alice:
        bob = await Client.connect(url, "Bob")
        await bob.send(Join(room=await room_of(alice)))
        for ply, move in enumerate(moves):
            await alice.at(ply)
            if ply % 2 == 0:
                alice.type(f"{move}\r")  # Alice types on the keyboard
            else:
                await bob.send(MoveRequest(move=move, ply=ply))
        await until(lambda: alice.controller.state and alice.controller.state.result)
        assert await alice.shows("Game over") == (
            "Game over: you win! Type rematch to play again, or quit."
        )
        state = alice.controller.state
        assert state is not None
        assert alice.view.board() == [
            fragment
            for index, line in enumerate(render_board(state, seat=0))
            for fragment in ([("", "\n")] if index else []) + line
        ]
        alice.type("quit\r")
        assert await asyncio.wait_for(alice.task, 5) == 0
        await bob.close()
    assert alice.out.getvalue() == (
        "Game over: you win!\n"
        "Replay it with the computer's analysis:\n"
        "  quoridor analyse 1 --replay\n"
    )


async def test_the_join_command_has_a_row_of_its_own_while_the_room_waits(url: str) -> None:
    """In the log beside the board it was broken over rows that a mouse could not copy
    without the board's edge (a newcomer's review): the row above the prompt shows it whole
    until the opponent comes."""
    command = "quoridor --server ws://127.0.0.1:8765"
    async with full_screen(url, "Alice", Create(), command=command) as alice:
        code = await room_of(alice)
        rows = await alice.showing(f"join {code}")
        # Shorter words when the whole sentence would not fit the row.
        assert rows[-2].startswith(f"─ Join: {command} join {code} ─")
        assert len(rows[-2]) == 80
        bob = await Client.connect(url, "Bob")
        await bob.send(Join(room=code))
        await alice.at(0)
        assert await until(lambda: alice.text()[-2] == "─" * 80)
        await bob.close()


async def test_a_board_too_tall_for_the_join_row_shows_it_after_the_prompt(url: str) -> None:
    """11x11 at 80x24 leaves no row for the title and the rule above the prompt: the join
    command stood only in the log, broken over four rows (a newcomer's review). It follows
    the empty prompt instead, and typing hides it."""
    command = "quoridor --server ws://127.0.0.1:8765"
    create = Create(variant=VariantSpec(players=4, size=11))
    async with full_screen(url, "Carol", create, command=command) as carol:
        code = await room_of(carol)
        rows = await carol.showing(f"join {code}")
        assert rows[-1].rstrip() == f">   Others join with: {command} join {code}"
        app = await until(lambda: carol.view.app)
        await until(lambda: app.render_counter > 0 or None)  # on screen: keys go to the prompt
        carol.type("e2")
        await until(lambda: app.current_buffer.text == "e2" or None)
        assert await until(lambda: carol.text()[-1].startswith("> e2") or None)
        assert "join" not in carol.text()[-1]
        carol.type("\x7f\x7f\x7f")  # backspaces: empty again, and it is back
        assert await until(lambda: f"join {code}" in carol.text()[-1] or None)
        others = [await Client.connect(url, name) for name in ("Dan", "Eve", "Fay")]
        for other in others:
            await other.send(Join(room=code))
        await carol.at(0)
        assert await until(lambda: carol.text()[-1].rstrip() == ">" or None)
        for other in others:
            await other.close()


async def test_a_rejected_wall_shows_the_reason_and_play_goes_on(url: str) -> None:
    async with full_screen(url, "Alice", Create()) as alice:
        bob = await Client.connect(url, "Bob")
        await bob.send(Join(room=await room_of(alice)))
        await alice.at(0)
        alice.type("wall e3h\r")
        await alice.at(1)
        await bob.send(MoveRequest(move="e8", ply=1))
        await alice.at(2)
        alice.type("e3v\r")  # crosses e3h
        assert await alice.shows("refused") == "e3v refused: wall e3v crosses e3h."
        alice.type("e2\r")
        await alice.at(3)
        screen = await alice.showing("2. e2")
        assert any("1. e3h  e8" in row for row in screen)  # the live move list
        assert alice.log()[-1] == "e3v refused: wall e3v crosses e3h."  # no move lines
        state = alice.controller.state
        assert state is not None
        assert state.walls == ["e3h"]
        await bob.close()


async def test_tab_completes_the_legal_pawn_moves(url: str) -> None:
    async with full_screen(url, "Alice", Create()) as alice:
        bob = await Client.connect(url, "Bob")
        await bob.send(Join(room=await room_of(alice)))
        await alice.at(0)
        app = await until(lambda: alice.view.app)
        await until(lambda: app.render_counter > 1 or None)  # on screen: keys go to the prompt
        alice.type("move \t")
        completing = await until(lambda: app.current_buffer.complete_state)
        assert [c.text for c in completing.completions] == ["d1", "f1", "e2"]
        alice.type("\x1b[B")  # Down: the menu's first entry is in the prompt
        await until(lambda: app.current_buffer.text == "move d1" or None)
        alice.type("\x1b")  # Esc closes the menu and puts back what was typed
        await until(lambda: app.current_buffer.complete_state is None or None)
        assert app.current_buffer.text == "move "
        status = "".join(fragment[1] for fragment in alice.view.status())
        assert "● Alice" in status
        assert "Your move." in status
        await bob.close()


async def test_leaving_a_game_in_progress_says_how_to_come_back(url: str) -> None:
    async with full_screen(url, "Alice", Create()) as alice:
        bob = await Client.connect(url, "Bob")
        room = await room_of(alice)
        await bob.send(Join(room=room))
        await alice.at(0)
        alice.type("\x04")  # Ctrl-D quits too
        assert await asyncio.wait_for(alice.task, 5) == 0
        await bob.close()
    secret = alice.controller.secret
    port = urllib.parse.urlsplit(url).port
    assert (
        "come back within 15 seconds (a server's default), or your opponent may claim it."
        in " ".join(alice.out.getvalue().split())
    )
    assert unbroken(alice.out.getvalue().splitlines(), 80)[-6:] == [
        "To come back:",
        f"  quoridor join {room}",
        "Or simply (it asks to resume your game):",
        "  quoridor",
        "From another machine, HOST being this machine's address:",
        f"  quoridor --server ws://HOST:{port} join {room} --seat 0 --secret {secret}",
    ]


async def test_a_failed_join_never_takes_the_screen(url: str) -> None:
    async with full_screen(url, "Alice", Join(room="nope")) as alice:
        assert await asyncio.wait_for(alice.task, 5) == 1
        assert alice.view.app is None
    # With what to do next (a newcomer's review: "no room 'abcdefghij'" alone).
    assert " ".join(alice.out.getvalue().split()).endswith(
        "No room nope on this server: check the code, or see the public rooms with quoridor list"
    )


async def test_the_screen_is_redrawn_only_while_a_clock_runs(url: str) -> None:
    """A waiting room's still screen is not redrawn ten times a second (it cost an idle
    client 7 % of a core); a running clock is, without any message from the server."""
    clock = TimeControl(base=60, increment=0)
    async with full_screen(url, "Alice", Create(clock=clock)) as alice:
        await alice.showing("Waiting for players")
        app = alice.view.app
        assert app is not None
        drawn = app.render_counter
        await asyncio.sleep(0.6)
        assert app.render_counter == drawn  # nothing changed: nothing drawn
        bob = await Client.connect(url, "Bob")
        await bob.send(Join(room=await room_of(alice)))
        await alice.at(0)
        for ply, move in enumerate(["e2", "e8"]):
            await alice.at(ply)
            if ply == 0:
                alice.type(f"{move}\r")
            else:
                await bob.send(MoveRequest(move=move, ply=ply))
        state = await alice.at(2)
        assert state.clock is not None
        assert state.clock.running == 0
        drawn = app.render_counter
        await asyncio.sleep(0.6)
        assert app.render_counter - drawn >= 3  # the clock ticks on screen by itself
        await bob.close()


def test_the_move_list_counts_a_round_as_a_move_of_each_seat_still_in() -> None:
    """After Ben (seat 1) resigns on his turn, three seats play on: a round is their three
    moves (counted four to a round, round 3 began with Cat's move, the turns out of step)."""
    moves = ["e2", "a5", "e8", "i5", "e3", "retire 1", "e7", "h5", "e4", "c5"]
    rows = move_list(moves, 4, 200)
    text = "".join(part for _, part in rows[0])
    assert text.split() == "1. e2 a5 e8 i5 2. e3 e7 h5 3. e4 c5".split()
    assert rounds(["e2", "e8", "e3"], 2) == [["e2", "e8"], ["e3"]]
    # Out of turn (Dan, seat 3, resigns during Ben's turn): Ben still moves next.
    assert rounds(["e2", "retire 3", "a5", "e8", "e3"], 4) == [["e2", "a5", "e8"], ["e3"]]
