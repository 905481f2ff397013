"""The full-screen client on a terminal of a chosen size: keys through a pipe, and the
screen as prompt_toolkit last drew it (what a person would see)."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator
from dataclasses import dataclass

from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from client.connection import Connection
from client.controller import Controller, Intent
from client.tui import TuiView, run_tui
from protocol.messages import State
from tests.client.recorder import until


@dataclass
class Screen:
    keys: PipeInput
    view: TuiView
    controller: Controller
    task: asyncio.Task[int]
    out: io.StringIO

    def type(self, text: str) -> None:
        self.keys.send_text(text)

    def text(self) -> list[str]:
        """What the terminal shows now, row by row (trailing blanks cut)."""
        app = self.view.app
        screen = app.renderer.last_rendered_screen if app is not None else None
        if screen is None:
            return []
        columns, rows = self.view.terminal()
        return [
            "".join(screen.data_buffer[row][col].char for col in range(columns)).rstrip()
            for row in range(rows)
        ]

    async def showing(self, fragment: str) -> list[str]:
        """The screen, once ``fragment`` is on it."""
        return await until(lambda: self.text() if any(fragment in r for r in self.text()) else None)

    def log(self) -> list[str]:
        return [text for _, text in self.view.log]

    async def shows(self, fragment: str) -> str:
        return await until(lambda: next((t for t in self.log() if fragment in t), None))

    async def at(self, ply: int) -> State:
        """The state once the game has started and reached ``ply``."""
        return await until(lambda: self._state(ply))

    def _state(self, ply: int) -> State | None:
        state = self.controller.state
        started = state is not None and state.status != "waiting"
        return state if started and state is not None and state.ply == ply else None


@contextlib.asynccontextmanager
async def full_screen(
    url: str,
    name: str,
    intent: Intent,
    size: tuple[int, int] = (80, 24),
    absolute: bool = False,
    interactive: bool = False,
    command: str = "quoridor",
) -> AsyncIterator[Screen]:
    """The full-screen client on a pipe for keys and a terminal of ``size`` (columns, rows);
    ``command`` is how it was started, for the hints it gives."""
    columns, rows = size
    output = Vt100_Output(io.StringIO(), lambda: Size(rows=rows, columns=columns), term="xterm")
    with create_pipe_input() as keys, create_app_session(input=keys, output=output):
        connection = Connection(url, name, lambda event: None)
        view = TuiView(name, absolute=absolute)
        controller = Controller(connection, intent, view, interactive=interactive)
        controller.command = command
        out = io.StringIO()
        task = asyncio.create_task(run_tui(controller, view, await connection.open(), out))
        screen = Screen(keys, view, controller, task, out)
        try:
            yield screen
        finally:
            if not task.done():
                controller.leave()
            await asyncio.wait_for(task, 5)


async def room_of(screen: Screen) -> str:
    return await until(lambda: screen.controller.room)
