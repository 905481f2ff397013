"""Fit the evaluation's win-probability curve on bot games.

Run from the repository root, on a records file written by the arena::

    python bench/arena.py --match L2:L1:100 --match L3:L2:100 --match L4:L3:100 \\
        --records ladder.tsv
    python bench/calibrate.py ladder.tsv

Method. Every ``--every``-th position of every decided game (from ply
``--skip`` on) is evaluated exactly as the analysis evaluates it
(``engine.ai.evaluation.evaluate``, default depth and node cap). Positions
with a forced result, or with the race already read as decided by the
search, are left out: their probability is 1 or 0 by construction. Each kept
position gives a pair (score in steps for the side to move, 1 if that side
went on to win the game else 0). The slope ``K`` of
``P(win) = 1 / (1 + exp(-K * score))`` is fitted by maximum likelihood
(Newton's method on the log-likelihood, which is concave in ``K``), and the
script prints ``K``, the number of positions, the log loss against a coin
flip, and a reliability table (predicted against observed win rate per
probability bin) so the fit can be checked by eye.

The games are bot games, so the curve says how often *the bots* convert an
advantage; between people the same score is probably worth a little less.

The constant in use (``engine.ai.evaluation.K = 0.35``) comes from 300 arena
games, 100 each of L2-L1, L3-L2 and L4-L3 (2-ply random openings, both
colours)::

    positions 5057  K = 0.3535 per step
    log loss 0.4843 (a coin flip: 0.6931)
    predicted  observed  positions
    0.0-0.1     0.050        623
    0.1-0.2     0.121        430
    0.2-0.3     0.234        398
    0.3-0.4     0.303        389
    0.4-0.5     0.392        558
    0.5-0.6     0.543        679
    0.6-0.7     0.688        481
    0.7-0.8     0.731        431
    0.8-0.9     0.863        432
    0.9-1.0     0.943        636
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from engine import Game  # noqa: E402
from engine.ai.evaluation import SCORE_CAP, evaluate  # noqa: E402


def samples(path: Path, every: int, skip: int) -> list[tuple[float, int]]:
    """(score, won) pairs from every decided game of an arena records file."""
    pairs: list[tuple[float, int]] = []
    for line in path.read_text().splitlines():
        record = line.split("\t")[-1].split()
        game = Game.from_moves(record)
        if game.winner is None:
            continue
        for ply in range(skip, len(record) - 1, every):
            evaluation = evaluate(record[:ply])
            if evaluation.win_in is not None or evaluation.exact:
                continue
            if abs(evaluation.score) >= SCORE_CAP or evaluation.win_probability in (0.0, 1.0):
                continue
            pairs.append((evaluation.score, int(game.winner == ply % 2)))
    return pairs


def fit(pairs: list[tuple[float, int]]) -> float:
    """Maximum-likelihood slope of the logistic curve through the origin."""
    k = 0.3
    for _ in range(50):
        gradient = hessian = 0.0
        for score, won in pairs:
            p = 1 / (1 + math.exp(-k * score))
            gradient += (won - p) * score
            hessian -= p * (1 - p) * score * score
        if hessian == 0:
            break
        step = gradient / hessian
        k -= step
        if abs(step) < 1e-7:
            break
    return k


def log_loss(pairs: list[tuple[float, int]], k: float) -> float:
    total = 0.0
    for score, won in pairs:
        p = min(1 - 1e-12, max(1e-12, 1 / (1 + math.exp(-k * score))))
        total -= math.log(p if won else 1 - p)
    return total / len(pairs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--every", type=int, default=3, help="evaluate every n-th position")
    parser.add_argument("--skip", type=int, default=4, help="first ply to look at")
    args = parser.parse_args(argv)
    pairs = samples(args.records, args.every, args.skip)
    k = fit(pairs)
    print(f"positions {len(pairs)}  K = {k:.4f} per step")
    print(f"log loss {log_loss(pairs, k):.4f} (a coin flip: {math.log(2):.4f})")
    print("predicted  observed  positions")
    bins: dict[int, list[int]] = {}
    for score, won in pairs:
        predicted = 1 / (1 + math.exp(-k * score))
        bins.setdefault(min(9, int(predicted * 10)), []).append(won)
    for index in sorted(bins):
        outcomes = bins[index]
        print(
            f"{index / 10:.1f}-{(index + 1) / 10:.1f}   {sum(outcomes) / len(outcomes):7.3f}"
            f"  {len(outcomes):9d}"
        )


if __name__ == "__main__":
    main()
