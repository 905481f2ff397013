"""The computer's move on a clock, as a worker process runs it.

Every worker imports this module to run the search, so it imports only the engine. The
server says how much time the computer had left when it asked; the search may have
waited for a worker since, and that wait is on its clock too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from engine.ai import LEVELS, choose_move, move_budget


def move_on_clock(
    record: Sequence[str],
    *,
    left: float,
    increment: float,
    asked: float,
    players: int,
    size: int,
    walls: int | None,
    level: int,
    seconds: float | None,
) -> str:
    """``choose_move`` for a computer with ``left`` seconds on its clock at ``asked`` (this
    machine's ``time.monotonic``) and ``increment`` to come: it thinks for what
    ``move_budget`` allows of what is left now, at most ``seconds`` (None: its level's own)."""
    waited = max(0.0, time.monotonic() - asked)
    most = LEVELS[level].time if seconds is None else seconds
    return choose_move(
        record,
        players=players,
        size=size,
        walls=walls,
        level=level,
        budget=move_budget(left - waited, increment, most),
    )
