"""Evaluation and game analysis (``engine.ai.evaluation``)."""

from __future__ import annotations

import pytest

from engine import Game
from engine.ai.evaluation import (
    DEPTH,
    GAME_NODES,
    MARKS,
    MIN_NODES,
    NODES,
    Evaluation,
    MoveReview,
    analyse_game,
    evaluate,
    nodes_per_move,
    review_move,
    settle,
    win_probability,
)
from engine.notation import COLUMNS

BLUNDER_GAME = "c2 d5 c3 d4 c4 b4h e4 d4h c4 d3 b4 d2 d1h c2".split()
"""5x5, two walls each: seat 1 stands on c2, one step from row 1, and seat 0 (to
move, one wall left) wins by walling it off with b1h."""


def mirror(move: str, size: int) -> str:
    """A move reflected left to right (column a <-> the last column)."""
    column, rest = move[0], move[1:]
    index = COLUMNS.index(column)
    if rest[-1] in "hv":  # a wall slot spans this column and the next
        return COLUMNS[size - 2 - index] + rest
    return COLUMNS[size - 1 - index] + rest


@pytest.mark.parametrize(
    "record",
    [
        "e2 e8 e3 e7",
        "e2 e8 e3 e7 e4 e6 e3h d7h d2h f7h d4",
        "e2 e8 e3h d8 d2 c8 b7h c7v e2v",
        "e2 e8 d2 e7 c2 e6 f6h d6",
    ],
)
def test_evaluation_is_symmetric_under_mirroring(record: str) -> None:
    moves = record.split()
    plain = evaluate(moves)
    mirrored = evaluate([mirror(move, 9) for move in moves])
    assert Game.from_moves([mirror(m, 9) for m in moves]).distances() == (
        Game.from_moves(moves).distances()
    )
    assert mirrored.score == plain.score
    assert mirrored.win_probability == plain.win_probability
    # The best moves may differ between equal moves, but not in value.
    flipped = [mirror(move, 9) for move in moves]
    assert evaluate([*flipped, mirror(plain.best, 9)]).score == pytest.approx(
        evaluate([*moves, plain.best]).score
    )


def test_one_step_from_winning_is_won() -> None:
    # Seat 0 on e8 (one step from row 9) is to move.
    record = "e2 d9 e3 c9 e4 b9 e5 a9 e6 a8 e7 a7 e8 a6".split()
    game = Game.from_moves(record)
    assert game.turn == 0
    assert game.distance(0) == 1
    evaluation = evaluate(record)
    assert evaluation.win_in == 1
    assert evaluation.win_probability == 1.0
    assert evaluation.best == "e9"
    assert evaluation.pv == ("e9",)
    assert evaluation.score > 0


def test_one_step_from_losing_with_no_defence_is_lost() -> None:
    # As above, but seat 1 has no walls: whatever it plays, e9 follows.
    record = "e2 d9 e3 c9 e4 b9 e5 a9 e6 a8 e7 a7 e8".split()
    evaluation = evaluate(record, walls=0)
    assert evaluation.win_in is not None
    assert evaluation.win_in < 0
    assert evaluation.win_probability == 0.0


def test_planted_blunder_is_marked_and_the_winning_wall_named() -> None:
    record = [*BLUNDER_GAME, "b3", "c1"]  # b3 lets seat 1 walk in
    assert Game.from_moves(record, 2, 5, 2).winner == 1
    before = evaluate(BLUNDER_GAME, size=5, walls=2)
    assert before.best == "b1h"
    assert before.win_in is not None
    assert before.win_in > 0
    analysis = analyse_game(record, size=5, walls=2)
    review = analysis.moves[len(BLUNDER_GAME)]
    assert (review.move, review.seat) == ("b3", 0)
    assert review.mark == "blunder"
    assert review.before.best == "b1h"
    assert review.loss == 1.0
    assert review.win_probability_after == 0.0
    assert analysis.summaries[0].marks["blunder"] >= 1
    # The winning move itself, and the engine's own choices, lose nothing.
    assert analysis.moves[-1].loss == 0.0
    assert analysis.moves[-1].mark is None
    assert analysis.final is None


def test_the_blunder_says_how_it_loses_and_a_won_line_ends_with_the_win() -> None:
    """The line after b3 is seat 1's walk-in, and the line after the better b1h reaches
    seat 0's goal: both stopped one move short, where the search answers a win in one
    before its table (b3's line was empty)."""
    record = [*BLUNDER_GAME, "b3", "c1"]
    review = analyse_game(record, size=5, walls=2).moves[len(BLUNDER_GAME)]
    assert review.pv_after == ("c1",)
    assert review.before.pv == ("b1h", "b2", "a4", "a2", "a5")
    assert review.before.win_in == len(review.before.pv)


LINE_GAMES = [
    (" ".join([*BLUNDER_GAME, "b3", "c1"]), 5, 2),
    ("e7h e8 d4h f8 e2 g8 g7h h8 e3 i8 h3h i7 g1h h7 e4 g7 f4h h7 d4", 9, None),
    ("c2 c4 c3 b4 b3 b5 a3 a5 a4 b5 a5", 5, 0),  # no walls: the exact endgame's lines
]


@pytest.mark.parametrize(("record", "size", "walls"), LINE_GAMES)
def test_the_line_after_each_move_is_legal_and_ends_only_with_the_game(
    record: str, size: int, walls: int | None
) -> None:
    moves = record.split()
    analysis = analyse_game(moves, size=size, walls=walls)
    for review in analysis.moves:
        game = Game.from_moves(moves[: review.ply + 1], 2, size, walls)
        assert bool(review.pv_after) != game.is_over, review
        for move in review.pv_after:
            assert game.is_legal(move), (review, move)
            game.play(move)
        if review.move == review.before.best and review.score_after == review.before.score:
            assert review.pv_after == review.before.pv[1:]  # the same line as the best move's


def test_playing_the_best_move_everywhere_marks_nothing() -> None:
    game = Game(size=5, walls=1)
    while not game.is_over:
        game.play(evaluate(game.moves, size=5, walls=1).best)
    analysis = analyse_game(game.moves, size=5, walls=1)
    assert all(review.mark is None and review.loss == 0.0 for review in analysis.moves)
    assert [s.average_loss for s in analysis.summaries] == [0.0, 0.0]
    assert sum(s.moves for s in analysis.summaries) == game.ply


def test_exact_endgame_answers_once_the_walls_are_gone() -> None:
    evaluation = evaluate("c2 c4 c3", size=5, walls=0)
    assert evaluation.exact
    assert evaluation.win_in is not None
    assert evaluation.win_in > 0
    assert evaluation.win_probability == 1.0


def test_win_probability_is_a_monotone_curve_through_a_half() -> None:
    assert win_probability(0.0) == 0.5
    assert win_probability(3.0) > win_probability(1.0) > 0.5 > win_probability(-1.0)
    assert win_probability(2.0) + win_probability(-2.0) == pytest.approx(1.0)


def test_marks_thresholds_are_ordered() -> None:
    thresholds = [threshold for _, threshold in MARKS]
    assert thresholds == sorted(thresholds, reverse=True)


def test_bad_records_and_finished_games_are_refused() -> None:
    with pytest.raises(ValueError, match="occupied"):
        evaluate("e2 e8 e3 e7 e4 e6 e5 e5")
    with pytest.raises(ValueError, match="over"):
        evaluate([*BLUNDER_GAME, "b3", "c1"], size=5, walls=2)


def test_a_game_drawn_out_costs_no_more_to_analyse_than_a_long_real_one() -> None:
    """Each move of a game of up to 40 moves gets the whole budget; a longer one (players
    stepping to and fro on purpose, say) shares the same total, down to a floor."""
    assert nodes_per_move(1) == nodes_per_move(40) == NODES
    for moves in (41, 120, 300, 399):
        assert nodes_per_move(moves) * moves <= GAME_NODES
        assert nodes_per_move(moves) >= MIN_NODES
    assert nodes_per_move(100_000) == MIN_NODES


def test_a_move_review_stays_within_its_node_cap() -> None:
    # Walls across the board, then pawns stepping to and fro: a position that takes
    # some 13,000 nodes to search to depth 4 (as a long game made to be analysed has).
    record = ["a3h", "c3h", "e3h", "g3h", "b6h", "d6h", "f6h", "h6h", "e2", "e8", "e1", "e9"]
    assert review_move(record, 9).before.nodes > 4 * MIN_NODES
    assert review_move(record, 9, nodes=MIN_NODES).before.nodes <= MIN_NODES


CUT_GAME = "e2 d5h f2h e3h d2 b8h c2 d9 c3 d8 b5h d7 c4".split()
"""9x9, seat 1 to move: with 2,000 nodes (a move's share in a game of 400 moves) the search
finishes depth 3 but not depth 4. d6 is depth 3's best move; the unfinished depth-4
iteration preferred a4v and left in the table d6's depth-4 score, which the review read as
the played d6's: d6 was marked an inaccuracy, "better a4v", against its own shallower score."""


def test_a_search_cut_by_the_node_cap_judges_both_moves_at_one_depth() -> None:
    review = review_move([*CUT_GAME, "d6"], len(CUT_GAME), nodes=MIN_NODES)
    depth = review.before.depth
    assert depth < DEPTH  # the node cap cut the last iteration
    # The best move reported and the move played are both scored to that depth: as a
    # search of the position after each, one ply shallower, from the opponent's view.
    after_best = evaluate([*CUT_GAME, review.before.best], depth=depth - 1, nodes=10**7)
    after_played = evaluate([*CUT_GAME, "d6"], depth=depth - 1, nodes=10**7)
    assert review.before.score == -after_best.score
    assert review.score_after == -after_played.score
    assert review.before.best == "d6"
    assert (review.loss, review.mark) == (0.0, None)


STEP_GAMES = {
    # "f8 ?!, better h2h" at depth 4 (seat 0 on f7, seat 1 on i3, two steps each, 7 and 8
    # walls): f8 against h2h is 2.0 against 5.3 steps at depth 4, 5.3 against 8.4 at depth 5,
    # 7.6 against 8.4 at depths 7 and 8: no mark.
    "f8": "e2 d5h e3 e8 f3 f8 e4h f7 f2h g7 g3 h7 g4 h6 g5 h5 g3h i5 g6 g8h f6 i4 f7 i3",
    # "d8 ??, better e3v" at depth 4 (-3.8 against 3.8 steps); 4.2 both at depth 5, d8
    # better at depth 7 (3.7 against 1.4), -0.7 against -0.3 at depth 8: no mark.
    "d8": "e7h e8 d4h f8 e2 g8 g7h h8 e3 i8 h3h i7 g1h h7 e4 g7 f4h h7 d4 h6 c4 h5 c5 h4 c6 "
    "g4 c5v g3 c7 f3 f2h b7h d7 g6h",
}


@pytest.mark.parametrize("step", sorted(STEP_GAMES))
def test_a_step_next_to_the_goal_is_judged_one_ply_deeper(step: str) -> None:
    """A step that puts the mover one step from its goal while the opponent holds walls: at
    depth 4 the opponent's wall in front of the pawn ends every line unanswered, and such
    steps were marked far more harshly than deeper searches judge them (found auditing an
    outside reviewer's "c8 ?!, better h2h")."""
    record = STEP_GAMES[step].split()
    game = Game.from_moves(record)
    assert game.distance(game.turn) == 2
    game.play(step)
    assert game.distance(1 - game.turn) == 1
    review = review_move([*record, step], len(record))
    assert review.before.depth == DEPTH + 1
    # Both moves scored one ply deeper: as searches of the position after each to DEPTH.
    after_best = evaluate([*record, review.before.best], depth=DEPTH, nodes=10**7)
    after_step = evaluate([*record, step], depth=DEPTH, nodes=10**7)
    assert review.before.score == -after_best.score
    assert review.score_after == -after_step.score
    assert review.mark is None


def test_a_step_next_to_the_goal_that_is_worse_deeper_too_keeps_its_mark() -> None:
    # Seat 0 on f7, seat 1 on a3 with all ten walls: f8 against a1h is -0.1 against 1.7 steps
    # at depth 8, an inaccuracy, as at depths 4 to 7.
    record = "e2 e8 d6h f8 e3 f7 f3 f6 f4 f5 f1h f3 f5 e3 d2h d3 f6 c3 b2h b3 f7 a3".split()
    review = review_move([*record, "f8"], len(record))
    assert review.before.depth == DEPTH + 1
    assert (review.before.best, review.mark) == ("a1h", "inaccuracy")


def reviewed(ply: int, move: str, before: float, after: float, best: str) -> MoveReview:
    """A review as a search of limited depth made it: the position worth ``before`` to the
    mover, their move ``after``."""
    evaluation = Evaluation(
        score=before,
        win_probability=win_probability(before),
        win_in=None,
        best=best,
        pv=(best,),
        depth=DEPTH,
        nodes=1,
        exact=False,
    )
    return MoveReview(
        ply=ply,
        seat=ply % 2,
        move=move,
        before=evaluation,
        score_after=after,
        win_probability_after=round(win_probability(after), 4),
        pv_after=("x1",),
        loss=0.0,
        mark=None,
    )


def test_a_move_into_a_loss_the_reply_found_is_marked() -> None:
    """An outside review: 34 % for twelve moves, then 100 % for the computer one move later,
    and no move marked. The reply's search saw what the move's did not."""
    moves = [
        reviewed(0, "b2", -1.9, -1.9, "b2"),  # seat 0 sees nothing wrong
        reviewed(1, "b1h", 1.9, 20.0, "c4"),  # seat 1 finds a forced win: b1h
    ]
    first, second = settle(moves)
    assert (second.before.score, second.before.best, second.mark) == (20.0, "b1h", None)
    assert second.before.pv == ("b1h", "x1")
    assert first.score_after == -20.0
    assert first.pv_after == ("b1h", "x1")  # how it goes wrong: the reply that found it
    assert first.mark is None  # it was the search's best: nothing better was known
    # Had the search preferred another move there, b2 gave the game away: a blunder.
    first, _ = settle([reviewed(0, "b2", -1.9, -1.9, "c3"), moves[1]])
    assert first.mark == "blunder"
    assert first.loss == pytest.approx(win_probability(-1.9) - win_probability(-20.0), abs=1e-3)


@pytest.mark.parametrize("record", ["e2 e8 e3 e7 e4 e6 e3h d7h d2h f7h d4", " ".join(BLUNDER_GAME)])
def test_settled_reviews_agree_from_move_to_move(record: str) -> None:
    moves = record.split()
    size = 5 if record.startswith("c2") else 9
    analysis = analyse_game(moves, size=size, walls=2 if size == 5 else None)
    for review, reply in zip(analysis.moves, analysis.moves[1:], strict=False):
        assert review.before.score >= review.score_after  # the move played was one to make
        assert review.score_after <= -reply.before.score  # worth no more than the reply saw
