"""What the player types: parsed into commands, with help and completion.

A line is a move in standard notation (``e2``, ``e3h``, ``e3v``) or a word
command (``move e2``, ``wall e3h``, ``chat hello``...). Parsing only reads
the words; whether a move is legal is for the server to say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from client.notation import is_move, is_wall


@dataclass(frozen=True)
class Move:
    """A pawn move or a wall, in notation."""

    notation: str


@dataclass(frozen=True)
class Chat:
    text: str


@dataclass(frozen=True)
class Resign:
    pass


@dataclass(frozen=True)
class Draw:
    """Offer a draw, or answer the offer on the table."""

    action: Literal["offer", "accept", "decline"]


@dataclass(frozen=True)
class Claim:
    """Claim the game against players who stayed away too long."""


@dataclass(frozen=True)
class Abort:
    """End the game without a result, before everyone has moved."""


@dataclass(frozen=True)
class Rematch:
    """Ask to play again once the game is over, or decline the rematch asked for."""

    action: Literal["offer", "decline"] = "offer"


@dataclass(frozen=True)
class Hint:
    """Ask the computer for a move (casual games against it only)."""


@dataclass(frozen=True)
class Takeback:
    """Take back your last move and the computer's reply (casual games against it only)."""


@dataclass(frozen=True)
class Eval:
    """As a spectator, follow the computer's evaluation (or stop)."""

    on: bool


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class Quit:
    pass


@dataclass(frozen=True)
class Board:
    """Show the board (in the plain mode; the full-screen one always shows it)."""


@dataclass(frozen=True)
class Moves:
    """List the pawn moves the server offers."""


@dataclass(frozen=True)
class Cancel:
    """Drop the moves waiting for the player's turn."""


@dataclass(frozen=True)
class Yes:
    """Yes to the question asked (resign? leave?)."""


@dataclass(frozen=True)
class No:
    """No to the question asked."""


@dataclass(frozen=True)
class Invalid:
    """A line that is not a command, and why."""

    message: str


Command = (
    Move
    | Chat
    | Resign
    | Draw
    | Claim
    | Abort
    | Rematch
    | Hint
    | Takeback
    | Eval
    | Help
    | Quit
    | Board
    | Moves
    | Cancel
    | Yes
    | No
    | Invalid
)

WORDS: dict[str, str] = {
    "move": "move c2       move your pawn (or just type c2)",
    "wall": "wall c3h      place a wall (or just type c3h / c3v)",
    "chat": "chat <text>   say something to the room",
    "resign": "resign        give the game up",
    "draw": "draw          offer a draw",
    "accept": "accept        accept the draw offered to you",
    "decline": "decline       decline it (once the game is over: the rematch asked)",
    "claim": "claim         win against a player away too long, or too long to move",
    "abort": "abort         call the game off before everyone has moved",
    "rematch": "rematch       ask to play again once the game is over",
    "hint": "hint          ask the computer for a move (casual games against it)",
    "takeback": "takeback      undo your move and the computer's reply (same games)",
    "score": "score [off]   as a spectator, follow the computer's evaluation",
    "moves": "moves         list the squares your pawn may go to",
    "cancel": "cancel        drop the move typed before your turn (it waits for it)",
    "board": "board         draw the board (plain mode)",
    "help": "help          this text",
    "quit": "quit          leave (your seat stays yours to come back to)",
}
ALIASES = {"say": "chat", "exit": "quit", "?": "help", "m": "move", "w": "wall"}

HELP = "\n".join(
    [
        # Orientation-free: seat 1's board is turned half a turn, where 'above' is below.
        # Examples that exist on every board, 5x5 included (its walls go from a1 to d4).
        "Moves use the standard notation, columns and rows as named on the board's edges.",
        "  c2      move your pawn to c2 (a step, or a jump over a pawn next to you)",
        "  c3h     a wall between rows 3 and 4, along columns c and d",
        "  c3v     a wall between columns c and d, along rows 3 and 4",
        "Commands:",
        *(f"  {text}" for text in WORDS.values()),
        # No Tab or line history here: the plain mode reads whole lines (the full screen's
        # help says those keys).
        "board draws the board: dots where your pawn may go, the newest wall drawn apart.",
    ]
)
"""The plain mode's help: each row fits 80 columns."""

SCREEN_SKIPS = ("move", "wall", "board", "hint", "takeback", "score", "accept", "decline")
"""Words the full screen's help leaves out, or sums up on one line, to fit 24 rows."""

SCREEN_HELP = "\n".join(
    [
        "c2            move your pawn to c2 (a step, or a jump over a pawn)",
        "c3h           a wall between rows 3 and 4, along columns c and d",
        "c3v           a wall between columns c and d, along rows 3 and 4",
        *(f"{text}" for key, text in WORDS.items() if key not in SCREEN_SKIPS),
        "accept, decline  answer a draw offer (decline: a rematch asked, too)",
        "hint, takeback  against the computer; score [off]  follow its evaluation",
        "Dots: where your pawn may go.  Arrow: whose turn.  to go: steps to the goal.",
        "Keys: Tab completes; Up/Down recall lines; PageUp/PageDown scroll the log;",
        "      F1 or Esc closes this help; Ctrl-C or Ctrl-D quits.",
    ]
)
"""The full screen's help overlay: fits 80x24 (at most 18 lines of 76 columns, in a frame)."""


def parse(line: str) -> Command | None:
    """The command on ``line``; None for a blank line."""
    text = line.strip()
    if not text:
        return None
    word, _, rest = text.partition(" ")
    word = ALIASES.get(word.lower(), word.lower())
    rest = rest.strip()
    if not rest and is_move(word):
        return Move(word)
    match word:
        case "move" | "wall":
            return _move(word, rest)
        case "chat":
            return Chat(rest) if rest else Invalid("chat what? type: chat <text>")
        case "resign":
            return Resign()
        case "draw":
            action: dict[str, Literal["offer", "accept", "decline"]] = {
                "": "offer",
                "offer": "offer",
                "accept": "accept",
                "decline": "decline",
            }
            if rest.lower() not in action:
                return Invalid("draw, draw accept or draw decline")
            return Draw(action[rest.lower()])
        case "accept":
            return Draw("accept")
        case "decline":
            return Draw("decline")
        case "claim":
            return Claim()
        case "abort":
            return Abort()
        case "rematch":
            if rest.lower() not in ("", "decline"):
                return Invalid("rematch or rematch decline")
            return Rematch("decline" if rest else "offer")
        case "hint":
            return Hint()
        case "takeback":
            return Takeback()
        case "score":
            if rest.lower() not in ("", "on", "off"):
                return Invalid("score, score on or score off")
            return Eval(rest.lower() != "off")
        case "help":
            return Help()
        case "quit":
            return Quit()
        case "board":
            return Board()
        case "moves":
            return Moves()
        case "cancel":
            return Cancel()
        case "y" | "yes":
            return Yes()
        case "n" | "no":
            return No()
    return Invalid(f"{text!r} is not a move or a command; type help")


def _move(word: str, rest: str) -> Command:
    notation = "".join(rest.lower().split())  # "wall e3 h" reads as e3h
    if word == "wall":
        if is_wall(notation):
            return Move(notation)
        if is_move(notation):
            return Invalid(f"wall {notation}: add h or v (e.g. {notation}h)")
        if notation:  # said as it was typed, not "where?" (a review typed d3x)
            return Invalid(f"{notation!r} is not a wall: a square then h or v (e.g. wall c3h)")
        return Invalid("wall where? type e.g. wall c3h or wall c3v")
    if is_move(notation):
        return Move(notation)
    return Invalid("move where? type e.g. move c2")


def completions(before_cursor: str, legal_pawn_moves: list[str]) -> list[str]:
    """Words that complete the text left of the cursor: commands and legal pawn moves."""
    text = before_cursor.lstrip().lower()
    if " " not in text:
        candidates = [*legal_pawn_moves, *WORDS]
        return [word for word in candidates if word.startswith(text)]
    word, _, rest = text.partition(" ")
    if ALIASES.get(word, word) == "move" and " " not in rest.strip():
        return [square for square in legal_pawn_moves if square.startswith(rest.strip())]
    return []
