"""The garbage collector's pauses in /metrics: real collections, counted by generation."""

from __future__ import annotations

import gc
import re

from server.core import Core
from server.gcwatch import watch
from server.metrics import Metrics
from server.timings import Timings


def _count(text: str, generation: int) -> float:
    found = re.search(rf'quoridor_gc_pause_seconds_count{{generation="{generation}"}} (\S+)', text)
    assert found is not None, text
    return float(found.group(1))


def _sum(text: str, generation: int) -> float:
    found = re.search(rf'quoridor_gc_pause_seconds_sum{{generation="{generation}"}} (\S+)', text)
    assert found is not None, text
    return float(found.group(1))


def test_collections_are_counted_and_timed_by_generation() -> None:
    metrics = Metrics(Core())
    before = metrics.render().decode()
    gc.collect(0)
    gc.collect(2)
    gc.collect(2)
    after = metrics.render().decode()
    assert _count(after, 2) >= _count(before, 2) + 2
    assert _count(after, 0) >= _count(before, 0) + 1
    assert _sum(after, 2) > _sum(before, 2)
    # Every pause falls in a bucket: the +Inf bucket holds them all.
    inf = re.search(r'quoridor_gc_pause_seconds_bucket\{generation="2",le="\+Inf"\} (\S+)', after)
    assert inf is not None
    assert float(inf.group(1)) == _count(after, 2)


def test_one_watch_serves_every_server_in_a_process() -> None:
    first, second = Metrics(Core()), Metrics(Core())
    gc.collect(1)
    assert _count(first.render().decode(), 1) == _count(second.render().decode(), 1)
    installed = [cb for cb in gc.callbacks if getattr(cb, "__self__", None) is watch()]
    assert len(installed) == 1


def test_timings_count_like_prometheus_buckets() -> None:
    timings = Timings((0.001, 0.01))
    for seconds in (0.001, 0.005, 0.5, 0.0):
        timings.observe(seconds)
    # A value equal to a bound is "le" that bound; the last bucket holds everything.
    assert timings.cumulative() == [("0.001", 2.0), ("0.01", 3.0), ("+Inf", 4.0)]
    assert timings.total == 0.506
