"""Translate between OpenSpiel's ``quoridor`` game and our notation.

Only the two-player game is bridged. The mapping, determined empirically
against open_spiel 2.0.2 (and matching its ``quoridor.cc``):

* Seats: OpenSpiel player ``p`` is our seat ``p``. Player 0 moves first, starts
  on OpenSpiel's ``e9`` (our ``e1``) and heads for OpenSpiel's row 1 (our row 9).
* Rows are flipped, columns are not. On an ``N x N`` board an OpenSpiel square
  in row ``r`` is our row ``N + 1 - r``, and an OpenSpiel wall in row ``r`` is
  our wall row ``N - r`` (a wall names the lower-left square of its 2x2 block in
  our notation and the upper-left one, in our orientation, in OpenSpiel's).
  Both flips are involutions, so one function, :func:`flip`, goes either way.
* Action strings use the same shape as ours: ``e8`` for a pawn move,
  ``a1h``/``a1v`` for walls. ``h``/``v`` keep their meaning.
* Action ids live on the ``(2N-1) x (2N-1)`` grid of cells and wall slots,
  ``id = y * (2N-1) + x``. Walls are absolute: a horizontal wall is
  ``(2c, 2(r-1)+1)`` and a vertical one ``(2c+1, 2(r-1))`` for OpenSpiel
  column ``c`` (0-based) and wall row ``r``. Pawn moves are *relative* to the
  mover (ids around ``(2, 2)``, a straight jump shares the id of the plain
  step), so they can only be translated with the state at hand.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any

GAME_NAME = "quoridor"
DEFAULT_WALLS = 10
"""Our engine's default for two players, used whatever the board size.

OpenSpiel's own default is ``size * size // 8`` (10 on 9x9, 3 on 5x5, 6 on
7x7), and its parameter specification wrongly advertises 0, so the bridge
always passes ``wall_count`` explicitly.
"""

PLAYER_OF_SEAT: tuple[int, int] = (0, 1)
"""OpenSpiel player id of each of our seats (the identity for two players)."""
SEAT_OF_PLAYER: tuple[int, int] = (0, 1)
"""Our seat of each OpenSpiel player id."""

_MOVE_RE = re.compile(r"([a-y])([1-9][0-9]?)([hv]?)")

OpenSpielGame = Any
"""A ``pyspiel.Game`` (pyspiel ships no type information)."""
OpenSpielState = Any
"""A ``pyspiel.State``."""


# --- Pure notation --------------------------------------------------------------------------


def _parse(text: str, size: int) -> tuple[int, int, str]:
    """``"e3h"`` -> ``(4, 3, "h")``: 0-based column, 1-based row, orientation."""
    match = _MOVE_RE.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a square or a wall")
    letter, digits, orientation = match.groups()
    col, row = ord(letter) - ord("a"), int(digits)
    limit = size - 1 if orientation else size
    if col >= limit or not 1 <= row <= limit:
        raise ValueError(f"{text!r} is off a {size}x{size} board")
    return col, row, orientation


def flip(text: str, size: int = 9) -> str:
    """Flip the row of a square or wall between OpenSpiel's notation and ours.

    Squares map row ``r`` to ``size + 1 - r``, walls map row ``r`` to
    ``size - r``. Applying it twice gives the input back.
    """
    col, row, orientation = _parse(text, size)
    flipped = (size - row) if orientation else (size + 1 - row)
    return f"{chr(ord('a') + col)}{flipped}{orientation}"


def to_openspiel(move: str, size: int = 9) -> str:
    """Our ``"e2"``/``"e3h"`` -> OpenSpiel's ``"e8"``/``"e6h"`` (9x9)."""
    return flip(move, size)


def from_openspiel(text: str, size: int = 9) -> str:
    """OpenSpiel's ``"e8"``/``"e6h"`` -> our ``"e2"``/``"e3h"`` (9x9)."""
    return flip(text, size)


def diameter(size: int) -> int:
    """Side of OpenSpiel's grid of cells and wall slots."""
    return 2 * size - 1


def is_wall_action(action: int, size: int = 9) -> bool:
    """Whether an OpenSpiel action id is a wall (pawn ids sit on even/even cells)."""
    x, y = action % diameter(size), action // diameter(size)
    return bool(x & 1 or y & 1)


def wall_action(wall: str, size: int = 9) -> int:
    """The OpenSpiel action id of a wall in our notation; state independent."""
    col, row, orientation = _parse(to_openspiel(wall, size), size)
    if not orientation:
        raise ValueError(f"{wall!r} is not a wall")
    if orientation == "h":
        x, y = 2 * col, 2 * (row - 1) + 1
    else:
        x, y = 2 * col + 1, 2 * (row - 1)
    return y * diameter(size) + x


def wall_from_action(action: int, size: int = 9) -> str:
    """Our notation for an OpenSpiel wall action id; state independent."""
    d = diameter(size)
    x, y = action % d, action // d
    if not 0 <= action < d * d or not (x & 1) ^ (y & 1):
        raise ValueError(f"action {action} is not a wall on a {size}x{size} board")
    orientation = "h" if y & 1 else "v"
    return from_openspiel(f"{chr(ord('a') + x // 2)}{y // 2 + 1}{orientation}", size)


# --- Games and states -----------------------------------------------------------------------


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2, where OpenSpiel's C++ ``std::cerr`` writes."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(devnull)
        os.close(saved)


def load_game(size: int = 9, walls: int | None = None, quiet: bool = True) -> OpenSpielGame:
    """Load OpenSpiel's two-player quoridor with our defaults.

    ``quiet`` hides the "implementation of 'quoridor' has known issues" warning
    that ``pyspiel.load_game`` prints to the C++ stderr on every load (it is
    not a Python warning, so ``warnings`` filters cannot suppress it).
    """
    import pyspiel

    params = {"board_size": size, "wall_count": DEFAULT_WALLS if walls is None else walls}
    if quiet:
        with _quiet_stderr():
            return pyspiel.load_game(GAME_NAME, params)
    return pyspiel.load_game(GAME_NAME, params)


def board_size(state: OpenSpielState) -> int:
    """The board size an OpenSpiel quoridor state is played on."""
    return int(state.get_game().get_parameters()["board_size"])


def action_to_move(state: OpenSpielState, action: int, size: int | None = None) -> str:
    """Our notation for an OpenSpiel action id, for the player to move in ``state``."""
    size = board_size(state) if size is None else size
    if is_wall_action(action, size):
        return wall_from_action(action, size)
    return from_openspiel(str(state.action_to_string(state.current_player(), action)), size)


def legal_moves(state: OpenSpielState, size: int | None = None) -> list[str]:
    """The legal moves of ``state`` in our notation, in OpenSpiel's action order."""
    size = board_size(state) if size is None else size
    return [action_to_move(state, action, size) for action in state.legal_actions()]


def move_to_action(state: OpenSpielState, move: str, size: int | None = None) -> int:
    """The OpenSpiel action id for our ``move`` in ``state``.

    Raises ValueError when OpenSpiel does not list the move as legal.
    """
    size = board_size(state) if size is None else size
    legal: list[int] = [int(action) for action in state.legal_actions()]
    if _parse(move, size)[2]:
        action = wall_action(move, size)
        if action in legal:
            return action
    else:
        for action in legal:
            if not is_wall_action(action, size) and action_to_move(state, action, size) == move:
                return action
    raise ValueError(f"OpenSpiel does not allow {move} here (history {state.history()})")


def new_state(size: int = 9, walls: int | None = None) -> OpenSpielState:
    """A fresh OpenSpiel quoridor state with our defaults."""
    return load_game(size, walls).new_initial_state()


def replay(
    moves: Iterable[str],
    size: int = 9,
    walls: int | None = None,
    game: OpenSpielGame | None = None,
) -> OpenSpielState:
    """Play ``moves`` (our notation) from the opening in a new OpenSpiel state.

    ``game`` reuses an already loaded game (then ``size``/``walls`` must match it).
    Raises ValueError on the first move OpenSpiel rejects.
    """
    state = (load_game(size, walls) if game is None else game).new_initial_state()
    for move in moves:
        if state.is_terminal():
            raise ValueError(f"OpenSpiel's game is already over before {move}")
        state.apply_action(move_to_action(state, move, size))
    return state


def replay_actions(
    moves: Iterable[str],
    size: int = 9,
    walls: int | None = None,
    game: OpenSpielGame | None = None,
) -> list[int]:
    """The OpenSpiel action ids of a record in our notation (they depend on the state)."""
    state = (load_game(size, walls) if game is None else game).new_initial_state()
    actions: list[int] = []
    for move in moves:
        action = move_to_action(state, move, size)
        actions.append(action)
        state.apply_action(action)
    return actions


def winner(state: OpenSpielState) -> int | None:
    """Our seat that won, or None (game not over, or OpenSpiel's move-limit draw)."""
    if not state.is_terminal():
        return None
    returns: list[float] = [float(value) for value in state.returns()]
    for player, value in enumerate(returns):
        if value > 0:
            return SEAT_OF_PLAYER[player]
    return None


def _board_rows(state: OpenSpielState) -> tuple[int, list[str]]:
    text = str(state)
    header, *rows = text.splitlines()
    size = int(header.split(",")[0].split(":")[1])
    return size, rows[1 : 2 * size : 2]


def pawns(state: OpenSpielState) -> list[str]:
    """Each seat's square in our notation, read from OpenSpiel's board drawing."""
    size, rows = _board_rows(state)
    found: dict[int, str] = {}
    for index, line in enumerate(rows):
        for col in range(size):
            token = line[2 + 4 * col : 5 + 4 * col].strip()
            if token in ("0", "@"):
                found[SEAT_OF_PLAYER["0@".index(token)]] = from_openspiel(
                    f"{chr(ord('a') + col)}{index + 1}", size
                )
    return [found[seat] for seat in sorted(found)]


def walls_left(state: OpenSpielState) -> list[int]:
    """Each seat's remaining walls, read from OpenSpiel's board drawing."""
    header = str(state).splitlines()[0]
    counts = [int(part) for part in header.split("walls:")[1].split(",")]
    return [counts[PLAYER_OF_SEAT[seat]] for seat in range(len(counts))]
