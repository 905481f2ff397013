"""Benchmark the rules engine against OpenSpiel's C++ quoridor (2 players, 9x9).

Run from the repository root::

    python bench/engine.py

Prints median wall-clock times in microseconds, ours next to OpenSpiel's, for

* generating the legal moves of the opening position;
* generating the legal moves of 50 fixed mid-game positions (seeded random
  games stopped once 6 to 14 walls are down; the median over positions of
  each position's median);
* a complete random game: at every ply generate the legal moves, then play
  the move a seeded uniform random game chose. Both sides replay the very
  same games (OpenSpiel as action ids), so the work is identical. OpenSpiel
  calls any game a draw at 4 * 9 * 9 = 324 plies, so only random games that
  are won sooner are used.

OpenSpiel is timed through its Python binding (``state.legal_actions()``
returns a list of ints), which is how our code would call it too.
"""

from __future__ import annotations

import gc
import random
import statistics
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and this file
# (bench/engine.py) would shadow the engine package: put the repo root there.
_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_ROOT))

from bench.openspiel_bridge import (  # noqa: E402
    OpenSpielState,
    legal_moves,
    load_game,
    replay,
    replay_actions,
)
from engine import Game  # noqa: E402

SIZE = 9
WALLS = 10
SEED = 20_241_129
OPENING_REPEAT = 5000
POSITIONS = 50
POSITION_REPEAT = 500
COLD_REPEAT = 101
GAMES = 100
GAME_REPEAT = 11


def median_us(fn: Callable[[], object], repeat: int) -> float:
    """Median of ``repeat`` timed calls of ``fn``, in microseconds (GC paused)."""
    samples: list[int] = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter_ns()
            fn()
            samples.append(time.perf_counter_ns() - start)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(samples) / 1000


def midgame_corpus(rng: random.Random, count: int) -> list[list[str]]:
    """``count`` records of unfinished games with 6 to 14 walls on the board.

    Pawn moves prefer shortening the mover's shortest path, so the pawns
    advance and meet as in real games.
    """
    corpus: list[list[str]] = []
    while len(corpus) < count:
        target = rng.randint(6, 14)
        game = Game(players=2, size=SIZE, walls=WALLS)
        placed = 0
        while game.winner is None and placed < target:
            legal = game.legal_moves()
            walls = [move for move in legal if move[-1] in "hv"]
            steps = [move for move in legal if move[-1] not in "hv"]
            if walls and rng.random() < 0.45:
                game.play(rng.choice(walls))
                placed += 1
                continue
            seat, before = game.turn, game.distances()[game.turn]
            better: list[str] = []
            for move in steps:
                game.play(move)
                if game.winner is None and game.distances()[seat] < before:
                    better.append(move)
                game.undo()
            game.play(rng.choice(better if better and rng.random() < 0.7 else steps))
        if game.winner is None and placed == target:
            corpus.append(list(game.moves))
    return corpus


def random_games(rng: random.Random, count: int, limit: int) -> tuple[list[list[str]], int]:
    """``count`` uniformly random games won in fewer than ``limit`` plies, and how many
    longer ones were skipped."""
    games: list[list[str]] = []
    skipped = 0
    while len(games) < count:
        game = Game(players=2, size=SIZE, walls=WALLS)
        while game.winner is None and len(game.moves) < limit:
            game.play(rng.choice(game.legal_moves()))
        if game.winner is None:
            skipped += 1
        else:
            games.append(list(game.moves))
    return games, skipped


def main() -> None:
    started = time.perf_counter()
    spiel = load_game(SIZE, WALLS)
    rng = random.Random(SEED)

    # The positions, and a check that both engines agree on them.
    corpus = midgame_corpus(rng, POSITIONS)
    ours_positions = [
        Game.from_moves(" ".join(record), size=SIZE, walls=WALLS) for record in corpus
    ]
    theirs_positions: list[OpenSpielState] = [
        replay(record, SIZE, WALLS, game=spiel) for record in corpus
    ]
    for record, ours, theirs in zip(corpus, ours_positions, theirs_positions, strict=True):
        if set(ours.legal_moves()) != set(legal_moves(theirs, SIZE)):
            print(f"warning: the engines disagree after {' '.join(record)}", file=sys.stderr)
    limit = int(spiel.max_game_length())
    games, skipped = random_games(rng, GAMES, limit)
    actions = [replay_actions(record, SIZE, WALLS, game=spiel) for record in games]

    rows: list[tuple[str, float, float]] = []

    # Opening.
    opening, opening_state = Game(players=2, size=SIZE, walls=WALLS), spiel.new_initial_state()
    median_us(opening.legal_moves, OPENING_REPEAT // 10)  # warm up
    median_us(opening_state.legal_actions, OPENING_REPEAT // 10)
    rows.append(
        (
            f"legal moves, opening ({len(opening.legal_moves())} moves)",
            median_us(opening.legal_moves, OPENING_REPEAT),
            median_us(opening_state.legal_actions, OPENING_REPEAT),
        )
    )

    # Mid-game positions.
    ours_times = [median_us(game.legal_moves, POSITION_REPEAT) for game in ours_positions]
    theirs_times = [median_us(state.legal_actions, POSITION_REPEAT) for state in theirs_positions]
    moves = statistics.median(len(game.legal_moves()) for game in ours_positions)
    rows.append(
        (
            f"legal moves, {POSITIONS} mid-game positions (median {moves:.0f} moves)",
            statistics.median(ours_times),
            statistics.median(theirs_times),
        )
    )

    # The same positions, each timed on its first call right after its moves
    # were played (nothing this position asked for is cached yet).
    def first_call_us(record: list[str]) -> float:
        samples = []
        for _ in range(COLD_REPEAT):
            game = Game.from_moves(record, size=SIZE, walls=WALLS)
            start = time.perf_counter_ns()
            game.legal_moves()
            samples.append(time.perf_counter_ns() - start)
        return statistics.median(samples) / 1000

    rows.append(
        (
            "  the same, first call after the position's last move",
            statistics.median(first_call_us(record) for record in corpus),
            statistics.median(theirs_times),
        )
    )

    # Whole random games.
    def play_ours(record: list[str]) -> Callable[[], object]:
        def run() -> None:
            game = Game(players=2, size=SIZE, walls=WALLS)
            for move in record:
                game.legal_moves()
                game.play(move)

        return run

    def play_theirs(record: list[int]) -> Callable[[], object]:
        def run() -> None:
            state = spiel.new_initial_state()
            for action in record:
                state.legal_actions()
                state.apply_action(action)

        return run

    ours_games = [median_us(play_ours(record), GAME_REPEAT) for record in games]
    theirs_games = [median_us(play_theirs(record), GAME_REPEAT) for record in actions]
    plies = statistics.median(len(record) for record in games)
    rows.append(
        (
            f"random game, {GAMES} games (median {plies:.0f} plies)",
            statistics.median(ours_games),
            statistics.median(theirs_games),
        )
    )
    per_ply_ours = statistics.median(t / len(r) for t, r in zip(ours_games, games, strict=True))
    per_ply_theirs = statistics.median(t / len(r) for t, r in zip(theirs_games, games, strict=True))
    rows.append(("  the same, per ply", per_ply_ours, per_ply_theirs))

    width = max(len(name) for name, _, _ in rows)
    python = sys.version.split()[0]
    print(
        f"Quoridor {SIZE}x{SIZE}, 2 players, {WALLS} walls each: engine (Python {python})"
        f" vs OpenSpiel {metadata.version('open_spiel')} (C++ via pyspiel)"
    )
    print("median wall-clock time in microseconds, lower is better")
    print()
    print(f"{'case':<{width}}  {'ours us':>10}  {'OpenSpiel us':>12}  {'ours/theirs':>11}")
    for name, ours_us, theirs_us in rows:
        print(
            f"{name:<{width}}  {ours_us:>10.1f}  {theirs_us:>12.1f}  {ours_us / theirs_us:>11.2f}"
        )
    print()
    print(
        f"{skipped} random games ran into OpenSpiel's {limit}-ply draw limit and were replaced;"
        f" finished in {time.perf_counter() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
