"""Property tests: random legal games keep the engine's invariants.

Hypothesis plays random legal games (two and four players, boards of 5, 7 and
9 squares) and after every ply checks the position against the rules, using a
small reference model written here from the rules alone (plain coordinates and
breadth-first search, none of the engine's bitboards or shortcuts):

- every player still has a path, and ``distances()`` are the true ones;
- walls on the board plus walls in hand is the starting supply, and no two
  walls on the board overlap or cross;
- pawns stand on distinct squares;
- the legal pawn moves and the legal walls are exactly the reference ones;
- every legal move can be played and undone, leaving the game as it was;
- every other square or wall slot is refused with ``IllegalMove`` and junk
  with ``NotationError``, and a refused move changes nothing;
- a four-player seat that retires is skipped and owed no path any more;
- a game biased towards walking a shortest path ends within a bound;
- ``Game.from_moves(game.record())`` (plain or numbered) replays the game.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game, IllegalMove, Move, NotationError, parse_move
from engine.notation import COLUMNS

Square = tuple[int, int]
Edge = frozenset[Square]

CONFIGS = [
    pytest.param(2, 5, id="2p-5x5"),
    pytest.param(2, 7, id="2p-7x7"),
    pytest.param(2, 9, id="2p-9x9"),
    pytest.param(4, 5, id="4p-5x5"),
    pytest.param(4, 7, id="4p-7x7"),
    pytest.param(4, 9, id="4p-9x9"),
]

DIRECTIONS = [(0, 1), (1, 0), (0, -1), (-1, 0)]


# -- a reference model of the rules ---------------------------------------------


def square_names(size: int) -> list[str]:
    return [f"{COLUMNS[c]}{r + 1}" for r in range(size) for c in range(size)]


def wall_names(size: int) -> list[str]:
    slots = range(size - 1)
    return [f"{COLUMNS[c]}{r + 1}{o}" for o in "hv" for r in slots for c in slots]


def closed_edges(wall: Move) -> list[Edge]:
    """The two square-to-square edges a wall closes."""
    c, r = wall.col, wall.row
    if wall.orientation == "h":
        return [frozenset({(c, r), (c, r + 1)}), frozenset({(c + 1, r), (c + 1, r + 1)})]
    return [frozenset({(c, r), (c + 1, r)}), frozenset({(c, r + 1), (c + 1, r + 1)})]


def conflict(a: Move, b: Move) -> bool:
    """Do two walls overlap (same groove, anchors at most one apart) or cross?"""
    if a.orientation != b.orientation:
        return (a.col, a.row) == (b.col, b.row)
    if a.orientation == "h":
        return a.row == b.row and abs(a.col - b.col) <= 1
    return a.col == b.col and abs(a.row - b.row) <= 1


class Reference:
    """The position as the rules describe it, read from the game's public API."""

    def __init__(self, game: Game) -> None:
        self.size = game.variant.size
        self.players = game.variant.players
        self.walls = [parse_move(name, self.size) for name in game.walls]
        self.closed = {edge for wall in self.walls for edge in closed_edges(wall)}
        self.pawns = [self.square(name) for name in game.pawns]
        self.seats = [seat for seat in range(self.players) if seat not in game.retired]
        """The seats still playing: a retired seat's pawn stays, but is owed no path."""

    def square(self, name: str) -> Square:
        move = parse_move(name, self.size)
        return move.col, move.row

    def name(self, square: Square) -> str:
        return f"{COLUMNS[square[0]]}{square[1] + 1}"

    def on_board(self, square: Square) -> bool:
        return 0 <= square[0] < self.size and 0 <= square[1] < self.size

    def step(self, square: Square, direction: Square, closed: set[Edge]) -> Square | None:
        """The neighbour in ``direction`` unless the edge or a wall is in the way."""
        target = (square[0] + direction[0], square[1] + direction[1])
        if not self.on_board(target) or frozenset({square, target}) in closed:
            return None
        return target

    def on_goal(self, seat: int, square: Square) -> bool:
        last = self.size - 1
        col, row = square
        if self.players == 2:
            return row == (last, 0)[seat]
        return (row == last, col == last, row == 0, col == 0)[seat]

    def path(self, seat: int, closed: set[Edge]) -> list[Edge] | None:
        """The edges of one shortest way to the seat's goal edge, pawns ignored.

        None when walls seal the seat off.
        """
        start = self.pawns[seat]
        came_from: dict[Square, Square | None] = {start: None}
        queue = deque([start])
        while queue:
            square = queue.popleft()
            if self.on_goal(seat, square):
                edges = []
                while (previous := came_from[square]) is not None:
                    edges.append(frozenset({previous, square}))
                    square = previous
                return edges
            for direction in DIRECTIONS:
                target = self.step(square, direction, closed)
                if target is not None and target not in came_from:
                    came_from[target] = square
                    queue.append(target)
        return None

    def distance(self, seat: int) -> int:
        path = self.path(seat, self.closed)
        return -1 if path is None else len(path)

    def pawn_moves(self, seat: int) -> set[str]:
        """Steps, straight jumps over one pawn, and side landings when those are blocked."""
        here, occupied = self.pawns[seat], set(self.pawns)
        moves = set()
        for dx, dy in DIRECTIONS:
            near = self.step(here, (dx, dy), self.closed)
            if near is None:
                continue
            if near not in occupied:
                moves.add(near)
                continue
            behind = self.step(near, (dx, dy), self.closed)
            if behind is not None and behind not in occupied:
                moves.add(behind)
                continue
            for side in ((dy, dx), (-dy, -dx)):
                landing = self.step(near, side, self.closed)
                if landing is not None and landing not in occupied:
                    moves.add(landing)
        return {self.name(square) for square in moves}

    def legal_walls(self, walls_left: int) -> set[str]:
        """Every wall slot that neither overlaps nor crosses a wall nor seals anyone off."""
        if not walls_left:
            return set()
        paths = [self.path(seat, self.closed) or [] for seat in range(self.players)]
        legal = set()
        for name in wall_names(self.size):
            wall = parse_move(name, self.size)
            if any(conflict(wall, other) for other in self.walls):
                continue
            edges = closed_edges(wall)
            closed = self.closed | set(edges)
            # A seat keeps its path unless the wall closes one of its edges.
            if all(
                not set(edges) & set(path) or self.path(seat, closed) is not None
                for seat, path in enumerate(paths)
                if seat in self.seats
            ):
                legal.add(name)
        return legal


# -- checking a position ------------------------------------------------------------


def snapshot(game: Game) -> tuple[object, ...]:
    return (str(game), game.moves, game.turn, game.winner, game.walls_left, game.pawns)


def quick(game: Game) -> tuple[object, ...]:
    # Distances and walls are cached by the engine: comparing them after play and
    # undo checks that the caches follow the position.
    return (
        game.pawns,
        game.walls,
        game.walls_left,
        game.turn,
        game.winner,
        game.ply,
        game.distances(),
    )


def check_invariants(game: Game, full_walls: bool) -> None:
    """Check the position against the reference model; ``full_walls`` checks every wall slot."""
    ref = Reference(game)
    variant = game.variant

    # Every player has a path, and the engine measures it right.
    distances = [game.distances()[seat] for seat in ref.seats]
    assert all(isinstance(d, int) and d >= 0 for d in distances)
    assert distances == [ref.distance(seat) for seat in ref.seats]
    assert game.turn in ref.seats

    # The wall supply is conserved, and walls never overlap or cross.
    assert all(left >= 0 for left in game.walls_left)
    assert sum(game.walls_left) + len(game.walls) == variant.players * variant.walls
    assert len(set(game.walls)) == len(game.walls)
    for i, a in enumerate(ref.walls):
        for b in ref.walls[i + 1 :]:
            assert not conflict(a, b), (a, b)

    # Pawns stand on distinct squares; a winner stands on its goal edge.
    assert len(set(game.pawns)) == variant.players
    if game.is_over:
        assert game.winner is not None
        assert ref.on_goal(game.winner, ref.pawns[game.winner])
        assert game.legal_moves() == []
        return
    assert not any(ref.on_goal(seat, ref.pawns[seat]) for seat in range(variant.players))

    # The legal moves are the reference ones.
    pawn_moves, walls = game.legal_pawn_moves(), game.legal_walls()
    assert game.legal_moves() == pawn_moves + walls
    assert len(set(pawn_moves)) == len(pawn_moves)
    assert set(pawn_moves) == ref.pawn_moves(game.turn)
    if variant.players == 2:
        assert pawn_moves  # two pawns can never box each other in
    if full_walls:
        assert set(walls) == ref.legal_walls(game.walls_left[game.turn])

    # Legal moves play and undo cleanly (drawing the board after each one would
    # take most of the time: the drawing and legal moves are compared at the end).
    legal = set(pawn_moves + walls)
    before, position = snapshot(game), quick(game)
    for move in pawn_moves + walls:
        game.play(move)
        assert game.moves[-1] == move
        assert quick(game) != position
        assert game.undo() == move
        assert quick(game) == position
    assert snapshot(game) == before
    assert game.legal_moves() == pawn_moves + walls
    for candidate in square_names(variant.size) + wall_names(variant.size):
        assert game.is_legal(candidate) == (candidate in legal), candidate


def refuses(game: Game, move: str, error: type[ValueError]) -> None:
    before, legal = snapshot(game), game.legal_moves()
    with pytest.raises(error):
        game.play(move)
    assert snapshot(game) == before
    assert game.legal_moves() == legal


def check_record_round_trip(game: Game) -> None:
    if game.retired:
        return  # a record holds moves only, not who left the game
    players, size, walls = game.variant.players, game.variant.size, game.variant.walls
    for record in (game.record(), game.record(numbered=True)):
        again = Game.from_moves(record, players, size, walls)
        assert again.moves == game.moves
        assert str(again) == str(game)
        assert again.winner == game.winner
        assert again.walls_left == game.walls_left


# -- choosing moves -----------------------------------------------------------------


def towards_goal(game: Game) -> list[str]:
    """The pawn moves that bring the mover nearest its goal edge."""
    seat, best, result = game.turn, 10**9, []
    for move in game.legal_pawn_moves():
        game.play(move)
        distance = game.distance(seat)
        game.undo()
        if distance < best:
            best, result = distance, [move]
        elif distance == best:
            result.append(move)
    return result


def plies(game: Game, limit: int) -> Iterator[int]:
    """Ply numbers until the game ends, gets stuck or reaches ``limit``."""
    for ply in range(limit):
        if game.is_over or not game.legal_moves():
            return
        yield ply


# -- the properties -----------------------------------------------------------------


@pytest.mark.parametrize(("players", "size"), CONFIGS)
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_random_games_keep_the_invariants(players: int, size: int, data: st.DataObject) -> None:
    game = Game(players, size)
    candidates = square_names(size) + wall_names(size)
    check_invariants(game, full_walls=True)
    for ply in plies(game, 40):
        legal = game.legal_moves()
        # Junk and wrong moves are refused and change nothing.
        wrong = sorted(set(candidates) - set(legal))
        refuses(game, data.draw(st.sampled_from(wrong), label="wrong"), IllegalMove)
        junk = data.draw(st.text("abcdefghijklz0123456789hv. ", max_size=5), label="junk")
        if junk not in candidates:
            refuses(game, junk, NotationError)
        # Now and then a four-player seat leaves the game, while three remain.
        seats = [seat for seat in range(players) if seat not in game.retired]
        if players == 4 and len(seats) > 2 and data.draw(st.integers(0, 39), label="retire") == 20:
            seat, before = data.draw(st.sampled_from(seats), label="seat"), snapshot(game)
            game.retire(seat)
            assert game.undo() == f"retire {seat}"
            assert snapshot(game) == before
            game.retire(seat)
            check_invariants(game, full_walls=True)
            if not game.legal_moves():
                break
        # A wall, a step towards the goal (so pawns meet and jump), or any pawn move.
        walls, pawn_moves = game.legal_walls(), game.legal_pawn_moves()
        kind = data.draw(st.integers(0, 2), label="kind")
        if walls and (kind == 0 or not pawn_moves):
            move = data.draw(st.sampled_from(walls), label="wall")
        elif kind == 1:
            move = data.draw(st.sampled_from(towards_goal(game)), label="step")
        else:
            move = data.draw(st.sampled_from(pawn_moves), label="pawn move")
        game.play(move)
        check_invariants(game, full_walls=size < 9 or ply % 4 == 0)
    check_record_round_trip(game)


@pytest.mark.parametrize(("players", "size"), CONFIGS)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_games_walking_shortest_paths_end(players: int, size: int, seed: int) -> None:
    # Three moves in five walk a shortest path, the rest are any legal move,
    # walls included: every wall keeps a path open, so the game must end. (The
    # longest of 600 such games per board took about a quarter of the bound.)
    rng = random.Random(seed)
    game = Game(players, size)
    bound = 10 * players * size
    for _ in plies(game, bound):
        steps = towards_goal(game)
        if steps and rng.random() < 0.6:
            game.play(rng.choice(steps))
        else:
            game.play(rng.choice(game.legal_moves()))
    if players == 4 and not game.is_over and not game.legal_moves():
        # A four-player pawn boxed in by walls and pawns, with no walls left,
        # has no legal move at all: the rules give it no pass. Rare; reported.
        return
    assert game.is_over, f"no winner after {game.ply} plies: {game.record()}"
    check_invariants(game, full_walls=False)
    check_record_round_trip(game)


@pytest.mark.parametrize(("players", "size"), CONFIGS)
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(0, 60))
def test_records_replay_the_game(players: int, size: int, seed: int, length: int) -> None:
    rng = random.Random(seed)
    game = Game(players, size)
    for _ in plies(game, length):
        game.play(rng.choice(game.legal_moves()))
    check_record_round_trip(game)
    again = Game(players, size)
    for move in game.moves:
        again.play(move)
    assert str(again) == str(game)
    while game.moves:
        game.undo()
    assert str(game) == str(Game(players, size))
