"""``quoridor-server`` / ``python -m server``: run the game server until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Sequence

from server.app import GameServer
from server.config import Config, parse_config


async def serve_until_stopped(config: Config) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with GameServer(config).running():
        await stop.wait()
    logging.getLogger("quoridor.server").info("stopped")


def main(argv: Sequence[str] | None = None) -> None:
    config = parse_config(argv)
    logging.basicConfig(
        level=config.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    asyncio.run(serve_until_stopped(config))


if __name__ == "__main__":
    main()
