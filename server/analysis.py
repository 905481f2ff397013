"""Computer analysis of finished games: the queue, its bounds, and the results kept.

An analysis is expensive (a search of every position of the game), so it is
cut into *steps*, one move each (``engine.ai.evaluation.review_move``), and
run in the computer's worker processes one step at a time for the whole
server:

* **behind the games in play**: at most one step is ever in the workers, so
  with two or more workers the computer's moves always find one free, and
  with one they wait for at most a step (its search is capped in nodes, a
  few tenths of a second);
* **fair**: the IP addresses with games waiting take turns, a step each (the
  one served least recently goes next), and so do one address's games, so
  neither a long game nor an address with many games holds up the others: a
  newcomer's game waits one step per other address, not for their games;
* **bounded**: at most ``capacity`` games wait or run, at most
  ``per_session`` of them asked for by one session and ``per_address`` by
  one address; beyond that the request is refused with ``server_busy`` and
  nothing is queued. Asking for a game that is already being analysed just
  waits for it (no extra work).

A finished analysis is encoded once, kept with the history (and written to
the database with it), and answered from there afterwards, for as long as its
game is kept: it is forgotten when the game leaves the server's memory, and
pruned from the database with a short game (``server.retention``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Container
from dataclasses import dataclass, field
from typing import NamedTuple

import msgspec

from engine.ai.evaluation import DEPTH, MoveReview, settle
from protocol.codec import encode
from protocol.messages import AnalysisReply, MoveAnalysis, RequestId, SeatAnalysis, VariantSpec


class AnalyseStep(NamedTuple):
    """Judge move ``ply`` (0 for the first) of ``moves``; answer with ``Core.analysis_step``."""

    game: int
    ply: int
    moves: list[str]
    variant: VariantSpec


@dataclass
class Job:
    game: int
    moves: list[str]
    variant: VariantSpec
    owner: str
    """The hash of the session that asked first (counted against its bound)."""
    address: str
    """Its IP address (counted against the address's bound)."""
    waiters: list[tuple[int, RequestId]] = field(default_factory=list)
    """(connection, request id) to answer."""
    reviews: list[MoveReview] = field(default_factory=list)
    """The moves judged so far, one a step; settled together at the end (``settle``)."""


class Refused(Exception):
    """The queue is full, or the session already has its share in it."""


class Analyses:
    """The analyses waiting, the one step running, and the ones finished."""

    def __init__(self, capacity: int, per_session: int, per_address: int) -> None:
        self.capacity = capacity
        self.per_session = per_session
        self.per_address = per_address
        self.jobs: dict[int, Job] = {}
        self.turns: deque[int] = deque()
        """Games waiting for their next step, in the order they came back to the queue."""
        self.served: dict[str, int] = {}
        """Address -> the number of the step it was last served (for as long as it waits)."""
        self.steps = 0
        self.running: AnalyseStep | None = None
        self.done: dict[int, bytes] = {}
        """Game id -> its analysis (an ``analysis`` frame without an id), encoded."""
        self.unsaved: list[tuple[int, bytes]] = []
        self.keep_unsaved = False

    def load(self, stored: dict[int, bytes]) -> None:
        self.done.update((game, _current(body)) for game, body in stored.items())

    def cached(self, game: int, request_id: RequestId) -> bytes | None:
        """The stored analysis of ``game`` as a reply to ``request_id``, if there is one."""
        body = self.done.get(game)
        return None if body is None else reply_to(body, request_id)

    def ask(
        self,
        game: int,
        moves: list[str],
        variant: VariantSpec,
        owner: str,
        address: str,
        waiter: tuple[int, RequestId],
    ) -> list[AnalyseStep]:
        """Queue ``game`` (or wait for it); the step to start now, if any. Raises Refused."""
        job = self.jobs.get(game)
        if job is not None:
            job.waiters.append(waiter)
            return []
        if len(self.jobs) >= self.capacity:
            raise Refused(f"the server is analysing {len(self.jobs)} games: try again later")
        mine = sum(1 for job in self.jobs.values() if job.owner == owner)
        if mine >= self.per_session:
            raise Refused(f"you already have {mine} analysis waiting: wait for it first")
        ours = sum(1 for job in self.jobs.values() if job.address == address)
        if address and ours >= self.per_address:  # as the room limits, no address no bound
            raise Refused(f"your address already has {ours} analyses waiting: wait for them first")
        self.jobs[game] = Job(game, moves, variant, owner, address, [waiter])
        self.turns.append(game)
        return self._next()

    def forget(self, conn: int) -> None:
        """A connection is gone: no answer for it (its analyses still finish and are kept)."""
        for job in self.jobs.values():
            job.waiters = [waiter for waiter in job.waiters if waiter[0] != conn]

    def step_done(
        self, game: int, ply: int, review: MoveReview | None
    ) -> tuple[list[AnalyseStep], Job | None, bytes | None]:
        """A step came back (None: it failed, and so does the analysis).

        Returns the next step to start, and the job that ended with its
        encoded analysis (None when it failed), if one did.
        """
        running = self.running
        if running is None or (running.game, running.ply) != (game, ply):
            return [], None, None  # stale: not the step we are waiting for
        self.running = None
        job = self.jobs[game]
        finished: Job | None = None
        body: bytes | None = None
        if review is None:
            finished = self.jobs.pop(game)  # not in ``turns``: it was running
        else:
            job.reviews.append(review)
            if len(job.reviews) == len(job.moves):
                finished = self.jobs.pop(game)
                body = encode(_reply(job))
                self.done[game] = body
                if self.keep_unsaved:
                    self.unsaved.append((game, body))
            else:
                self.turns.append(game)
        return self._next(), finished, body

    def take_unsaved(self) -> list[tuple[int, bytes]]:
        unsaved, self.unsaved = self.unsaved, []
        return unsaved

    def prune(self, kept: Container[int]) -> None:
        """Drop the analyses of the games the history no longer holds (only those it holds
        can be asked for): at most one a game held. Keeping those of every id above the
        oldest game held kept an analysis of each short game, however many came and went."""
        for game in [game for game in self.done if game not in kept]:
            del self.done[game]

    def _next(self) -> list[AnalyseStep]:
        if self.running is not None or not self.turns:
            return []
        game = self._least_recently_served()
        self.turns.remove(game)
        job = self.jobs[game]
        self.steps += 1
        self.served[job.address] = self.steps
        for address in set(self.served) - {job.address for job in self.jobs.values()}:
            del self.served[address]  # nothing waits for it any more: a newcomer next time
        self.running = AnalyseStep(game, len(job.reviews), job.moves, job.variant)
        return [self.running]

    def _least_recently_served(self) -> int:
        """The first game in turn of the address served least recently (never: first).
        The queue holds a few dozen games at most, and a step is a search of tenths of a
        second: a scan is cheap."""
        served, jobs = self.served, self.jobs
        return min(self.turns, key=lambda game: served.get(jobs[game].address, 0))


def reply_to(body: bytes, request_id: RequestId) -> bytes:
    """A stored analysis (``_current``) as the reply to ``request_id``."""
    if request_id is None:
        return body
    reply = msgspec.json.decode(body, type=AnalysisReply)
    reply.id = request_id
    return encode(reply)


def stored_reply(body: bytes, request_id: RequestId) -> bytes:
    """An analysis as the database holds it, as the reply to ``request_id``."""
    return reply_to(_current(body), request_id)


def _current(body: bytes) -> bytes:
    """A stored analysis as this server writes one: one stored before the moves had their
    ``pv_after`` gets it empty (the schema promises every field this server writes)."""
    if b'"pv_after"' in body:
        return body
    return encode(msgspec.json.decode(body, type=AnalysisReply))


def _message(review: MoveReview) -> MoveAnalysis:
    before = review.before
    return MoveAnalysis(
        ply=review.ply + 1,
        seat=review.seat,
        move=review.move,
        best=before.best,
        pv=list(before.pv),
        score_before=before.score,
        win_before=before.win_probability,
        win_in=before.win_in,
        score_after=review.score_after,
        win_after=review.win_probability_after,
        pv_after=list(review.pv_after),
        loss=review.loss,
        mark=review.mark,  # type: ignore[arg-type]
    )


def _reply(job: Job) -> AnalysisReply:
    moves = [_message(review) for review in settle(job.reviews)]
    seats = [_seat(seat, [m for m in moves if m.seat == seat]) for seat in (0, 1)]
    return AnalysisReply(game=job.game, depth=DEPTH, moves=moves, seats=seats)


def _seat(seat: int, moves: list[MoveAnalysis]) -> SeatAnalysis:
    marks = [move.mark for move in moves]
    return SeatAnalysis(
        seat=seat,
        moves=len(moves),
        average_loss=round(sum(move.loss for move in moves) / len(moves), 4) if moves else 0.0,
        inaccuracies=marks.count("inaccuracy"),
        mistakes=marks.count("mistake"),
        blunders=marks.count("blunder"),
    )
