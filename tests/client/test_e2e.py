"""End to end: the server and two ``quoridor`` processes in plain mode, stdin from a pipe."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from client.connection import invoked_as

ROOT = Path(__file__).resolve().parents[2]
WITHIN = 15.0
"""Seconds for each process to do its part (starting Python included)."""

ALICE = "e2 e3 e4 e5 e6 e7 e8 e9"
BOB = "d9 d8 e3h e3v a6h d7 d6 d5 d4"
"""Bob's e3v crosses his own e3h: the server refuses it and the game goes on."""


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("NO_COLOR", None)
    return env


@contextlib.asynccontextmanager
async def game_server(workdir: Path) -> AsyncIterator[str]:
    """``python -m server --port 0``; its address, read from its log."""
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--port",
        "0",
        cwd=workdir,  # anything it writes (a database) stays in the test's folder
        env=environment(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert server.stderr is not None
    try:
        async with asyncio.timeout(WITHIN):
            while True:
                line = (await server.stderr.readline()).decode()
                assert line, "the server exited before listening"
                found = re.search(r"listening on (ws://[\d.]+:\d+)", line)
                if found:
                    break
        drain = asyncio.create_task(server.stderr.read())  # keep its log flowing
        yield found.group(1)
    finally:
        if server.returncode is None:
            server.terminate()
        await asyncio.wait_for(server.wait(), WITHIN)
    await drain


async def client(url: str, name: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client",
        "--server",
        url,
        "--name",
        name,
        *args,
        env=environment(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_two_client_processes_play_a_game_to_the_end(tmp_path: Path) -> None:
    async with game_server(tmp_path) as url:
        alice = await client(url, "Alice", "create")  # plain: stdin is not a terminal
        assert alice.stdin is not None
        assert alice.stdout is not None
        alice.stdin.write(ALICE.replace(" ", "\n").encode() + b"\n")
        await alice.stdin.drain()
        alice.stdin.close()  # the whole game is piped in before Bob even arrives
        alice_lines: list[str] = []
        async with asyncio.timeout(WITHIN):
            while not (code := re.search(r"joins with: .* join (\w+)", "\n".join(alice_lines))):
                alice_lines.append((await alice.stdout.readline()).decode())
        room = code.group(1)
        bob = await client(url, "Bob", "--plain", "join", room)
        bob_out, bob_err = await asyncio.wait_for(
            bob.communicate(BOB.replace(" ", "\n").encode() + b"\n"), WITHIN
        )
        rest, alice_err = await asyncio.wait_for(alice.communicate(), WITHIN)
    alice_text = "".join(alice_lines) + rest.decode()
    bob_text = bob_out.decode()
    assert (alice.returncode, bob.returncode) == (0, 0), alice_err + bob_err
    assert alice_err == bob_err == b""
    assert alice_text.splitlines()[-1] == "You moved to e9. Game over: you win!"
    assert bob_text.splitlines()[-1] == "Alice moved to e9. Game over: you lose, Alice wins."
    assert "Error: e3v refused: wall e3v crosses e3h." in bob_text.splitlines()
    assert "Bob placed a wall at e3h." in alice_text
    assert "Traceback" not in alice_text + bob_text


async def test_a_server_that_is_down_is_told_plainly(tmp_path: Path) -> None:
    async with game_server(tmp_path) as url:
        pass  # it stopped: nothing listens there any more
    process = await client(url, "Alice", "list")
    out, err = await asyncio.wait_for(process.communicate(b""), WITHIN)
    assert process.returncode == 1
    assert out == b""
    port = url.rsplit(":", 1)[1]
    assert err.decode() == (
        f"quoridor: nothing answers at 127.0.0.1:{port}: is the server running, on that port?"
        " (another address: --server ws://host:port, or QUORIDOR_SERVER)\n"
    )


async def test_the_client_never_loads_the_rules_engine() -> None:
    # Every module of the terminal client, except client/bot.py: the bot is the
    # reference example of a computer player, and thinking needs the engine's
    # search (engine.ai.choose_move), which it runs locally. It still talks to the
    # server through the public protocol only, and ``quoridor`` imports it only
    # when the ``bot`` subcommand runs (that is checked here too: client.__main__
    # is among the modules imported).
    modules = sorted(
        f"client.{path.stem}"
        for path in (ROOT / "client").glob("*.py")
        if path.stem not in ("__init__", "bot")
    )
    assert "client.__main__" in modules
    assert "client.viewer" in modules
    code = (
        f"import sys, {', '.join(modules)}; "
        "rules = sorted(m for m in sys.modules if m.split('.')[0] in ('engine', 'server')); "
        "sys.exit(f'loaded: {rules}' if rules else 0)"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, env=environment(), stderr=asyncio.subprocess.PIPE
    )
    _, err = await asyncio.wait_for(process.communicate(), WITHIN)
    assert process.returncode == 0, err.decode()


async def test_the_bot_is_the_one_module_that_loads_the_engine() -> None:
    code = "import sys, client.bot; sys.exit('engine.ai' not in sys.modules)"
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", code, env=environment())
    assert await asyncio.wait_for(process.wait(), WITHIN) == 0


async def test_the_join_hint_is_a_command_the_opponent_can_type(tmp_path: Path) -> None:
    async with game_server(tmp_path) as url:
        alice = await client(url, "Alice", "create")
        assert alice.stdout is not None
        async with asyncio.timeout(WITHIN):
            while b"joins with" not in (line := await alice.stdout.readline()):
                pass
        alice.kill()
        await alice.wait()
    hint = line.decode().split("joins with: ", 1)[1].split()
    # Run as ``python -m client`` here: that is what the hint says, with the server's address.
    assert hint[:5] == ["python", "-m", "client", "--server", url]
    assert hint[5] == "join"


def test_the_hint_names_the_client_as_it_was_started(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(sys, "argv", [".venv/bin/quoridor", "create"])
    assert invoked_as("ws://127.0.0.1:8765") == ".venv/bin/quoridor"
    assert invoked_as("ws://10.0.0.5:9000") == ".venv/bin/quoridor --server ws://10.0.0.5:9000"
    monkeypatch.setattr(sys, "argv", ["quoridor", "create"])
    assert invoked_as("ws://127.0.0.1:8765") == "quoridor"
