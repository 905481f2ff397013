"""bench/core_cost.py still runs against the current core (its limits once refused its hellos)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_core_cost_runs_a_small_round() -> None:
    # Each of the 40 connections says hello from one address: more than the per-address
    # hello allowance, which the bench must lift as it does the request rate.
    done = subprocess.run(
        [sys.executable, "bench/core_cost.py", "--games", "20", "--moves", "200", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "CPU us per move, median of 1:" in done.stdout
