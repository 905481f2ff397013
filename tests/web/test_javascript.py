"""Every module of the browser client parses as an ES module (``node --check``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from importlib.resources import files

import pytest

MODULES = sorted(entry.name for entry in files("web").iterdir() if entry.name.endswith(".js"))


def node() -> str:
    found = shutil.which("node")
    if found is None:
        message = "node is needed to check the browser client's JavaScript: apt-get install nodejs"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


def check(source: bytes) -> subprocess.CompletedProcess[bytes]:
    # From standard input with --input-type=module: parsed as a module on every Node version.
    return subprocess.run(
        [node(), "--input-type=module", "--check"], input=source, capture_output=True, check=False
    )


@pytest.mark.parametrize("name", MODULES)
def test_module_parses(name: str) -> None:
    result = check(files("web").joinpath(name).read_bytes())
    assert result.returncode == 0, result.stderr.decode()


def test_a_syntax_error_is_caught() -> None:
    assert check(b"import { h } from './dom.js';\nh(;\n").returncode != 0


def test_the_page_loads_every_module() -> None:
    page = files("web").joinpath("index.html").read_text(encoding="utf-8")
    for name in MODULES:
        assert f'"/{name}"' in page, f"{name} is neither preloaded nor loaded by index.html"
