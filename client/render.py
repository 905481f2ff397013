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


def render_board(state: State, *, ascii: bool = False, seat: int | None = None) -> list[Line]:
    """The board of ``state`` as styled lines, top row first.

    ``seat`` is the viewer's seat: on their turn the squares their pawn may
    reach (the state's ``legal_pawn_moves``) are dotted.
    """
    return _Drawing(state, charset(ascii), seat).lines()


class _Drawing:
    """One drawing in progress. Crossings are numbered (x, y), 0..size both ways, y upward."""

    def __init__(self, state: State, chars: Charset, seat: int | None) -> None:
        self.chars = chars
        self.size = state.variant.size
        last = state.last_move.move if state.last_move is not None else None
        # Wall segments, 2 for a wall and 3 for the last one: horizontal ones
        # by their left crossing, vertical ones by their lower crossing.
        self.walls_h: dict[tuple[int, int], int] = {}
        self.walls_v: dict[tuple[int, int], int] = {}
        for wall in state.walls:
            spot = parse(wall)
            if spot is None or not spot.orientation:
                continue
            weight = 3 if wall == last else 2
            if spot.orientation == "h":
                for x in (spot.col, spot.col + 1):
                    self.walls_h[x, spot.row + 1] = weight
            else:
                for y in (spot.row, spot.row + 1):
                    self.walls_v[spot.col + 1, y] = weight
        self.pawns: dict[tuple[int, int], int] = {}
        for index, square in enumerate(state.pawns):
            spot = parse(square)
            if spot is not None:
                self.pawns[spot.col, spot.row] = index
        self.moved: tuple[int, int] | None = None
        if last is not None and not last.endswith(("h", "v")):
            spot = parse(last)
            self.moved = None if spot is None else (spot.col, spot.row)
        self.targets: set[tuple[int, int]] = set()
        if seat is not None and state.status == "playing" and state.turn == seat:
            for square in state.legal_pawn_moves:
                spot = parse(square)
                if spot is not None:
                    self.targets.add((spot.col, spot.row))

    def lines(self) -> list[Line]:
        size = self.size
        label = len(str(size))
        columns: Line = [
            ("class:coord", " " * (label + 1) + "".join(f"  {COLUMNS[x]} " for x in range(size)))
        ]
        lines = [columns]
        for y in range(size, -1, -1):
            line: Line = [("", " " * (label + 1))]
            for x in range(size + 1):
                line.append(self.crossing(x, y))
                if x < size:
                    line.append(self.groove_h(x, y))
            lines.append(line)
            if y > 0:
                number = str(y)
                line = [("class:coord", number.rjust(label)), ("", " ")]
                for x in range(size + 1):
                    line.append(self.groove_v(x, y - 1))
                    if x < size:
                        line.append(self.square(x, y - 1))
                lines.append([*line, ("", " "), ("class:coord", number)])
        lines.append(columns)
        return lines

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
        return _STYLES[weight], text * CELL

    def groove_v(self, x: int, y: int) -> Fragment:
        weight = self.weight_v(x, y)
        return _STYLES[weight], {2: self.chars.wall_v, 3: self.chars.last_v}.get(
            weight, self.chars.groove_v
        )

    def crossing(self, x: int, y: int) -> Fragment:
        arms = (
            self.weight_v(x, y),
            self.weight_h(x, y),
            self.weight_v(x, y - 1),
            self.weight_h(x - 1, y),
        )
        up, right, down, left = arms
        if left == right == 3 or up == down == 3:
            return _STYLES[3], self.chars.crossing(arms)
        # The last wall's ends are drawn as grooves (see ``Charset.crossing``).
        return _STYLES[max(1 if arm == 3 else arm for arm in arms)], self.chars.crossing(arms)

    def square(self, x: int, y: int) -> Fragment:
        if (x, y) in self.pawns:
            index = self.pawns[x, y]
            glyph = self.chars.pawns[index]
            if self.moved == (x, y):
                return f"class:pawn.{index} class:last", f"[{glyph}]"
            return f"class:pawn.{index}", f" {glyph} "
        if (x, y) in self.targets:
            return "class:legal", f" {self.chars.legal} "
        return "", " " * CELL


_STYLES = {0: "class:grid", 1: "class:grid", 2: "class:wall", 3: "class:wall.last"}


def plain_text(lines: list[Line]) -> str:
    """Styled lines as plain text, one per line, without trailing spaces."""
    return "\n".join("".join(text for _, text in line).rstrip() for line in lines)


def board_text(state: State, *, ascii: bool = False, seat: int | None = None) -> str:
    """The board as plain text (for the plain mode's ``board`` command and tests)."""
    return plain_text(render_board(state, ascii=ascii, seat=seat))
