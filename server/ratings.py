"""Ratings: which pool a game counts in, the rating model, and the number people see.

The mathematics is openskill's (the Weng-Lin Plackett-Luce model): one model
rates two-player games and four-player games by finishing order alike, with
no formula of ours. What is ours is only the bookkeeping around it:

- A *pool* is a family of games whose ratings compare: 2-player 9x9 by time
  class (bullet, blitz, rapid, untimed), 2-player small boards (5x5, 7x7),
  2-player 11x11, and 4-player games. Only games with the standard wall count
  are rated (other counts change the game too much to share a rating).
- The *shown rating* reads like Elo: ``1500 + 30 * (mu - 25)``, rounded. With
  settled players (sigma about 1.5) a 200-point gap means the stronger wins
  about three games in four, as with Elo.
- A rating is *provisional* until its holder has played ``PROVISIONAL_GAMES``
  rated games in that pool; leaderboards leave provisional ratings out.
- The same people count ``RATED_TOGETHER_PER_DAY`` rated games together a day at most
  (``RatedTogether``): later games between them are played casual.

Nothing here touches the database or the network: the database process uses
it to rate a game in the same transaction that saves it, and the core uses it
to name pools and pair players by rating.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from openskill.models import PlackettLuce

from protocol.messages import TimeControl, VariantSpec
from server.records import RatingRecord

__all__ = ["RatingRecord"]

MODEL = PlackettLuce()
"""openskill's defaults: mu 25, sigma 25/3, beta 25/6, tau 25/300."""
START_MU = MODEL.mu
START_SIGMA = MODEL.sigma
SHOWN_BASE = 1500
SHOWN_SCALE = 30.0
"""Shown points per unit of mu."""
PROVISIONAL_GAMES = 10
"""Rated games in a pool after which a rating is no longer provisional."""
STANDARD_WALLS = {2: 10, 4: 5}
RATED_TOGETHER_PER_DAY = 10
"""Rated games the same accounts may start together in 24 hours (rolling); later games of
theirs are casual, and their ``state`` says so as they start. An outside review won 200
rated games in 19 s against a second account of its own (1500 to 2206, first on the
leaderboard). Ten is an evening's blitz between two friends; the computer's levels are
not counted (they do not farm)."""
DAY = 86400.0

BULLET_UNDER = 180.0
"""Estimated seconds per player (``base + 40 * increment``) under which a game is bullet."""
BLITZ_UNDER = 480.0
"""...and under which it is blitz; rapid from there up."""

POOLS = (
    "9x9-bullet",
    "9x9-blitz",
    "9x9-rapid",
    "9x9-untimed",
    "small",
    "11x11",
    "4-player",
)
"""Every pool, in the order they are listed to people."""


MATCH_WINDOW = 100.0
"""Rated quick match: the largest rating gap accepted at once..."""
MATCH_WINDOW_GROWTH = 10.0
"""...and how much it widens for every second the longest waiter has waited."""
RECHECK_SECONDS = 1.0
"""How often rated queues with unpaired players are looked at again."""


def match_window(waited: float) -> float:
    """The rating gap rated quick match accepts after ``waited`` seconds."""
    return MATCH_WINDOW + MATCH_WINDOW_GROWTH * waited


def time_class(clock: TimeControl | None) -> str:
    """``bullet``, ``blitz``, ``rapid`` or ``untimed``, by the time a player may use in a
    game of 40 moves (the way lichess classes its games)."""
    if clock is None:
        return "untimed"
    estimate = clock.base + 40 * clock.increment
    if estimate < BULLET_UNDER:
        return "bullet"
    return "blitz" if estimate < BLITZ_UNDER else "rapid"


def pool_of(variant: VariantSpec, clock: TimeControl | None) -> str | None:
    """The pool a game of this variant and time control is rated in; None if it cannot be
    rated (a wall count other than the standard one)."""
    walls = variant.walls if variant.walls is not None else STANDARD_WALLS[variant.players]
    if walls != STANDARD_WALLS[variant.players]:
        return None
    if variant.players == 4:
        return "4-player"
    if variant.size == 9:
        return f"9x9-{time_class(clock)}"
    return "11x11" if variant.size == 11 else "small"


def shown(mu: float) -> int:
    """The one number people read, on an Elo-like scale."""
    return round(SHOWN_BASE + SHOWN_SCALE * (mu - START_MU))


def rate(before: list[tuple[float, float]], ranks: list[int]) -> list[tuple[float, float]]:
    """New (mu, sigma) for each player after one game, from their (mu, sigma) before and
    their finishing ranks (1 is first; equal ranks share the place, a draw is all equal)."""
    teams = [[MODEL.create_rating([mu, sigma])] for mu, sigma in before]
    rated = MODEL.rate(teams, ranks=[float(rank) for rank in ranks])
    return [(team[0].mu, team[0].sigma) for team in rated]


def after_game(
    pool: str, current: list[RatingRecord | None], ranks: list[int]
) -> list[tuple[RatingRecord, RatingRecord]]:
    """Each seat's rating in ``pool`` before and after one game (``None``: its first game
    in the pool), with the game counted in its record. The stores save what this gives."""
    start = RatingRecord(pool=pool, mu=START_MU, sigma=START_SIGMA)
    before = [rating or start for rating in current]
    after = rate([(r.mu, r.sigma) for r in before], ranks)
    pairs = []
    for seat, (old, (mu, sigma)) in enumerate(zip(before, after, strict=True)):
        result = outcome(ranks[seat], ranks)
        new = RatingRecord(
            pool=pool,
            mu=mu,
            sigma=sigma,
            games=old.games + 1,
            wins=old.wins + (result == "win"),
            losses=old.losses + (result == "loss"),
            draws=old.draws + (result == "draw"),
        )
        pairs.append((old, new))
    return pairs


def outcome(rank: int, ranks: list[int]) -> str:
    """``win``, ``loss`` or ``draw`` for a player of ``rank`` among ``ranks``."""
    if all(other == rank for other in ranks):
        return "draw"
    return "win" if rank == min(ranks) and ranks.count(rank) == 1 else "loss"


class RatedTogether:
    """The rated games each group of accounts started together in the last day (the people
    of a game: the computer's seats left out), kept in memory."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._started: dict[tuple[int, ...], deque[float]] = {}
        self._sweep_due = 0.0

    def take(self, accounts: list[int]) -> bool:
        """Count a rated game of ``accounts`` starting now; False (nothing counted) when
        they started ``RATED_TOGETHER_PER_DAY`` in the last day already."""
        group = tuple(sorted(set(accounts)))
        if len(group) < 2:
            return True  # against the computer only: nobody to farm a rating from
        now = self.clock()
        self._sweep(now)
        started = self._started.setdefault(group, deque())
        while started and started[0] <= now - DAY:
            started.popleft()
        if len(started) >= RATED_TOGETHER_PER_DAY:
            return False
        started.append(now)
        return True

    def give_back(self, accounts: list[int]) -> None:
        """The game ``take`` counted last for ``accounts`` was aborted: it does not count."""
        started = self._started.get(tuple(sorted(set(accounts))))
        if started:
            started.pop()

    def _sweep(self, now: float) -> None:
        """Forget the groups with no game in the last day (about once an hour)."""
        if now < self._sweep_due:
            return
        self._sweep_due = now + 3600.0
        for group in [
            g for g, started in self._started.items() if not started or started[-1] <= now - DAY
        ]:
            del self._started[group]
