"""Our server next to what users could pick instead, measured in the same run (issue 20).

Run from the repository root (Node 20 and npm needed; about 6 minutes)::

    python bench/rivals.py
    python bench/rivals.py --games 50 --duration 2 --rounds 1   # a quick look

Each side serves 200 saturated two-player games (``--games``; a player moves as soon as it
sees its turn), measured for 8 s (``--duration``) after a warm-up:

colyseus, patch every 50 ms
    Colyseus 0.16 (``bench/rivals/colyseus_server.js``) with its default patch rate: the
    room's changes go out every 50 ms, which caps a game at one move per patch.
colyseus, patch after every move
    the same room with no patch interval and ``broadcastPatch()`` after each move.
boardgame.io
    boardgame.io 0.50's Server (``bench/rivals/boardgameio_server.js``), its in-memory
    storage, its lobby API to create and join matches, socket.io to play them.
ours, compiled
    this checkout's server as ``deploy/compile.py`` builds it, in memory, driven by
    ``bench/load.py``'s saturation (its code, imported): the scripted games with every rule
    checked and the whole state (legal walls included) pushed to each player; ``+compact``:
    the players ask for compact move events instead (PROTOCOL.md, section 7a).

The rivals play a trivial turn-based game (the state is the list of moves and the seat to
move; a move appends itself and flips the turn; a move out of turn is refused; no other
rule), driven by their own client libraries (colyseus.js; boardgame.io's client on socket.io)
from one Node process (``bench/rivals/load.js``). By default each pair plays one endless game
for the whole round, as issue 20 measured them, while our pairs play scripted games of 13 to 42
moves and open a new room after each (create, join, leave: in our figures, not theirs).
``--rival-games scripted`` ends the rivals' games after as many moves as ours (their lengths,
in turn) and has their players start a new one the framework's way (Colyseus: matchmaking and
a new WebSocket per player and room; boardgame.io: its lobby API and a new socket.io
connection), so that the rooms' cost is in every side's figures.

Rounds alternate between the sides (``--rounds``, default 3, every round printed) so that a
drift of the shared machine's speed falls on all of them; the summary gives each figure's
median over the rounds: moves a second; the server process's CPU per move (utime + stime
from ``/proc``, all its threads; Node's process for the rivals); the bytes of the messages
each player received per move (the payloads, WebSocket framing left out); and moves per
server CPU second, ours (whole states) over theirs.

The Node packages (exact versions in ``bench/rivals/package-lock.json``) are installed with
``npm ci`` into a cache folder outside the repository, once per lock file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path: put the repo root there.
_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_ROOT))

from bench import load  # noqa: E402
from deploy.compile import build as build_compiled  # noqa: E402

NODE_FOLDER = _HERE / "rivals"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "quoridor-bench-rivals"
SETUP_LIMIT = 180.0
"""Seconds the Node load generator may take to seat its games before the run gives up."""
REFERENCE = "ours, compiled"
"""The side the others are compared with: our server pushing whole states."""


# -- what one measurement gives ---------------------------------------------------------


@dataclass
class Measured:
    """One side's figures in one round."""

    side: str
    moves_per_s: float
    cpu_us_per_move: float
    bytes_per_move: float
    """Payload bytes each player received per move."""
    loadgen_cores: float
    other_cores: float
    """What every other process on the machine used meanwhile, in cores."""
    problems: dict[str, int] = field(default_factory=dict)


@dataclass
class LoadgenResult:
    """What ``bench/rivals/load.js`` counted inside the measured window."""

    moves: int
    bytes: int
    games: int
    errors: dict[str, int]


def parse_loadgen(line: str) -> LoadgenResult:
    """The load generator's JSON result line."""
    data = json.loads(line)
    return LoadgenResult(
        int(data["moves"]), int(data["bytes"]), int(data["games"]), dict(data["errors"])
    )


def from_load_run(side: str, run: load.Run) -> Measured:
    """Our server's figures from one of ``bench/load.py``'s saturation runs."""
    problems = dict(run.errors)
    if run.closed_unexpectedly:
        problems["closed unexpectedly"] = run.closed_unexpectedly
    return Measured(
        side, run.rate, run.cpu_per_move, run.state_bytes, run.loadgen_cpu, run.other_cpu,
        problems,
    )  # fmt: skip


# -- the summary ------------------------------------------------------------------------


def per_cpu_second(cpu_us_per_move: float) -> float:
    return 1e6 / cpu_us_per_move if cpu_us_per_move > 0 else float("nan")


def medians(rounds: list[Measured]) -> Measured:
    """Each figure's median over the rounds of one side (each figure on its own)."""

    def middle(figure: Callable[[Measured], float]) -> float:
        return statistics.median(figure(measured) for measured in rounds)

    problems: dict[str, int] = {}
    for measured in rounds:
        for name, count in measured.problems.items():
            problems[name] = problems.get(name, 0) + count
    return Measured(
        rounds[0].side,
        middle(lambda m: m.moves_per_s),
        middle(lambda m: m.cpu_us_per_move),
        middle(lambda m: m.bytes_per_move),
        middle(lambda m: m.loadgen_cores),
        middle(lambda m: m.other_cores),
        problems,
    )


def describe(measured: Measured) -> str:
    """One round of one side, on one line."""
    text = (
        f"{measured.side:<42} {measured.moves_per_s:8,.0f} moves/s  "
        f"{measured.cpu_us_per_move:6.1f} us/move  {measured.bytes_per_move:6.0f} B/player/move  "
        f"(load generator {measured.loadgen_cores:.2f} cores, others {measured.other_cores:.2f})"
    )
    if measured.problems:
        text += f"  PROBLEMS: {measured.problems}"
    return text


def summary(results: list[Measured], rounds: int) -> list[str]:
    """The table of medians, with moves per server CPU second, ours over theirs."""
    sides: dict[str, list[Measured]] = {}
    for measured in results:
        sides.setdefault(measured.side, []).append(measured)
    middles = [medians(rounds_of_side) for rounds_of_side in sides.values()]
    # Ours with whole states; with compact events alone when only those ran (--compact on).
    ours = next((m for m in middles if m.side == REFERENCE), None) or next(
        (m for m in middles if m.side.startswith(REFERENCE)), None
    )
    lines = [
        f"median of {rounds} round{'s' if rounds > 1 else ''}:",
        f"{'side':<42} {'moves/s':>8}  {'CPU us/move':>11}  {'B/player/move':>13}  "
        f"{'moves/CPU s':>11}  {'ours/theirs':>11}",
    ]
    for middle in middles:
        rate = per_cpu_second(middle.cpu_us_per_move)
        ratio = per_cpu_second(ours.cpu_us_per_move) / rate if ours is not None else float("nan")
        lines.append(
            f"{middle.side:<42} {middle.moves_per_s:8,.0f}  {middle.cpu_us_per_move:11.1f}  "
            f"{middle.bytes_per_move:13.0f}  {rate:11,.0f}  {ratio:11.2f}"
        )
    return lines


# -- the Node side ----------------------------------------------------------------------


def node_modules(log: Callable[[str], None]) -> Path:
    """The rivals' packages, installed once per lock file with ``npm ci`` in a cache folder."""
    lock = NODE_FOLDER / "package-lock.json"
    folder = CACHE / hashlib.sha256(lock.read_bytes()).hexdigest()[:12]
    installed = folder / "node_modules"
    if (installed / ".package-lock.json").exists():
        return installed
    log(f"installing the rivals' packages with npm ci in {folder} (once)")
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(NODE_FOLDER / name, folder / name)
    subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder, check=True
    )
    return installed


def package_version(modules: Path, package: str) -> str:
    data = json.loads((modules / package / "package.json").read_text())
    return str(data["version"])


def node_server(label: str, script: str, *options: str) -> load.ServerProcess:
    """A rival's server: ``node bench/rivals/SCRIPT`` (``--port`` added by ``start``)."""
    return load.ServerProcess(label, ["node", str(NODE_FOLDER / script), *options])


def run_rival(
    server: load.ServerProcess, kind: str, games: int, lengths: list[int], warmup: float,
    duration: float,
) -> Measured:  # fmt: skip
    """One round: the Node load generator seats ``games`` pairs, plays them flat out and
    counts the moves of the window, while this process reads the server's CPU."""
    config = {"kind": kind, "port": server.port, "games": games, "lengths": lengths}
    loadgen = subprocess.Popen(
        ["node", str(NODE_FOLDER / "load.js"), json.dumps(config)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert loadgen.stdin is not None
    assert loadgen.stdout is not None
    # A load generator stuck while seating its games would block the readline below.
    watchdog = threading.Timer(SETUP_LIMIT + warmup + duration, loadgen.kill)
    watchdog.start()
    try:
        if loadgen.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{server.label}: the load generator did not seat its games")
        start = time.time() + warmup
        end = start + duration
        loadgen.stdin.write(f"go {start} {end}\n")
        loadgen.stdin.flush()
        time.sleep(max(0.0, start - time.time()))
        cpu0, ours0, busy0 = server.cpu(), load.process_cpu(loadgen.pid), load.machine_busy()
        time.sleep(max(0.0, end - time.time()))
        cpu1, ours1, busy1 = server.cpu(), load.process_cpu(loadgen.pid), load.machine_busy()
        window = duration
        result = parse_loadgen(loadgen.stdout.readline())
    finally:
        watchdog.cancel()
        loadgen.kill()
        loadgen.wait()
    server_cpu, loadgen_cpu = cpu1 - cpu0, ours1 - ours0
    return Measured(
        server.label,
        result.moves / window,
        server_cpu / result.moves * 1e6 if result.moves else float("nan"),
        result.bytes / result.moves / 2 if result.moves else float("nan"),
        loadgen_cpu / window,
        max(0.0, busy1 - busy0 - server_cpu - loadgen_cpu) / window,
        result.errors,
    )


# -- the run ----------------------------------------------------------------------------


@dataclass
class Side:
    """A server in the comparison and how one round of it is measured."""

    server: load.ServerProcess
    measure: Callable[[load.ServerProcess], Measured]


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Our server next to Colyseus and boardgame.io, in the same run."
    )
    parser.add_argument("--games", type=int, default=200, help="saturated games (default 200)")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds measured (8)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring (3)")
    parser.add_argument("--rounds", type=int, default=load.ROUNDS, help="rounds (default 3)")
    parser.add_argument("--compact", choices=["off", "on", "both"], default="both",
                        help="our players ask for whole states (off), compact move events "
                        "(on) or both, as in bench/load.py (default both)")  # fmt: skip
    parser.add_argument("--rival-games", choices=["endless", "scripted"], default="endless",
                        help="the rivals' pairs play one endless game (the default, as issue 20 "
                        "measured them) or games as long as our scripted ones, a new room "
                        "after each")  # fmt: skip
    parser.add_argument("--only", choices=["all", "colyseus", "boardgameio", "ours"],
                        default="all", help="run only these sides (default all)")  # fmt: skip
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    began = time.monotonic()

    def progress(text: str) -> None:
        print(f"[{time.monotonic() - began:5.0f} s] {text}", file=sys.stderr, flush=True)

    if shutil.which("node") is None or shutil.which("npm") is None:
        print("bench/rivals.py needs Node (20 or later) and npm on the PATH", file=sys.stderr)
        return 2
    modules = node_modules(progress)
    # Node finds the packages there from bench/rivals/*.js (they are CommonJS).
    os.environ["NODE_PATH"] = str(modules)
    os.environ["NODE_ENV"] = "production"
    progress("computing 64 game scripts with the engine")
    scripts = load.make_scripts(64)
    lengths = [len(script) for script in scripts] if args.rival_games == "scripted" else []
    settings = load.Settings(1, args.warmup, scripts, 0, log=progress)
    temp = Path(tempfile.mkdtemp(prefix="quoridor-rivals-"))
    sides = make_sides(args, modules, lengths, settings, temp, progress)
    print(f"{args.games} saturated two-player games a side, {args.duration:g} s measured after "
          f"{args.warmup:g} s of warm-up, the rivals' games {args.rival_games}; "
          f"load average {_load_average()} at the start")  # fmt: skip
    servers = list({id(side.server): side.server for side in sides}.values())
    results: list[Measured] = []
    try:
        for server in servers:
            progress(f"starting {server.label}")
            server.start()
        for number in range(args.rounds):
            print(f"round {number + 1} of {args.rounds}:", flush=True)
            for side in sides:
                progress(f"{side.server.label}: round {number + 1}")
                measured = side.measure(side.server)
                results.append(measured)
                print("  " + describe(measured), flush=True)
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(temp, ignore_errors=True)
    print(f"load average {_load_average()} at the end")
    print("\n".join(summary(results, args.rounds)))
    return 0


def make_sides(
    args: argparse.Namespace, modules: Path, lengths: list[int], settings: load.Settings,
    temp: Path, progress: Callable[[str], None],
) -> list[Side]:  # fmt: skip
    """The servers this run compares, in the order each round measures them."""

    def rival(kind: str) -> Callable[[load.ServerProcess], Measured]:
        return lambda server: run_rival(
            server, kind, args.games, lengths, args.warmup, args.duration
        )

    def ours(compact: bool) -> Callable[[load.ServerProcess], Measured]:
        def measure(server: load.ServerProcess) -> Measured:
            run = load.run_games(
                server, "ours", "saturate", args.games, args.duration, settings, compact=compact
            )
            return from_load_run(server.label + (" +compact" if compact else ""), run)

        return measure

    sides = []
    if args.only in ("all", "colyseus"):
        colyseus = f"colyseus {package_version(modules, '@colyseus/core')}"
        for patch, label in (("rate", "patch every 50 ms"), ("move", "patch after every move")):
            server = node_server(f"{colyseus}, {label}", "colyseus_server.js", "--patch", patch)
            sides.append(Side(server, rival("colyseus")))
    if args.only in ("all", "boardgameio"):
        label = f"boardgame.io {package_version(modules, 'boardgame.io')}"
        sides.append(Side(node_server(label, "boardgameio_server.js"), rival("boardgameio")))
    if args.only in ("all", "ours"):
        progress("building the compiled server (deploy/compile.py, about a minute)")
        root = build_compiled(temp / "compiled")
        server = load.our_server("", None, REFERENCE, root=root)
        for compact in {"off": [False], "on": [True], "both": [False, True]}[args.compact]:
            sides.append(Side(server, ours(compact)))
    return sides


def _load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())
