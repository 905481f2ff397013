"""The board, drawn: a pure function from a ``state`` to styled lines.

Each line is a list of ``(style, text)`` fragments, the shape prompt_toolkit
draws; joining the texts gives the plain drawing. Styles are class names
(``class:wall``, ``class:pawn.0``...) that the full-screen view colours, so
nothing here knows about terminals.

The drawing is a grid of squares three characters wide with one-character
grooves between them. Grooves are thin lines; a wall is a heavy line along
the two groove segments it covers and through the crossing between them,
so every wall sits in its exact groove. Pawns are told apart by glyph, not
only by colour; the pawn that just moved is bracketed, and the last wall has
a style of its own.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from client.notation import COLUMNS, parse
from protocol.messages import State

Fragment = tuple[str, str]
Line = list[Fragment]

Arms = tuple[int, int, int, int]
"""A crossing's four arms (up, right, down, left): 0 none, 1 groove, 2 wall, 3 last wall."""

CELL = 3
"""Characters per square."""


def _box_table() -> dict[Arms, str]:
    """Every light/heavy box-drawing character, by its arms, read from the Unicode names.

    The names say which arms are light and which heavy (``BOX DRAWINGS UP
    HEAVY AND RIGHT DOWN LIGHT``): a weight either leads the name and applies
    to the directions after it, or follows the directions it applies to.
    """
    directions = {
        "UP": (0,),
        "RIGHT": (1,),
        "DOWN": (2,),
        "LEFT": (3,),
        "VERTICAL": (0, 2),
        "HORIZONTAL": (1, 3),
    }
    weights = {"LIGHT": 1, "HEAVY": 2}
    table: dict[Arms, str] = {}
    for code in range(0x2500, 0x2580):
        words = unicodedata.name(chr(code)).removeprefix("BOX DRAWINGS ").split()
        if any(w not in directions and w not in weights and w != "AND" for w in words):
            continue  # double, dashed, rounded and diagonal lines
        arms = [0, 0, 0, 0]
        leading = weights.get(words[0])
        pending: list[int] = []
        for word in words:
            if word in weights:
                if leading is not None:
                    leading = weights[word]
                else:
                    for arm in pending:
                        arms[arm] = weights[word]
                    pending = []
            elif word in directions:
                if leading is not None:
                    for arm in directions[word]:
                        arms[arm] = leading
                else:
                    pending.extend(directions[word])
        table[(arms[0], arms[1], arms[2], arms[3])] = chr(code)
    return table


_BOX = _box_table()


def _unicode_crossing(arms: Arms) -> str:
    up, right, down, left = arms
    if left == right == 3:
        return "╪"
    if up == down == 3:
        return "╫"
    # The last wall's ends meet the grid like a groove: its double line stops there.
    up, right, down, left = (1 if arm == 3 else arm for arm in arms)
    return _BOX.get((up, right, down, left), " ")


def _ascii_crossing(arms: Arms) -> str:
    up, right, down, left = arms
    if left == right == 3 or up == down == 3:
        return "*"
    if left == right == 2:
        return "="
    if up == down == 2:
        return "#"
    return "+" if any(arms) else " "


@dataclass(frozen=True)
class Charset:
    """The characters of one drawing style."""

    pawns: tuple[str, str, str, str]
    """Glyph of each seat's pawn."""
    legal: str
    """Marks a square the player to move may step or jump to."""
    groove_h: str
    groove_v: str
    wall_h: str
    wall_v: str
    last_h: str
    last_v: str
    """The last wall placed, drawn apart from the others."""
    crossing: Callable[[Arms], str]


UNICODE = Charset(
    pawns=("●", "◆", "▲", "■"),
    legal="·",
    groove_h="─",
    groove_v="│",
    wall_h="━",
    wall_v="┃",
    last_h="═",
    last_v="║",
    crossing=_unicode_crossing,
)
ASCII = Charset(
    pawns=("A", "B", "C", "D"),
    legal=".",
    groove_h="-",
    groove_v="|",
    wall_h="=",
    wall_v="#",
    last_h="*",
    last_v="*",
    crossing=_ascii_crossing,
)


def charset(ascii: bool) -> Charset:
    return ASCII if ascii else UNICODE


def pawn_glyph(seat: int, ascii: bool = False) -> str:
    return charset(ascii).pawns[seat]


Style = Literal["compact", "normal", "large"]
"""How much room the drawing takes, for ``size`` N:

- ``normal``: squares 3 columns by 1 row, letters above and below, numbers both sides
  (4N+5+2d columns, 2N+3 rows, d the digits of N);
- ``compact``: the same squares, the letters drawn into the frame's top and bottom edges and
  the numbers on the left only (2N+1 rows: an 11x11 board in 23 rows);
- ``large``: squares 7 columns by 3 rows (8N+3+2d columns, 4N+3 rows).
"""

_CELLS: dict[str, tuple[int, int]] = {"compact": (3, 1), "normal": (3, 1), "large": (7, 3)}


def board_size(size: int, style: Style = "normal") -> tuple[int, int]:
    """Columns and rows of the drawing of a ``size`` board in ``style``."""
    width, height = _CELLS[style]
    label = len(str(size))
    columns = label + 1 + (width + 1) * size + 1
    if style != "compact":
        columns += 1 + label
    rows = (height + 1) * size + 1 + (0 if style == "compact" else 2)
    return columns, rows


def view_turns(players: int, seat: int | None) -> int:
    """Quarter turns that bring ``seat``'s starting edge to the bottom (0 for a spectator).

    Seat 0 starts at the bottom; in a two-player game seat 1 at the top (half a turn); with
    four, seats 1, 2 and 3 start on the left, the top and the right.
    """
    if seat is None:
        return 0
    if players == 2:
        return 2 * seat
    return (0, 3, 2, 1)[seat]


def render_board(
    state: State,
    *,
    ascii: bool = False,
    seat: int | None = None,
    turns: int = 0,
    style: Style = "normal",
) -> list[Line]:
    """The board of ``state`` as styled lines, top row first.

    ``seat`` is the viewer's seat: on their turn the squares their pawn may
    reach (the state's ``legal_pawn_moves``) are dotted. ``turns`` quarter
    turns (clockwise) rotate the picture, labels included, so that a player
    may see their own pawn at the bottom (``view_turns``).
    """
    return _Drawing(state, charset(ascii), seat, turns % 4, style).lines()


class _Drawing:
    """One drawing in progress, in display coordinates (after the rotation).

    Crossings are numbered (x, y), 0..size both ways, y upward. A wall is a
    heavy line over its two groove segments and its middle crossing only: its
    ends meet the grid as plain crossings, so two walls in a row stay two.
    """

    def __init__(
        self, state: State, chars: Charset, seat: int | None, turns: int, style: Style
    ) -> None:
        self.chars = chars
        self.size = state.variant.size
        self.turns = turns
        self.style = style
        self.cell_w, self.cell_h = _CELLS[style]
        last = state.last_move.move if state.last_move is not None else None
        # Wall segments, 2 for a wall and 3 for the last one: horizontal ones
        # by their left crossing, vertical ones by their lower crossing; and
        # each wall's middle crossing, with its weight.
        self.walls_h: dict[tuple[int, int], int] = {}
        self.walls_v: dict[tuple[int, int], int] = {}
        self.middles_h: dict[tuple[int, int], int] = {}
        self.middles_v: dict[tuple[int, int], int] = {}
        for wall in state.walls:
            spot = parse(wall)
            if spot is None or not spot.orientation:
                continue
            weight = 3 if wall == last else 2
            col, row, orientation = self.wall_spot(spot.col, spot.row, spot.orientation)
            if orientation == "h":
                for x in (col, col + 1):
                    self.walls_h[x, row + 1] = weight
                self.middles_h[col + 1, row + 1] = weight
            else:
                for y in (row, row + 1):
                    self.walls_v[col + 1, y] = weight
                self.middles_v[col + 1, row + 1] = weight
        self.pawns: dict[tuple[int, int], int] = {}
        for index, square in enumerate(state.pawns):
            spot = parse(square)
            if spot is not None:
                self.pawns[self.square_spot(spot.col, spot.row)] = index
        self.moved: tuple[int, int] | None = None
        if last is not None and not last.endswith(("h", "v")):
            spot = parse(last)
            self.moved = None if spot is None else self.square_spot(spot.col, spot.row)
        self.targets: set[tuple[int, int]] = set()
        if seat is not None and state.status == "playing" and state.turn == seat:
            for square in state.legal_pawn_moves:
                spot = parse(square)
                if spot is not None:
                    self.targets.add(self.square_spot(spot.col, spot.row))

    # -- the rotation ------------------------------------------------------------------

    def square_spot(self, x: int, y: int) -> tuple[int, int]:
        """Where square (x, y) of the board is drawn."""
        last = self.size - 1
        for _ in range(self.turns):
            x, y = y, last - x  # a quarter turn clockwise
        return x, y

    def wall_spot(self, col: int, row: int, orientation: str) -> tuple[int, int, str]:
        """Where the wall on the 2x2 block at (col, row) is drawn: its block and orientation."""
        corners = [self.square_spot(col + dx, row + dy) for dx in (0, 1) for dy in (0, 1)]
        if self.turns % 2:
            orientation = "v" if orientation == "h" else "h"
        return min(x for x, _ in corners), min(y for _, y in corners), orientation

    def column_label(self, x: int) -> str:
        """The label of drawn column ``x``: a letter, or a row number when turned a quarter."""
        col, row = self.board_square(x, 0)
        return str(row + 1) if self.turns % 2 else COLUMNS[col]

    def row_label(self, y: int) -> str:
        col, row = self.board_square(0, y)
        return COLUMNS[col] if self.turns % 2 else str(row + 1)

    def board_square(self, x: int, y: int) -> tuple[int, int]:
        """The board's square drawn at (x, y): the rotation undone."""
        last = self.size - 1
        for _ in range(self.turns):
            x, y = last - y, x  # a quarter turn back
        return x, y

    # -- the lines ---------------------------------------------------------------------

    def lines(self) -> list[Line]:
        size = self.size
        label = len(str(size))
        compact = self.style == "compact"
        letters: Line = [
            (
                "class:coord",
                " " * (label + 1)
                + "".join(" " + self.column_label(x).center(self.cell_w) for x in range(size)),
            )
        ]
        lines = [] if compact else [letters]
        for y in range(size, -1, -1):
            line: Line = [("", " " * (label + 1))]
            for x in range(size + 1):
                line.append(self.crossing(x, y))
                if x < size:
                    line.append(self.groove_h(x, y))
            if compact and y in (0, size):
                line = self.labelled_edge(line)
            lines.append(line)
            if y > 0:
                lines += self.square_row(y - 1, label)
        if not compact:
            lines.append(letters)
        return lines

    def labelled_edge(self, line: Line) -> Line:
        """The top or bottom edge with the column letters drawn into it (compact style)."""
        edge: Line = line[:2]
        for x in range(self.size):
            _, text = line[2 + 2 * x]
            label = self.column_label(x).center(self.cell_w, text[0])
            edge += [("class:coord", label), line[3 + 2 * x]]
        return edge

    def square_row(self, y: int, label: int) -> list[Line]:
        """The ``cell_h`` lines of drawn row ``y``; its label on the middle one."""
        rows: list[Line] = []
        middle = self.cell_h // 2
        for part in range(self.cell_h):
            number = self.row_label(y) if part == middle else ""
            line: Line = [("class:coord", number.rjust(label)), ("", " ")]
            for x in range(self.size + 1):
                line.append(self.groove_v(x, y))
                if x < self.size:
                    line.append(self.square(x, y, part == middle))
            if self.style != "compact":
                line += [("", " "), ("class:coord", number)]
            rows.append(line)
        return rows

    def weight_h(self, x: int, y: int) -> int:
        if not (0 <= x < self.size and 0 <= y <= self.size):
            return 0
        return self.walls_h.get((x, y), 1)

    def weight_v(self, x: int, y: int) -> int:
        if not (0 <= x <= self.size and 0 <= y < self.size):
            return 0
        return self.walls_v.get((x, y), 1)

    def groove_h(self, x: int, y: int) -> Fragment:
        weight = self.weight_h(x, y)
        text = {2: self.chars.wall_h, 3: self.chars.last_h}.get(weight, self.chars.groove_h)
        return _STYLES[weight], text * self.cell_w

    def groove_v(self, x: int, y: int) -> Fragment:
        weight = self.weight_v(x, y)
        return _STYLES[weight], {2: self.chars.wall_v, 3: self.chars.last_v}.get(
            weight, self.chars.groove_v
        )

    def crossing(self, x: int, y: int) -> Fragment:
        across = self.middles_h.get((x, y), 0)
        along = self.middles_v.get((x, y), 0)

        def arm(present: int, wall: int) -> int:
            return wall or min(present, 1)

        arms = (
            arm(self.weight_v(x, y), along),
            arm(self.weight_h(x, y), across),
            arm(self.weight_v(x, y - 1), along),
            arm(self.weight_h(x - 1, y), across),
        )
        return _STYLES[max(across, along, 1)], self.chars.crossing(arms)

    def square(self, x: int, y: int, middle: bool) -> Fragment:
        pad = " " * (self.cell_w // 2 - 1)
        if not middle:
            return "", " " * self.cell_w
        if (x, y) in self.pawns:
            index = self.pawns[x, y]
            glyph = self.chars.pawns[index]
            if self.moved == (x, y):
                return f"class:pawn.{index} class:last", f"{pad}[{glyph}]{pad}"
            return f"class:pawn.{index}", f"{pad} {glyph} {pad}"
        if (x, y) in self.targets:
            return "class:legal", f"{pad} {self.chars.legal} {pad}"
        return "", " " * self.cell_w


_STYLES = {0: "class:grid", 1: "class:grid", 2: "class:wall", 3: "class:wall.last"}


def plain_text(lines: list[Line]) -> str:
    """Styled lines as plain text, one per line, without trailing spaces."""
    return "\n".join("".join(text for _, text in line).rstrip() for line in lines)


def board_text(
    state: State,
    *,
    ascii: bool = False,
    seat: int | None = None,
    turns: int = 0,
    style: Style = "normal",
) -> str:
    """The board as plain text (for the plain mode's ``board`` command and tests)."""
    return plain_text(render_board(state, ascii=ascii, seat=seat, turns=turns, style=style))
