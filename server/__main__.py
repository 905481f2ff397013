"""``quoridor-server`` / ``python -m server``: start the game server."""

from __future__ import annotations

import asyncio
import contextlib
import signal

from websockets.asyncio.server import ServerConnection, serve


async def _handler(connection: ServerConnection) -> None:
    await connection.close(1013, "not ready yet")


async def _serve(host: str, port: int) -> None:
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set_result, None)
    async with serve(_handler, host, port):
        print(f"quoridor server listening on ws://{host}:{port}", flush=True)
        await stop


def main() -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve("127.0.0.1", 8765))


if __name__ == "__main__":
    main()
