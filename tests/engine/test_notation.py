"""Standard notation: squares, walls and records, and the errors for junk.

Columns are letters from ``a`` left to right, rows numbers from ``1`` bottom to
top. A pawn move is its destination square (``e2``); a wall is the lower-left
square of the 2x2 block around its midpoint plus ``h`` or ``v`` (``e3h``). A
record is the moves separated by spaces, or numbered by rounds of every
player's move (``1. e2 e8 2. e3 e7``).
"""

from __future__ import annotations

from textwrap import dedent

import pytest

from engine import (
    Game,
    IllegalMove,
    Move,
    NotationError,
    format_record,
    parse_move,
    parse_record,
)
from engine.notation import COLUMNS, format_square

# -- squares and walls ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "col", "row"),
    [("a1", 0, 0), ("e2", 4, 1), ("i9", 8, 8), ("a9", 0, 8), ("i1", 8, 0)],
)
def test_parse_square(text: str, col: int, row: int) -> None:
    move = parse_move(text)
    assert move == Move(col, row, "")
    assert not move.is_wall
    assert str(move) == text
    assert format_square(col, row) == text


@pytest.mark.parametrize(
    ("text", "col", "row", "orientation"),
    [("e3h", 4, 2, "h"), ("e3v", 4, 2, "v"), ("a1h", 0, 0, "h"), ("h8v", 7, 7, "v")],
)
def test_parse_wall(text: str, col: int, row: int, orientation: str) -> None:
    move = parse_move(text)
    assert move == Move(col, row, orientation)
    assert move.is_wall
    assert str(move) == text


@pytest.mark.parametrize("size", [5, 7, 9, 11])
def test_every_square_and_wall_round_trips(size: int) -> None:
    squares = [f"{COLUMNS[c]}{r + 1}" for c in range(size) for r in range(size)]
    walls = [
        f"{COLUMNS[c]}{r + 1}{o}" for c in range(size - 1) for r in range(size - 1) for o in "hv"
    ]
    assert len(squares) == size * size
    assert len(walls) == 2 * (size - 1) ** 2
    for text in squares + walls:
        move = parse_move(text, size)
        assert str(move) == text
        assert parse_move(str(move), size) == move


@pytest.mark.parametrize(
    "text",
    [
        "z9",  # no such column
        "j1",  # column j is off the 9x9 board
        "e10",  # row 10 is off the 9x9 board
        "e0",
        "e01",
        "i1h",  # wall anchors run a..h: a wall on column i would hang off the board
        "a9h",  # ... and 1..8
        "h9v",
        "e3x",  # no such orientation
        "e3hv",
        "",
        "E2",  # lower case only
        "e3H",
        " e2",
        "e2 ",
        "e",
        "3",
        "2e",
        "e2e3",
        "1.",
    ],
)
def test_junk_is_a_notation_error(text: str) -> None:
    with pytest.raises(NotationError):
        parse_move(text)


@pytest.mark.parametrize(
    ("text", "size"),
    [("f1", 5), ("a6", 5), ("e4h", 5), ("d5v", 5), ("h1", 7), ("g6v", 7), ("l1", 11), ("k10h", 11)],
)
def test_squares_and_walls_are_checked_against_the_board_size(text: str, size: int) -> None:
    with pytest.raises(NotationError):
        parse_move(text, size)


def test_notation_error_names_the_board() -> None:
    with pytest.raises(NotationError) as caught:
        parse_move("e10")
    assert str(caught.value) == "e10 is not a square on a 9x9 board (a1..i9)"
    with pytest.raises(NotationError) as caught:
        parse_move("i1h")
    assert str(caught.value) == "i1h is not a wall on a 9x9 board (a1..h8)"
    with pytest.raises(NotationError) as caught:
        parse_move("a12", 11)
    assert str(caught.value) == "a12 is not a square on an 11x11 board (a1..k11)"
    with pytest.raises(NotationError) as caught:
        parse_move("e3x")
    assert "is not a move" in str(caught.value)


def test_eleven_by_eleven_notation() -> None:
    assert parse_move("k11", 11) == Move(10, 10, "")
    assert parse_move("a10", 11) == Move(0, 9, "")
    assert parse_move("j10h", 11) == Move(9, 9, "h")
    assert parse_move("j10v", 11) == Move(9, 9, "v")
    assert format_square(10, 10) == "k11"
    for text in ["k11", "j10h", "e10", "a10v"]:
        with pytest.raises(NotationError):
            parse_move(text)  # none of them is on the 9x9 board
    game = Game.from_moves("f2 f10 j10h", size=11)
    assert str(game) == dedent(
        """\
           a b c d e f g h i j k
        11 . . . . . . . . . . .
                             ---
        10 . . . . . 1 . . . . .

         9 . . . . . . . . . . .

         8 . . . . . . . . . . .

         7 . . . . . . . . . . .

         6 . . . . . . . . . . .

         5 . . . . . . . . . . .

         4 . . . . . . . . . . .

         3 . . . . . . . . . . .

         2 . . . . . 0 . . . . .

         1 . . . . . . . . . . .
           a b c d e f g h i j k
        """
    )
    assert game.record() == "f2 f10 j10h"
    assert game.walls == ["j10h"]
    assert "k11" not in game.legal_moves()


# -- records --------------------------------------------------------------------


def test_parse_plain_record() -> None:
    assert parse_record("e2 e8 e3h d6v") == ["e2", "e8", "e3h", "d6v"]
    assert parse_record("") == []
    assert parse_record("  e2 \n e8\t") == ["e2", "e8"]


def test_parse_numbered_record() -> None:
    assert parse_record("1. e2 e8 2. e3 e7") == ["e2", "e8", "e3", "e7"]
    assert parse_record("1. e2 e8 2. e3") == ["e2", "e8", "e3"]
    assert parse_record("1. e2 b5 e8 h5 2. e3") == ["e2", "b5", "e8", "h5", "e3"]


@pytest.mark.parametrize(
    "text",
    [
        "2. e2 e8",  # must start at 1
        "0. e2 e8",
        "1. e2 e8 3. e3 e7",  # skips 2
        "1. e2 e8 1. e3 e7",  # repeats 1
        "1. e2 e8 2. e3 e7 2. e4",
        "e2 e8 2. e3 e7",  # numbered from 2 only
    ],
)
def test_wrong_move_numbering_is_a_notation_error(text: str) -> None:
    with pytest.raises(NotationError):
        Game.from_moves(text)


@pytest.mark.parametrize(
    ("text", "players"),
    [
        ("1. e2 2. e8", 2),  # a number in the middle of a round
        ("1. e2 e8 e3 2. e7", 2),  # a round of three moves
        ("1. e2 b5 e8 2. h5 e3", 4),
        ("1. e2 b5 e8 h5 e3 2. c5", 4),
    ],
)
def test_move_numbers_must_start_rounds(text: str, players: int) -> None:
    # Each number starts a round of every player's move: these records are
    # numbered wrongly even though the numbers count up.
    with pytest.raises(NotationError):
        Game.from_moves(text, players=players)


def test_format_plain_record() -> None:
    assert format_record(["e2", "e8", "e3h"]) == "e2 e8 e3h"
    assert format_record([]) == ""


def test_format_numbered_record() -> None:
    moves = ["e2", "e8", "e3", "e7", "e3h"]
    assert format_record(moves, numbered=True) == "1. e2 e8 2. e3 e7 3. e3h"
    # Four players: each number starts a round of four moves.
    four = ["e2", "b5", "e8", "h5", "e3", "c5"]
    assert format_record(four, players=4, numbered=True) == "1. e2 b5 e8 h5 2. e3 c5"
    assert format_record(four, players=4) == "e2 b5 e8 h5 e3 c5"
    assert format_record([], numbered=True) == ""


@pytest.mark.parametrize(
    ("text", "players", "numbered"),
    [
        ("e2 e8 e3h d6v e3", 2, False),
        ("1. e2 e8 2. e3h d6v 3. e3", 2, True),
        ("1. e2 e8 2. e3h d6v", 2, True),
        ("e2 b5 e8 h5 e3 c5", 4, False),
        ("1. e2 b5 e8 h5 2. e3 c5", 4, True),
        ("1. e2 b5 e8 h5 2. e3 c5 e7 g5", 4, True),
        ("", 2, False),
        ("", 4, True),
    ],
)
def test_record_round_trip(text: str, players: int, numbered: bool) -> None:
    moves = parse_record(text)
    assert format_record(moves, players, numbered) == text
    assert parse_record(format_record(moves, players, numbered)) == moves


def test_game_record_round_trip() -> None:
    game = Game.from_moves("1. e2 e8 2. e3h d6v 3. e3")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 1 . . . .

        7 . . . .|. . . . .
                 |
        6 . . . .|. . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .
                  ---
        3 . . . . 0 . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    assert game.moves == ["e2", "e8", "e3h", "d6v", "e3"]
    assert game.record() == "e2 e8 e3h d6v e3"
    assert game.record(numbered=True) == "1. e2 e8 2. e3h d6v 3. e3"
    for record in (game.record(), game.record(numbered=True), game.moves):
        again = Game.from_moves(record)
        assert str(again) == str(game)
        assert again.moves == game.moves


def test_four_player_game_record_round_trip() -> None:
    game = Game.from_moves("1. e2 b5 e8 h5 2. e3 c5h", players=4)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 2 . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .
              ---
        5 . 1 . . . . . 3 .

        4 . . . . . . . . .

        3 . . . . 0 . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    assert game.record() == "e2 b5 e8 h5 e3 c5h"
    assert game.record(numbered=True) == "1. e2 b5 e8 h5 2. e3 c5h"
    for record in (game.record(), game.record(numbered=True)):
        again = Game.from_moves(record, players=4)
        assert str(again) == str(game)
        assert again.moves == game.moves


# -- errors ---------------------------------------------------------------------


def test_both_errors_are_value_errors() -> None:
    assert issubclass(NotationError, ValueError)
    assert issubclass(IllegalMove, ValueError)
    assert not issubclass(NotationError, IllegalMove)
    assert not issubclass(IllegalMove, NotationError)


def test_a_game_tells_junk_from_an_illegal_move() -> None:
    game = Game()
    with pytest.raises(NotationError):
        game.play("i1h")  # not a wall slot at all
    with pytest.raises(NotationError):
        game.play("z9")
    with pytest.raises(IllegalMove):
        game.play("e5")  # a square, just not reachable
    with pytest.raises(NotationError):
        Game.from_moves("e2 e8 e10")
    with pytest.raises(NotationError):
        Game.from_moves("1.e2 e8")  # the number must stand apart
    assert not game.is_legal("z9")
    assert not game.is_legal("e5")
