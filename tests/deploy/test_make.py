"""The Makefile's two commands, as a newcomer runs them on a fresh clone (dry runs)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def dry_run(target: str, tmp_path: Path) -> str:
    """What ``make TARGET`` would run with no virtual environment yet."""
    result = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-n",
            "-C",
            str(ROOT),
            target,
            f"VENV={tmp_path / 'venv'}",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make here")


def test_make_run_installs_only_what_running_needs(tmp_path: Path) -> None:
    commands = dry_run("run", tmp_path)
    assert "pip install --quiet -e .\n" in commands
    assert "[dev]" not in commands
    assert commands.rstrip().endswith("quoridor-server")


def test_make_test_installs_the_dev_tools(tmp_path: Path) -> None:
    commands = dry_run("test", tmp_path)
    assert "pip install --quiet -e '.[dev]'" in commands
    assert commands.rstrip().endswith("pytest")


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci[-1] == "make test"
    assert re.search(r"^make test +# ", (ROOT / "README.md").read_text(), re.MULTILINE)
