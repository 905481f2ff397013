"""The server-wide budget for frames waiting for clients that do not read them.

Each client's unread backlog is capped (``server.wire.WRITE_BUFFER_LIMIT``, 1 MiB), but many
clients each under the cap added up with nothing to stop them: an outside review held 600
connections from 30 addresses, none reading, and grew the server from 91 to 469 MB. So the
backlogs of all clients together are kept under a budget too: past it, the clients with the
largest backlogs are cut off first, until the rest fit. A client that reads its frames as they
come holds none (a few states at most, gone in a millisecond), so this only ever cuts off
clients that stopped reading, and of them the ones that hold the most.

Cheap by construction: only connections whose transport paused writing (``BEHIND`` bytes
waiting, asyncio's flow control) are followed, and only while there are any; the others
each hold less than that, which the connection caps bound.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

BEHIND = 64 * 1024
"""Bytes waiting in a connection's write buffer from which it is counted (asyncio's
high-water mark: the transport calls ``pause_writing`` there, ``resume_writing`` below a
quarter of it)."""
CHECK_EVERY = 0.1
"""Seconds between two sums of the backlogs, while some connection is behind. Between two,
the server writes at most its own output of a tenth of a second past the budget."""


class Backlogged(Protocol):
    """What the budget asks of a connection."""

    def backlog(self) -> int:
        """Bytes waiting in its write buffer."""

    def cut_off(self, why: str) -> None:
        """Drop it at once (its backlog with it)."""


class Backlogs:
    """The connections with a backlog, and the budget they share."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        """Bytes all backlogs together may hold."""
        self.behind: set[Backlogged] = set()
        self.cut = 0
        """Connections cut off for the budget, since start (a metric)."""
        self._timer: asyncio.Handle | None = None

    def fell_behind(self, link: Backlogged) -> None:
        """``link``'s backlog passed ``BEHIND``: follow it."""
        self.behind.add(link)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_soon(self.check)

    def caught_up(self, link: Backlogged) -> None:
        """``link`` drained under the mark, or is gone."""
        self.behind.discard(link)

    def total(self) -> int:
        """Bytes the followed connections hold together."""
        return sum(link.backlog() for link in self.behind)

    def check(self) -> None:
        """Cut off the largest backlogs while all of them together pass the budget."""
        self._timer = None
        sizes = {link: link.backlog() for link in self.behind}
        total = sum(sizes.values())
        if total > self.budget:
            for link in sorted(sizes, key=sizes.__getitem__, reverse=True):
                self.behind.discard(link)
                link.cut_off("the server's unread backlogs passed --backlog-budget")
                self.cut += 1
                total -= sizes[link]
                if total <= self.budget:
                    break
        if self.behind:
            self._timer = asyncio.get_running_loop().call_later(CHECK_EVERY, self.check)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
