"""A view that records what the controller tells it, and controllers to play with."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from client.connection import Backoff, Connection
from client.controller import Controller, Intent, Kind
from protocol.messages import Welcome

T = TypeVar("T")

WITHIN = 5.0
"""Seconds any expected event may take before a test fails."""


class Recorder:
    """The View protocol, writing everything down."""

    live_board = False

    def __init__(self) -> None:
        self.notices: list[tuple[Kind, str]] = []
        self.boards = 0

    def notice(self, kind: Kind, text: str) -> None:
        self.notices.append((kind, text))

    def changed(self) -> None:
        pass

    def show_board(self) -> None:
        self.boards += 1

    def texts(self, kind: Kind | None = None) -> list[str]:
        return [text for k, text in self.notices if kind is None or k == kind]

    def has(self, fragment: str) -> bool:
        return any(fragment in text for text in self.texts())

    async def wait_for(self, fragment: str, within: float = WITHIN) -> str:
        """The first notice containing ``fragment``, waiting for it to come."""
        return await until(lambda: next((t for t in self.texts() if fragment in t), None), within)


async def until(probe: Callable[[], T | None], within: float = WITHIN) -> T:
    """Poll ``probe`` until it returns something other than None."""
    async with asyncio.timeout(within):
        while (value := probe()) is None:  # noqa: ASYNC110 - any probe, no event to wait on
            await asyncio.sleep(0.005)
    return value


async def start(
    url: str,
    name: str,
    intent: Intent,
    *,
    premove: bool = True,
    exit_when_over: bool = True,
    view: Recorder | None = None,
    interactive: bool = False,
) -> tuple[Controller, Recorder, asyncio.Task[int]]:
    """A connected controller running in a task, with fast reconnections (``interactive``:
    a person types, not a script)."""
    recorder = view or Recorder()
    connection = Connection(url, name, lambda event: None, backoff=Backoff(base=0.02, cap=0.1))
    controller = Controller(
        connection,
        intent,
        recorder,
        premove=premove,
        exit_when_over=exit_when_over,
        interactive=interactive,
    )
    welcome: Welcome = await connection.open()
    task = asyncio.create_task(controller.run(welcome))
    return controller, recorder, task
