"""The rules of Quoridor, one test per rule, each on a drawn position.

The law is seeds 000 and 001 (and the four-player rules of seed 001). Every
position is built from a move record with ``Game.from_moves`` and drawn with
``str(game)``: row 9 on top, pawns are seat numbers (seat 0 starts on e1 and
moves first), ``|`` between squares is a vertical wall and ``---`` under two
squares a horizontal one. Asserting the drawing first makes sure the reader
sees exactly the position the rule is checked on.

Square parity makes records look odd at times: with pawn moves only, two
pawns are never face to face when seat 0 is to move, so some records spend a
wall (or a step sideways) as a tempo move.
"""

from __future__ import annotations

from textwrap import dedent

import pytest

from engine import Game, IllegalMove, NotationError, parse_record

State = tuple[str, list[str], int, int | None, list[int], list[str], list[str], list[str]]


def state(game: Game) -> State:
    """Everything observable about a game, to check that nothing changed."""
    return (
        str(game),
        game.moves,
        game.turn,
        game.winner,
        game.walls_left,
        game.walls,
        game.pawns,
        game.legal_moves(),
    )


def illegal(game: Game, move: str) -> str:
    """Play a move the rules forbid; check the game is unchanged; return the reason."""
    before = state(game)
    with pytest.raises(IllegalMove) as caught:
        game.play(move)
    assert state(game) == before
    assert move not in game.legal_moves()
    assert not game.is_legal(move)
    return str(caught.value)


def pawn_moves(game: Game) -> list[str]:
    return sorted(game.legal_pawn_moves())


OPENING = dedent(
    """\
      a b c d e f g h i
    9 . . . . 1 . . . .

    8 . . . . . . . . .

    7 . . . . . . . . .

    6 . . . . . . . . .

    5 . . . . . . . . .

    4 . . . . . . . . .

    3 . . . . . . . . .

    2 . . . . . . . . .

    1 . . . . 0 . . . .
      a b c d e f g h i
    """
)


# -- the opening and the turn ---------------------------------------------------


def test_opening_position() -> None:
    game = Game()
    assert str(game) == OPENING
    assert game.pawns == ["e1", "e9"]
    assert game.turn == 0  # Ivory, on e1, moves first
    assert game.walls_left == [10, 10]
    assert game.walls == []
    assert game.winner is None
    assert not game.is_over
    assert game.moves == []
    assert game.distances() == [8, 8]


def test_opening_has_exactly_131_legal_moves() -> None:
    game = Game()
    assert str(game) == OPENING
    # 3 steps (no step off the board) + 64 horizontal + 64 vertical wall anchors.
    assert pawn_moves(game) == ["d1", "e2", "f1"]
    walls = game.legal_walls()
    assert len([wall for wall in walls if wall.endswith("h")]) == 64
    assert len([wall for wall in walls if wall.endswith("v")]) == 64
    assert game.legal_moves() == game.legal_pawn_moves() + walls
    assert len(game.legal_moves()) == 131


def test_turns_alternate_with_one_action_each() -> None:
    game = Game()
    game.play("e2")  # a step: the pawn moves, no wall is used
    assert (game.turn, game.pawns, game.walls_left) == (1, ["e2", "e9"], [10, 10])
    game.play("e8")
    assert (game.turn, game.pawns, game.walls_left) == (0, ["e2", "e8"], [10, 10])
    game.play("e3h")  # a wall: the placer's supply drops by one, no pawn moves
    assert (game.turn, game.pawns, game.walls_left) == (1, ["e2", "e8"], [9, 10])
    game.play("d6v")
    assert (game.turn, game.pawns, game.walls_left) == (0, ["e2", "e8"], [9, 9])
    assert game.moves == ["e2", "e8", "e3h", "d6v"]
    assert game.walls == ["e3h", "d6v"]
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
        3 . . . . . . . . .

        2 . . . . 0 . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )


def test_a_move_is_always_for_the_seat_to_move() -> None:
    game = Game.from_moves("e2")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . 1 . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . 0 . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # Seat 1 is to move: e3 would be a step for seat 0's pawn, not seat 1's.
    assert illegal(game, "e3") == "e3 is not one step or jump away from e9"
    assert pawn_moves(game) == ["d9", "e8", "f9"]


@pytest.mark.parametrize("text", ["pass", "", "-", "e2 e3", "0000"])
def test_there_is_no_pass(text: str) -> None:
    game = Game()
    assert str(game) == OPENING
    before = state(game)
    with pytest.raises(NotationError):
        game.play(text)
    assert state(game) == before
    assert game.legal_moves()  # and there is always something to play


# Twenty walls, ten each, that block nobody's way forward.
NO_WALLS_LEFT = "a1v a3v b1v b3v c1v c3v d1v d3v e1v e3v f1v f3v g1v g3v h1v h3v a5v a7v c5v c7v"


def test_with_no_walls_left_only_the_pawn_moves() -> None:
    game = Game.from_moves(NO_WALLS_LEFT)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . 1 . . . .

        8 .|. .|. . . . . .
           |   |
        7 .|. .|. . . . . .

        6 .|. .|. . . . . .
           |   |
        5 .|. .|. . . . . .

        4 .|.|.|.|.|.|.|.|.
           | | | | | | | |
        3 .|.|.|.|.|.|.|.|.

        2 .|.|.|.|.|.|.|.|.
           | | | | | | | |
        1 .|.|.|.|0|.|.|.|.
          a b c d e f g h i
        """
    )
    assert game.walls_left == [0, 0]
    assert len(game.walls) == 20
    assert game.legal_walls() == []
    assert game.legal_moves() == ["e2"]  # the one thing seat 0 may still do
    assert illegal(game, "e5h") == "seat 0 has no walls left"
    game.play("e2")
    assert game.legal_walls() == []
    assert sorted(game.legal_moves()) == pawn_moves(game) == ["d9", "e8", "f9"]
    assert illegal(game, "h8v") == "seat 1 has no walls left"


# -- steps ----------------------------------------------------------------------


def test_a_step_is_one_square_orthogonally() -> None:
    game = Game()
    assert str(game) == OPENING
    assert illegal(game, "d2") == "d2 is not one step or jump away from e1"  # diagonal
    assert illegal(game, "e3") == "e3 is not one step or jump away from e1"  # two squares
    assert illegal(game, "e1") == "e1 is occupied by seat 0's pawn"  # standing still
    assert illegal(game, "a5") == "a5 is not one step or jump away from e1"


def test_steps_may_go_sideways_and_backwards() -> None:
    game = Game.from_moves("e2 e8")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 1 . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . 0 . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    assert pawn_moves(game) == ["d2", "e1", "e3", "f2"]


def test_a_pawn_cannot_leave_the_board() -> None:
    game = Game.from_moves("b1 d5 a1 c5", size=5)
    assert str(game) == dedent(
        """\
          a b c d e
        5 . . 1 . .

        4 . . . . .

        3 . . . . .

        2 . . . . .

        1 0 . . . .
          a b c d e
        """
    )
    assert pawn_moves(game) == ["a2", "b1"]  # nothing west of column a or south of row 1
    with pytest.raises(NotationError):
        game.play("a0")


def test_a_pawn_cannot_step_through_a_wall() -> None:
    game = Game.from_moves("e1h e8 d1v e7")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . 1 . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . .|. . . . .
                 |---
        1 . . . .|0 . . . .
          a b c d e f g h i
        """
    )
    assert pawn_moves(game) == ["f1"]
    assert illegal(game, "e2") == "a wall blocks the step from e1 to e2"
    assert illegal(game, "d1") == "a wall blocks the step from e1 to d1"


FACE_TO_FACE = dedent(
    """\
      a b c d e f g h i
    9 . . . . . . . . .

    8 . . . . . . . . .

    7 . . . . . . . . .

    6 . . . . 1 . . . .

    5 . . . . 0 . . . .

    4 . . . . . . . . .

    3 . . . . . . . . .

    2 . . . . . . . . .

    1 . . . . . . . . .
      a b c d e f g h i
    """
)


def test_a_pawn_cannot_step_onto_a_pawn() -> None:
    game = Game.from_moves("e2 e8 e3 e7 e4 e6 e5")
    assert str(game) == FACE_TO_FACE
    assert illegal(game, "e5") == "e5 is occupied by seat 0's pawn"


# -- jumps ----------------------------------------------------------------------


def test_straight_jump_over_a_face_to_face_pawn() -> None:
    game = Game.from_moves("e2 e8 e3 e7 e4 e6 e5")
    assert str(game) == FACE_TO_FACE
    # Seat 1 may jump to e4; the jump is not compulsory, the ordinary steps stay.
    assert pawn_moves(game) == ["d6", "e4", "e7", "f6"]
    game.play("e4")
    assert game.pawns == ["e5", "e4"]


def test_no_diagonal_landing_while_the_straight_jump_is_open() -> None:
    game = Game.from_moves("e2 e8 e3 e7 e4 e6 e5")
    assert str(game) == FACE_TO_FACE
    reason = (
        "cannot jump from e6 to {}: a diagonal landing is allowed only when the straight "
        "jump is blocked, and no wall may be crossed"
    )
    assert illegal(game, "d5") == reason.format("d5")
    assert illegal(game, "f5") == reason.format("f5")


def test_jumps_work_sideways_too() -> None:
    game = Game.from_moves("e2 e8 d2 e7 e2 e6 e3 d6 e4 d5 e5")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . 1 0 . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # Seat 1 on d5 jumps east over e5 to f5; not to e4 or e6.
    assert pawn_moves(game) == ["c5", "d4", "d6", "f5"]
    assert not game.is_legal("e4")
    assert not game.is_legal("e6")


def test_no_jump_across_a_wall_between_the_pawns() -> None:
    game = Game.from_moves("e2 e8 e3 e7 e4 e6 e5 e5h")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . 1 . . . .
                  ---
        5 . . . . 0 . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # e5 and e6 are adjacent but walled apart: no jump and no diagonal.
    assert pawn_moves(game) == ["d5", "e4", "f5"]
    assert illegal(game, "e7").startswith("cannot jump from e5 to e7")
    assert not game.is_legal("d6")
    assert not game.is_legal("f6")


def test_wall_behind_the_pawn_gives_both_side_landings() -> None:
    game = Game.from_moves("e2 e8 d2 e7 d3 e6 d4 e5 e4 e5h")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .
                  ---
        5 . . . . 1 . . . .

        4 . . . . 0 . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # Seat 0 on e4 faces e5; e5h blocks e6, so d5 and f5 are the landings.
    assert pawn_moves(game) == ["d4", "d5", "e3", "f4", "f5"]
    assert illegal(game, "e6").startswith("cannot jump from e4 to e6")
    game.play("d5")
    assert game.pawns == ["d5", "e5"]


def test_board_edge_behind_the_pawn_gives_both_side_landings() -> None:
    game = Game.from_moves("d1 e8 e1 e7 d1 e6 e1 e5 d1 e4 e1 e3 d1 e2 e1")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . 1 . . . .

        1 . . . . 0 . . . .
          a b c d e f g h i
        """
    )
    # Seat 1 on e2 faces e1, which is against the edge: d1 and f1 (both winning).
    assert pawn_moves(game) == ["d1", "d2", "e3", "f1", "f2"]
    game.play("f1")
    assert game.winner == 1


def test_side_landing_off_the_board_is_no_landing() -> None:
    game = Game.from_moves("b1 b5 a1 a5 b1 a4 a1 a3 b1 a2 a1", size=5)
    assert str(game) == dedent(
        """\
          a b c d e
        5 . . . . .

        4 . . . . .

        3 . . . . .

        2 1 . . . .

        1 0 . . . .
          a b c d e
        """
    )
    # Seat 1 on a2 jumps over a1 in the corner: only b1 is beside it on the board.
    assert pawn_moves(game) == ["a3", "b1", "b2"]


def test_wall_beside_the_pawn_removes_that_side_landing() -> None:
    game = Game.from_moves("e2 e8 e3 e7 e4 d7 e5 d6 e4h e6 d4v")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . 1 . . . .

        5 . . . .|0 . . . .
                 |---
        4 . . . .|. . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # Seat 1 on e6 faces e5: e4h blocks e4, d4v walls off d5, f5 is left.
    assert pawn_moves(game) == ["d6", "e7", "f5", "f6"]
    assert not game.is_legal("d5")
    assert not game.is_legal("e4")


def test_both_side_landings_walled_means_no_jump() -> None:
    game = Game.from_moves("e2 e8 e3 e7 e4 e6 d4v e5 e4v e5h")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .
                  ---
        5 . . . .|1|. . . .
                 | |
        4 . . . .|0|. . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    assert pawn_moves(game) == ["e3"]


def test_four_player_jump_over_one_pawn() -> None:
    game = Game.from_moves("e2 b5 d9 i4 e3 c5 e9 i5 e4 d5 d9 i4 e5", players=4)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . 2 . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . 1 0 . . . .

        4 . . . . . . . . 3

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    assert game.turn == 1
    assert pawn_moves(game) == ["c5", "d4", "d6", "f5"]


def test_four_player_pawn_behind_gives_side_landings_never_a_chain_jump() -> None:
    game = Game.from_moves("e2 b5 d9 h5 e3 c5 e9 g5 e4 d5 d9 f5 e5", players=4)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . 2 . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . 1 0 3 . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # Seat 1 on d5 faces seat 0 on e5 with seat 3 behind on f5: e4 or e6.
    assert pawn_moves(game) == ["c5", "d4", "d6", "e4", "e6"]
    assert illegal(game, "f5") == "f5 is occupied by seat 3's pawn"
    assert illegal(game, "g5") == "g5 is not one step or jump away from d5"


def test_four_player_side_landing_must_be_empty() -> None:
    game = Game.from_moves("e2 b5 e8 h5 e3 c5 e7 g5 e4 d5 e6 f5 e5", players=4)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . 2 . . . .

        5 . . . 1 0 3 . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # As above, but seat 2 stands on e6: e4 is the only landing.
    assert pawn_moves(game) == ["c5", "d4", "d6", "e4"]
    assert illegal(game, "e6") == "e6 is occupied by seat 2's pawn"


# -- walls ----------------------------------------------------------------------


def test_a_wall_spans_exactly_two_squares() -> None:
    game = Game.from_moves("e1h e8 f1 e7")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . 1 . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .
                  ---
        1 . . . . . 0 . . .
          a b c d e f g h i
        """
    )
    # e1h closes e1-e2 (see above) and f1-f2...
    assert pawn_moves(game) == ["e1", "g1"]
    game = Game.from_moves("e1h e8 f1 e7 g1 e8")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 1 . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .
                  ---
        1 . . . . . . 0 . .
          a b c d e f g h i
        """
    )
    # ...and nothing more: g1-g2 is open.
    assert pawn_moves(game) == ["f1", "g2", "h1"]


@pytest.mark.parametrize("wall", ["i1h", "a9h", "a9v", "i8v", "i9h"])
def test_a_wall_never_hangs_off_the_board(wall: str) -> None:
    # Wall anchors run a..h and 1..8 on the 9x9 board: a wall always covers two squares.
    game = Game()
    assert str(game) == OPENING
    with pytest.raises(NotationError):
        game.play(wall)
    assert state(game) == state(Game())


def test_horizontal_walls_overlap_when_their_anchors_differ_by_at_most_one() -> None:
    game = Game.from_moves("e3h e8")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 1 . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .
                  ---
        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . 0 . . . .
          a b c d e f g h i
        """
    )
    assert illegal(game, "e3h") == "wall e3h is already on the board"
    assert illegal(game, "d3h") == "wall d3h overlaps e3h"
    assert illegal(game, "f3h") == "wall f3h overlaps e3h"
    # Two columns away they meet end to end; other rows are other grooves.
    for wall in ["c3h", "g3h", "e2h", "e4h", "d4h"]:
        assert game.is_legal(wall), wall


def test_vertical_walls_overlap_when_their_anchors_differ_by_at_most_one() -> None:
    game = Game.from_moves("e3v e8")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 1 . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . .|. . . .
                   |
        3 . . . . .|. . . .

        2 . . . . . . . . .

        1 . . . . 0 . . . .
          a b c d e f g h i
        """
    )
    assert illegal(game, "e3v") == "wall e3v is already on the board"
    assert illegal(game, "e2v") == "wall e2v overlaps e3v"
    assert illegal(game, "e4v") == "wall e4v overlaps e3v"
    for wall in ["e1v", "e5v", "d3v", "f3v", "d2v"]:
        assert game.is_legal(wall), wall


def test_walls_may_not_cross_at_the_same_anchor() -> None:
    game = Game.from_moves("e3v e8")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 1 . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . .|. . . .
                   |
        3 . . . . .|. . . .

        2 . . . . . . . . .

        1 . . . . 0 . . . .
          a b c d e f g h i
        """
    )
    assert illegal(game, "e3h") == "wall e3h crosses e3v"
    game = Game.from_moves("e3h e8")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 1 . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .
                  ---
        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . 0 . . . .
          a b c d e f g h i
        """
    )
    assert illegal(game, "e3v") == "wall e3v crosses e3h"


def test_walls_may_meet_end_to_end_in_line_at_a_corner_and_in_a_t() -> None:
    game = Game()
    for wall in [
        "c5h",  # then e5h: end to end, in line
        "e5h",
        "e6v",  # its bottom end on e5h's midpoint: a T-junction
        "b4v",  # its top end on c5h's left end: a corner
    ]:
        assert game.is_legal(wall), wall
        game.play(wall)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . 1 . . . .

        8 . . . . . . . . .

        7 . . . . .|. . . .
                   |
        6 . . . . .|. . . .
              --- ---
        5 . .|. . . . . . .
             |
        4 . .|. . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . 0 . . . .
          a b c d e f g h i
        """
    )
    # The T the other way round: e5h's right end against f5v's midpoint.
    assert game.is_legal("f5v")


def test_a_wall_that_seals_the_opponent_in_is_illegal() -> None:
    game = Game.from_moves("d6v e8 f6v e7 e2 e6 e6h f6")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . .|. .|. . .
                 |---|
        6 . . . .|. 1|. . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . 0 . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # e5h would close the box around e6/f6: seat 1 would never reach row 1.
    assert illegal(game, "e5h") == "wall e5h would leave seat 1 no path to row 1"
    assert game.walls_left == [7, 10]  # the supply is not reduced
    assert game.is_legal("e4h")  # one row lower, the box stays open


def test_a_wall_that_seals_the_placer_in_is_illegal() -> None:
    game = Game.from_moves("d1v e8 e1v e7")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . 1 . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . .|.|. . . .
                 | |
        1 . . . .|0|. . . .
          a b c d e f g h i
        """
    )
    assert illegal(game, "e2h") == "wall e2h would leave seat 0 no path to row 9"
    assert game.is_legal("e3h")


def test_four_player_a_wall_may_seal_none_of_the_four() -> None:
    game = Game.from_moves("h5v h4h e8 i6", players=4)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 2 . . . .

        7 . . . . . . . . .

        6 . . . . . . . .|3
                         |
        5 1 . . . . . . .|.
                        ---
        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . 0 . . . .
          a b c d e f g h i
        """
    )
    # Seat 0 may not close the box around i5/i6, though seat 3 is neither the
    # placer nor the next to move.
    assert illegal(game, "h6h") == "wall h6h would leave seat 3 no path to column a"


def test_the_path_check_ignores_pawns() -> None:
    game = Game.from_moves("a4h e8 c4h e7 f4h e6 e2 e5")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . 1 . . . .
          --- ---   ---
        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . 0 . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # h4h leaves e4-e5 the only way through, and seat 1 stands in it: still legal.
    assert "h4h" in game.legal_moves()
    game.play("h4h")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . 1 . . . .
          --- ---   --- ---
        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . 0 . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    assert game.distances() == [7, 4]


def test_a_path_may_go_backwards() -> None:
    game = Game.from_moves("e2 e8 d2v e7 e2v e6")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . 1 . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . .|.|. . . .
                 | |
        2 . . . .|0|. . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # e3h closes the cup above seat 0: its way out is back down through e1.
    game.play("e3h")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . 1 . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .
                  ---
        3 . . . .|.|. . . .
                 | |
        2 . . . .|0|. . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    assert game.distances() == [10, 6]


# -- the end of the game --------------------------------------------------------


def test_reaching_the_goal_edge_wins_at_once() -> None:
    game = Game.from_moves("e2 f9 e3 f8 e4 f7 e5 f6 e6 f5 e7 f4 e8 f3")
    assert game.winner is None
    game.play("e9")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . 0 . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . 1 . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    assert game.winner == 0
    assert game.is_over
    assert game.legal_moves() == []
    assert game.legal_pawn_moves() == []
    assert game.legal_walls() == []
    # The board is locked: seat 1 gets no further move or wall.
    assert illegal(game, "f2") == "the game is over: seat 0 has won"
    assert illegal(game, "a1h") == "the game is over: seat 0 has won"


def test_any_square_of_the_goal_edge_wins() -> None:
    game = Game.from_moves("f1 d9 e1 d8 f1 d7 e1 d6 f1 d5 e1 d4 f1 d3 e1 d2 f1 d1")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . 1 . 0 . . .
          a b c d e f g h i
        """
    )
    assert game.winner == 1
    assert game.legal_moves() == []
    assert illegal(game, "e2") == "the game is over: seat 1 has won"


def test_four_player_start_and_goals() -> None:
    game = Game(players=4)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . 2 . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 1 . . . . . . . 3

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . 0 . . . .
          a b c d e f g h i
        """
    )
    assert game.pawns == ["e1", "a5", "e9", "i5"]
    assert game.walls_left == [5, 5, 5, 5]
    assert [game.variant.goal_name(seat) for seat in range(4)] == [
        "row 9",
        "column i",
        "row 1",
        "column a",
    ]
    assert game.distances() == [8, 8, 8, 8]


def test_four_player_turns_go_clockwise() -> None:
    game = Game(players=4)
    for seat, move in enumerate(["e2", "b5", "e8", "h5", "e3"]):
        assert game.turn == seat % 4
        game.play(move)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 2 . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . 1 . . . . . 3 .

        4 . . . . . . . . .

        3 . . . . 0 . . . .

        2 . . . . . . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    # Each seat stepped towards its own goal edge.
    assert game.distances() == [6, 7, 7, 7]
    assert game.turn == 1


def test_four_player_first_to_its_goal_edge_wins() -> None:
    record = (
        "1. d1 b5 d9 i4 2. e1 c5 e9 i3 3. d1 d5 d9 i4 4. e1 e5 e9 i3 "
        "5. d1 f5 d9 i4 6. e1 g5 e9 i3 7. d1 h5 d9 i4 8. e1 i5"
    )
    game = Game.from_moves(record, players=4)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . 2 . . . . .

        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . 1

        4 . . . . . . . . 3

        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . 0 . . . .
          a b c d e f g h i
        """
    )
    assert game.winner == 1  # seat 1 started on a5 and reached column i
    assert game.legal_moves() == []
    assert illegal(game, "i3") == "the game is over: seat 1 has won"


def test_four_player_a_seat_with_no_legal_action_passes() -> None:
    # Seat 1 spent its five walls; a4h and a5h box it in, seat 0 stands on b5
    # with seat 3 behind it (no straight jump) and both side landings walled.
    # Nothing is legal for seat 1, so its turn passes to seat 2 (our rule
    # where the seeds are silent: no position may leave a live game stuck).
    record = (
        "1. e2 a6 e8 h5 2. e3 a5 d8 g5 3. e4 a5h e8 f8h 4. e5 a4h d8 f5 "
        "5. d5 h1v e8 e5 6. c5 h3v d8 d5 7. b5 h6v e8 c5 8. b8h"
    )
    game = Game.from_moves(record, players=4)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .
            ---     ---
        8 . . . . 2 . . . .

        7 . . . . . . . .|.
                         |
        6 . . . . . . . .|.
          ---
        5 1 0 3 . . . . . .
          ---
        4 . . . . . . . .|.
                         |
        3 . . . . . . . .|.

        2 . . . . . . . .|.
                         |
        1 . . . . . . . .|.
          a b c d e f g h i
        """
    )
    assert (game.turn, game.walls_left[1]) == (2, 0)
    assert game.legal_moves() != []
    game.undo()
    assert game.turn == 0
    game.play("b8h")
    assert game.turn == 2


# -- undo -----------------------------------------------------------------------


def test_undo_restores_everything() -> None:
    record = parse_record("d1 e8 e1 e7 a3h e6 d1 c6v e1 e5 d1 e4 e1 e3 d1 e2 e1 f1")
    game = Game()
    before = []
    for move in record:
        before.append(state(game))
        game.play(move)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . . . . . .

        7 . . .|. . . . . .
               |
        6 . . .|. . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .
          ---
        3 . . . . . . . . .

        2 . . . . . . . . .

        1 . . . . 0 1 . . .
          a b c d e f g h i
        """
    )
    assert game.winner == 1
    for move in reversed(record):
        assert game.undo() == move
        assert state(game) == before.pop()
    assert str(game) == OPENING
    with pytest.raises(IndexError):
        game.undo()


# -- illegal moves change nothing -----------------------------------------------


@pytest.mark.parametrize(
    ("move", "error"),
    [
        ("e6", IllegalMove),  # two squares
        ("d7", IllegalMove),  # diagonal
        ("e2", IllegalMove),  # seat 0's square, and far away
        ("e3h", IllegalMove),  # already there
        ("f3h", IllegalMove),  # overlaps
        ("e3v", IllegalMove),  # crosses
        ("e10", NotationError),
        ("i1h", NotationError),
        ("e3x", NotationError),
        ("E2", NotationError),
    ],
)
def test_illegal_moves_leave_the_game_unchanged(move: str, error: type[ValueError]) -> None:
    game = Game.from_moves("e2 e8 e3h")
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . . . . . .

        8 . . . . 1 . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .
                  ---
        3 . . . . . . . . .

        2 . . . . 0 . . . .

        1 . . . . . . . . .
          a b c d e f g h i
        """
    )
    before = state(game)
    with pytest.raises(error):
        game.play(move)
    assert state(game) == before
    assert not game.is_legal(move)


# -- variants -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "diagram"),
    [
        (
            5,
            """\
              a b c d e
            5 . . 1 . .

            4 . . . . .

            3 . . . . .

            2 . . . . .

            1 . . 0 . .
              a b c d e
            """,
        ),
        (
            7,
            """\
              a b c d e f g
            7 . . . 1 . . .

            6 . . . . . . .

            5 . . . . . . .

            4 . . . . . . .

            3 . . . . . . .

            2 . . . . . . .

            1 . . . 0 . . .
              a b c d e f g
            """,
        ),
        (
            11,
            """\
               a b c d e f g h i j k
            11 . . . . . 1 . . . . .

            10 . . . . . . . . . . .

             9 . . . . . . . . . . .

             8 . . . . . . . . . . .

             7 . . . . . . . . . . .

             6 . . . . . . . . . . .

             5 . . . . . . . . . . .

             4 . . . . . . . . . . .

             3 . . . . . . . . . . .

             2 . . . . . . . . . . .

             1 . . . . . 0 . . . . .
               a b c d e f g h i j k
            """,
        ),
    ],
)
def test_board_sizes(size: int, diagram: str) -> None:
    game = Game(size=size)
    assert str(game) == dedent(diagram)
    assert game.walls_left == [10, 10]
    assert game.distances() == [size - 1, size - 1]
    assert len(game.legal_pawn_moves()) == 3
    assert len(game.legal_walls()) == 2 * (size - 1) ** 2
    assert len(game.legal_moves()) == 3 + 2 * (size - 1) ** 2


def test_eleven_by_eleven_uses_columns_to_k_and_rows_to_11() -> None:
    game = Game.from_moves("j10h f10", size=11)
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

         2 . . . . . . . . . . .

         1 . . . . . 0 . . . . .
           a b c d e f g h i j k
        """
    )
    assert game.walls == ["j10h"]
    assert "j10v" not in game.legal_moves()  # crosses j10h
    assert "a10v" in game.legal_moves()
    with pytest.raises(NotationError):
        game.play("k10h")  # wall columns run a..j on the 11x11 board


def test_a_five_by_five_game_is_won_the_same_way() -> None:
    game = Game.from_moves("c2 c4 c3 c2 c4 c1", size=5)
    assert str(game) == dedent(
        """\
          a b c d e
        5 . . . . .

        4 . . 0 . .

        3 . . . . .

        2 . . . . .

        1 . . 1 . .
          a b c d e
        """
    )
    # Seat 1 jumped c3 straight from c4 to c2, then stepped onto row 1.
    assert game.winner == 1


@pytest.mark.parametrize(
    ("players", "walls", "expected"),
    [(2, None, [10, 10]), (2, 3, [3, 3]), (2, 0, [0, 0]), (4, None, [5, 5, 5, 5]), (4, 7, [7] * 4)],
)
def test_walls_per_player(players: int, walls: int | None, expected: list[int]) -> None:
    assert Game(players=players, walls=walls).walls_left == expected


def test_a_game_without_walls_has_only_pawn_moves() -> None:
    game = Game(walls=0)
    assert str(game) == OPENING
    assert game.legal_moves() == game.legal_pawn_moves() == ["d1", "f1", "e2"]
    assert illegal(game, "a1h") == "seat 0 has no walls left"


def test_the_walls_parameter_runs_dry() -> None:
    game = Game.from_moves("a1h h8h", walls=1)
    assert str(game) == dedent(
        """\
          a b c d e f g h i
        9 . . . . 1 . . . .
                        ---
        8 . . . . . . . . .

        7 . . . . . . . . .

        6 . . . . . . . . .

        5 . . . . . . . . .

        4 . . . . . . . . .

        3 . . . . . . . . .

        2 . . . . . . . . .
          ---
        1 . . . . 0 . . . .
          a b c d e f g h i
        """
    )
    assert game.walls_left == [0, 0]
    assert illegal(game, "c1h") == "seat 0 has no walls left"
    assert game.legal_moves() == ["d1", "f1", "e2"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"size": 4},
        {"size": 6},
        {"size": 3},
        {"size": 13},
        {"players": 1},
        {"players": 3},
        {"walls": -1},
        {"walls": 31},
    ],
)
def test_unsupported_variants_are_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="must be"):
        Game(**kwargs)
