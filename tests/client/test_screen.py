"""What a person sees, at 80x24 and larger: the board whole, help, the log, the move list,
the board from the player's side. Real server, keys through a pipe, the drawn screen read."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from client.layout import plan
from client.render import UNICODE, board_text, view_turns
from client.status import status_lines
from protocol.messages import Create, Draw, Join, MoveRequest, TimeControl, VariantSpec, Watch
from server.app import GameServer
from server.config import Config
from tests.client.recorder import start, until
from tests.client.states import make_state
from tests.client.terminal import Screen, full_screen, room_of
from tests.wsclient import Client


async def opponent(url: str, screen: Screen, name: str = "Bob") -> Client:
    bob = await Client.connect(url, name)
    await bob.send(Join(room=await room_of(screen)))
    await screen.at(0)
    return bob


def row_with(screen: list[str], label: str) -> int:
    """The screen row whose board row is labelled ``label`` (on the left edge)."""
    return next(i for i, row in enumerate(screen) if row.split()[:1] == [label] and "│" in row)


@pytest.mark.parametrize("size", [5, 7, 9, 11])
async def test_every_board_size_fits_80x24_whole(url: str, size: int) -> None:
    variant = VariantSpec(size=size)  # type: ignore[arg-type]
    async with full_screen(url, "Alice", Create(variant=variant)) as alice:
        bob = await opponent(url, alice)
        screen = await alice.showing("Your move.")
        assert len(screen) == 24
        assert max(len(row) for row in screen) <= 80
        top, bottom = row_with(screen, str(size)), row_with(screen, "1")
        assert top < bottom  # every row of the board, her own (row 1) included
        assert UNICODE.pawns[0] in screen[bottom]
        assert UNICODE.pawns[1] in screen[top]
        assert any(row.startswith(("   └", "  └", "  +")) for row in screen[bottom:])
        assert screen[-1].startswith(">")  # the prompt, last
        assert "Bob" in "".join(screen)  # the panel beside the board
        await bob.close()


async def test_the_command_for_the_opponent_is_one_command_on_the_screen(url: str) -> None:
    """A newcomer at 80x24 on another port: the log broke the hint as prose, ".venv/bin/quoridor
    --server" / "ws://127.0.0.1:18765 join" / "w47hyn92ts", rows that typed one by one are
    three commands. It has rows of its own now, joined by the shell's line continuation."""
    typed = f".venv/bin/quoridor --server {url}"
    async with full_screen(url, "Alice", Create(), command=typed) as alice:
        room = await room_of(alice)
        screen = await alice.showing("Your opponent joins with:")
        panel = [row.split("│")[-1] for row in screen]
        first = next(i for i, row in enumerate(panel) if row.startswith("  .venv/bin/quoridor"))
        rows = panel[first : first + 4]
        ends = next(i for i, row in enumerate(rows) if not row.endswith(" \\"))
        assert ends > 0  # wider than the panel: on two rows or more...
        command = " ".join(row.removesuffix(" \\").strip() for row in rows[: ends + 1])
        assert command == f"{typed} join {room}"  # ...that the shell reads as the one command
        assert all(row.startswith("    ") for row in rows[1 : ends + 1])
        assert panel[first - 1].endswith("Your opponent joins with:")


async def test_a_join_command_too_long_for_the_rule_is_pointed_to(url: str) -> None:
    """Started by a long path, the command did not fit the rule above the prompt at 80
    columns, and the rule showed nothing: it says where the command is now."""
    typed = f"/home/someone/projects/quoridor-server-checkout/.venv/bin/quoridor --server {url}"
    async with full_screen(url, "Alice", Create(), command=typed) as alice:
        await room_of(alice)
        screen = await alice.showing("join command is in the log above")
        assert "Your opponent's join command is in the log above" in screen[-2]
        assert max(len(row) for row in screen) <= 80


async def test_a_large_terminal_gets_a_large_board_and_the_move_list(url: str) -> None:
    async with full_screen(url, "Alice", Create(), size=(160, 50)) as alice:
        bob = await opponent(url, alice)
        alice.type("e2\r")
        await alice.at(1)
        await bob.send(MoveRequest(move="e8", ply=1))
        screen = await alice.showing("1. e2   e8")
        text = "\n".join(screen)
        assert "      a       b       c" in text  # squares seven columns wide...
        assert sum(row.startswith("  │       │") for row in screen) == 2 * 9  # ...three rows high
        await bob.close()


async def test_help_is_an_overlay_that_fits_24_rows_and_closes(url: str) -> None:
    async with full_screen(url, "Alice", Create()) as alice:
        bob = await opponent(url, alice)
        await alice.showing("Your move.")
        alice.type("help\r")
        screen = await alice.showing("Help: Esc or F1 closes")
        text = "\n".join(screen)
        for word in ("c3h", "resign", "claim", "rematch", "quit", "PageUp/PageDown"):
            assert word in text
        assert any("Ctrl-D quits." in row for row in screen)  # its last line on screen...
        assert any("└───" in row and row.endswith("┘") for row in screen)  # ...and its frame
        assert not alice.log() or "Moves use the standard notation" not in "".join(alice.log())
        alice.type("\x1bOP")  # F1 closes it
        await until(lambda: None if alice.view.help_open else True)
        screen = await alice.showing("Your move.")
        assert "Help: Esc" not in "\n".join(screen)
        await bob.close()


async def test_the_log_scrolls_back_with_page_up(url: str) -> None:
    async with full_screen(url, "Alice", Create(), interactive=True) as alice:
        bob = await opponent(url, alice)
        await alice.showing("Your move.")
        for number in range(40):
            alice.view.notice("info", f"note {number}")
        screen = await alice.showing("note 39")
        assert "note 0" not in "\n".join(screen)
        for _ in range(5):
            alice.type("\x1b[5~")  # PageUp
        screen = await alice.showing("note 0")
        assert "note 39" not in "\n".join(screen)
        assert "lines back: PgDn" in "\n".join(screen)
        for _ in range(5):
            alice.type("\x1b[6~")  # PageDown
        await alice.showing("note 39")
        # Scrolled back, a question asked comes into sight: only "y/n?" showed (a review).
        for _ in range(5):
            alice.type("\x1b[5~")
        await alice.showing("note 0")
        alice.type("resign\r")
        screen = await alice.showing("Resign this game?")
        assert "lines back" not in "\n".join(screen)
        alice.type("n\r")
        await alice.showing("Not resigning.")
        await bob.close()


async def test_seat_1_sees_the_board_from_their_side(url: str) -> None:
    async with full_screen(url, "Alice", Create()) as alice:
        room = await room_of(alice)
        async with full_screen(url, "Bob", Join(room=room)) as bob:
            screen = await bob.showing("Alice to move.")
            top, bottom = row_with(screen, "1"), row_with(screen, "9")
            assert top < bottom  # row 1 at the top, his own row 9 at the bottom
            assert UNICODE.pawns[1] in screen[bottom]
            letters = next(row for row in screen if "a" in row and "i" in row)
            assert letters.index("i") < letters.index("a")  # columns turned too
        async with full_screen(url, "Carol", Watch(room=room)) as carol:
            screen = await carol.showing("Alice to move.")
            assert row_with(screen, "9") < row_with(screen, "1")  # spectators: row 1 below


async def test_the_absolute_view_keeps_row_1_at_the_bottom(url: str) -> None:
    async with full_screen(url, "Alice", Create()) as alice:
        room = await room_of(alice)
        async with full_screen(url, "Bob", Join(room=room), absolute=True) as bob:
            screen = await bob.showing("Alice to move.")
            assert row_with(screen, "9") < row_with(screen, "1")


async def test_a_draw_offer_names_the_player(url: str) -> None:
    async with full_screen(url, "Alice", Create()) as alice:
        bob = await opponent(url, alice)
        await bob.send(Draw(action="offer"))
        screen = await alice.showing("offers a draw")
        assert any("Bob offers a draw" in row for row in screen)
        assert any("Bob offers a draw: accept or decline?" in t for t in alice.log())
        await bob.close()


def test_walls_side_by_side_stay_separate_pieces() -> None:
    state = make_state(walls=("c3h", "e3h", "g3h"), last="a6v", ply=4)
    row = next(line for line in board_text(state).splitlines() if "━" in line)
    assert "┼━━━┿━━━┼━━━┿━━━┼━━━┿━━━┼" in row
    ascii_row = next(line for line in board_text(state, ascii=True).splitlines() if "=" in line)
    assert "+=======+=======+=======+" in ascii_row
    stacked = make_state(walls=("e3v", "e5v"), last="a1h", ply=2)
    column = [line[22] for line in board_text(stacked).splitlines()[7:16]]
    assert column == ["┼", "┃", "╂", "┃", "┼", "┃", "╂", "┃", "┼"]


def test_each_seat_is_turned_to_the_bottom() -> None:
    four = make_state(pawns=("e1", "a5", "e9", "i5"), names=("A", "B", "C", "D"))
    for seat in range(4):
        lines = board_text(four, turns=view_turns(4, seat)).splitlines()
        bottom_row = lines[-3]
        assert UNICODE.pawns[seat] in bottom_row, (seat, bottom_row)
    assert view_turns(2, None) == 0


async def test_the_clocks_stop_on_screen_while_the_server_is_unreachable() -> None:
    async with GameServer(Config(port=0)).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        clock = TimeControl(base=60, increment=0)
        alice, _, task = await start(url, "Alice", Create(clock=clock))
        room = await until(lambda: alice.room)
        bob = await Client.connect(url, "Bob")
        await bob.send(Join(room=room))
        alice.type("e2")
        await until(lambda: alice.state if alice.state and alice.state.ply == 1 else None)
        await bob.send(MoveRequest(move="e8", ply=1))
        await until(lambda: alice.state and alice.state.clock and alice.state.clock.running == 0)
    # The server is gone: Alice's client keeps trying, and her clock stands still.
    await until(lambda: alice.lost_at)
    frozen = alice.clock_elapsed()
    await asyncio.sleep(0.3)
    assert alice.clock_elapsed() == frozen
    assert alice.state is not None
    panel = [
        "".join(t for _, t in line)
        for line in status_lines(alice.state, 0, elapsed=alice.clock_elapsed(), link=alice.link)
    ]
    assert "offline, clocks stopped" in panel[0]
    alice.type("quit")
    assert await asyncio.wait_for(task, 5) == 0
    await bob.close()


@pytest.mark.parametrize(("columns", "rows"), [(80, 24), (72, 24), (100, 30), (200, 60)])
def test_the_layout_never_cuts_the_board(columns: int, rows: int) -> None:
    for size in (5, 7, 9, 11):
        layout = plan(columns, rows, size)
        chrome = 3 if layout.title else 1
        assert layout.board_rows + chrome <= rows, (size, layout)
        assert layout.board_columns <= columns, (size, layout)
        if columns >= 80:
            assert layout.beside, (size, layout)  # the panel beside it from 80 columns on


async def test_a_guests_name_is_whole_and_as_written_at_80x24(url: str) -> None:
    """Without --name a guest is "root (guest)": the panel cut it to "root (gues…" with
    room to spare, and the status line said "Root (guest) to move." (a newcomer review)."""
    async with contextlib.AsyncExitStack() as screens:
        root = await screens.enter_async_context(full_screen(url, "root", Create()))
        room = await room_of(root)
        bob = await screens.enter_async_context(full_screen(url, "Bob", Join(room=room)))
        screen = " ".join(await bob.showing("to move."))
        assert "root (guest) to move." in screen
        assert "Root" not in screen
        rows = await root.showing("Your move.")
        assert any("│● root (guest)   10" in row for row in rows)


async def test_two_players_are_told_of_their_opponent_not_the_others(url: str) -> None:
    """'waiting for the others' and 'the others may claim it' in a game of two."""
    async with full_screen(url, "Alice", Create(), interactive=True) as alice:
        bob = await opponent(url, alice)
        await alice.showing("Your move.")
        alice.type("\x03")  # Ctrl-C: asked first
        await alice.showing("y/n?")
        assert "but your opponent may claim the game" in await alice.shows("Leave this game")
        alice.type("n\r")
        alice.type("resign\r")
        await alice.showing("Resign this game?")
        alice.type("y\r")
        await alice.at(0)
        await until(lambda: alice.controller.state and alice.controller.state.result)
        alice.type("rematch\r")
        assert "waiting for your opponent" in await alice.shows("You ask for a rematch")
        alice.type("\x03")
        await bob.close()
