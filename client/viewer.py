"""The full-screen replay viewer, with prompt_toolkit.

Layout: a title bar; the board on the left; on the right the players, the
move in words and the list of moves with the current one marked (below the
board on a narrow terminal); the keys at the bottom. Keys: right, ``n`` or
space for the next move; left or ``p`` for the previous one; Home/``g`` and
End/``G`` for the start and the end; ``q`` (or Ctrl-C, Ctrl-D) to quit.
"""

from __future__ import annotations

from prompt_toolkit.application import Application
from prompt_toolkit.data_structures import Point
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import (
    ConditionalContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.containers import AnyContainer
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style, merge_styles

from client.layout import Plan, plan
from client.render import render_board
from client.replay import Replay
from client.tui import STYLE, _fragments, _wrap

KEYS = " right/n next   left/p previous   Home/End first/last   q quit "

VIEWER_STYLE = merge_styles([STYLE, Style.from_dict({"current": "reverse bold"})])


class ReplayViewer:
    """Draws the frame on show and moves through the frames on keys."""

    def __init__(self, replay: Replay, *, ascii: bool = False, color: bool = True) -> None:
        self.replay = replay
        self.ascii = ascii
        self.color = color
        self.app: Application[None] | None = None
        self._current_row = 0

    def terminal(self) -> tuple[int, int]:
        if self.app is None:
            return 80, 24
        size = self.app.output.get_size()
        return size.columns, size.rows

    def plan(self) -> Plan:
        """The same layout as the game's screen: the whole board at 80x24 for every size."""
        return plan(*self.terminal(), self.replay.variant.size)

    def wide(self) -> bool:
        return self.plan().beside

    def side_width(self) -> int:
        columns = self.terminal()[0]
        return columns - self.plan().board_columns - 1 if self.wide() else columns

    # -- what is drawn ---------------------------------------------------------------

    def title(self) -> StyleAndTextTuples:
        replay = self.replay
        return [
            (
                "class:title",
                f" Quoridor replay   {replay.title}   {replay.numbered(replay.index).lower()} ",
            )
        ]

    def board(self) -> StyleAndTextTuples:
        return _fragments(
            render_board(self.replay.state(), ascii=self.ascii, style=self.plan().style)
        )

    def panel(self) -> StyleAndTextTuples:
        return _fragments(_wrap(self.replay.panel(ascii=self.ascii), self.side_width()))

    def moves(self) -> StyleAndTextTuples:
        rows, self._current_row = self.replay.move_rows()
        return _fragments(rows)

    # -- the application ---------------------------------------------------------------

    def build(self) -> Application[None]:
        replay = self.replay
        h_line = "-" if self.ascii else "─"
        v_line = "|" if self.ascii else "│"
        board = FormattedTextControl(self.board, focusable=True)
        moves = FormattedTextControl(
            self.moves, get_cursor_position=lambda: Point(0, self._current_row)
        )

        def side() -> HSplit:
            return HSplit(
                [
                    Window(FormattedTextControl(self.panel), height=Dimension(min=3, preferred=10)),
                    Window(height=1, char=h_line, style="class:grid"),
                    Window(moves),
                ]
            )

        def board_window() -> Window:
            return Window(
                board,
                width=lambda: Dimension.exact(self.plan().board_columns),
                height=lambda: Dimension(min=self.plan().board_rows, weight=1),
            )

        wide = Condition(self.wide)
        layouts: list[AnyContainer] = [
            ConditionalContainer(
                VSplit([board_window(), Window(width=1, char=v_line, style="class:grid"), side()]),
                filter=wide,
            ),
            ConditionalContainer(HSplit([board_window(), side()]), filter=~wide),
        ]
        titled = Condition(lambda: self.plan().title)
        root = HSplit(
            [
                ConditionalContainer(
                    Window(FormattedTextControl(self.title), height=1), filter=titled
                ),
                HSplit(layouts),
                ConditionalContainer(
                    Window(height=1, char=h_line, style="class:grid"), filter=titled
                ),
                Window(FormattedTextControl([("class:coord", KEYS)]), height=1),
            ]
        )
        keys = KeyBindings()

        def on(*names: str, step: str) -> None:
            def handler(event: KeyPressEvent) -> None:
                getattr(replay, step)()
                event.app.invalidate()

            for name in names:
                keys.add(name)(handler)

        on("right", "n", "space", step="next")
        on("left", "p", step="previous")
        on("home", "g", step="first")
        on("end", "G", step="end")

        @keys.add("q")
        @keys.add("c-c")
        @keys.add("c-d")
        def _quit(event: KeyPressEvent) -> None:
            event.app.exit()

        self.app = Application(
            layout=Layout(root, focused_element=board),
            key_bindings=keys,
            style=VIEWER_STYLE,
            full_screen=True,
            mouse_support=False,
            color_depth=None if self.color else ColorDepth.DEPTH_1_BIT,
        )
        return self.app


async def run_viewer(replay: Replay, *, ascii: bool = False, color: bool = True) -> None:
    """Show ``replay`` full-screen until the player quits."""
    await ReplayViewer(replay, ascii=ascii, color=color).build().run_async()
