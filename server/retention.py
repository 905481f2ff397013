"""What the database keeps of the history: the retention rule, in SQL both stores run.

The rule (documented for operators in deploy/README.md and for clients in
PROTOCOL.md section 4):

- A game is **short** when it was aborted, or over before every seat made two
  moves (resignations and departures not counted), or one of a flood of games
  from one address (``GameRecord.flood``): ``is_short``. Junk games cost a
  client a few requests each, so only short games are pruned by default.
- Short games finished more than ``short_days`` ago are deleted, except the
  newest ``SHORT_KEPT`` (200) of them (the ones the server's memory holds).
- Played games are kept for ever, unless ``history_days`` is set: then those
  finished more than that many days ago are deleted too.
- A game something else points at is never deleted, however old or short: a
  player's games (``game_players``, so profiles stay whole), a rating change
  (``rating_history``) or a computer analysis (``analyses``). Nor is a quarantined
  row (one that could not be read back: kept for a person to look at).

Pruning runs when the store opens and then about every ``PRUNE_EVERY`` seconds,
from the write path, at most ``PRUNE_CHUNK`` games at a time so that one
pruning never holds the database long; a full chunk means more is due at once.
"""

from __future__ import annotations

import msgspec

from server.records import GameRecord

SHORT_KEPT = 200
"""The newest short games kept whatever their age (the server's memory holds as many)."""
PRUNE_EVERY = 3600.0
"""Seconds between prunings while the server runs."""
PRUNE_CHUNK = 1000
"""Games one pruning deletes at most (one short transaction)."""
DAY = 86400.0
_NEVER = 2**62
"""Above every game id: 'no newest short game to keep'."""


class Retention(msgspec.Struct, frozen=True, kw_only=True):
    """How long the database keeps finished games (see the module's docstring)."""

    short_days: float = 1.0
    history_days: float = 0.0
    """0: played games are kept for ever."""


def is_short(game: GameRecord) -> bool:
    """Aborted, over before every seat made two moves, or one of a flood of games
    (``GameRecord.flood``)."""
    if game.flood or game.reason == "aborted":
        return True
    plies = sum(1 for move in game.moves if not move.startswith("retire"))
    return plies < 2 * game.variant.players


_UNREFERENCED = """
    AND g.quarantined = 0
    AND NOT EXISTS (SELECT 1 FROM game_players p WHERE p.game = g.id)
    AND NOT EXISTS (SELECT 1 FROM rating_history h WHERE h.game = g.id)
    AND NOT EXISTS (SELECT 1 FROM analyses a WHERE a.game = g.id)
"""

_SHORT = f"""
DELETE FROM games WHERE id IN (
    SELECT g.id FROM games g
    WHERE g.short = 1 AND g.finished < {{m}}
    AND g.id < (
        SELECT COALESCE(MIN(id), {_NEVER}) FROM (
            SELECT id FROM games WHERE short = 1 ORDER BY id DESC LIMIT {{m}}
        ) AS newest
    )
    {_UNREFERENCED}
    ORDER BY g.id LIMIT {{m}}
)
"""

_PLAYED = f"""
DELETE FROM games WHERE id IN (
    SELECT g.id FROM games g
    WHERE g.short = 0 AND g.finished < {{m}}
    {_UNREFERENCED}
    ORDER BY g.id LIMIT {{m}}
)
"""


def statements(
    retention: Retention, now: float, mark: str, limit: int = PRUNE_CHUNK
) -> list[tuple[str, tuple[object, ...]]]:
    """The deletions due at ``now``, as (SQL with ``mark`` as its placeholder, parameters);
    each deletes at most ``limit`` games."""
    short_cutoff = now - retention.short_days * DAY
    due: list[tuple[str, tuple[object, ...]]] = [
        (_SHORT.format(m=mark), (short_cutoff, SHORT_KEPT, limit))
    ]
    if retention.history_days > 0:
        played_cutoff = now - retention.history_days * DAY
        due.append((_PLAYED.format(m=mark), (played_cutoff, limit)))
    return due
