"""How long the garbage collector stops the event loop, by generation.

A collection runs inside whatever request allocated the object that crossed a
threshold, so its pause lands on that client's round trip. These figures show
whether the interpreter's settings (``server.__main__.tune_interpreter``) keep
those pauses short. The collector's callbacks are process-wide, so one watch
is installed per process and every server's ``/metrics`` reads it.
"""

from __future__ import annotations

import bisect
import gc
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client.core import HistogramMetricFamily
from prometheus_client.registry import Collector

PAUSE_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25)
GENERATIONS = 3


class GcWatch:
    """Counts and times every collection with ``gc.callbacks`` (two clock reads each)."""

    def __init__(self) -> None:
        self.buckets = [[0] * (len(PAUSE_BUCKETS) + 1) for _ in range(GENERATIONS)]
        """Per generation, collections per bucket (the last: longer than every bound)."""
        self.sums = [0.0] * GENERATIONS
        self._started = 0.0

    def callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        pause = time.perf_counter() - self._started
        generation = int(info["generation"])
        self.buckets[generation][bisect.bisect_left(PAUSE_BUCKETS, pause)] += 1
        self.sums[generation] += pause


_watch: GcWatch | None = None


def watch() -> GcWatch:
    """The process's watch, installed on first use."""
    global _watch
    if _watch is None:
        _watch = GcWatch()
        gc.callbacks.append(_watch.callback)
    return _watch


class GcCollector(Collector):
    """``quoridor_gc_pause_seconds{generation}``: a histogram of collection pauses."""

    def __init__(self) -> None:
        self.watch = watch()

    def collect(self) -> Iterator[HistogramMetricFamily]:
        family = HistogramMetricFamily(
            "quoridor_gc_pause_seconds",
            "Garbage collection pauses of the event loop, by generation",
            labels=["generation"],
        )
        for generation in range(GENERATIONS):
            counts = self.watch.buckets[generation]
            cumulative, buckets = 0, []
            for bound, count in zip([*PAUSE_BUCKETS, float("inf")], counts, strict=True):
                cumulative += count
                buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
            family.add_metric([str(generation)], buckets, self.watch.sums[generation])
        yield family
