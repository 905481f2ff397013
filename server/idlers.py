"""Which connection makes room when the server's connection table is full.

A full table used to refuse every newcomer (503) for as long as the connections in it stayed:
an outside review held it with 1000 addresses' greeted connections that said nothing more, and
a player whose link dropped could not come back, and lost their game by claim. Now a newcomer
takes the place of a connection that holds nothing (``server.http.Gate``):

- first, a handshake still in progress after ``HANDSHAKE_GRACE`` seconds, oldest first
  (an honest one takes a round trip; a young one is left alone, or a flood of new connections
  would evict each honest newcomer before it could say hello);
- then the open websocket whose last message is the oldest (greeted or not, in the lobby, a
  queue, a waiting or finished room, or watching a game), unless it holds a seat in a game in
  progress: those are never closed to make room;
- last, a younger handshake, oldest first: a newcomer is one too, and it goes only after every
  one that came before it.

Both are kept in insertion order (``OrderedDict``), so finding one costs O(1): a message
moves its connection to the end, and a seated player met at the front goes to the end too,
at most ``SCAN`` of them for one newcomer.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)

HANDSHAKE_GRACE = 2.0
"""Seconds a handshake in progress goes after the idle websockets, not before them."""
SCAN = 16
"""Connections at the front that hold a seat in a game moved to the back, at most, for one
newcomer: past that a younger handshake goes, or it is refused, and the next one looks further."""


class Idlers(Generic[T]):
    """The connections that may make room: handshakes in progress, by their accept time, and
    open websockets, by their last message."""

    def __init__(self) -> None:
        self.opening: OrderedDict[T, float] = OrderedDict()
        self.open: OrderedDict[T, None] = OrderedDict()
        self.evicted: Counter[str] = Counter()
        """Connections closed to make room, by what they were (``opening``, ``idle``)."""

    def arrived(self, link: T, now: float) -> None:
        """A TCP connection was accepted: its handshake is in progress."""
        self.opening[link] = now

    def answered(self, link: T) -> None:
        """Its request was read (and is being answered): the handshake is over."""
        self.opening.pop(link, None)

    def opened(self, link: T) -> None:
        """An open websocket, which has sent nothing yet."""
        self.open[link] = None

    def active(self, link: T) -> None:
        """A message came from it: the last to make room, for now."""
        if link in self.open:
            self.open.move_to_end(link)

    def gone(self, link: T) -> None:
        self.opening.pop(link, None)
        self.open.pop(link, None)

    def pick(self, now: float, seated: Callable[[T], bool]) -> tuple[T, str] | None:
        """The connection to close for a newcomer, taken out (and what it was), or None when
        none may be closed. ``seated``: whether one holds a seat in a game in progress."""
        opening = self.opening
        if opening:
            link, since = next(iter(opening.items()))
            if now - since >= HANDSHAKE_GRACE:
                del opening[link]
                return link, "opening"
        idle = self.open
        for _ in range(min(SCAN, len(idle))):
            link, _ = idle.popitem(last=False)
            if not seated(link):
                return link, "idle"
            idle[link] = None  # looked at again after every other
        if opening:
            link, _ = opening.popitem(last=False)
            return link, "opening"
        return None
