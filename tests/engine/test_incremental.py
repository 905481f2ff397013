"""What the engine keeps up to date move by move equals what it works out from scratch.

The legal walls: ``Game`` keeps, per seat, the walls that would seal its way to its
goal, and after a pawn step rechecks only the walls closing the edge the pawn crossed
(``_update_sealing``).
The walls on the board, in notation: each new one is inserted where it goes.
The distances: per seat, the frontiers of a breadth-first search from its goal edge,
kept until a wall changes them (``engine.board.field_distance``, ``field_cut``). These
tests play random games, asking for both after every action (so what is kept is used and
updated, never dropped), and compare them with a new game replaying the same actions,
which works them out once at the end, and on small boards with the reference model of
the rules (``test_properties.Reference``).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game
from tests.engine.test_properties import CONFIGS, Reference


def from_scratch(actions: list[str], game: Game) -> Game:
    variant = game.variant
    return Game.from_moves(actions, variant.players, variant.size, variant.walls)


def check(game: Game, actions: list[str]) -> None:
    fresh = from_scratch(actions, game)
    assert game.legal_wall_mask() == fresh.legal_wall_mask(), actions
    assert game.legal_walls() == fresh.legal_walls(), actions
    assert game.distances() == fresh.distances(), actions
    assert sorted(game._wall_parts()) == sorted(fresh._wall_parts()), actions
    geo = game._geo  # the wall list is kept too: name the walls from their masks
    named = geo.slot_names(game._h_walls, True) + geo.slot_names(game._v_walls, False)
    assert game.walls == fresh.walls == named, actions
    if game.variant.size <= 7 and not game.is_over:
        reference, walls_left = Reference(game), game.walls_left[game.turn]
        assert set(game.legal_walls()) == reference.legal_walls(walls_left), actions
        distances = [reference.distance(seat) for seat in range(game.variant.players)]
        assert game.distances() == distances, actions


def play_one(game: Game, actions: list[str], kind: int, pick: int) -> None:
    """A wall (kind 0), a pawn move (1, 2 and 3: walls come early, steps after), an undo
    (4) or, in a four-player game, a seat retiring (5)."""
    walls, pawn_moves = game.legal_walls(), game.legal_pawn_moves()
    seats = [seat for seat in range(game.variant.players) if not game.is_retired(seat)]
    if kind == 4 and actions:
        assert game.undo() == actions.pop()
    elif kind == 5 and game.variant.players == 4 and len(seats) > 2:
        game.retire(seats[pick % len(seats)])
        actions.append(f"retire {seats[pick % len(seats)]}")
    elif walls and (kind == 0 or not pawn_moves):
        actions.append(walls[pick % len(walls)])
        game.play(actions[-1])
    elif pawn_moves:
        actions.append(pawn_moves[pick % len(pawn_moves)])
        game.play(actions[-1])


@pytest.mark.parametrize(("players", "size"), CONFIGS)
@settings(max_examples=25, deadline=None)
@given(
    script=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 10**6)), max_size=80),
)
def test_kept_walls_and_distances_equal_the_ones_from_scratch(
    players: int, size: int, script: list[tuple[int, int]]
) -> None:
    game, actions = Game(players, size), list[str]()
    check(game, actions)
    for kind, pick in script:
        if game.is_over or not game.legal_moves():
            break
        play_one(game, actions, kind, pick)
        check(game, actions)


def test_random_games_reach_positions_where_steps_change_the_sealing_walls() -> None:
    # The property above can only fail if its games reach positions where walls seal
    # someone off and a pawn step changes which: count those steps over fixed games.
    rng, sealed, changed = random.Random(20), 0, 0
    for _ in range(40):
        game, actions = Game(2, 5), list[str]()
        while not game.is_over and len(actions) < 60:
            kind = 0 if len(actions) < 8 and rng.random() < 0.7 else rng.choice((1, 2, 3))
            seat, before = game.turn, game._sealing[game.turn]
            play_one(game, actions, kind, rng.randrange(10**6))
            check(game, actions)
            after = game._sealing[seat]
            if kind != 0 and before is not None and after is not None:
                sealed += before != (0, 0)
                changed += after != before
    assert sealed > 100, sealed
    assert changed > 10, changed


def test_a_wall_keeps_the_distance_fields_it_leaves_as_they_were() -> None:
    game, actions = Game(), ["a3v", "e4h"]
    assert game.distances() == [8, 8]
    game.play(actions[0])  # along both ways to the goal, across neither
    assert None not in game._fields
    assert game.distances() == [8, 8]
    game.play(actions[1])  # across both
    assert game._fields == [None, None]
    assert game.distances() == [9, 9]
    check(game, actions)
