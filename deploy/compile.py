"""Build the compiled server: the rules engine and the server's move path compiled to C
with mypyc, beside the rest of the packages as they are.

From the repository root, with mypy installed (``make run`` does all of it where a C compiler
is there)::

    .venv/bin/python -m deploy.compile                    # into .venv/compiled
    PYTHONPATH=.venv/compiled .venv/bin/quoridor-server   # the same server, about 1.7x the moves

The source stays plain typed Python (``mypy --strict`` clean, the standard library only in
``engine/``); this is an optional build of it for operators, not a second implementation.
The packages are copied into a fresh folder and compiled there, never in the working tree:
a compiled module sitting next to its source would shadow every later edit of it. The
folder's ``BUILD.json`` names the modules compiled and the sources' fingerprint; the server
logs at start how many of its modules are compiled. It needs a C compiler and Python's
headers (Debian: ``apt-get install gcc python3-dev``); it takes about a minute.

Compiled: ``COMPILED`` below: what runs for every move (bench/core_cost.py's profile)
and every game (its record, its history), the engine and the bots' search. Not compiled:
``engine/ai/evaluation.py``, whose frozen dataclasses travel between processes by pickle,
which mypyc's native frozen classes do not support; modules that define msgspec Structs
(mypyc cannot build them) or classes that subclass built-in exceptions other than
``Exception`` (``server/store.py``); a class that an interpreted module subclasses
(``server/directory.py``: the cluster's directory extends it); everything that runs once
per connection or less.

Compiled code checks at run time the types its annotations declare: a value of another type
(a library returning a list where its stubs say tuple) raises ``TypeError`` where Python
would go on. ``tests/deploy/test_compile.py`` runs the engine's and the core's tests on the
build in ``make test``; the whole suite passed on it too (by hand: PYTHONPATH=BUILD:. with
``python -P``, and ``-o pythonpath=`` for pytest, as that test does).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "protocol", "server", "client", "web")
COMPILED = (
    "engine/__init__.py",
    "engine/board.py",
    "engine/errors.py",
    "engine/game.py",
    "engine/notation.py",
    "engine/variant.py",
    "engine/ai/__init__.py",
    "engine/ai/endgame.py",
    "engine/ai/multi.py",
    "engine/ai/position.py",
    "engine/ai/search.py",
    "protocol/codec.py",
    "server/actions.py",
    "server/app.py",
    "server/clock.py",
    "server/computer.py",
    "server/context.py",
    "server/core.py",
    "server/gcclock.py",
    "server/gcwatch.py",
    "server/history.py",
    "server/historydesk.py",
    "server/idlers.py",
    "server/journal.py",
    "server/lobby.py",
    "server/metrics.py",
    "server/play.py",
    "server/quickmatch.py",
    "server/ratelimit.py",
    "server/registry.py",
    "server/roomhost.py",
    "server/rooms.py",
    "server/seating.py",
    "server/sessions.py",
    "server/snapshot.py",
    "server/stalls.py",
    "server/timings.py",
    "server/wire.py",
)
MYPY_CONFIG = """\
[mypy]
python_version = 3.11
[mypy-pyspiel.*,open_spiel.*,confusable_homoglyphs,confusable_homoglyphs.*]
ignore_missing_imports = True
"""
# What the child process runs in the copy: setuptools' build_ext with mypyc's extensions,
# the compiled modules left next to their sources in the copy ("--inplace").
BUILD_SCRIPT = """\
import sys
from mypyc.build import mypycify
from setuptools import setup
setup(name="quoridor-compiled", script_args=["build_ext", "--inplace"],
      ext_modules=mypycify(sys.argv[1:], opt_level="3"))
"""


def missing_tools() -> str | None:
    """What this machine lacks to build (a C compiler, Python's headers); None if nothing."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no headers for this Python (Python.h)"
    return None


def fingerprint(root: Path) -> str:
    """SHA-256 over every Python source of the packages, in a fixed order."""
    digest = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def build(out: Path, root: Path = ROOT, quiet: bool = True) -> Path:
    """Copy the packages of ``root`` into a new folder, compile ``COMPILED`` there, and put
    the result at ``out`` (replacing what was there only once the build succeeded)."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".compile-", dir=out.parent))
    try:
        for package in PACKAGES:
            shutil.copytree(root / package, work / package,
                            ignore=shutil.ignore_patterns("__pycache__", "*.so"))  # fmt: skip
        (work / "mypy.ini").write_text(MYPY_CONFIG)
        # The environment's packages (websockets, msgspec) must be visible to mypy, not
        # the working tree's own sources: the copy is the only ``engine``/``server``.
        env = {**os.environ, "PYTHONPATH": "", "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(
            [sys.executable, "-c", BUILD_SCRIPT, *COMPILED], cwd=work, env=env,
            capture_output=quiet, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(
                f"the compiled build failed:\n{done.stdout}{done.stderr}\n"
                "`make run COMPILE=no` starts the interpreted server"
            )
        _tidy(work)
        manifest = {"sources": fingerprint(root), "compiled": list(COMPILED)}
        (work / "BUILD.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if out.exists():
            shutil.rmtree(out)
        work.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def _tidy(work: Path) -> None:
    """Keep what is imported (sources, compiled modules, the static files), drop the C."""
    shutil.rmtree(work / "build", ignore_errors=True)
    (work / "mypy.ini").unlink()
    for leftover in [*work.glob("*.c"), *work.glob("*.h"), *work.glob(".mypy_cache")]:
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".venv" / "compiled",
                        help="where the compiled packages go (default .venv/compiled)")  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="show the compiler's output")
    parser.add_argument("--check", action="store_true",
                        help="build nothing; exit 1, saying why, if it cannot build")  # fmt: skip
    args = parser.parse_args()
    if args.check:
        missing = missing_tools()
        if missing is not None:
            raise SystemExit(
                f"{missing}: starting the interpreted server, which takes about 1.7x the CPU"
                " a move (Debian: apt-get install gcc python3-dev for the compiled build)"
            )
        return
    if (missing := missing_tools()) is not None:
        raise SystemExit(
            f"cannot compile: {missing} (Debian: apt-get install gcc python3-dev); "
            "`make run COMPILE=no` starts the interpreted server"
        )
    print("compiling the rules engine and the move path with mypyc (a minute or two, once)")
    out = build(args.out, quiet=not args.verbose)
    print(f"compiled {len(COMPILED)} modules into {out}")


if __name__ == "__main__":
    main()
