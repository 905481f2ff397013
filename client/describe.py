"""Events in words: one line per change, for the plain mode and the message log.

Every function here is pure. ``me`` is the viewer's seat, or None for a
spectator; the viewer is called "you".
"""

from __future__ import annotations

import re

from client.notation import rounds
from protocol.messages import ClockInfo, PlayerInfo, RoomInfo, State, TimeControl, VariantSpec

REASONS = {
    "goal": "",
    "resign": "by resignation",
    "time": "on time",
    "abandon": "the others stayed away",
    "last_standing": "last one standing",
}
"""How a game was won, for the result line (unknown reasons are shown as they come)."""


def goal(players: int, size: int, seat: int) -> str:
    """Where a seat races to, in words (the protocol's seats and goals, section 9)."""
    letters = "abcdefghijk"
    if players == 2:
        return f"row {size}" if seat == 0 else "row 1"
    return (f"row {size}", f"column {letters[size - 1]}", "row 1", "column a")[seat]


def plural(count: int, word: str) -> str:
    """``1 wall``, ``2 walls``, ``0 walls``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def variant_text(variant: VariantSpec) -> str:
    walls = "standard walls" if variant.walls is None else f"{plural(variant.walls, 'wall')} each"
    size = variant.size
    return f"{variant.players} players, {size}x{size}, {walls}"


def time_control_text(control: TimeControl | None) -> str:
    """``5+3``: minutes each plus seconds added per move; "untimed" without a clock."""
    if control is None:
        return "untimed"
    base = f"{control.base / 60:g}" if control.base % 60 == 0 else f"{control.base:g}s"
    return f"{base}+{control.increment:g}"


LOW_TIME_MS = 10_000
"""A clock under this (or under a tenth of its base time, up to 30 s) is shown as low."""


def low_time(clock: ClockInfo, ms: float) -> bool:
    return ms < max(LOW_TIME_MS, min(30_000, clock.base_ms / 10))


def clock_text(ms: float | None) -> str:
    """Milliseconds left as ``m:ss`` (``h:mm:ss`` past an hour; ``0:09.4`` under 10 s)."""
    if ms is None:
        return ""
    if ms < 10_000:
        tenths = max(0, int(ms // 100))
        return f"0:{tenths // 10:02d}.{tenths % 10}"
    whole = max(0, int(ms // 1000))
    hours, rest = divmod(whole, 3600)
    if hours:
        return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
    return f"{rest // 60}:{rest % 60:02d}"


def remaining(clock: ClockInfo, seat: int, elapsed: float = 0.0) -> float:
    """A seat's time left in ms, ``elapsed`` seconds after the message was made."""
    left = float(clock.remaining_ms[seat])
    if clock.running == seat:
        left -= elapsed * 1000
    return max(0.0, left)


def distance_text(steps: int) -> str:
    """Steps to the goal; -1 is a pawn out of the game and walled off from its goal."""
    return "cut off" if steps < 0 else str(steps)


def who(state: State, seat: int, me: int | None) -> str:
    """A seat's player as the viewer says it: "you", the name, or "seat N"."""
    if seat == me:
        return "you"
    if seat < len(state.players) and state.players[seat].name:
        return str(state.players[seat].name)
    return f"seat {seat}"


_SEAT = re.compile(r"\b([Ss])eat (\d+)('s| has\b| is\b)?")


def with_names(message: str, state: State | None, me: int | None) -> str:
    """A server message with its seat numbers ("wall e5h would leave seat 1 no path to row
    1", "seat 1 has no walls left") said as the players' names, or "you" for the viewer's
    own seat ("you have no walls left"), as the browser client says them."""
    if state is None:
        return message

    def name(match: re.Match[str]) -> str:
        capital, seat, after = match.group(1) == "S", int(match.group(2)), match.group(3) or ""
        if seat >= len(state.players) or (seat != me and not state.players[seat].name):
            return match.group(0)
        if seat != me:
            return f"{state.players[seat].name}{after}"
        if after == "'s":
            return "Your" if capital else "your"
        verb = {" has": " have", " is": " are"}.get(after, after)
        return ("You" if capital else "you") + verb

    return _SEAT.sub(name, message)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


_OWN_WORDS = re.compile(r"(you|seat \d+)\b")
"""How ``who`` says a seat when not by its player's name."""


def opening(text: str) -> str:
    """``text`` to start a sentence, from ``who``: "you" and "seat 2" get a capital, a
    player's name never (its case is its owner's: "root (guest)" was "Root (guest)")."""
    return _cap(text) if _OWN_WORDS.match(text) else text


def _listing(state: State, me: int | None, values: list[str]) -> str:
    return ", ".join(f"{who(state, seat, me)} {value}" for seat, value in enumerate(values))


def seats_text(state: State, me: int | None) -> str:
    parts = []
    for player in state.players:
        name = player.name if player.name is not None else "free"
        if player.seat == me:
            name += " (you)"
        elif player.name is not None and not player.connected:
            name += " (away)"
        parts.append(f"seat {player.seat} {name}")
    return _cap(", ".join(parts)) + "."


def result_text(state: State, me: int | None, why: str = "") -> str:
    """How the game ended; ``why``: what the viewer saw end an aborted game, if known."""
    result = state.result
    if result is None:
        return "Game over."
    if result.reason == "aborted":
        return f"The game was aborted{': ' + why if why else ''}; no result."
    if result.winner is None:
        return "Game over: a draw." if result.reason == "draw" else f"Game over ({result.reason})."
    how = REASONS.get(result.reason, result.reason)
    if result.reason == "abandon" and len(state.players) == 2:
        # The browser's words: "you did not come back in time" to the one who stayed away
        # ("you stayed away" was the terminal's alone), the name to the others.
        how = f"{who(state, 1 - result.winner, me)} did not come back in time"
    how = f" ({how})" if how else ""
    if result.winner == me:
        return f"Game over: you win{how}!"
    if me is not None:  # a player who lost, said first: the winner may share their name
        return f"Game over: you lose, {who(state, result.winner, me)} wins{how}."
    return f"Game over: {who(state, result.winner, me)} wins{how}."


def aborted_why(before: State | None, after: State, me: int | None, waited: float) -> str:
    """What ended a game aborted before every seat had moved, as the viewer saw it: a
    player's own request (``result.by``: an abort, or a resignation that aborts a rated
    game), or a first move that did not come in time (``waited`` seconds since ``before``,
    whose countdown it outlasted). "The game was aborted." alone left a newcomer guessing
    (a review). "" when not such a game, or when nothing seen says more."""
    result = after.result
    if result is None or result.reason != "aborted" or before is None or before.status != "playing":
        return ""
    if result.by is not None:
        return f"{who(after, result.by, me)} ended it before every player had moved"
    countdown = before.first_move_in_ms
    if countdown is None:
        return ""  # the game had begun: every player went away
    if before.turn is not None and waited * 1000 >= countdown - 1000:
        return (
            f"{who(before, before.turn, me)} made no first move within {round(countdown / 1000)} s"
        )
    return ""


def match_text(state: State, me: int | None) -> str:
    match = state.match
    if match is None:
        return ""
    scores = _listing(state, me, [f"{score:g}" for score in match.scores])
    if not match.over:
        return f"Match game {match.game} of {match.games}; score: {scores}."
    if match.winner is None:
        return f"The match is drawn: {scores}."
    return f"{opening(who(state, match.winner, me))} won the match: {scores}."


def situation(
    state: State, me: int | None, *, brief: bool = False, elapsed: float = 0.0, why: str = ""
) -> str:
    """Where the game stands: waiting, whose turn, or who won (``why``: see ``result_text``).

    Unless ``brief``, it lists the viewer's options on their turn and after the game.
    """
    if state.status == "waiting":
        taken = sum(p.name is not None for p in state.players)
        return f"Waiting for players: {taken} of {len(state.players)} seats taken."
    if state.status == "finished":
        text = result_text(state, me, why)
        match = state.match
        asked = me in state.rematch  # the answer to it says what comes next
        if me is not None and not brief and (match is None or match.over) and not asked:
            text += f" {after_game(state, me)}"
        return text
    if state.turn is None:
        return ""
    if state.turn != me:
        return f"{opening(who(state, state.turn, me))} to move."
    if brief:
        return "Your move."
    moves = ", ".join(state.legal_pawn_moves) or "none"
    text = (
        f"Your move (move {move_number(state)}). Pawn moves: {moves}. "
        f"Walls left: {_listing(state, me, [str(n) for n in state.walls_left])}. "
        f"Steps to go: {_listing(state, me, [distance_text(n) for n in state.distances])}."
    )
    clock = state.clock
    if clock is not None:
        times = [clock_text(remaining(clock, s, elapsed)) for s in range(len(clock.remaining_ms))]
        text += f" Clock: {_listing(state, me, times)}."
    return text


def rating_text(player: PlayerInfo) -> str:
    """``1523?`` (provisional) or ``1523``, with the last game's change: ``1546 (+23)``."""
    if player.rating is None:
        return ""
    text = f"{player.rating}{'?' if player.provisional else ''}"
    if player.rating_change is not None:
        text += f" ({player.rating_change:+d})"
    return text


def _rating_changes(before: State, after: State, me: int | None) -> list[str]:
    """The new ratings once a rated game's changes are known."""
    changed = [
        f"{who(after, new.seat, me)} {rating_text(new)}"
        for old, new in zip(before.players, after.players, strict=False)
        if new.rating_change is not None and old.rating_change is None
    ]
    return [_cap(f"ratings: {', '.join(changed)}.")] if changed else []


def _player_changes(before: State, after: State, me: int | None, presence: bool) -> list[str]:
    """Who took, freed or left a seat; with ``presence``, who went away or came back."""
    changes = _rating_changes(before, after, me)
    for old, new in zip(before.players, after.players, strict=False):
        if new.seat == me:
            continue
        if old.name is None and new.name is not None:
            changes.append(f"{new.name} took seat {new.seat}.")
        elif old.name is not None and new.name is None:
            changes.append(f"Seat {new.seat} is free again.")
        elif old.name != new.name:
            changes.append(f"{new.name} took over seat {new.seat}.")
        elif old.connected != new.connected and not presence:
            continue
        elif old.connected and not new.connected and after.status == "playing":
            text = f"{new.name} is away"
            if new.claim_in_ms is not None and me is not None:
                text += (
                    f"; if they stay away you may claim the game in {new.claim_in_ms / 1000:.0f} s"
                )
            changes.append(text + ".")
        elif old.connected and not new.connected and after.status == "finished":
            # Said when it happens (a review learnt it only by typing rematch).
            rematch = " (a rematch can start only if they come back)" if me is not None else ""
            changes.append(f"{new.name} left the room{rematch}.")
        elif not old.connected and new.connected:
            changes.append(f"{new.name} is back.")
    for seat, how in retirements(before, after):
        changes.append(opening(retire_text(who(after, seat, me), how)) + ".")
    return changes


RETIRED = {"resign": "resigned", "time": "ran out of time", "left": "was removed for staying away"}
"""How a seat left a four-player game, in the browser client's words too."""


def retire_text(name: str, how: str | None = None) -> str:
    """``Dan resigned``; ``Dan is out of the game`` where how is not known (a replay)."""
    if how == "left" and name.lower() == "you":
        return f"{name} were removed for staying away"
    return f"{name} {RETIRED.get(how or '', 'is out of the game')}"


def retirements(before: State, after: State) -> list[tuple[int, str]]:
    """The seats that left a four-player game between two states (``retire N`` in the
    moves), and how: ``time`` when its clock ran out, ``left`` when it was away (claimed
    against, or past the hard limit), else ``resign``. The last one to go ends the game, so
    the moves tell it, not ``active`` (every seat is active again in a finished game)."""
    if before.room != after.room or before.game != after.game:
        return []
    found = []
    for move in after.moves[len(before.moves) :]:
        if not move.startswith("retire "):
            continue
        seat = int(move.split()[1])
        clock = after.clock
        if clock is not None and seat < len(clock.remaining_ms) and clock.remaining_ms[seat] <= 0:
            how = "time"
        elif seat < len(before.players) and before.players[seat].claim_in_ms is not None:
            how = "left"
        else:
            how = "resign"
        found.append((seat, how))
    return found


def opponents(state: State) -> str:
    """The viewer's opponents, in words: "your opponent" in a two-player game (the others, of
    one player, read oddly), "the others" in a four-player one."""
    return "your opponent" if len(state.players) == 2 else "the others"


def after_game(state: State, me: int | None) -> str:
    """What a player may type once the game (or match) is over: a rematch, or quit."""
    gone = _gone(state, me)
    if gone:
        return f"{gone} left the room: quit, or type rematch to wait for them."
    return "Type rematch to play again, or quit."


def _gone(state: State, me: int | None) -> str:
    """The other players no longer connected to the room, by name ('' if none)."""
    names = [p.name for p in state.players if p.seat != me and p.name and not p.connected]
    return " and ".join(names)


def _offers(before: State, after: State, me: int | None) -> list[str]:
    changes = []
    for seat in sorted(set(after.draw_offers) - set(before.draw_offers)):
        if seat == me:
            changes.append("You offer a draw.")
        elif me is not None:
            changes.append(f"{opening(who(after, seat, me))} offers a draw: accept or decline?")
        else:
            changes.append(f"{opening(who(after, seat, me))} offers a draw.")
    declined = before.draw_offers and not after.draw_offers and after.ply == before.ply
    if declined and after.status == "playing":
        changes.append("The draw offer was declined.")
    for seat in sorted(set(after.rematch) - set(before.rematch)):
        if seat == me:
            gone = _gone(after, me)
            # Said plainly: 'waiting for the others' read as if they were there to answer.
            others = (
                f"{gone} left: it starts if they come back"
                if gone
                else f"waiting for {opponents(after)}"
            )
            changes.append(f"You ask for a rematch; {others}.")
        elif me is not None:
            changes.append(
                f"{opening(who(after, seat, me))} asks for a rematch: type rematch to play,"
                " or decline."
            )
        else:
            changes.append(f"{opening(who(after, seat, me))} asks for a rematch.")
    decliner = after.rematch_declined
    if decliner is not None and decliner != before.rematch_declined:
        text = f"{opening(who(after, decliner, me))} declined the rematch"
        if me is not None and decliner != me:  # what the one declined may do now
            text += ": type rematch to ask again, or quit"
        changes.append(text + ".")
    return changes


def describe(
    before: State | None,
    after: State,
    me: int | None,
    *,
    brief: bool = False,
    screen: bool = False,
    why: str = "",
    presence: bool = True,
) -> str:
    """One line telling what changed from ``before`` (None: nothing seen yet) to ``after``.

    ``brief`` leaves out the options (pawn moves, rematch) from the situation. ``screen``
    is for a view that shows the board, the status panel and the move list at all times:
    the moves and the situation are left out (but for a game's end); it may return "".
    ``why``: what ended an aborted game, as the viewer saw it (``result_text``). Without
    ``presence``, players going away and coming back are not told (``Controller``: just
    after a server restart, when everyone is away for a moment).
    """
    parts: list[str] = []
    if (before is None or before.room != after.room) and not screen:
        parts.append(f"Room {after.room}: {variant_text(after.variant)}.")
        if after.clock is not None:
            control = TimeControl(
                base=after.clock.base_ms / 1000, increment=after.clock.increment_ms / 1000
            )
            parts.append(f"Clock {time_control_text(control)}.")
    if before is None or before.room != after.room or before.game != after.game:
        if before is not None and before.room == after.room and after.status == "waiting":
            # A joiner left the room's first game unplayed: out of it, and it waits again
            # (PROTOCOL.md section 14).
            gone = [
                player.name
                for player, now in zip(before.players, after.players, strict=True)
                if player.name is not None and now.name is None
            ]
            left = " and ".join(gone) or "The other player"
            parts.append(f"{left} left without playing: the room waits for another player.")
        elif before is not None and before.room == after.room:
            parts.append(f"Game {after.game} starts.")
        parts.append(seats_text(after, me))
        if me is not None:
            parts.append(f"You race to {goal(after.variant.players, after.variant.size, me)}.")
        parts.append(match_text(after, me))
        if after.last_move is not None and not screen:
            last = after.last_move
            parts.append(f"Last move: {who(after, last.seat, me)} {last.move}.")
    else:
        parts += _player_changes(before, after, me, presence)
        if after.spectators != before.spectators:
            parts.append(f"{after.spectators} watching.")
        if after.ply > before.ply and after.last_move is not None and not screen:
            last = after.last_move
            mover = who(after, last.seat, me)
            if after.ply == before.ply + 1:
                verb = "placed a wall at" if last.move.endswith(("h", "v")) else "moved to"
                parts.append(opening(f"{mover} {verb} {last.move}."))
            else:
                parts.append(f"{after.ply - before.ply} moves played; last {mover} {last.move}.")
        if after.ply < before.ply:  # a takeback: said on the full screen too, the board jumps
            taken = before.ply - after.ply
            parts.append(f"{taken} move{'s' if taken != 1 else ''} taken back.")
        if before.status == "waiting" and after.status == "playing":
            parts.append("The game starts.")
        parts += _offers(before, after, me)
        if before.status != "finished" and after.status == "finished":
            parts.append(match_text(after, me))
    ended = after.status == "finished" and (before is None or before.status != "finished")
    # Where the game stands, when it moved on: a state that only says someone went away or
    # came back, a draw offer or a rating does not repeat "Bob to move." (said already); after
    # the game, who is still here to play a rematch does change it.
    moved_on = (
        before is None
        or (before.room, before.game, before.status, before.ply, before.turn)
        != (after.room, after.game, after.status, after.ply, after.turn)
        or after.status == "waiting"
        or (after.status == "finished" and _gone(before, me) != _gone(after, me))
    )
    if (not screen and moved_on) or ended:
        parts.append(situation(after, me, brief=brief and after.status == "finished", why=why))
    return " ".join(part for part in parts if part)


def short_variant(variant: VariantSpec) -> str:
    """``9x9``, ``9x9 4p``, ``7x7 6w`` (players and walls only when not the standard)."""
    text = f"{variant.size}x{variant.size}"
    if variant.players == 4:
        text += " 4p"
    if variant.walls is not None and variant.walls != 20 // variant.players:
        text += f" {variant.walls}w"
    return text


def rooms_text(rooms: list[RoomInfo], command: str = "quoridor") -> list[str]:
    """The public rooms as a table of at most 80 columns (``command``: how this client is
    run, for the hint)."""
    if not rooms:
        return [f"No public rooms. Create one: {command} create"]
    lines = [f"{'ROOM':<10} {'GAME':<17} {'CLOCK':<8} {'STATUS':<8} PLAYERS"]
    for room in rooms:
        names = ", ".join(name if name is not None else "(free)" for name in room.players)
        watching = f" +{room.spectators} watching" if room.spectators else ""
        game = short_variant(room.variant) + (" match" if room.match else "")
        clock = time_control_text(room.clock)
        line = f"{room.room:<10} {game:<17} {clock:<8} {room.status:<8} {names}{watching}"
        lines.append(line if len(line) <= 80 else line[:79] + "~")
    lines.append(f"Join one:  {command} join ROOM")
    lines.append(f"Watch one: {command} watch ROOM")
    return lines


def move_number(state: State) -> int:
    """The move being played (the last one played, in a game over) as the move list numbers
    it, a round of every seat still in each (``42. i9``): "ply 83" beside it read as another
    count, and "ply 0" as no move at all (newcomers' reviews)."""
    upcoming = [""] if state.status == "playing" else []
    return len(rounds(state.moves + upcoming, state.variant.players)) or 1
