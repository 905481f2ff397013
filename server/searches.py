"""The computer's work, for the adapter: searches run in worker processes, answers to the core.

The core asks with actions (``Think`` for the computer's move, ``Suggest`` for a hint,
``LiveEvalStep`` for spectators' evaluation, ``AnalyseStep`` for one move of a game's
analysis); each becomes a job in ``server.workers`` and its answer (None when it failed or
could not be queued) goes back through the matching ``Core`` method, whose actions are
carried out like any others.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from engine.ai import choose_move
from engine.ai.evaluation import evaluate, nodes_per_move, review_move
from server.analysis import AnalyseStep
from server.core import (
    HINT_LEVEL,
    HINT_SECONDS,
    LIVE_DEPTH,
    LIVE_NODES,
    Action,
    Core,
    LiveEvalStep,
    Suggest,
    Think,
)
from server.thinking import move_on_clock
from server.workers import ANALYSIS, MOVE, SHORT_SEARCH, PoolFull, WorkerPool

log = logging.getLogger("quoridor.server")

Answer = Callable[[Any], list[Action]]
"""The core's method taking a job's result (None: it failed)."""


class Searches:
    """Start the computer's jobs and hand their answers to ``carry_out``."""

    def __init__(
        self,
        workers: WorkerPool,
        core: Core,
        carry_out: Callable[[list[Action]], None],
        tasks: set[asyncio.Task[None]],
    ) -> None:
        self.workers = workers
        self.core = core
        self.carry_out = carry_out
        self.tasks = tasks
        """Where the waiting tasks are kept (from garbage collection; the server awaits them
        when it stops)."""

    def think(self, think: Think) -> None:
        """The computer's move; it comes back as a request. The room owns the search, so
        rooms share the workers fairly; it is dropped unstarted if the game moved on meanwhile
        (a resign, a flag, an ended room). On a clock, the search budgets its time from what
        is left on it when it starts."""
        variant = think.variant
        search: Callable[[], str]
        if think.flag is None:
            search = functools.partial(
                choose_move,
                think.actions,
                players=variant.players,
                size=variant.size,
                walls=variant.walls,
                level=think.level,
                budget=think.seconds,
            )
        else:
            search = functools.partial(
                move_on_clock,
                think.actions,
                left=think.flag - self.core.clock(),
                increment=think.increment,
                asked=time.monotonic(),
                players=variant.players,
                size=variant.size,
                walls=variant.walls,
                level=think.level,
                seconds=think.seconds,
            )
        wanted = functools.partial(self.core.still_thinking, think)
        long = think.seconds is not None and think.seconds > SHORT_SEARCH
        future = self.workers.submit(
            f"room:{think.room}", search, MOVE, wanted, group=think.group, long=long
        )
        answer = functools.partial(self.core.bot_move, think.room, think.seat, think.ply)
        self._follow(future, answer, "the computer's search failed", {"room": think.room})

    def hint(self, suggest: Suggest) -> None:
        """The computer's move for a player who asked for a hint. It waits behind the
        computer's moves; a session has one at a time."""
        variant = suggest.variant
        search = functools.partial(
            choose_move,
            suggest.actions,
            size=variant.size,
            walls=variant.walls,
            level=HINT_LEVEL,
            budget=HINT_SECONDS,
        )
        answer = functools.partial(self.core.hint_move, suggest)
        owner = f"hint:{suggest.conn}"
        if (future := self._submit(owner, search, answer, group=suggest.group)) is not None:
            self._follow(future, answer, "the computer's hint failed", {"room": suggest.room})

    def live(self, step: LiveEvalStep) -> None:
        """Evaluate a position for its spectators, after the computer's moves; dropped
        unstarted if the game moved on (the core hears of it as a failure)."""
        variant = step.variant
        work = functools.partial(
            evaluate,
            step.actions,
            size=variant.size,
            walls=variant.walls,
            depth=LIVE_DEPTH,
            nodes=LIVE_NODES,
        )
        wanted = functools.partial(self.core.still_live, step)
        answer = functools.partial(self.core.live_evaluated, step)
        future = self._submit(f"live:{step.room}", work, answer, wanted)
        if future is not None:
            failed = "the live evaluation failed"
            self._follow(future, answer, failed, {"room": step.room}, when_dropped=True)

    def analyse(self, step: AnalyseStep) -> None:
        """Judge one move of a game (``server.analysis``), after the computer's moves in
        games going on."""
        variant = step.variant
        job = functools.partial(
            review_move,
            step.moves,
            step.ply,
            size=variant.size,
            walls=variant.walls,
            nodes=nodes_per_move(len(step.moves)),
        )
        answer = functools.partial(self.core.analysis_step, step.game, step.ply)
        if (future := self._submit(f"analysis:{step.game}", job, answer)) is not None:
            failed = f"a step of the analysis of game {step.game} failed"
            self._follow(future, answer, failed, {})

    def _submit(
        self,
        owner: str,
        work: Callable[[], Any],
        answer: Answer,
        wanted: Callable[[], bool] = lambda: True,
        group: str | None = None,
    ) -> asyncio.Future[Any] | None:
        """Queue a job behind the computer's moves; None, and the core told it failed, when
        the pool has too much waiting."""
        try:
            return self.workers.submit(owner, work, ANALYSIS, wanted, group=group)
        except PoolFull:
            self.carry_out(answer(None))
            return None

    def _follow(
        self,
        future: asyncio.Future[Any],
        answer: Answer,
        failed: str,
        extra: Mapping[str, object],
        when_dropped: bool = False,
    ) -> None:
        """Hand the job's result to ``answer`` once it comes (None if the job raised; a job
        dropped unstarted is answered only ``when_dropped``)."""

        async def follow() -> None:
            found = None
            try:
                found = await future
            except asyncio.CancelledError:
                if not when_dropped:
                    raise
            except Exception:
                log.exception(failed, extra=extra)
            self.carry_out(answer(found))

        task = asyncio.ensure_future(follow())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
