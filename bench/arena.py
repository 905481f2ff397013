"""Play bots against each other and report wins, losses and an Elo estimate.

Run from the repository root::

    python bench/arena.py                       # the standard ladder (below)
    python bench/arena.py --match L5:mcts1000:40 --match L2:L1:20 --jobs 2
    python bench/arena.py --match L5@0.5:L4:10   # level 5 with a 0.5 s budget

A player is ``L1``..``L5`` (our levels, ``@seconds`` overrides the level's
time budget, ``-fixed`` takes away the variety of levels 4 and 5 among nearly best moves:
``L5-fixed@0.5``) or ``mctsN``: OpenSpiel's generic ``MCTSBot`` with ``N``
simulations a move, UCT constant 2 and one random rollout per leaf
(``RandomRolloutEvaluator``), on OpenSpiel's own quoridor game through
``bench.openspiel_bridge`` (which undoes its row flip).

Games come in pairs: both games of a pair start from the same short random
opening (``--opening`` plies of random pawn moves, so that deterministic
bots do not replay one game over and over) and the players swap seats, so
each opens once. A game still going after ``--ply-cap`` plies is a draw
(OpenSpiel also declares a draw at ``4 * size**2`` plies). Games run in
parallel in ``--jobs`` worker processes.

The Elo difference is the first player's, from its score ``(W + D/2) / N``;
its 95 % interval maps the Wilson score interval of that score to Elo.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path; put the repo root there.
_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_ROOT))

from engine import Game  # noqa: E402
from engine.ai import LEVELS, analyse  # noqa: E402

LADDER = [
    "L5:mcts1000:40",
    "L2:L1:40",
    "L3:L2:40",
    "L4:L3:40",
    "L5:L4:30",
]
"""The default matchups: level 5 against the outside baseline, then each level
against the one below."""


@dataclass(frozen=True)
class Task:
    """One game to play."""

    match: int
    first: str
    second: str
    a_opens: bool
    """Whether ``first`` has seat 0 (moves first)."""
    opening: tuple[str, ...]
    seed: int
    ply_cap: int
    size: int


@dataclass
class Result:
    match: int
    a_opens: bool
    winner: str | None
    """"a", "b" or None for a draw."""
    plies: int
    seconds: tuple[float, float]
    """Thinking time of a and of b."""
    moves: tuple[int, int]
    record: str


class _Mcts:
    """OpenSpiel's MCTS bot and its own copy of the game state."""

    def __init__(self, simulations: int, seed: int, size: int) -> None:
        import numpy as np
        from open_spiel.python.algorithms import mcts

        from bench.openspiel_bridge import load_game

        self.size = size
        self.game = load_game(size)
        evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
        self.bot = mcts.MCTSBot(
            self.game,
            2.0,
            simulations,
            evaluator,
            random_state=np.random.RandomState(seed + 1),
        )

    def move(self, moves: list[str]) -> str:
        from bench.openspiel_bridge import action_to_move, replay

        state = replay(moves, self.size, game=self.game)
        action = self.bot.step(state)
        return action_to_move(state, action, self.size)


def _parse_player(name: str) -> tuple[str, int, float | None]:
    """``"L5@0.5"`` -> ("level", 5, 0.5); ``"L5-fixed"`` -> ("fixed", 5, None), the level
    without its variety; ``"mcts1000"`` -> ("mcts", 1000, None)."""
    if name.startswith("mcts"):
        return "mcts", int(name[4:]), None
    if name.startswith("L"):
        level, _, budget = name[1:].partition("@")
        level, fixed, rest = level.partition("-fixed")
        if int(level) not in LEVELS or rest:
            raise ValueError(f"no level {name[1:]}")
        return "fixed" if fixed else "level", int(level), float(budget) if budget else None
    raise ValueError(f"unknown player {name!r}: L1..L5[-fixed][@seconds] or mctsN")


def play(task: Task) -> Result:
    """Play one game (in a worker process)."""
    names = (task.first, task.second) if task.a_opens else (task.second, task.first)
    kinds = [_parse_player(name) for name in names]
    bots: list[_Mcts | None] = [
        _Mcts(arg, task.seed + 17 * seat, task.size) if kind == "mcts" else None
        for seat, (kind, arg, _) in enumerate(kinds)
    ]
    game = Game(players=2, size=task.size)
    for move in task.opening:
        game.play(move)
    thinking, counts = [0.0, 0.0], [0, 0]
    spiel_limit = 4 * task.size * task.size
    while game.winner is None and game.ply < min(task.ply_cap, spiel_limit):
        seat = game.turn
        kind, arg, budget = kinds[seat]
        started = time.perf_counter()
        bot = bots[seat]
        if bot is not None:
            move = bot.move(game.moves)
        else:
            variety = 0 if kind == "fixed" else None
            seed = task.seed + game.ply
            move, _ = analyse(
                game.moves, size=task.size, level=arg, budget=budget, seed=seed, variety=variety
            )
        thinking[seat] += time.perf_counter() - started
        counts[seat] += 1
        game.play(move)
    a_seat = 0 if task.a_opens else 1
    winner = None if game.winner is None else ("a" if game.winner == a_seat else "b")
    return Result(
        match=task.match,
        a_opens=task.a_opens,
        winner=winner,
        plies=game.ply,
        seconds=(thinking[a_seat], thinking[1 - a_seat]),
        moves=(counts[a_seat], counts[1 - a_seat]),
        record=game.record(),
    )


def random_opening(rng: random.Random, plies: int, size: int) -> tuple[str, ...]:
    """``plies`` random pawn moves from the start (no walls, never a win)."""
    game = Game(players=2, size=size)
    for _ in range(plies):
        game.play(rng.choice(game.legal_pawn_moves()))
    return tuple(game.moves)


def elo(score: float) -> float:
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def wilson(score: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (draws count as half a win)."""
    if not games:
        return 0.0, 1.0
    denominator = 1 + z * z / games
    centre = (score + z * z / (2 * games)) / denominator
    spread = z * math.sqrt(score * (1 - score) / games + z * z / (4 * games * games))
    spread /= denominator
    return max(0.0, centre - spread), min(1.0, centre + spread)


def _fmt_elo(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.0f}"


def report(matches: list[tuple[str, str, int]], results: list[Result]) -> str:
    header = (
        f"{'matchup':<20} {'games':>5} {'W':>4} {'L':>4} {'D':>4} {'score':>7} "
        f"{'Elo':>6} {'95% CI':>15} {'plies':>6} {'s/move A':>9} {'s/move B':>9}"
    )
    lines = [header, "-" * len(header)]
    for index, (first, second, _) in enumerate(matches):
        mine = [result for result in results if result.match == index]
        games = len(mine)
        wins = sum(result.winner == "a" for result in mine)
        losses = sum(result.winner == "b" for result in mine)
        draws = games - wins - losses
        score = (wins + draws / 2) / games if games else 0.0
        low, high = wilson(score, games)
        plies = sum(result.plies for result in mine) / games if games else 0.0
        a_time = sum(r.seconds[0] for r in mine) / max(1, sum(r.moves[0] for r in mine))
        b_time = sum(r.seconds[1] for r in mine) / max(1, sum(r.moves[1] for r in mine))
        interval = f"[{_fmt_elo(elo(low))}, {_fmt_elo(elo(high))}]"
        lines.append(
            f"{first + ' vs ' + second:<20} {games:>5} {wins:>4} {losses:>4} {draws:>4} "
            f"{100 * score:>6.1f}% {_fmt_elo(elo(score)):>6} {interval:>15} {plies:>6.1f} "
            f"{a_time:>9.2f} {b_time:>9.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--match",
        action="append",
        metavar="A:B:GAMES",
        help="a matchup, e.g. L5:mcts1000:40 (repeatable; default: the ladder)",
    )
    parser.add_argument("--games", type=int, help="override every matchup's number of games")
    parser.add_argument("--jobs", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--ply-cap", type=int, default=200, help="draw after this many plies")
    parser.add_argument("--opening", type=int, default=2, help="random pawn plies to open with")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--records", type=Path, help="write every game's record to this file")
    args = parser.parse_args(argv)

    matches: list[tuple[str, str, int]] = []
    for spec in args.match or LADDER:
        first, second, games = spec.split(":")
        _parse_player(first)
        _parse_player(second)
        matches.append((first, second, args.games or int(games)))

    rng = random.Random(args.seed)
    tasks: list[Task] = []
    for index, (first, second, games) in enumerate(matches):
        for pair in range((games + 1) // 2):
            opening = random_opening(rng, args.opening, args.size)
            for a_opens in (True, False)[: games - 2 * pair]:
                seed = rng.randrange(1 << 30)
                tasks.append(
                    Task(index, first, second, a_opens, opening, seed, args.ply_cap, args.size)
                )
    # The slowest matchups first so the workers finish together.
    tasks.sort(key=lambda task: "mcts" not in task.first + task.second)

    started = time.perf_counter()
    results: list[Result] = []
    context = multiprocessing.get_context("spawn")
    with context.Pool(args.jobs) as pool:
        for done, result in enumerate(pool.imap_unordered(play, tasks), 1):
            results.append(result)
            first, second, _ = matches[result.match]
            outcome = {"a": first, "b": second, None: "draw"}[result.winner]
            print(
                f"[{done}/{len(tasks)} {time.perf_counter() - started:6.0f}s] "
                f"{first} vs {second}: {outcome} ({result.plies} plies"
                f"{', ' + first + ' opened' if result.a_opens else ''})",
                file=sys.stderr,
                flush=True,
            )
    if args.records:
        args.records.write_text(
            "\n".join(
                f"{matches[r.match][0]} vs {matches[r.match][1]}\t{r.winner}\t{r.record}"
                for r in results
            )
            + "\n"
        )
    print(
        f"Quoridor {args.size}x{args.size}, 2 players; {args.opening}-ply random openings played"
        f" both ways; draw at {args.ply_cap} plies; {args.jobs} workers;"
        f" {time.perf_counter() - started:.0f} s"
    )
    print(report(matches, results))


if __name__ == "__main__":
    main()
