"""The status panel beside the board: players, walls, distances, clocks, the turn.

Pure, like ``render``: a ``state`` in, styled lines out. ``elapsed`` is the
time since the state arrived, to run the clock of the seat to move down
(the caller stops counting while the link is down: ``link`` marks the clocks
as frozen then).
"""

from __future__ import annotations

from prompt_toolkit.utils import get_cwidth

from client.describe import (
    clock_text,
    low_time,
    match_text,
    move_number,
    opening,
    plural,
    rating_text,
    remaining,
    situation,
    time_control_text,
    who,
)
from client.render import Line, pawn_glyph
from client.width import clip_name, pad
from protocol.messages import State, TimeControl

NAME_WIDTH = 11
"""The name column (room for "Computer L5") on a panel of 37 columns or more."""


def status_lines(
    state: State,
    me: int | None,
    *,
    ascii: bool = False,
    elapsed: float = 0.0,
    width: int = 40,
    link: str = "connected",
) -> list[Line]:
    """Room, one line per seat, the last move and where the game stands (``width`` columns)."""
    variant = state.variant
    walls = variant.walls if variant.walls is not None else 20 // variant.players
    heading = f"{variant.size}x{variant.size}, {plural(walls, 'wall')} each"
    clock = state.clock
    if clock is not None:
        control = TimeControl(base=clock.base_ms / 1000, increment=clock.increment_ms / 1000)
        heading += f", {time_control_text(control)}"
    room: Line = [("class:title", f"Room {state.room}")]
    offline: list[Line] = []
    if link != "connected":
        note = "offline, clocks stopped" if clock else "offline"
        # Beside the room when it fits; on a row of its own when not (at 80 columns the
        # panel broke it mid-word: "clocks stop" / "ped", an outside review).
        if _columns(room) + 2 + len(note) <= width:
            room.append(("class:offline", f"  {note}"))
        else:
            offline.append([("class:offline", note)])
    name_width = max(
        max(5, min(NAME_WIDTH, width - (22 if clock else 15))),
        min(_longest_name(state), width - _beside_name(state, me)),
    )
    lines: list[Line] = [
        room,
        *offline,
        [("", heading)],
        # "to go": the steps each pawn still has to its goal, as the browser says it.
        [("class:coord", f"  {'player':<{name_width}}walls to go" + ("  clock" if clock else ""))],
    ]
    for player in state.players:
        line = _player_line(state, player.seat, me, ascii, elapsed, name_width, link)
        if away(state, player.seat) and _columns(line) + len(" away") <= width:
            line.append(("class:offline", " away"))
        # No room for "you" (a narrow panel, or a rating change beside the rating once a
        # rated game ends: it wrapped "you" onto a row of its own): the name is in bold.
        if width < 37 or _columns(line) > width:
            line = [fragment for fragment in line if fragment != ("class:me", " you")]
        lines.append(line)
    # The countdowns on rows of their own: beside the player they wrapped the row at 80
    # columns ('◀ away, clai' / 'm in 13s').
    lines += [
        [("class:offline", note)]
        for seat in range(len(state.players))
        if (note := claim_note(state, seat, me, elapsed))
    ]
    last = state.last_move
    number = move_number(state)  # as the move list numbers it (not "Ply 83" beside "42.")
    info = f"Game {state.game}, move {number}" if state.game > 1 else f"Move {number}"
    if last is not None:
        info += f"   last: {pawn_glyph(last.seat, ascii)} {last.move}"
    if state.spectators:
        info += f"   {state.spectators} watching"
    lines.append([("", info)])
    if state.match is not None:
        lines.append([("", match_text(state, me))])
    for seat in state.draw_offers:
        if seat != me:
            lines.append([("class:situation", f"{opening(who(state, seat, me))} offers a draw")])
    for seat in state.rematch:
        if seat != me:
            lines.append([("class:situation", f"{opening(who(state, seat, me))} wants a rematch")])
    if state.rematch_declined is not None:
        declined = opening(who(state, state.rematch_declined, me))
        lines.append([("class:situation", f"{declined} declined the rematch")])
    lines.append([("class:situation", situation(state, me, brief=True))])
    note = first_move_note(state, me, elapsed)
    if note:
        lines.append([("class:coord", note)])
    if note := thinking_note(state, me, elapsed):
        lines.append([("class:offline", note)])
    return lines


def _longest_name(state: State) -> int:
    return max((get_cwidth(p.name) for p in state.players if p.name is not None), default=0)


def _beside_name(state: State, me: int | None) -> int:
    """The columns of the widest player row but its name, the turn mark included (it moves
    from row to row): a name longer than ``NAME_WIDTH`` has what is left ("root (guest)"
    was cut to "root (gues…" with room to spare)."""
    rows = []
    for player in state.players:
        row = 2 + 5 + 6 + 2  # pawn and space, walls, to go, turn mark
        if state.clock is not None:
            row += 7
        if player.rating is not None:
            row += 1 + get_cwidth(rating_text(player))
        if player.seat == me:
            row += len(" you")
        if not player.active:
            row += len(" out")
        rows.append(row)
    return max(rows, default=0)


def _player_line(
    state: State, seat: int, me: int | None, ascii: bool, elapsed: float, width: int, link: str
) -> Line:
    player = state.players[seat]
    name = player.name if player.name is not None else "(free)"
    steps = state.distances[seat]
    distance = str(steps) if steps >= 0 else "-"
    name = clip_name(name, width, "~" if ascii else "…")
    line: Line = [
        (f"class:pawn.{seat}", pawn_glyph(seat, ascii)),
        ("class:me" if seat == me else "", f" {pad(name, width)}"),
        ("", f"{state.walls_left[seat]:>5}{distance:>6}"),
    ]
    clock = state.clock
    if clock is not None and seat < len(clock.remaining_ms):
        left = remaining(clock, seat, elapsed)
        style = "class:clock"
        if link != "connected":
            style = "class:clock.frozen"
        elif low_time(clock, left):
            style = "class:clock.low"
        if clock.running == seat and link == "connected":
            style += ".running"
        line += [("", " "), (style, f"{clock_text(left):>6}")]
    if player.rating is not None:
        line.append(("class:coord", f" {rating_text(player)}"))
    if state.turn == seat:
        line.append(("class:turn", " <" if ascii else " ◀"))
    if seat == me:
        line.append(("class:me", " you"))
    if not player.active:
        line.append(("class:offline", " out"))
    return line


def away(state: State, seat: int) -> bool:
    """Whether the player of ``seat`` has gone away (not left for good: that is 'out')."""
    player = state.players[seat]
    return player.active and player.name is not None and not player.connected


def ticking(state: State) -> bool:
    """Whether something the status shows counts down by itself (a running clock, the
    first-move deadline, a claim countdown): the screen is redrawn only while it does."""
    if state.status != "playing":
        return False
    if state.clock is not None and state.clock.running is not None:
        return True
    if state.first_move_in_ms is not None and state.ply < len(state.players):
        return True
    return any(away(state, p.seat) and p.claim_in_ms is not None for p in state.players)


def claim_note(state: State, seat: int, me: int | None, elapsed: float) -> str:
    """When the game may be claimed against an absent player (empty if it may not)."""
    player = state.players[seat]
    if not away(state, seat) or player.claim_in_ms is None or state.status != "playing":
        return ""
    left_s = max(0.0, player.claim_in_ms / 1000 - elapsed)
    when = f"claim in {left_s:.0f}s" if left_s > 0 else "claim now"
    return f"{opening(who(state, seat, me))} away: {when}"


THINKING_SHOWN = 120.0
"""Seconds before the thinking limit of an untimed game runs out from which it is shown."""


def thinking_note(state: State, me: int | None, elapsed: float = 0.0) -> str:
    """The thinking limit of an untimed game (PROTOCOL.md section 13) in its last minutes:
    when the others may claim the game from the seat to move (empty before, and if none)."""
    if state.move_claim_in_ms is None or state.status != "playing" or state.turn is None:
        return ""
    left_s = max(0.0, state.move_claim_in_ms / 1000 - elapsed)
    if left_s > THINKING_SHOWN:
        return ""
    if state.turn == me:
        if left_s > 0:
            return f"Move within {left_s:.0f}s, or the game may be claimed from you"
        return "Move now: the game may be claimed from you"
    when = f"claim in {left_s:.0f}s" if left_s > 0 else "claim now"
    return f"{opening(who(state, state.turn, me))} has not moved: {when}"


def _columns(line: Line) -> int:
    return sum(get_cwidth(text) for _, text in line)


def first_move_note(state: State, me: int | None, elapsed: float = 0.0) -> str:
    """While the first moves are played: that they are free of the clock, and how long the
    seat to move has left to make one before the server aborts the game (in game 2 of a
    match: before that seat loses it)."""
    if state.status != "playing" or state.ply >= len(state.players):
        return ""
    parts = []
    if state.clock is not None:
        parts.append("First moves are free: the clocks start once everyone has moved.")
    if state.first_move_in_ms is not None:
        left = max(0, round(state.first_move_in_ms / 1000 - elapsed))
        mover = "you" if state.turn == me else who(state, state.turn or 0, me)
        if state.match is not None and state.match.game > 1:  # a later match game is lost
            parts.append(f"{opening(mover)} must move in {left} s or lose the game.")
        else:
            parts.append(f"Aborted unless {mover} move{'' if mover == 'you' else 's'} in {left} s.")
    return " ".join(parts)
