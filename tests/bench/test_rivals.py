"""bench/rivals.py's reading of the Node load generator and its summary (no Node, no npm)."""

from __future__ import annotations

import math

from bench.rivals import REFERENCE, Measured, medians, parse_loadgen, summary


def test_parses_the_load_generators_result_line() -> None:
    line = '{"moves":419,"bytes":10616,"games":19,"errors":{"503 Service Unavailable":2}}\n'
    result = parse_loadgen(line)
    assert (result.moves, result.bytes, result.games) == (419, 10616, 19)
    assert result.errors == {"503 Service Unavailable": 2}


def _measured(
    side: str, rate: float, cpu_us: float, problems: dict[str, int] | None = None
) -> Measured:
    return Measured(side, rate, cpu_us, 23.0, 0.9, 0.1, problems or {})


def test_each_figure_is_its_own_median_over_the_rounds() -> None:
    rounds = [
        _measured("rival", 8000, 60, {"refused": 1}),
        _measured("rival", 9000, 50),
        _measured("rival", 7000, 55, {"refused": 2}),
    ]
    middle = medians(rounds)
    assert (middle.moves_per_s, middle.cpu_us_per_move) == (8000, 55)
    assert middle.problems == {"refused": 3}


def test_the_ratio_is_moves_per_server_cpu_second_ours_over_theirs() -> None:
    results = [
        _measured(REFERENCE, 6000, 100),
        _measured("colyseus", 8000, 50),
        _measured(REFERENCE, 6500, 120),
        _measured("colyseus", 8500, 60),
    ]
    lines = summary(results, 2)
    assert lines[0] == "median of 2 rounds:"
    rows = {line.split("  ")[0].strip(): line.split() for line in lines[2:]}
    # Ours: a median 110 us a move, 9,091 moves a CPU second; theirs 55 us, 18,182.
    assert rows[REFERENCE][-2:] == ["9,091", "1.00"]
    assert rows["colyseus"][-2:] == ["18,182", "0.50"]


def test_without_our_server_the_ratio_is_left_out() -> None:
    (line,) = summary([_measured("colyseus", 8000, 50)], 1)[2:]
    assert math.isnan(float(line.split()[-1]))


def test_with_compact_events_alone_they_are_ours() -> None:
    results = [_measured(f"{REFERENCE} +compact", 6000, 100), _measured("colyseus", 8000, 50)]
    rows = {line.split("  ")[0].strip(): line.split() for line in summary(results, 1)[2:]}
    assert rows[f"{REFERENCE} +compact"][-1] == "1.00"
    assert rows["colyseus"][-1] == "0.50"
