"""Game variants: number of players, board size and walls per player."""

from __future__ import annotations

from dataclasses import dataclass

from engine.notation import COLUMNS

MIN_SIZE = 5
MAX_SIZE = 11
MAX_WALLS = 30


@dataclass(frozen=True)
class Variant:
    """The parameters a game is played with. Validated on construction."""

    players: int = 2
    """2, or 4 for the official four-player game."""
    size: int = 9
    """Squares per side: odd, 5 to 11."""
    walls: int = 10
    """Walls each player starts with."""

    @classmethod
    def of(cls, players: int = 2, size: int = 9, walls: int | None = None) -> Variant:
        """Build a variant; ``walls=None`` means the official 20 walls shared out."""
        if walls is None:
            walls = 10 if players == 2 else 5
        return cls(players, size, walls)

    def __post_init__(self) -> None:
        if self.players not in (2, 4):
            raise ValueError(f"players must be 2 or 4, not {self.players}")
        if not (MIN_SIZE <= self.size <= MAX_SIZE) or self.size % 2 == 0:
            raise ValueError(f"size must be odd and from {MIN_SIZE} to {MAX_SIZE}, not {self.size}")
        if not 0 <= self.walls <= MAX_WALLS:
            raise ValueError(f"walls must be from 0 to {MAX_WALLS}, not {self.walls}")

    def start(self, seat: int) -> tuple[int, int]:
        """The (col, row) a seat's pawn starts on."""
        mid, last = self.size // 2, self.size - 1
        if self.players == 2:
            return ((mid, 0), (mid, last))[seat]
        # Clockwise from the bottom: e1, a5, e9, i5 on the 9x9 board.
        return ((mid, 0), (0, mid), (mid, last), (last, mid))[seat]

    def goal_name(self, seat: int) -> str:
        """The goal edge in words: ``"row 9"``, ``"column a"``..."""
        last = self.size - 1
        if self.players == 2:
            return ("row " + str(self.size), "row 1")[seat]
        return (f"row {self.size}", f"column {COLUMNS[last]}", "row 1", "column a")[seat]
