"""What saving one move costs, in CPU time, split by step (no sockets, no second process).

Run from the repository root::

    python bench/store_cost.py                 # 200 games, 40 moves a commit (about 20 s)
    python bench/store_cost.py --per-commit 10

It drives ``server.core.Core`` with its journal on, as the adapter does with a
SQLite store (``bench/core_cost.py``'s games: complete legal games replayed,
finished games' players opening new rooms), and every ``--per-commit`` moves
takes the changes and commits them as the store and its database process would,
here in one process: the batch encoded with msgpack and framed, decoded as the
database process decodes it, written by ``server.database.Database.write`` (a
real SQLite file, WAL, ``synchronous=normal``), and the reply encoded and
decoded. The default batch size is what ``bench/load.py --mode saturate``
measured at saturation (moves/s over commits/s).

Figures: CPU us per move of each step (``time.process_time``: the database's
writes to the log are system time and count), the median of ``--rounds``
rounds; the moves themselves (the core, the journal noting them) are shown
apart. The two processes' shares: the server's is taking and encoding the batch
and decoding the reply, the database process's the rest.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_ROOT))

import msgspec  # noqa: E402

from bench.core_cost import Bench  # noqa: E402
from bench.load import make_scripts  # noqa: E402
from server.database import (  # noqa: E402
    DONE,
    Database,
    Request,
    WriteReply,
    WriteRequest,
    frame,
)

STEPS = ("moves", "take", "encode", "decode", "write", "reply")
SERVER_SIDE = ("take", "encode", "reply")


class Saving:
    """A ``Bench`` whose core saves every ``per_commit`` moves into ``database``."""

    def __init__(self, bench: Bench, database: Database, per_commit: int) -> None:
        self.bench = bench
        self.database = database
        self.per_commit = per_commit
        self.decoder = msgspec.msgpack.Decoder(Request)
        self.reply = msgspec.msgpack.Decoder(WriteReply)
        self.spent = dict.fromkeys(STEPS, 0.0)
        self.moves = 0
        self.commits = 0
        bench.core.persistent = True
        self.commit()  # the rooms opened so far

    def play(self, moves: int) -> None:
        clock, spent = time.process_time, self.spent
        for _ in range(0, moves, self.per_commit):
            t0 = clock()
            self.bench.moves(self.per_commit)
            spent["moves"] += clock() - t0
            # ``Bench.moves`` starts again at the first game: the next commit's moves are
            # the next games'.
            tables = self.bench.tables
            turn = self.per_commit % len(tables)
            tables[:] = tables[turn:] + tables[:turn]
            self.moves += self.per_commit
            self.commit()

    def commit(self) -> None:
        clock, spent = time.process_time, self.spent
        t0 = clock()
        batch = self.bench.core.take_changes()
        t1 = clock()
        payload = frame(msgspec.msgpack.encode(WriteRequest(batch)))
        t2 = clock()
        request = self.decoder.decode(payload[4:])
        assert isinstance(request, WriteRequest)
        t3 = clock()
        answer = frame(DONE + msgspec.msgpack.encode(self.database.write(request.batch)))
        t4 = clock()
        self.reply.decode(answer[5:])
        t5 = clock()
        spent["take"] += t1 - t0
        spent["encode"] += t2 - t1
        spent["decode"] += t3 - t2
        spent["write"] += t4 - t3
        spent["reply"] += t5 - t4
        self.commits += 1

    def reset(self) -> None:
        self.spent = dict.fromkeys(STEPS, 0.0)
        self.moves = self.commits = 0


def report(args: argparse.Namespace) -> None:
    scripts = make_scripts(args.scripts)
    with tempfile.TemporaryDirectory(prefix="store-cost-") as folder:
        database = Database(Path(folder) / "bench.db", "normal")
        try:
            saving = Saving(Bench(args.games, scripts), database, args.per_commit)
            saving.play(args.moves // 4)  # warm-up
            rounds: list[dict[str, float]] = []
            for _ in range(args.rounds):
                saving.reset()
                saving.play(args.moves)
                rounds.append({k: v / saving.moves * 1e6 for k, v in saving.spent.items()})
            size = Path(folder, "bench.db").stat().st_size
        finally:
            database.close()
    print(f"store cost per move (bench/store_cost.py): {args.games} games open, "
          f"{args.moves} moves a round, {args.per_commit} moves a commit, "
          "SQLite synchronous=normal")  # fmt: skip
    print(f"  CPU us per move, median of {args.rounds} rounds (each round):")
    for step in STEPS:
        each = [r[step] for r in rounds]
        side = "server" if step in SERVER_SIDE else "database" if step != "moves" else "core"
        print(f"    {step:8s} {side:9s} {statistics.median(each):7.2f}"
              f"   ({', '.join(f'{x:.2f}' for x in each)})")  # fmt: skip
    totals = [sum(r[s] for s in STEPS if s != "moves") for r in rounds]
    server = [sum(r[s] for s in SERVER_SIDE) for r in rounds]
    print(f"  saving, in all: {statistics.median(totals):.2f} us per move "
          f"(server {statistics.median(server):.2f}, database "
          f"{statistics.median(totals) - statistics.median(server):.2f}); "
          f"database file {size / 1024:.0f} KiB")  # fmt: skip


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="What saving one move costs.")
    parser.add_argument("--games", type=int, default=200, help="games open (default 200)")
    parser.add_argument("--moves", type=int, default=20000, help="moves per round")
    parser.add_argument("--per-commit", type=int, default=40, help="moves a commit (default 40)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (median shown)")
    parser.add_argument("--scripts", type=int, default=64, help="distinct games to replay")
    return parser.parse_args(argv)


if __name__ == "__main__":
    report(parse(None))
