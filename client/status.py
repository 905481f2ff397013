"""The status panel beside the board: players, walls, distances, clocks, the turn.

Pure, like ``render``: a ``state`` in, styled lines out. ``elapsed`` is the
time since the state arrived, to run the clock of the seat to move down.
"""

from __future__ import annotations

from client.describe import (
    clock_text,
    match_text,
    remaining,
    situation,
    time_control_text,
    variant_text,
)
from client.render import Line, pawn_glyph
from protocol.messages import State, TimeControl

NAME_WIDTH = 10


def status_lines(
    state: State, me: int | None, *, ascii: bool = False, elapsed: float = 0.0
) -> list[Line]:
    """Room, one line per seat, the last move and where the game stands (35 columns)."""
    heading = variant_text(state.variant)
    clock = state.clock
    if clock is not None:
        control = TimeControl(base=clock.base_ms / 1000, increment=clock.increment_ms / 1000)
        heading += f", {time_control_text(control)}"
    lines: list[Line] = [
        [("class:title", f"Room {state.room}")],
        [("", heading)],
        [("class:coord", f"  {'player':<{NAME_WIDTH}} walls goal" + (" clock" if clock else ""))],
    ]
    for player in state.players:
        seat = player.seat
        name = player.name if player.name is not None else "(free)"
        if player.bot is not None:
            name = f"computer {player.bot}"
        steps = state.distances[seat]
        distance = str(steps) if steps >= 0 else "-"
        if len(name) > NAME_WIDTH:
            name = name[: NAME_WIDTH - 1] + ("~" if ascii else "…")
        line: Line = [
            (f"class:pawn.{seat}", pawn_glyph(seat, ascii)),
            ("class:me" if seat == me else "", f" {name:<{NAME_WIDTH}}"),
            ("", f" {state.walls_left[seat]:>5} {distance:>4}"),
        ]
        if clock is not None and seat < len(clock.remaining_ms):
            text = clock_text(remaining(clock, seat, elapsed))
            style = "class:clock.running" if clock.running == seat else "class:clock"
            line += [("", " "), (style, f"{text:>5}")]
        if state.turn == seat:
            line.append(("class:turn", " <" if ascii else " ◀"))
        if seat == me:
            line.append(("class:me", " you"))
        if not player.active:
            line.append(("class:offline", " out"))
        elif player.name is not None and not player.connected:
            away = " away"
            if player.claim_in_ms is not None and state.status == "playing":
                left = max(0.0, player.claim_in_ms / 1000 - elapsed)
                away += f", claim in {left:.0f}s" if left > 0 else ", claim now"
            line.append(("class:offline", away))
        lines.append(line)
    last = state.last_move
    info = f"Game {state.game}, ply {state.ply}" if state.game > 1 else f"Ply {state.ply}"
    if last is not None:
        info += f"   last: {pawn_glyph(last.seat, ascii)} {last.move}"
    if state.spectators:
        info += f"   {state.spectators} watching"
    lines.append([("", info)])
    if state.match is not None:
        lines.append([("", match_text(state, me))])
    for seat in state.draw_offers:
        if seat != me:
            lines.append([("class:situation", f"{pawn_glyph(seat, ascii)} offers a draw")])
    for seat in state.rematch:
        if seat != me:
            lines.append([("class:situation", f"{pawn_glyph(seat, ascii)} wants a rematch")])
    lines.append([("class:situation", situation(state, me, brief=True))])
    return lines
