"""The Makefile's two commands, as a newcomer runs them on a fresh clone (dry runs)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def dry_run(target: str, tmp_path: Path, *settings: str, path: str | None = None) -> str:
    """What ``make TARGET`` would run with no virtual environment yet (``path``: the PATH
    it runs with)."""
    make = shutil.which("make")
    assert make is not None
    env = {**os.environ, "PATH": path or os.environ["PATH"]}
    command = [make, "--no-print-directory", "-n", "-C", str(ROOT), target]
    command += [f"VENV={tmp_path / 'venv'}", *settings]
    result = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    return result.stdout


pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make here")


def test_make_run_installs_only_what_running_needs(tmp_path: Path) -> None:
    commands = dry_run("run", tmp_path, "COMPILE=no")
    assert "pip install --quiet -e .\n" in commands
    assert "[dev]" not in commands
    assert "deploy.compile --out" not in commands
    assert commands.rstrip().endswith("venv/bin/quoridor-server")


def test_make_run_starts_the_compiled_build_where_it_can_be_built(tmp_path: Path) -> None:
    commands = dry_run("run", tmp_path, "COMPILE=yes")
    assert "pip install --quiet -e .\n" in commands
    assert "[dev]" not in commands
    assert f"deploy.compile --out {tmp_path}/venv/compiled\n" in commands
    assert commands.rstrip().endswith(
        f"PYTHONPATH={tmp_path}/venv/compiled exec {tmp_path}/venv/bin/quoridor-server"
    )


def test_make_run_decides_by_whether_a_c_compiler_is_there(tmp_path: Path) -> None:
    """The machine decides when COMPILE is not given: here with a PATH that has this Python
    and no C compiler, then with the whole PATH (CI installs gcc)."""
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python3").symlink_to(sys.executable)
    without = dry_run("run", tmp_path, path=str(bare))
    assert "deploy.compile --out" not in without
    assert without.rstrip().endswith("venv/bin/quoridor-server")
    checked = subprocess.run(
        [bare / "python3", "-m", "deploy.compile", "--check"],
        cwd=ROOT, env={"PATH": str(bare)}, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert checked.returncode == 1
    assert checked.stderr.startswith("no C compiler (")
    assert "starting the interpreted server" in checked.stderr
    if shutil.which("gcc") is not None or os.environ.get("CI") == "true":
        assert "deploy.compile --out" in dry_run("run", tmp_path)


def test_make_test_installs_the_dev_tools(tmp_path: Path) -> None:
    commands = dry_run("test", tmp_path)
    assert "pip install --quiet -e '.[dev]'" in commands
    assert commands.rstrip().endswith("pytest")


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci[-1] == "make test"
    assert re.search(r"^make test +# ", (ROOT / "README.md").read_text(), re.MULTILINE)
