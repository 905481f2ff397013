"""A real Chromium for the browser tests: one per session, a fresh server per test.

Playwright drives the system's Chromium (Debian's ``chromium`` package), never a
browser of its own. Without one, the tests skip on a developer's machine and
fail under ``CI=true``: CI must never pass by not running them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, async_playwright

from server.app import GameServer
from server.config import Config
from tests.web.pages import OPENED

LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
]
HOW_TO_GET_IT = (
    "the browser tests need Chromium: apt-get install chromium (Debian/Ubuntu), "
    "or set QUORIDOR_CHROMIUM to a Chromium or Chrome executable"
)


def chromium_path() -> str | None:
    explicit = os.environ.get("QUORIDOR_CHROMIUM")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests cannot run under CI: {reason}")
    pytest.skip(reason)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Browser]:
    path = chromium_path()
    if path is None:
        _unavailable(HOW_TO_GET_IT)
    assert path is not None
    async with async_playwright() as playwright:
        try:
            launched = await playwright.chromium.launch(executable_path=path, args=LAUNCH_ARGS)
        except Exception as error:  # a broken install: say so, the same way
            _unavailable(f"{HOW_TO_GET_IT} ({path} did not start: {error})")
            raise
        yield launched
        await launched.close()


@pytest_asyncio.fixture(loop_scope="session")
async def site() -> AsyncIterator[GameServer]:
    """A real server in the test's event loop, its database in memory."""
    # Every page of every test comes from 127.0.0.1, and a page loading opens up to six
    # connections for its files: four players loading at once passed the default 20 (429).
    config = Config(port=0, rate=1000, burst=1000, grace=30, deliberate_grace=30, max_per_ip=100)
    async with GameServer(config).running() as running:
        yield running


@pytest_asyncio.fixture(loop_scope="session")
async def short_grace_site() -> AsyncIterator[GameServer]:
    """Players away for more than half a second are past their grace."""
    config = Config(port=0, rate=1000, burst=1000, grace=0.5, deliberate_grace=0.5, max_per_ip=100)
    async with GameServer(config).running() as running:
        yield running


@pytest.fixture(autouse=True)
def _forget_opened_players() -> None:
    OPENED.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    """A failed browser test shows what each of its pages last sent and received, and
    what they logged as errors: the trace a flaky test otherwise leaves none of."""
    report = yield
    if isinstance(report, pytest.TestReport) and report.failed:
        for number, player in enumerate(OPENED):
            lines = [*player.frames, *(f"error: {error}" for error in player.errors)]
            report.sections.append((f"page {number} frames", "\n".join(lines)))
    return report
