"""The collection clock: short collections of each generation at its own cadence, from the
event loop's timer, until stopped (real collections, seen by ``gc.callbacks``)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from typing import Any

import pytest

from server.__main__ import tune_interpreter
from server.gcclock import Collections


@pytest.fixture
def generations() -> Iterator[list[int]]:
    """The generation of every collection run while the test runs."""
    seen: list[int] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "stop":
            seen.append(int(info["generation"]))

    gc.callbacks.append(record)
    yield seen
    gc.callbacks.remove(record)


async def test_each_generation_is_collected_at_its_cadence(generations: list[int]) -> None:
    clock = Collections(young_every=0.01, middle_every=3, full_every=0.5)
    clock.start()
    try:
        await asyncio.sleep(0.7)
    finally:
        clock.stop()
    assert clock.ticks >= 10
    # Every tick collected: young ones mostly, every third the middle generation, and one
    # full collection once its half second had passed.
    assert generations.count(0) >= clock.ticks // 2
    assert generations.count(1) >= clock.ticks // 3 - 1
    assert generations.count(2) >= 1


async def test_a_stopped_clock_collects_no_more() -> None:
    clock = Collections(young_every=0.01)
    clock.start()
    await asyncio.sleep(0.05)
    clock.stop()
    ticks = clock.ticks
    await asyncio.sleep(0.05)
    assert clock.ticks == ticks > 0


def test_a_tick_says_which_generation_it_collected() -> None:
    clock = Collections(middle_every=2, full_every=3600)
    assert [clock.tick() for _ in range(4)] == [0, 1, 0, 1]
    clock = Collections(full_every=0)
    assert clock.tick() == 2


def test_the_interpreter_leaves_full_collections_to_the_clock(generations: list[int]) -> None:
    """With the server's thresholds, however many middle collections the clock ran, a burst
    of allocations starts young or middle collections only, never a full one."""
    thresholds = gc.get_threshold()
    try:
        tune_interpreter()
        for _ in range(300):  # 30 s of the clock's middle collections
            gc.collect(1)
        generations.clear()
        burst: list[list[int]] = [[] for _ in range(25 * gc.get_threshold()[0])]
        assert generations, "the burst started no collection at all"
        assert 2 not in generations
        del burst
    finally:
        gc.set_threshold(*thresholds)
