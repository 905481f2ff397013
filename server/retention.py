"""What the database keeps of the history: the retention rule, in SQL both stores run.

The rule (documented for operators in deploy/README.md and for clients in
PROTOCOL.md section 4):

- A game is **short** when it was aborted, or over before every seat made two
  moves (resignations and departures not counted), or one of a flood of games
  from one address or account (``GameRecord.flood``): ``is_short``. Junk games
  cost a client a few requests each, so only short games are pruned by default.
- Short games finished more than ``short_days`` ago are deleted, except the
  newest ``SHORT_KEPT`` (200) of them (the ones the server's memory holds), with
  their registered players' rows (``game_players``): a registered player's short
  games go too. An outside review wrote 55 games a second that were never deleted,
  from one account and a guest at one address (4-5 GB a day).
- Played games are kept for ever, unless ``history_days`` is set: then those
  finished more than that many days ago are deleted too, except a registered
  player's (``game_players``, so profiles stay whole).
- A game a rating change points at (``rating_history``: a rated game) is never
  deleted, however old or short, nor a quarantined row (one that could not be read
  back: kept for a person to look at). A computer analysis (``analyses``) keeps a
  played game from ``history_days``, but not a short game: that one goes with its
  analysis. Anyone may ask for the analysis of any game the server holds, so when an
  analysis kept every game, an outside review made short throwaway games permanent by
  asking for theirs, as fast as the analysis queue took them.

Pruning runs when the store opens and then about every ``PRUNE_EVERY`` seconds,
from the write path, at most ``PRUNE_CHUNK`` games at a time so that one
pruning never holds the database long; a full chunk means more is due at once.
"""

from __future__ import annotations

from typing import NamedTuple

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


_KEPT_SHORT = """
    AND g.quarantined = 0
    AND NOT EXISTS (SELECT 1 FROM rating_history h WHERE h.game = g.id)
"""
"""What keeps a short game: a rating points at it, or it is quarantined (not an analysis)."""

_KEPT = f"""{_KEPT_SHORT}
    AND NOT EXISTS (SELECT 1 FROM analyses a WHERE a.game = g.id)
"""
"""What keeps a played game from ``history_days``: that, or its analysis."""

_SHORT_IDS = f"""
    SELECT g.id FROM games g
    WHERE g.short = 1 AND g.finished < {{m}}
    AND g.id < (
        SELECT COALESCE(MIN(id), {_NEVER}) FROM (
            SELECT id FROM games WHERE short = 1 ORDER BY id DESC LIMIT {{m}}
        ) AS newest
    )
    {_KEPT_SHORT}
    ORDER BY g.id LIMIT {{m}}
"""

_SHORT_ANALYSES = f"DELETE FROM analyses WHERE game IN ({_SHORT_IDS})"
"""The analyses of the short games about to go (the same games: the selection reads no
``analyses``), first."""

_SHORT_PLAYERS = f"DELETE FROM game_players WHERE game IN ({_SHORT_IDS})"
"""Who played them (the selection reads no ``game_players`` either), next."""

_SHORT = f"DELETE FROM games WHERE id IN ({_SHORT_IDS})"

_PLAYED = f"""
DELETE FROM games WHERE id IN (
    SELECT g.id FROM games g
    WHERE g.short = 0 AND g.finished < {{m}}
    {_KEPT}
    AND NOT EXISTS (SELECT 1 FROM game_players p WHERE p.game = g.id)
    ORDER BY g.id LIMIT {{m}}
)
"""


class Deletion(NamedTuple):
    sql: str
    """With the store's placeholder."""
    params: tuple[object, ...]
    games: bool
    """Whether its rows are games (what a pruning reports deleting)."""


def statements(
    retention: Retention, now: float, mark: str, limit: int = PRUNE_CHUNK
) -> list[Deletion]:
    """The deletions due at ``now``, in order, with ``mark`` as their placeholder; each
    deletes at most ``limit`` games."""
    short = (now - retention.short_days * DAY, SHORT_KEPT, limit)
    due = [
        Deletion(_SHORT_ANALYSES.format(m=mark), short, games=False),
        Deletion(_SHORT_PLAYERS.format(m=mark), short, games=False),
        Deletion(_SHORT.format(m=mark), short, games=True),
    ]
    if retention.history_days > 0:
        played_cutoff = now - retention.history_days * DAY
        due.append(Deletion(_PLAYED.format(m=mark), (played_cutoff, limit), games=True))
    return due
