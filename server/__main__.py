"""``quoridor-server`` / ``python -m server``: run the game server until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import sys
from collections.abc import Coroutine, Sequence

from server import logs
from server.app import GameServer, StartupError
from server.config import Config, parse_config
from server.gcclock import Collections


async def serve_until_stopped(config: Config) -> int:
    """Serve until SIGTERM/SIGINT (exit status 0) or a failing database (1)."""
    loop = asyncio.get_running_loop()
    server = GameServer(config)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, server.stopping.set)
    try:
        async with server.running():
            freeze_heap()
            collections = Collections()
            collections.start()
            try:
                await server.stopping.wait()
            finally:
                collections.stop()
    except StartupError as error:
        sys.stderr.write(f"quoridor-server: {error}\n")
        return 1
    logging.getLogger("quoridor.server").info("stopped")
    return 1 if server.failed else 0


def main(argv: Sequence[str] | None = None) -> None:
    config = parse_config(argv)
    logs.configure(config.log_level, config.log_format)
    tune_interpreter()
    raise SystemExit(_run(serve_until_stopped(config)))


def tune_interpreter() -> None:
    """Garbage collector thresholds, measured with bench/load.py and bench/core_cost.py.

    Young collections are made rarer (every 10,000 net new container objects,
    not 700) so that each pays for more work; full collections are rarer still
    (100 middle collections, not 10): with a thousand games the heap holds a few
    hundred thousand tracked objects and a full collection pauses the loop for
    tens of milliseconds. Rooms free their objects by reference counting, so
    rarer collections cost little memory.
    """
    first, second, _ = gc.get_threshold()
    gc.set_threshold(max(first, 10_000), second, 100)


def freeze_heap() -> None:
    """Once started (games recovered, modules imported): move every object alive now out
    of the collector's sight, so no collection walks them again. They are the server's
    long-lived core; what games allocate later is collected as usual."""
    gc.collect()
    gc.freeze()


def _run(main: Coroutine[None, None, int]) -> int:
    """Run on uvloop where it is installed (faster sockets), else on asyncio's loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


if __name__ == "__main__":
    main()
