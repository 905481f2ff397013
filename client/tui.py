"""The full-screen mode, with prompt_toolkit.

Layout (``client.layout`` picks it for the terminal's size): a title bar
(server, name, link); the board on the left, drawn from the player's side
(own pawn at the bottom) unless ``absolute``; on the right the status panel,
the live move list and the message log (PageUp/PageDown scroll it); the
command line at the bottom, with history (up/down) and tab completion of
commands and the legal pawn moves. Help (F1) is an overlay. Server pushes
redraw the screen while the player types; while a clock or a countdown runs the
screen is redrawn ten times a second, and not at all otherwise (an idle client
spent 7 % of a core redrawing a still screen).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TextIO

from prompt_toolkit.application import Application
from prompt_toolkit.application.current import get_app_session
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.data_structures import Point
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import (
    ConditionalContainer,
    DynamicContainer,
    Float,
    FloatContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.layout.processors import AfterInput, ConditionalProcessor
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style
from prompt_toolkit.utils import get_cwidth
from prompt_toolkit.widgets import Frame, TextArea

from client import commands, notation
from client.controller import Controller, Kind
from client.layout import Plan, plan, smallest
from client.printed import Command, command_rows, say
from client.render import Line, board_size, render_board
from client.status import status_lines, ticking
from client.width import clip, columns, wrap
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
        "command": "bold",
        "situation.ask": "ansiyellow bold",
        "help": "",
        "clock.low": "ansired bold",
        "clock.low.running": "ansired bold reverse",
        "clock.frozen": "ansibrightblack",
    }
)

LOG_LINES = 500
"""Lines of the message log kept."""
SIDE_WIDTH = 36
"""Columns the replay viewer's panel needs beside its board."""
MOVE_ROWS = 4
"""Rows of the live move list on a small terminal (more where there is room)."""
TICK = 0.1
"""Seconds between two redraws while a clock or a countdown runs."""


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
        if len(line) != 1 or ("\n" not in line[0][1] and columns(line[0][1]) <= width):
            wrapped.append(line)
            continue
        style, text = line[0]
        rows = wrap(text, max(8, width))
        wrapped += [[(style, row)] for row in rows]
    return wrapped


def board_width(size: int) -> int:
    """Columns of a board drawn in the normal style, and a blank column before the panel."""
    return board_size(size)[0] + 1


def move_list(moves: list[str], players: int, width: int) -> list[Line]:
    """This game's moves numbered by rounds (``1. e2 e8``), as many rounds a row as fit. A
    seat out of a four-player game (``retire N``) is said in the log, not as a move."""
    rounds: list[str] = []
    for number, played in enumerate(notation.rounds(moves, players), 1):
        rounds.append(f"{f'{number}.':>4} " + " ".join(f"{m:<4}" for m in played))
    if not rounds:
        return []
    cell = max(len(text) for text in rounds) + 1
    per_row = max(1, width // cell)
    rows: list[Line] = []
    for start in range(0, len(rounds), per_row):
        texts = rounds[start : start + per_row]
        rows.append([("", "".join(f"{text:<{cell}}" for text in texts).rstrip())])
    last = rows[-1]
    style, text = last[0]
    head, _, tail = text.rpartition(" ")
    rows[-1] = [(style, head + " "), ("class:last", tail)] if head else [("class:last", text)]
    return rows


class TuiView:
    """The full-screen view: keeps the log, draws from the controller's knowledge."""

    live_board = True
    """The board, the panel and the move list are always on screen: notices need not
    repeat them."""

    def __init__(
        self, name: str, *, ascii: bool = False, color: bool = True, absolute: bool = False
    ) -> None:
        self.name = name
        self.ascii = ascii
        self.color = color
        self.absolute = absolute
        """Draw the board with row 1 at the bottom whatever the seat (else own pawn at the
        bottom)."""
        self.controller: Controller | None = None
        self.log: list[tuple[Kind, str]] = []
        self.app: Application[None] | None = None
        self.help_open = False
        self.scroll = 0
        """Log lines scrolled back from the newest (PageUp/PageDown)."""
        self._my_turn = False
        self._log_rows = 0

    # -- the View protocol ---------------------------------------------------------

    def notice(self, kind: Kind, text: str) -> None:
        if kind == "help":
            self.help_open = True
            self.changed()
            return
        lines = text.splitlines()
        asked = kind == "situation" and self.controller is not None and self.controller.asking
        if asked:
            self.scroll = 0  # a question to answer is read where it is asked, not scrolled off
        elif self.scroll:
            self.scroll += len(lines)  # a player reading back keeps their place
        self.log.extend((kind, line) for line in lines)
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

    async def tick(self) -> None:
        """Redraw ten times a second while a clock or a countdown runs (tenths under 10 s)."""
        while True:
            await asyncio.sleep(TICK)
            controller = self.controller
            state = controller.state if controller else None
            if self.app is not None and state is not None and ticking(state):
                self.app.invalidate()

    def show_board(self) -> None:
        pass  # always on screen

    # -- what is drawn -------------------------------------------------------------

    def size(self) -> int:
        controller = self.controller
        return controller.state.variant.size if controller and controller.state else 9

    def terminal(self) -> tuple[int, int]:
        if self.app is None:
            return 80, 24
        size = self.app.output.get_size()
        return size.columns, size.rows

    def plan(self) -> Plan:
        columns, rows = self.terminal()
        return plan(columns, rows, self.size())

    def side_width(self) -> int:
        layout = self.plan()
        columns = self.terminal()[0]
        return columns - layout.board_columns - 1 if layout.beside else columns

    def turns(self) -> int:
        """Quarter turns of the board: own pawn at the bottom unless ``absolute``."""
        controller = self.controller
        if self.absolute or controller is None:
            return 0
        return controller.board_turns()

    def title(self) -> StyleAndTextTuples:
        controller = self.controller
        url = controller.connection.url if controller else ""
        link = controller.link if controller else "connecting"
        style = "class:title" if link == "connected" else "class:title.bad"
        # The name and address give way (cut with an ellipsis) so the help hint stays.
        room = self.terminal()[0] - columns(f" Quoridor         {link}   (F1: help) ")
        name = clip(self.name, max(8, room - columns(url)))
        url = clip(url, max(8, room - columns(name)))
        return [(style, f" Quoridor   {url}   {name}   {link}   (F1: help) ")]

    def board(self) -> StyleAndTextTuples:
        controller = self.controller
        if controller is None or controller.state is None:
            return [("", "\n  Waiting for the room...")]
        lines = render_board(
            controller.state,
            ascii=self.ascii,
            seat=controller.seat,
            turns=self.turns(),
            style=self.plan().style,
        )
        return _fragments(lines)

    def status(self) -> StyleAndTextTuples:
        return _fragments(self.status_wrapped())

    def status_rows(self) -> int:
        """Rows the status panel takes, its long lines wrapped."""
        width = max(1, self.side_width())
        rows = 0
        for line in self.status_wrapped():
            columns = sum(get_cwidth(text) for _, text in line)
            rows += max(1, -(-columns // width))
        return rows

    def status_wrapped(self) -> list[Line]:
        controller = self.controller
        if controller is None or controller.state is None:
            return []
        lines = status_lines(
            controller.state,
            controller.seat,
            ascii=self.ascii,
            elapsed=controller.clock_elapsed(),
            width=self.side_width(),
            link=controller.link,
        )
        if controller.link_note:
            lines.insert(1, [("class:offline", controller.link_note)])
        return _wrap(lines, self.side_width())

    def moves(self) -> list[Line]:
        controller = self.controller
        if controller is None or controller.state is None:
            return []
        state = controller.state
        return move_list(list(state.moves), state.variant.players, self.side_width())

    def move_rows(self) -> int:
        """Rows for the move list: the newest rounds, more on a tall terminal."""
        rows = self.terminal()[1]
        room = MOVE_ROWS if rows < 40 else rows // 4
        return min(len(self.moves()), room)

    def log_fragments(self) -> StyleAndTextTuples:
        lines: list[Line] = []
        for kind, text in self.log:
            if kind == "command":
                lines += [[("class:command", row)] for row in command_rows(text, self.side_width())]
            else:
                lines.append([("" if kind in ("event", "info") else f"class:{kind}", text)])
        lines = _wrap(lines, self.side_width())
        self._log_rows = len(lines)
        self.scroll = min(self.scroll, max(0, self._log_rows - 1))
        return _fragments(lines)

    def log_rule(self) -> StyleAndTextTuples:
        rule = "-" if self.ascii else "─"
        label = f" {self.scroll} lines back: PgDn " if self.scroll else ""
        return [("class:grid", rule * 2 + label + rule * 200)]

    def bottom_rule(self) -> StyleAndTextTuples:
        """The rule above the prompt; while this player's room waits for the others, the
        command they join with, on a row of its own the whole width of the screen: in the
        log beside the board it was broken over rows that a mouse could not copy without
        the board's edge (a newcomer's review)."""
        rule = "-" if self.ascii else "─"
        width = self.terminal()[0]
        invitation = self.invitation(width - 2)
        if invitation is None:
            return [("class:grid", rule * width)]
        label, command = invitation
        return [
            ("class:grid", rule + " "),
            ("", label),
            ("class:command", command),
            ("class:grid", " " + rule * (width - columns(label + command) - 3)),
        ]

    def invitation(self, width: int) -> tuple[str, str] | None:
        """While this player's room waits for the others: what to say before the command
        they join with, and the command, in ``width`` columns (None: not waiting, or too
        long for them)."""
        controller = self.controller
        state = controller.state if controller is not None else None
        command = controller.invitation if controller is not None else None
        if state is None or state.status != "waiting" or command is None:
            return None
        label = "Others join with: " if state.variant.players == 4 else "Your opponent joins with: "
        if columns(label + command) > width:
            label = "Join: "
        if columns(label + command) <= width:
            return label, command
        # Too long for the row (the client started by a long path, say): where it is, rather
        # than nothing (an outside newcomer's review looked for it at 80 columns).
        whose = "The others'" if state.variant.players == 4 else "Your opponent's"
        pointer = f"{whose} join command is in the log above"
        return (pointer, "") if columns(pointer) <= width else None

    def prompt_invitation(self) -> StyleAndTextTuples:
        """The join command after an empty prompt, where the screen has no row for it above
        (a board too tall for the title and the rule: 11x11 at 80x24, a newcomer's review);
        typing hides it."""
        if self.plan().title:
            return []
        invitation = self.invitation(self.terminal()[0] - 4)
        if invitation is None:
            return []
        label, command = invitation
        return [("class:coord", f"  {label}"), ("class:command", command)]

    def help_text(self) -> StyleAndTextTuples:
        return [("", commands.SCREEN_HELP)]

    def legal_moves(self) -> list[str]:
        controller = self.controller
        if controller is None or controller.state is None:
            return []
        state = controller.state
        if state.status != "playing" or state.turn != controller.seat:
            return []
        return list(state.legal_pawn_moves)

    def page(self, direction: int) -> None:
        """Scroll the log a page back (1) or forward (-1)."""
        rows = max(1, self.terminal()[1] // 3)
        self.scroll = max(0, min(self._log_rows - 1, self.scroll + direction * rows))
        self.changed()

    # -- the application -------------------------------------------------------------

    def build(self, controller: Controller) -> Application[None]:
        self.controller = controller

        def accept(buffer: Buffer) -> bool:
            self.help_open = False
            if buffer.text.strip():
                controller.type(buffer.text)
            return False

        def prompt() -> StyleAndTextTuples:
            if controller.asking is not None:
                return [("class:situation", "y/n? ")]
            return [("", "> ")]

        input_area = TextArea(
            height=1,
            prompt=prompt,
            multiline=False,
            history=InMemoryHistory(),
            completer=_MoveCompleter(self),
            complete_while_typing=False,
            accept_handler=accept,
            input_processors=[
                ConditionalProcessor(
                    AfterInput(self.prompt_invitation),
                    filter=Condition(lambda: not input_area.text),
                )
            ],
        )
        bar = "|" if self.ascii else "│"
        log = FormattedTextControl(
            self.log_fragments,
            get_cursor_position=lambda: Point(0, max(0, self._log_rows - 1 - self.scroll)),
        )
        side = HSplit(
            window_too_small=self.too_small(),
            children=[
                Window(
                    FormattedTextControl(self.status),
                    height=lambda: Dimension.exact(self.status_rows()),
                    wrap_lines=True,
                ),
                ConditionalContainer(
                    Window(
                        FormattedTextControl(lambda: _fragments(self.moves()[-self.move_rows() :])),
                        height=lambda: Dimension.exact(self.move_rows()),
                    ),
                    filter=Condition(lambda: self.move_rows() > 0),
                ),
                Window(FormattedTextControl(self.log_rule), height=1),
                Window(log, wrap_lines=True),
            ],
        )
        board = Window(
            FormattedTextControl(self.board),
            width=lambda: Dimension.exact(self.plan().board_columns),
            height=lambda: Dimension(min=self.plan().board_rows, weight=1),
        )
        beside = VSplit(
            [board, Window(width=1, char=bar, style="class:grid"), side],
            window_too_small=self.too_small(),
        )
        below = HSplit([board, side], window_too_small=self.too_small())
        titled = Condition(lambda: self.plan().title)
        body = HSplit(
            window_too_small=self.too_small(),
            children=[
                ConditionalContainer(
                    Window(FormattedTextControl(self.title), height=1), filter=titled
                ),
                DynamicContainer(lambda: beside if self.plan().beside else below),
                ConditionalContainer(
                    Window(FormattedTextControl(self.bottom_rule), height=1), filter=titled
                ),
                input_area,
            ],
        )
        help_box = Frame(
            Window(FormattedTextControl(self.help_text), wrap_lines=True),
            title="Help: Esc or F1 closes",
        )
        root = FloatContainer(
            body,
            floats=[
                Float(
                    content=ConditionalContainer(help_box, filter=Condition(lambda: self.help_open))
                ),
                Float(
                    xcursor=True,
                    ycursor=True,
                    # Arrows: more entries lie beyond the menu's edge.
                    content=CompletionsMenu(max_height=8, display_arrows=True),
                ),
            ],
        )
        self.app = Application(
            layout=Layout(root, focused_element=input_area),
            key_bindings=self.keys(controller),
            style=STYLE,
            full_screen=True,
            mouse_support=False,
            color_depth=None if self.color else ColorDepth.DEPTH_1_BIT,
        )
        return self.app

    def too_small(self) -> Window:
        """Shown instead of prompt_toolkit's bare 'Window too small...': the size this board
        needs, and the plain mode, which fits any terminal, as the command to type."""

        def text() -> StyleAndTextTuples:
            width, rows = self.terminal()
            size = self.size()
            least = "x".join(map(str, smallest(size)))
            text = (
                f"This terminal is {width}x{rows}: a {size}x{size} board needs at least "
                f"{least}. Make the window larger, or press Ctrl-C twice to leave and "
            )
            controller = self.controller
            room = controller.room if controller is not None else None
            if controller is None or room is None:
                text += "start again with --plain: the game in words, a line an event."
                return [("class:situation", "\n".join(wrap(text, width, indent="")))]
            text += "play on in words (a line an event) with:"
            verb = "watch" if controller.role == "spectator" else "join"
            command = f"{controller.own_command} --plain {verb} {room}"
            found = [*wrap(text, width, indent=""), *command_rows(command, width)]
            return [("class:situation", "\n".join(found))]

        return Window(FormattedTextControl(text), wrap_lines=True)

    def keys(self, controller: Controller) -> KeyBindings:
        keys = KeyBindings()

        @keys.add("c-c")
        @keys.add("c-d")
        def _quit(event: KeyPressEvent) -> None:
            controller.type("quit")

        @keys.add("f1")
        def _help(event: KeyPressEvent) -> None:
            self.help_open = not self.help_open
            self.changed()

        @keys.add("escape", filter=Condition(lambda: self.help_open), eager=True)
        def _close_help(event: KeyPressEvent) -> None:
            self.help_open = False
            self.changed()

        @keys.add("escape", filter=has_completions, eager=True)
        def _close_menu(event: KeyPressEvent) -> None:
            event.current_buffer.cancel_completion()  # back to what was typed

        @keys.add("pageup")
        def _back(event: KeyPressEvent) -> None:
            self.page(1)

        @keys.add("pagedown")
        def _forward(event: KeyPressEvent) -> None:
            self.page(-1)

        return keys


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
        app.create_background_task(view.tick())

    task.add_done_callback(stop)
    await app.run_async(pre_run=pre_run)
    if not task.done():
        controller.leave()
    code = await task
    return _farewell(controller, view, code, out, show_log=False)


def _farewell(controller: Controller, view: TuiView, code: int, out: TextIO, show_log: bool) -> int:
    """After the screen is gone: the log (if it never showed), the error, the last words,
    wrapped to the terminal's width (it wraps mid-word)."""
    lines = [Command(t) if k == "command" else t for k, t in view.log] if show_log else []
    if not show_log:
        errors = [text for kind, text in view.log if kind == "error"]
        if code and errors:
            lines.append(errors[-1])
        lines += controller.summary()
    # The session's output knows the terminal's size with or without a screen on it.
    width = get_app_session().output.get_size().columns
    say(out, *lines, width=width, end="\n" if lines else "")
    return code
