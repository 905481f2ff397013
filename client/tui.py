"""The full-screen mode, with prompt_toolkit.

Layout: a title bar (server, name, link); the board on the left; on the
right the status panel above the message log (below the board on a narrow
terminal); the command line at the bottom, with history (up/down) and tab
completion of commands and the legal pawn moves. Server pushes redraw the
screen while the player types; clocks tick once a second.
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Iterator
from typing import TextIO

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.data_structures import Point
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import (
    ConditionalContainer,
    Float,
    FloatContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.containers import AnyContainer
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import TextArea

from client import commands
from client.controller import Controller, Kind
from client.render import Line, render_board
from client.status import status_lines
from protocol.messages import Welcome

STYLE = Style.from_dict(
    {
        "title": "reverse",
        "title.bad": "reverse ansired",
        "grid": "ansibrightblack",
        "coord": "ansicyan",
        "wall": "ansiyellow bold",
        "wall.last": "ansibrightyellow bold",
        "pawn.0": "ansibrightred bold",
        "pawn.1": "ansibrightblue bold",
        "pawn.2": "ansibrightgreen bold",
        "pawn.3": "ansibrightmagenta bold",
        "last": "reverse",
        "legal": "ansigreen bold",
        "me": "bold",
        "turn": "ansigreen bold",
        "offline": "ansired",
        "clock": "",
        "clock.running": "bold reverse",
        "situation": "bold",
        "error": "ansired",
        "chat": "ansicyan",
        "link": "ansimagenta",
        "help": "",
    }
)

LOG_LINES = 500
"""Lines of the message log kept."""
SIDE_WIDTH = 36
"""Columns the status panel needs beside the board; narrower terminals stack them."""


def _fragments(lines: list[Line]) -> StyleAndTextTuples:
    fragments: StyleAndTextTuples = []
    for index, line in enumerate(lines):
        if index:
            fragments.append(("", "\n"))
        fragments.extend(line)
    return fragments


def _wrap(lines: list[Line], width: int) -> list[Line]:
    """Word-wrap the one-fragment lines to ``width`` columns (others are made to fit)."""
    wrapped: list[Line] = []
    for line in lines:
        if len(line) != 1 or len(line[0][1]) <= width:
            wrapped.append(line)
            continue
        style, text = line[0]
        rows = textwrap.wrap(text, max(8, width), subsequent_indent="  ") or [""]
        wrapped += [[(style, row)] for row in rows]
    return wrapped


def board_width(size: int) -> int:
    """Columns of a drawn board: row labels both sides, and four per square."""
    return 2 * len(str(size)) + 4 * size + 4  # and a blank column before the panel


class TuiView:
    """The full-screen view: keeps the log, draws from the controller's knowledge."""

    def __init__(self, name: str, *, ascii: bool = False, color: bool = True) -> None:
        self.name = name
        self.ascii = ascii
        self.color = color
        self.controller: Controller | None = None
        self.log: list[tuple[Kind, str]] = []
        self.app: Application[None] | None = None
        self._my_turn = False
        self._log_rows = 0

    # -- the View protocol ---------------------------------------------------------

    def notice(self, kind: Kind, text: str) -> None:
        self.log.extend((kind, line) for line in text.splitlines())
        del self.log[:-LOG_LINES]
        self.changed()

    def changed(self) -> None:
        controller = self.controller
        state = controller.state if controller else None
        my_turn = (
            controller is not None
            and state is not None
            and state.status == "playing"
            and state.turn == controller.seat
        )
        if self.app is not None:
            if my_turn and not self._my_turn:
                self.app.output.bell()  # your move: a terminal in the background says so
            self.app.invalidate()
        self._my_turn = my_turn

    def show_board(self) -> None:
        pass  # always on screen

    # -- what is drawn -------------------------------------------------------------

    def size(self) -> int:
        controller = self.controller
        return controller.state.variant.size if controller and controller.state else 9

    def columns(self) -> int:
        return self.app.output.get_size().columns if self.app is not None else 80

    def wide(self) -> bool:
        """Room for the status panel beside the board."""
        return self.columns() >= board_width(self.size()) + 1 + SIDE_WIDTH

    def side_width(self) -> int:
        columns = self.columns()
        return columns - board_width(self.size()) - 1 if self.wide() else columns

    def title(self) -> StyleAndTextTuples:
        controller = self.controller
        url = controller.connection.url if controller else ""
        link = controller.link if controller else "connecting"
        style = "class:title" if link == "connected" else "class:title.bad"
        return [(style, f" Quoridor   {url}   {self.name}   {link}   (F1: help) ")]

    def board(self) -> StyleAndTextTuples:
        controller = self.controller
        if controller is None or controller.state is None:
            return [("", "\n  Waiting for the room...")]
        return _fragments(render_board(controller.state, ascii=self.ascii, seat=controller.seat))

    def status(self) -> StyleAndTextTuples:
        controller = self.controller
        if controller is None or controller.state is None:
            return []
        lines = status_lines(
            controller.state, controller.seat, ascii=self.ascii, elapsed=controller.elapsed()
        )
        return _fragments(_wrap(lines, self.side_width()))

    def log_fragments(self) -> StyleAndTextTuples:
        lines: list[Line] = [
            [("" if kind in ("event", "info") else f"class:{kind}", text)]
            for kind, text in self.log
        ]
        lines = _wrap(lines, self.side_width())
        self._log_rows = len(lines)
        return _fragments(lines)

    def legal_moves(self) -> list[str]:
        controller = self.controller
        if controller is None or controller.state is None:
            return []
        state = controller.state
        if state.status != "playing" or state.turn != controller.seat:
            return []
        return list(state.legal_pawn_moves)

    # -- the application -------------------------------------------------------------

    def build(self, controller: Controller) -> Application[None]:
        self.controller = controller

        def accept(buffer: Buffer) -> bool:
            if buffer.text.strip():
                controller.type(buffer.text)
            return False

        input_area = TextArea(
            height=1,
            prompt="> ",
            multiline=False,
            history=InMemoryHistory(),
            completer=_MoveCompleter(self),
            complete_while_typing=False,
            accept_handler=accept,
        )
        status = FormattedTextControl(self.status)
        log = FormattedTextControl(
            self.log_fragments, get_cursor_position=lambda: Point(0, max(0, self._log_rows - 1))
        )
        board = FormattedTextControl(self.board)
        h_line = "-" if self.ascii else "─"
        v_line = "|" if self.ascii else "│"

        def side() -> HSplit:
            return HSplit(
                [
                    Window(status, height=Dimension(min=3, preferred=9), wrap_lines=True),
                    Window(height=1, char=h_line, style="class:grid"),
                    Window(log, wrap_lines=True),
                ]
            )

        def board_window() -> Window:
            return Window(
                board,
                width=lambda: Dimension.exact(board_width(self.size())),
                height=lambda: Dimension(min=1, preferred=2 * self.size() + 3),
            )

        wide = Condition(self.wide)
        layouts: list[AnyContainer] = [
            ConditionalContainer(
                VSplit([board_window(), Window(width=1, char=v_line, style="class:grid"), side()]),
                filter=wide,
            ),
            ConditionalContainer(HSplit([board_window(), side()]), filter=~wide),
        ]
        root = FloatContainer(
            HSplit(
                [
                    Window(FormattedTextControl(self.title), height=1),
                    HSplit(layouts),
                    Window(height=1, char=h_line, style="class:grid"),
                    input_area,
                ]
            ),
            floats=[Float(xcursor=True, ycursor=True, content=CompletionsMenu(max_height=8))],
        )
        keys = KeyBindings()

        @keys.add("c-c")
        @keys.add("c-d")
        def _quit(event: KeyPressEvent) -> None:
            controller.type("quit")

        @keys.add("f1")
        def _help(event: KeyPressEvent) -> None:
            controller.type("help")

        self.app = Application(
            layout=Layout(root, focused_element=input_area),
            key_bindings=keys,
            style=STYLE,
            full_screen=True,
            mouse_support=False,
            refresh_interval=1.0,  # the clocks and claim countdowns run
            color_depth=None if self.color else ColorDepth.DEPTH_1_BIT,
        )
        return self.app


class _MoveCompleter(Completer):
    """Completes command words and, on the player's turn, the legal pawn moves."""

    def __init__(self, view: TuiView) -> None:
        self.view = view

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        word = document.get_word_before_cursor(WORD=True)
        for text in commands.completions(document.text_before_cursor, self.view.legal_moves()):
            yield Completion(text, start_position=-len(word))


async def run_tui(controller: Controller, view: TuiView, welcome: Welcome, out: TextIO) -> int:
    """Play full-screen until the controller is done; then print the last words on ``out``."""
    task = asyncio.create_task(controller.run(welcome))
    await controller.ready.wait()  # the room (or the error) first: no screen for a failed join
    if task.done() or controller.exit_code is not None:
        return _farewell(controller, view, await task, out, show_log=True)
    app = view.build(controller)

    def stop(_: object) -> None:
        if app.is_running and app.future is not None and not app.future.done():
            app.exit()

    def pre_run() -> None:
        if task.done():
            app.exit()

    task.add_done_callback(stop)
    await app.run_async(pre_run=pre_run)
    if not task.done():
        controller.type("quit")
    code = await task
    return _farewell(controller, view, code, out, show_log=False)


def _farewell(controller: Controller, view: TuiView, code: int, out: TextIO, show_log: bool) -> int:
    """After the screen is gone: the log (if it never showed), the error, the last words."""
    lines = [text for _, text in view.log] if show_log else []
    if not show_log:
        errors = [text for kind, text in view.log if kind == "error"]
        if code and errors:
            lines.append(errors[-1])
        lines += controller.summary()
    for line in lines:
        out.write(line + "\n")
    out.flush()
    return code
