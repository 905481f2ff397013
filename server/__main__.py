"""``quoridor-server`` / ``python -m server``: run the game server until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import sys
from collections.abc import Coroutine, Sequence
from importlib.machinery import EXTENSION_SUFFIXES

from server import logs
from server.config import Config, parse_config, unknown_variables
from server.gcclock import Collections

FULL_BY_CLOCK_ONLY = 1_000_000_000
"""The third threshold: middle collections before the interpreter itself would start a
full one (the clock's ten a second would take three years)."""


async def serve_until_stopped(config: Config) -> int:
    """Serve until SIGTERM/SIGINT (exit status 0) or a failing database (1)."""
    from server.app import GameServer, StartupError  # see ``main``

    loop = asyncio.get_running_loop()
    server = GameServer(config)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, server.signalled)
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
    """Start the server. A Ctrl-C before it listens (while the server's modules load: they
    are imported here, not by this module, for that reason) ends it in one line, not a
    stack (an outside newcomer review pressed it in the first 0.2 s)."""
    try:
        _main(argv)
    except KeyboardInterrupt:
        sys.stderr.write("quoridor-server: interrupted while starting\n")
        raise SystemExit(130) from None


def _main(argv: Sequence[str] | None) -> None:
    config = parse_config(argv)
    logs.configure(config.log_level, config.log_format)
    log = logging.getLogger("quoridor.server")
    for sentence in unknown_variables():
        log.warning("%s", sentence)
    if not config.db:
        log.warning(
            "no database (--db is empty): games, accounts and the history are kept in "
            "memory only, and lost when the server stops"
        )
    tune_interpreter()
    import server.app  # noqa: F401 - the modules that count as compiled, loaded (see main)

    if compiled := compiled_modules():
        log.info(
            "compiled build: %d modules compiled with mypyc (%s)",
            len(compiled), sys.modules[compiled[0]].__file__,
        )  # fmt: skip
    raise SystemExit(_run(serve_until_stopped(config)))


def compiled_modules() -> list[str]:
    """The engine's, the protocol's and the server's loaded modules that come from a
    compiled build (deploy/compile.py) rather than from their Python source."""
    return sorted(
        name
        for name, module in list(sys.modules.items())
        if name.partition(".")[0] in ("engine", "protocol", "server")
        and str(getattr(module, "__file__", None)).endswith(tuple(EXTENSION_SUFFIXES))
    )


def tune_interpreter() -> None:
    """Garbage collector thresholds: a backstop behind the collection clock
    (``server.gcclock``), measured with bench/load.py and bench/core_cost.py.

    The clock collects the young and middle generations many times a second, so
    the interpreter's young threshold (10,000 net new container objects, not
    700) only trips in a burst. Full collections are the clock's alone, once an
    hour: every middle collection the clock runs counts towards the third
    threshold, which at 100 would let the next burst start a full collection
    (65-100 ms with a thousand games open); ``FULL_BY_CLOCK_ONLY`` is never
    reached between two of the clock's.
    """
    first, second, _ = gc.get_threshold()
    gc.set_threshold(max(first, 10_000), second, FULL_BY_CLOCK_ONLY)


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
