"""What one move costs the socket-free core, in figures that a busy machine does not move.

Run from the repository root::

    python bench/core_cost.py                    # CPU, allocations, GC pauses (about 20 s)
    python bench/core_cost.py --callgrind        # instructions and mallocs per move (minutes)

It drives ``server.core.Core`` directly, as the adapter does (a frame in, the
actions out, the state encoded once for both players), over ``--games`` games
open at once that replay complete legal games (the scripts of bench/load.py:
pawn moves and walls, every state carrying the legal walls); a finished game's
players leave and open a new room, so rooms come and go as on a live server.
No sockets: the websockets path is what bench/load.py measures.

Figures:

CPU us per move
    ``time.process_time`` over the moves: CPU time, which other processes on
    the machine disturb far less than wall-clock rates (the median of
    ``--rounds`` rounds, each shown).
allocations per move
    ``tracemalloc``: the peak of memory a move allocates on top of what was
    held before it (KiB), sampled over the moves, and memory blocks still held
    after all moves (a leak shows as a growing figure).
garbage collections
    per thousand moves, by generation, and their pauses in CPU time
    (``gc.callbacks``): median, p99 and longest, with the server's own
    interpreter settings (``server.__main__``) or ``--threshold``, and the
    server's collection clock (``server.gcclock``) ticking every
    ``--moves-per-tick`` moves (0: none, the interpreter's thresholds alone).
instructions per move (``--callgrind``)
    valgrind's callgrind counts instructions exactly, whatever else runs: the
    harness runs twice under it, with no moves and with ``--moves``, and prints
    the difference per move, with the calls to the allocator
    (``_PyObject_Malloc``, pymalloc's entry point) likewise.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_ROOT))

from bench.load import make_scripts  # noqa: E402
from protocol.codec import encode  # noqa: E402
from protocol.messages import VERSION, Create, Hello, Join, Leave, MoveRequest  # noqa: E402
from server.__main__ import tune_interpreter  # noqa: E402
from server.core import Core, Limits, Send  # noqa: E402
from server.gcclock import YOUNG_EVERY, Collections  # noqa: E402
from server.gcwatch import watch  # noqa: E402

_ROOM = re.compile(rb'"room":"([^"]+)"')


class Bench:
    """``games`` games between pairs of connections of one core, replaying scripts."""

    def __init__(self, games: int, scripts: list[list[str]], compact: bool = False) -> None:
        self.core = Core(Limits(rate=1e9, burst=1e9, hellos_per_second=1e9, hello_burst=1e9))
        self.scripts = scripts
        self.frames = [
            [encode(MoveRequest(move=move, ply=ply)) for ply, move in enumerate(script)]
            for script in scripts
        ]
        self.hello = encode(Hello(version=VERSION, name="bench", compact=compact))
        self.create = encode(Create(private=True))
        self.leave = encode(Leave())
        self.ids = itertools.count(1)
        self.tables = [self._seat(n) for n in range(games)]
        """Per game: [conn of seat 0, conn of seat 1, script number, ply]."""
        self.pushed = 0
        """Bytes of the states pushed (each once, whatever the number of targets)."""

    def _seat(self, number: int) -> list[int]:
        a, b = next(self.ids), next(self.ids)
        for conn in (a, b):
            self.core.open(conn)
            self.core.receive(conn, self.hello)
        return self._new_room(a, b, number)

    def _new_room(self, a: int, b: int, number: int) -> list[int]:
        (created, *_) = self.core.receive(a, self.create)
        assert isinstance(created, Send)
        found = _ROOM.search(created.payload)
        assert found is not None, created.payload
        self.core.receive(b, encode(Join(room=found.group(1).decode())))
        return [a, b, number % len(self.scripts), 0]

    def moves(self, count: int) -> None:
        """Play ``count`` moves, round robin over the games."""
        tables, frames, receive = self.tables, self.frames, self.core.receive
        played = 0
        while played < count:
            for table in tables:
                a, b, script, ply = table
                for action in receive(a if ply % 2 == 0 else b, frames[script][ply]):
                    if isinstance(action, Send):
                        self.pushed += len(action.payload)
                played += 1
                if ply + 1 == len(frames[script]):
                    receive(a, self.leave)
                    receive(b, self.leave)
                    table[:] = self._new_room(a, b, script + 1)
                else:
                    table[3] = ply + 1
                if played == count:
                    return


def measure_cpu(bench: Bench, moves: int) -> float:
    """CPU microseconds per move over ``moves`` moves."""
    started = time.process_time()
    bench.moves(moves)
    return (time.process_time() - started) / moves * 1e6


def measure_allocations(bench: Bench, moves: int) -> tuple[float, float, int]:
    """(mean and largest peak KiB allocated by one move, blocks still held after them)."""
    tracemalloc.start()
    held_before = tracemalloc.get_traced_memory()[0]
    peaks = []
    for _ in range(moves):
        tracemalloc.reset_peak()
        current = tracemalloc.get_traced_memory()[0]
        bench.moves(1)
        peaks.append((tracemalloc.get_traced_memory()[1] - current) / 1024)
    held_after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return statistics.mean(peaks), max(peaks), held_after - held_before


def measure_gc(bench: Bench, moves: int, per_tick: int) -> tuple[list[list[float]], int]:
    """Each collection's CPU pause (ms) over ``moves`` moves, by generation, with the
    server's clock (``server.gcclock``) ticking every ``per_tick`` moves (0: no clock,
    the interpreter's thresholds alone), and then one full collection (the last pause of
    generation 2); and the objects it walked in the old generation."""
    pauses: list[list[float]] = [[] for _ in range(3)]
    started = [0.0]

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            pauses[info["generation"]].append((time.thread_time() - started[0]) * 1000)

    clock = Collections()
    if per_tick:  # what piled up before (the clock runs from the server's start)
        clock.tick()
        clock.tick()
    gc.callbacks.append(timed)
    try:
        step = per_tick or moves
        for done in range(0, moves, step):
            bench.moves(min(step, moves - done))
            if per_tick:
                clock.tick()
        old = len(gc.get_objects(2))
        gc.collect(2)  # the full collection the clock runs every few minutes
    finally:
        gc.callbacks.remove(timed)
    return pauses, old


def _pauses(each: list[float], moves: int) -> str:
    if not each:
        return "none"
    ordered = sorted(each)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * len(ordered)))]
    return (
        f"{len(each) / moves * 1000:.1f} per 1000 moves, median {statistics.median(each):.2f}"
        f" ms, p99 {p99:.2f}, longest {ordered[-1]:.2f}"
    )


def report(args: argparse.Namespace) -> None:
    scripts = make_scripts(args.scripts)
    tune_interpreter()
    if args.threshold:
        gc.set_threshold(*args.threshold)
    watch()
    bench = Bench(args.games, scripts, args.compact)
    gc.freeze()  # as the server does once started
    bench.moves(args.moves // 4)  # warm-up: caches, first rematches
    rounds = [measure_cpu(bench, args.moves) for _ in range(args.rounds)]
    pushed_before, moved = bench.pushed, args.moves
    pauses, old = measure_gc(bench, moved, args.moves_per_tick)
    state = (bench.pushed - pushed_before) / moved
    mean_peak, worst_peak, held = measure_allocations(bench, min(args.moves, 5000))
    events = "compact move events" if args.compact else "whole states"
    print(f"core cost per move (bench/core_cost.py): {args.games} games open, {args.moves} moves, "
          f"{events}")  # fmt: skip
    print(f"  CPU us per move, median of {args.rounds}: {statistics.median(rounds):.1f} "
          f"(rounds: {', '.join(f'{r:.1f}' for r in rounds)})")  # fmt: skip
    print(f"  state (or moved event) pushed per move: {state:.0f} bytes")
    print(f"  tracemalloc: peak {mean_peak:.1f} KiB allocated per move on average, "
          f"{worst_peak:.1f} at most; {held / 1024:.1f} KiB more held after the moves")  # fmt: skip
    clock = (
        f"the server's clock (server.gcclock) every {args.moves_per_tick} moves"
        if args.moves_per_tick
        else "no clock"
    )
    print(f"  garbage collections, CPU pause ({clock}; thresholds {gc.get_threshold()}, "
          f"{gc.get_freeze_count()} objects frozen):")  # fmt: skip
    for generation, each in enumerate(pauses):
        print(f"    gen {generation}: {_pauses(each, moved)}")
    print(f"    a full collection at the end: {pauses[2][-1]:.2f} ms, {old} objects in the old "
          "generation (not frozen)")  # fmt: skip


def run_only(args: argparse.Namespace) -> None:
    """The body callgrind measures: set up, then ``--moves`` moves (maybe none)."""
    bench = Bench(args.games, make_scripts(args.scripts), args.compact)
    bench.moves(args.moves)


def callgrind(args: argparse.Namespace) -> None:
    extra = ["--games", str(args.games), "--scripts", str(args.scripts)]
    extra += ["--compact"] if args.compact else []
    ir, malloc = callgrind_per_move(__file__, args.moves, extra)
    print(f"callgrind: {args.games} games open, {args.moves} moves")
    print(f"  instructions per move: {ir:,.0f}")
    print(f"  _PyObject_Malloc calls per move: {malloc:.1f}")


def callgrind_per_move(script: str, moves: int, extra: list[str]) -> tuple[float, float]:
    """Instructions and allocator calls per move of ``script --run-only``: run under
    valgrind's callgrind with no moves and with ``moves``, the difference divided by
    ``moves`` (``extra``: the script's other options, the same for both runs)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    folder = Path(tempfile.mkdtemp(prefix="callgrind-"))
    totals = []
    try:
        for count in (0, moves):
            out = folder / f"callgrind-{count}.out"
            command = [
                "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                sys.executable, script, "--run-only", "--moves", str(count), *extra,
            ]  # fmt: skip
            env = {**os.environ, "PYTHONHASHSEED": "0"}
            subprocess.run(command, check=True, capture_output=True, env=env)
            totals.append(_callgrind_totals(out))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    (base_ir, base_malloc), (ir, malloc) = totals
    return (ir - base_ir) / moves, (malloc - base_malloc) / moves


def _callgrind_totals(path: Path) -> tuple[int, int]:
    """(instructions in all, calls to pymalloc's allocator) from a callgrind output file."""
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(path)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    total = re.search(r"^([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", annotated, re.M)
    assert total is not None, annotated[:2000]
    calls = 0
    text = path.read_text(errors="replace")
    # "cfn=(id) _PyObject_Malloc" then "calls=N ..." lines: sum every call site.
    names = dict(re.findall(r"^c?fn=\((\d+)\) (\S+)", text, re.M))
    ids = {key for key, name in names.items() if name == "_PyObject_Malloc"}
    for match in re.finditer(r"^cfn=\((\d+)\)(?: \S+)?\ncalls=(\d+)", text, re.M):
        if match.group(1) in ids:
            calls += int(match.group(2))
    return int(total.group(1).replace(",", "")), calls


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="What one move costs the server's core.")
    parser.add_argument("--games", type=int, default=1000, help="games open (default 1000)")
    parser.add_argument("--moves", type=int, default=20000, help="moves per round")
    parser.add_argument("--rounds", type=int, default=3, help="CPU rounds (median shown)")
    parser.add_argument("--scripts", type=int, default=64, help="distinct games to replay")
    parser.add_argument("--moves-per-tick", type=int, default=round(1000 * YOUNG_EVERY),
                        help="moves between two ticks of the server's collection clock "
                        "(default: 1,000 moves/s, as paced in bench/load.py; 0: none)")  # fmt: skip
    parser.add_argument("--threshold", type=int, nargs=3, default=None,
                        help="gc thresholds to try instead of the server's")  # fmt: skip
    parser.add_argument(
        "--compact",
        action="store_true",
        help="the players ask for compact move events (PROTOCOL.md section 7a)",
    )
    parser.add_argument("--callgrind", action="store_true",
                        help="instructions and mallocs per move under valgrind")  # fmt: skip
    parser.add_argument("--run-only", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    if args.run_only:
        run_only(args)
    elif args.callgrind:
        callgrind(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
