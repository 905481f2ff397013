"""How long the garbage collector stops the event loop, by generation.

A collection runs inside whatever request allocated the object that crossed a
threshold, so its pause lands on that client's round trip. The pause is
measured in CPU time (``time.thread_time``): what the collection itself costs,
which a busy machine does not stretch the way it stretches wall-clock time. These figures show
whether the interpreter's settings (``server.__main__``: thresholds, and a
frozen heap once started) keep those pauses short. The collector's callbacks
are process-wide, so one watch is installed per process and every server's
``/metrics`` reads it.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client.core import HistogramMetricFamily
from prometheus_client.registry import Collector

from server.timings import Timings, histogram

GENERATIONS = 3


class GcWatch:
    """Times every collection with ``gc.callbacks`` (two CPU clock reads each)."""

    def __init__(self) -> None:
        self.pauses = [Timings() for _ in range(GENERATIONS)]
        self._started = 0.0

    def callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.thread_time()
            return
        self.pauses[int(info["generation"])].observe(time.thread_time() - self._started)


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
        yield histogram(
            "quoridor_gc_pause_seconds",
            "CPU time of each garbage collection (a pause of the event loop), by generation",
            "generation",
            ((str(generation), pauses) for generation, pauses in enumerate(self.watch.pauses)),
        )
