"""Nodes per second of the two-player search, next to another checkout's engine.

Run from the repository root::

    python bench/search.py                          # this engine
    python bench/search.py --reference ../old/      # and an older checkout, alternately

Every run searches the same positions to the same fixed depth (no clock, no
node cap, the same seed), so two engines that order moves alike visit the very
same nodes and only the time differs. The positions come from seeded games of
random legal moves (walls often, so the search has walls to consider), played
by the rules engine alone, and are the same for any engine version.

Time is process CPU time, not wall time, and each engine is run ``--rounds``
times, alternating, in fresh processes: on a shared machine the best round of
each is the fairest figure (the script prints the median too).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
POSITIONS = 16
DEPTH = 4
SEED = 19


def positions() -> list[list[str]]:
    """Seeded random games stopped after 10 to 40 plies (unfinished), 9x9."""
    sys.path.insert(0, str(_ROOT))
    from engine import Game

    rng = random.Random(SEED)
    found: list[list[str]] = []
    while len(found) < POSITIONS:
        game = Game()
        for _ in range(rng.randrange(10, 41)):
            legal = game.legal_moves()
            walls = [m for m in legal if m[-1] in "hv"]
            game.play(rng.choice(walls) if walls and rng.random() < 0.3 else rng.choice(legal))
            if game.is_over:
                break
        if not game.is_over and all(game.walls_left):
            found.append(game.moves)
    return found


def measure(root: str, records: list[list[str]]) -> tuple[int, float]:
    """(nodes, CPU seconds) of searching every record with the engine under ``root``."""
    sys.path.insert(0, root)
    from engine import Game
    from engine.ai.position import Position
    from engine.ai.search import Searcher

    nodes = 0
    started = time.process_time()
    for record in records:
        searcher = Searcher(Position(Game.from_moves(record), {}), max_depth=DEPTH, deadline=1e18)
        nodes += searcher.run(random.Random(0))[1].nodes
    return nodes, time.process_time() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", help="the root of another checkout to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:  # one measurement, in a fresh process
        print(json.dumps(measure(args.child, json.loads(sys.stdin.read()))))
        return
    records = json.dumps(positions())
    engines = {"ours": str(_ROOT)}
    if args.reference:
        engines["reference"] = str(Path(args.reference).resolve())
    runs: dict[str, list[tuple[int, float]]] = {name: [] for name in engines}
    for _ in range(args.rounds):
        for name, root in engines.items():
            out = subprocess.run(
                [sys.executable, __file__, "--child", root],
                input=records,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            nodes, seconds = json.loads(out)
            runs[name].append((nodes, seconds))
    print(f"{POSITIONS} positions, depth {DEPTH}, best and median of {args.rounds} rounds (CPU)")
    for name, results in runs.items():
        nodes = results[0][0]
        rates = sorted(nodes / seconds for _, seconds in results)
        print(
            f"{name:<10} {nodes:>8} nodes  {rates[-1]:>8,.0f} nodes/s best"
            f"  {statistics.median(rates):>8,.0f} median"
        )


if __name__ == "__main__":
    main()
