"""The compiled build (deploy/compile.py): it builds, it is what gets imported, the engine's
and the core's tests pass on it, and the server it makes plays a game as a real process."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from deploy.compile import COMPILED, fingerprint
from deploy.compile import build as build_compiled
from protocol.messages import Welcome
from tests.process import LISTENING
from tests.server.test_store import GAME, play, seat_two

ROOT = Path(__file__).resolve().parents[2]
# The tests the compiled modules must pass as the interpreted ones do: the rules, the
# search, and the core's rooms, lobby, pushes and connection handling, the saved records,
# the game history and the metrics (about 50 s).
SUITE = [
    "tests/engine",
    *(
        f"tests/server/test_{name}.py"
        for name in (
            "core rooms lobby compact legal_walls first_move pushes games wire gcclock "
            "stalls journal match errors caps seams ai_games store resume history_flood "
            "operations"
        ).split()
    ),
]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_compiled(tmp_path_factory.mktemp("build") / "compiled")


def compiled_env(out: Path, *rest: Path) -> dict[str, str]:
    """Run with the build first on the path (``-P`` keeps the working folder off it)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, [out, *rest]))}


def test_the_build_says_what_it_was_made_from(compiled: Path) -> None:
    manifest = json.loads((compiled / "BUILD.json").read_text())
    assert manifest["sources"] == fingerprint(ROOT)
    assert manifest["compiled"] == list(COMPILED)
    assert not list(compiled.rglob("*.c")), "the C sources are not kept"


def test_every_listed_module_is_imported_compiled(compiled: Path) -> None:
    names = [path.removesuffix(".py").replace("/", ".") for path in COMPILED]
    names = [name.removesuffix(".__init__") for name in names]
    script = (
        "import importlib, sys\nfor n in sys.argv[1:]: print(importlib.import_module(n).__file__)"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", script, *names], env=compiled_env(compiled),
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    files = done.stdout.split()
    assert len(files) == len(names)
    for name, file in zip(names, files, strict=True):
        assert file.startswith(str(compiled)), (name, file)
        assert file.endswith(tuple(EXTENSION_SUFFIXES)), (name, file)


def test_the_engine_and_core_tests_pass_on_the_compiled_build(compiled: Path) -> None:
    # pytest would put the working tree first on the path ("pythonpath" in pyproject.toml):
    # with that emptied the build comes first; the tests themselves come from the tree.
    check = (
        "import sys, engine.game, server.rooms, pytest\n"
        "from importlib.machinery import EXTENSION_SUFFIXES\n"
        "for module in (engine.game, server.rooms):\n"
        "    assert module.__file__.endswith(tuple(EXTENSION_SUFFIXES)), module.__file__\n"
        "sys.exit(pytest.main(sys.argv[1:]))"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", check, "-p", "no:cacheprovider", "-o", "pythonpath=",
         "-x", *SUITE],
        env=compiled_env(compiled, ROOT), cwd=ROOT, capture_output=True, text=True,
        check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout


async def test_the_compiled_server_plays_a_game(compiled: Path, tmp_path: Path) -> None:
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-P", "-m", "server", "--port", "0", "--db", str(tmp_path / "q.db"),
        env=compiled_env(compiled), cwd=tmp_path, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert server.stderr is not None
    log = b""
    try:
        async with asyncio.timeout(20):
            while not (listening := LISTENING.search(log)):
                line = await server.stderr.readline()
                assert line, log.decode()
                log += line
        assert f"compiled build: {len(COMPILED)} modules compiled with mypyc".encode() in log
        url = f"ws://127.0.0.1:{int(listening.group(2))}"
        a, b, _ = await seat_two(url)
        assert isinstance(a.welcome, Welcome)
        final = await play([a, b], GAME, first_ply=0)
        assert final.result is not None
        assert final.result.winner == 0
        await a.close()
        await b.close()
    finally:
        server.terminate()
        assert await asyncio.wait_for(server.wait(), 20) == 0
