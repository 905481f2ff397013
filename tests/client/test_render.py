"""The board drawing, compared character by character for known positions."""

from __future__ import annotations

import itertools

from client.layout import plan
from client.render import _BOX, ASCII, UNICODE, board_text, render_board
from client.status import status_lines
from protocol.messages import ClockInfo, State
from tests.client.states import make_state

# Walls at every edge and in both orientations on a 5x5 board: a1h and d4h touch the
# left and right borders, a4v and d1v the top and bottom ones, b2h ends on the middle
# of c2v, the last move (drawn double, or with * in ASCII).
EDGE_WALLS = ("a1h", "d4h", "a4v", "d1v", "b2h", "c2v")

EDGES = """\
    a   b   c   d   e
  ┌───┬───┬───┬───┬───┐
5 │   ┃   │ ◆ │   │   │ 5
  ├───╂───┼───┼━━━┿━━━┤
4 │   ┃   │   │   │   │ 4
  ├───┼───┼───┼───┼───┤
3 │   │   │   ║   │   │ 3
  ├───┼━━━┿━━━╫───┼───┤
2 │   │   │   ║   ┃   │ 2
  ├━━━┿━━━┼───┼───╂───┤
1 │   │   │ ● │   ┃   │ 1
  └───┴───┴───┴───┴───┘
    a   b   c   d   e
"""

EDGES_ASCII = """\
    a   b   c   d   e
  +---+---+---+---+---+
5 |   #   | B |   |   | 5
  +---#---+---+=======+
4 |   #   |   |   |   | 4
  +---+---+---+---+---+
3 |   |   |   *   |   | 3
  +---+=======*---+---+
2 |   |   |   *   #   | 2
  +=======+---+---#---+
1 |   |   | A |   #   | 1
  +---+---+---+---+---+
    a   b   c   d   e
"""

JUMP = """\
    a   b   c   d   e   f   g   h   i
  ┌───┬───┬───┬───┬───┬───┬───┬───┬───┐
9 │   │   │   │   │   │   │   │   │   │ 9
  ├───┼───┼───┼───┼───┼───┼───┼───┼───┤
8 │   │   │   │   │   │   │   │   │   │ 8
  ├───┼───┼───┼───┼───┼───┼───┼───┼───┤
7 │   │   │   │   │   │   │   │   │   │ 7
  ├───┼───┼───┼───┼━━━┿━━━┼───┼───┼───┤
6 │   │   │   │ · │[◆]│ · │   │   │   │ 6
  ├───┼───┼───┼───┼───┼───┼───┼───┼───┤
5 │   │   │   │ · │ ● │ · │   │   │   │ 5
  ├───┼───┼───┼───┼───┼───┼───┼───┼───┤
4 │   │   │   │   │ · │   │   │   │   │ 4
  ├───┼───┼───┼───┼───┼───┼───┼───┼───┤
3 │   │   │   │   │   │   │   │   │   │ 3
  ├───┼───┼───┼───┼───┼───┼───┼───┼───┤
2 │   │   │   │   │   │   │   │   │   │ 2
  ├───┼───┼───┼───┼───┼───┼───┼───┼───┤
1 │   │   │   │   │   │   │   │   │   │ 1
  └───┴───┴───┴───┴───┴───┴───┴───┴───┘
    a   b   c   d   e   f   g   h   i
"""

JUMP_ASCII = """\
    a   b   c   d   e   f   g   h   i
  +---+---+---+---+---+---+---+---+---+
9 |   |   |   |   |   |   |   |   |   | 9
  +---+---+---+---+---+---+---+---+---+
8 |   |   |   |   |   |   |   |   |   | 8
  +---+---+---+---+---+---+---+---+---+
7 |   |   |   |   |   |   |   |   |   | 7
  +---+---+---+---+=======+---+---+---+
6 |   |   |   | . |[B]| . |   |   |   | 6
  +---+---+---+---+---+---+---+---+---+
5 |   |   |   | . | A | . |   |   |   | 5
  +---+---+---+---+---+---+---+---+---+
4 |   |   |   |   | . |   |   |   |   | 4
  +---+---+---+---+---+---+---+---+---+
3 |   |   |   |   |   |   |   |   |   | 3
  +---+---+---+---+---+---+---+---+---+
2 |   |   |   |   |   |   |   |   |   | 2
  +---+---+---+---+---+---+---+---+---+
1 |   |   |   |   |   |   |   |   |   | 1
  +---+---+---+---+---+---+---+---+---+
    a   b   c   d   e   f   g   h   i
"""


def edges_state() -> State:
    return make_state(
        size=5, pawns=("c1", "c5"), walls=EDGE_WALLS, last="c2v", last_seat=1, ply=6, turn=0
    )


def jump_state() -> State:
    """Alice (e5) faces Bob (e6) with a wall behind him: she may jump diagonally."""
    return make_state(
        pawns=("e5", "e6"),
        walls=("e6h",),
        last="e6",
        last_seat=1,
        ply=9,
        turn=0,
        legal=("d6", "f6", "d5", "f5", "e4"),
    )


def test_walls_at_every_edge_and_orientation() -> None:
    state = edges_state()
    assert board_text(state) == EDGES.rstrip("\n")
    assert board_text(state, ascii=True) == EDGES_ASCII.rstrip("\n")


def test_a_jump_position_dots_the_legal_squares_and_brackets_the_last_move() -> None:
    state = jump_state()
    assert board_text(state, seat=0) == JUMP.rstrip("\n")
    assert board_text(state, seat=0, ascii=True) == JUMP_ASCII.rstrip("\n")


def test_the_legal_squares_are_only_dotted_for_the_player_to_move() -> None:
    state = jump_state()
    for seat in (1, None):
        text = board_text(state, seat=seat)
        assert "·" not in text
        assert "[◆]" in text


def test_the_first_board_is_empty_but_for_the_pawns() -> None:
    text = board_text(make_state())
    lines = text.splitlines()
    assert lines[0] == lines[-1] == "    a   b   c   d   e   f   g   h   i"
    assert lines[1] == "  ┌" + "┬".join(["───"] * 9) + "┐"
    assert lines[2] == "9 │   │   │   │   │ ◆ │   │   │   │   │ 9"
    assert lines[18] == "1 │   │   │   │   │ ● │   │   │   │   │ 1"
    assert lines[19] == "  └" + "┴".join(["───"] * 9) + "┘"
    assert not any(ch in text for ch in "━┃═║[")


def test_eleven_rows_align_their_two_digit_labels() -> None:
    lines = board_text(make_state(size=11, pawns=("f1", "f11"))).splitlines()
    assert len(lines) == 2 * 11 + 3
    assert lines[0] == "     a   b   c   d   e   f   g   h   i   j   k"
    assert lines[2].startswith("11 │")
    assert lines[2].endswith("│ 11")
    assert lines[6].startswith(" 9 │")
    assert lines[6].endswith("│ 9")
    assert {len(line.rstrip()) for line in lines[1:-1:2]} == {len(lines[1])}


def test_four_pawns_have_four_glyphs_in_both_charsets() -> None:
    state = make_state(
        pawns=("e1", "a5", "e9", "i5"), names=("A", "B", "C", "D"), distances=[8, 8, 8, 8]
    )
    text = board_text(state)
    for glyph in UNICODE.pawns:
        assert text.count(glyph) == 1
    ascii_text = board_text(state, ascii=True)
    assert "5 | B |" in ascii_text
    assert "| D | 5" in ascii_text
    assert len(set(UNICODE.pawns)) == len(set(ASCII.pawns)) == 4


def test_styles_tell_walls_the_last_wall_and_pawns_apart() -> None:
    lines = render_board(edges_state())
    styles = {style for line in lines for style, _ in line}
    assert {"class:wall", "class:wall.last", "class:grid", "class:coord"} <= styles
    assert {"class:pawn.0", "class:pawn.1"} <= styles
    for line in lines:
        for style, text in line:
            if style == "class:wall.last":
                assert set(text) <= set("═║╪╫"), text


def test_every_crossing_of_light_and_heavy_lines_has_a_character() -> None:
    combos = [arms for arms in itertools.product(range(3), repeat=4) if any(arms)]
    assert all(arms in _BOX for arms in combos)
    assert _BOX[1, 1, 1, 1] == "┼"
    assert _BOX[1, 2, 1, 2] == "┿"
    assert _BOX[2, 1, 2, 1] == "╂"
    assert _BOX[0, 1, 1, 0] == "┌"
    assert _BOX[2, 2, 2, 2] == "╋"


def test_the_status_panel_names_glyphs_walls_distances_and_the_turn() -> None:
    state = make_state(walls_left=[7, 9], distances=[5, 6], ply=4, last="e3h", last_seat=1)
    lines = ["".join(text for _, text in line) for line in status_lines(state, 0)]
    assert lines[0] == "Room room1"
    assert lines[2] == "  player     walls to go"  # "to go", as the browser says "5 to go"
    assert lines[3] == "● Alice          7     5 ◀ you"
    assert lines[4] == "◆ Bob            9     6"
    assert lines[5] == "Move 3   last: ◆ e3h"  # four moves played: the third round's first
    assert lines[-1] == "Your move."


def test_an_away_note_stays_on_its_row_at_80_columns() -> None:
    """An absent opponent's countdown never wraps the panel's rows (it did beside the
    player: '◀ away, clai' / 'm in 13s', and '5:01 away,' / ' claim in 52s')."""
    side = 80 - plan(80, 24, 9).board_columns - 1
    clock = ClockInfo(base_ms=300_000, increment_ms=0, remaining_ms=[301_000] * 2, running=1)
    for timed in (None, clock):
        state = make_state(turn=1, connected=[True, False], clock=timed)
        state.players[1].claim_in_ms = 13_000
        lines = ["".join(text for _, text in line) for line in status_lines(state, 0, width=side)]
        rows = [line for line in lines if "Bob" in line or "Alice" in line]
        assert all(len(row) <= side for row in rows), rows  # the others are wrapped
        assert "Bob away: claim in 13s" in lines
    state.players[1].claim_in_ms = 0
    lines = ["".join(text for _, text in line) for line in status_lines(state, 0, width=side)]
    assert "Bob away: claim now" in lines
