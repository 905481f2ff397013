"""Wide characters (CJK, emoji) in names and chat: rows measured in terminal columns,
broken between words with the indent kept, the title bar's help hint always shown."""

from __future__ import annotations

from prompt_toolkit.utils import get_cwidth

from client.status import status_lines
from client.width import clip, clip_name, pad, wrap
from protocol.messages import AiSpec, Create
from tests.client.states import make_state
from tests.client.terminal import full_screen, room_of

NAME = "山田太郎山田太郎山田太郎"
CHAT = "你好你好你好你好你好你好你好你好你好你好你好 is it ok to go now? 😀😀😀 yes"


def test_wrap_counts_columns_and_breaks_between_words() -> None:
    rows = wrap(f"you: {CHAT}", 37)
    assert all(get_cwidth(row) <= 37 for row in rows)
    assert all(row.startswith("  ") for row in rows[1:])
    words = " ".join(row.strip() for row in rows).split()
    assert "ok" in words
    assert "to" in words
    assert "".join(rows).replace(" ", "") == f"you:{CHAT}".replace(" ", "")


def test_clip_and_pad_measure_columns() -> None:
    assert clip(NAME, 11) == "山田太郎山…"  # 10 columns and the ellipsis
    assert get_cwidth(pad("山田", 11)) == 11
    assert clip("Bob", 11) == "Bob"


async def test_a_wide_name_and_chat_keep_the_screen_whole(url: str) -> None:
    async with full_screen(url, NAME, Create(ai=AiSpec(level=1))) as alice:
        await alice.at(0)
        alice.type(f"chat {CHAT}\r")
        screen = await alice.showing("yes")
        assert screen[0].endswith("(F1: help)")  # the name cut short, not the hint
        chat = next(i for i, row in enumerate(screen) if "you: " in row)
        tail = [row.split("│")[-1] for row in screen[chat + 1 : chat + 3]]
        assert all(row.startswith("  ") for row in tail), tail
        assert any(" ok to go" in row for row in screen[chat : chat + 3])


async def test_a_terminal_too_small_says_the_size_it_needs(url: str) -> None:
    """60x20 showed prompt_toolkit's bare 'Window too small...', then "80x24 fits every
    board", where a 9x9 board needs less: the size it needs, measured (a column less is too
    small), and the plain mode, which fits any terminal, as the command to type."""
    async with full_screen(url, "Alice", Create(ai=AiSpec(level=1)), size=(68, 20)) as alice:
        await alice.at(0)
        room = await room_of(alice)
        screen = await alice.showing("69x20")
        told = " ".join(row.strip() for row in screen if row)
        assert told.startswith("This terminal is 68x20: a 9x9 board needs at least 69x20.")
        assert f"quoridor --plain join {room}" in told
        assert all(len(row) <= 68 for row in screen)
    async with full_screen(url, "Alice", Create(ai=AiSpec(level=1)), size=(69, 20)) as alice:
        await alice.at(0)
        screen = await alice.showing("Computer L1")
        assert not any("too small" in row or "needs at least" in row for row in screen)
        assert any(row.startswith("9 │") for row in screen)  # the board, whole
        assert any(row.startswith("1 │") for row in screen)


def test_a_numbered_name_keeps_its_number_when_cut() -> None:
    """A room's computer seats are "Computer L3", "Computer L3 (2)"...: cut at the end they
    all read "Computer L…" in the status panel and the replay's."""
    assert clip_name("Computer L3 (2)", 11) == "Comput… (2)"
    assert clip_name("Computer L3 (2)", 11, "~") == "Comput~ (2)"
    assert clip_name("Computer L3 (2)", 15) == "Computer L3 (2)"
    assert clip_name("Computer L3", 11) == "Computer L3"
    assert clip_name(NAME, 11) == clip(NAME, 11)  # no number: cut as any text
    assert clip_name("Al (12)", 5) == "Al (…"  # no room for the mark: cut as any text


def test_the_status_panel_tells_computer_seats_apart() -> None:
    names = ("Alice", "Computer L3", "Computer L3 (2)", "Computer L3 (3)")
    state = make_state(pawns=("e1", "a5", "e9", "i5"), names=names)
    rows = ["".join(text for _, text in line) for line in status_lines(state, 0, width=30)]
    shown = [row for row in rows if "Comput" in row]
    assert [row.split()[1:3] for row in shown[1:]] == [["Comput…", "(2)"], ["Comput…", "(3)"]]
    # With room for them (the panel at 80x24, untimed), the names are whole.
    rows = ["".join(text for _, text in line) for line in status_lines(state, 0, width=37)]
    assert sum("Computer L3 (3)  " in row for row in rows) == 1


def test_a_rating_change_keeps_each_player_on_one_row() -> None:
    """Once a rated game ended, "1579? (+79)" beside the rating pushed "you" onto a row of its
    own at 80x24, between the two players (a newcomer's review): the name in bold says it."""
    state = make_state(names=("alice1", "bob1"), status="finished", turn=None)
    for player, (rating, change) in zip(state.players, ((1579, 79), (1421, -79)), strict=True):
        player.rating, player.provisional, player.rating_change = rating, True, change
    rows = ["".join(text for _, text in line) for line in status_lines(state, 0, width=37)]
    players = [row for row in rows if "alice1" in row or "bob1" in row]
    assert len(players) == 2
    assert all(get_cwidth(row) <= 37 for row in rows)
    assert "1579? (+79)" in players[0]
    assert "1421? (-79)" in players[1]
    # Playing, with no change to show, "you" fits.
    state = make_state(names=("alice1", "bob1"))
    state.players[0].rating = state.players[1].rating = 1500
    rows = ["".join(text for _, text in line) for line in status_lines(state, 0, width=37)]
    assert any(row.endswith(" you") and "alice1" in row for row in rows)
