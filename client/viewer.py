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

from client.render import render_board
from client.replay import Replay
from client.tui import SIDE_WIDTH, STYLE, _fragments, _wrap, board_width

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

    def columns(self) -> int:
        return self.app.output.get_size().columns if self.app is not None else 80

    def wide(self) -> bool:
        return self.columns() >= board_width(self.replay.variant.size) + 1 + SIDE_WIDTH

    def side_width(self) -> int:
        columns = self.columns()
        return columns - board_width(self.replay.variant.size) - 1 if self.wide() else columns

    # -- what is drawn ---------------------------------------------------------------

    def title(self) -> StyleAndTextTuples:
        replay = self.replay
        return [
            (
                "class:title",
                f" Quoridor replay   {replay.title}   move {replay.index} of {replay.last} ",
            )
        ]

    def board(self) -> StyleAndTextTuples:
        return _fragments(render_board(self.replay.state(), ascii=self.ascii))

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
        size = replay.variant.size

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
                width=Dimension.exact(board_width(size)),
                height=Dimension(min=1, preferred=2 * size + 3),
            )

        wide = Condition(self.wide)
        layouts: list[AnyContainer] = [
            ConditionalContainer(
                VSplit([board_window(), Window(width=1, char=v_line, style="class:grid"), side()]),
                filter=wide,
            ),
            ConditionalContainer(HSplit([board_window(), side()]), filter=~wide),
        ]
        root = HSplit(
            [
                Window(FormattedTextControl(self.title), height=1),
                HSplit(layouts),
                Window(height=1, char=h_line, style="class:grid"),
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
