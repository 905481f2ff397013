"""Walking out of quick-match games: who did, and how long they wait before queueing again.

The quick match pairs whoever waits the longest, so one address that kept one connection
queued and walked out of every game it was paired into (leaving, aborting, resigning) took
every honest pairing of an outside review's server: 48 of 48 in 40 s, each honest player
queueing again only to meet it again. A player who walks out of the first game of a
quick-match room before every seat has made its first move (``walked_out``) waits before
queueing again, 15 s the first time, the wait doubling with each walk-out within the hour
(15 minutes at most), as the serious sites' queues do (lichess's "playban"). Counted by
address (an IPv6 one by its /56) and, logged in, by account, as the caps on rooms are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from server.addresses import rooms_key
from server.rooms import Room

FIRST_WAIT = 15.0
"""Seconds the first walk-out within ``MEMORY`` makes its player wait."""
LONGEST_WAIT = 900.0
MEMORY = 3600.0
"""Seconds without a walk-out after which the count starts again."""


@dataclass
class Record:
    count: int
    last: float
    until: float


class Walkouts:
    """The walk-outs of each address and account, and the waits they earned."""

    def __init__(self) -> None:
        self._records: dict[str, Record] = {}
        self._swept = 0.0

    def note(self, room: Room, now: float) -> None:
        """Count the walk-outs of ``room``'s game that just ended (``walked_out``)."""
        if now - self._swept >= MEMORY / 60:
            self._sweep(now)
        for seat in walked_out(room):
            holder = room.seats[seat]
            if holder is not None and holder.bot is None:
                account = holder.account.id if holder.account is not None else None
                for key in keys(holder.session.address, account):
                    self._count(key, now)

    def _count(self, key: str, now: float) -> None:
        record = self._records.get(key)
        if record is None or now - record.last >= MEMORY:
            record = self._records[key] = Record(0, now, now)
        record.count += 1
        record.last = now
        wait = min(LONGEST_WAIT, FIRST_WAIT * 2 ** (record.count - 1))
        record.until = max(record.until, now + wait)

    def wait(self, address: str, account: int | None, now: float) -> float:
        """Seconds before a player of ``address`` (and ``account``) may queue again; 0: now."""
        longest = 0.0
        for key in keys(address, account):
            record = self._records.get(key)
            if record is not None:
                longest = max(longest, record.until - now)
        return math.ceil(longest) if longest > 0 else 0.0

    def _sweep(self, now: float) -> None:
        """Drop the records past their memory (each minute at most, at a walk-out)."""
        self._swept = now
        for key in [k for k, r in self._records.items() if now - r.last >= MEMORY]:
            del self._records[key]


def keys(address: str, account: int | None) -> list[str]:
    found = [f"address:{rooms_key(address)}"] if address else []
    return found + ([f"account:{account}"] if account is not None else [])


def walked_out(room: Room) -> list[int]:
    """The seats that walked out of the game that just ended in ``room``, if it is the first
    game of a quick-match room and it ended before every seat had made its first move (while
    ``abort`` is allowed): the seats that ended it, by ``abort``, by resigning, by their
    absence claimed, or by not making their first move in time or staying away until it was
    aborted. A seat that moved once and resigned before its opponent's first move walked out
    too (an outside review found that one move first got round the rule). Nobody walks out
    of a game played past its first moves, nor of a rematch, which the players chose."""
    if not room.quick or room.number != 1:
        return []
    return unplayed(room)


def reopens(room: Room) -> list[int]:
    """The seats to free in a public room whose first game its joiners left unplayed, aborted
    (they walked out of it as ``walked_out`` says, its creator did not): the room waits for
    players again rather than end. One connection that joined every public room and aborted
    its game at once killed them all (an outside review): the friend its creator had given the
    code got ``room_full``. None for a room the quick match opened (``walked_out`` counts
    those), one against the computer, a private one (joined by invitation), or a game with a
    result (a casual game resigned)."""
    if room.quick or not room.public or not room.first_pairing:
        return []
    if any(holder is None or holder.bot is not None for holder in room.seats):
        return []
    if not room.connected(0):
        return []  # its creator is gone too: nobody to wait for players
    if room.result is None or room.result.reason != "aborted":
        return []  # a result (a casual game resigned) stands, and so does the room
    seats = unplayed(room)
    return [] if not seats or 0 in seats else seats  # seat 0 opened it: the creator's to end


def unplayed(room: Room) -> list[int]:
    """The seats that walked out of the game that just ended, if it ended before every seat
    had made its first move (``walked_out``)."""
    result = room.result
    if result is None or result.reason in ("goal", "draw", "ply_cap"):
        return []
    moved = set(room.movers)
    if len(moved) >= room.spec.players:
        return []  # every seat played: a game, however short
    if room.quitters or room.aborter is not None:
        quit = set(room.quitters)
        return sorted(quit if room.aborter is None else {*quit, room.aborter})
    # Ended with nobody taken out: the first move did not come, or every player went away.
    idle = [seat for seat in range(room.spec.players) if seat not in moved]
    return [seat for seat in idle if seat == room.game.turn or not room.connected(seat)]
