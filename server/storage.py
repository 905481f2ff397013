"""The one interface of durable storage, and the choice of its implementation by ``--db``.

Two implementations answer it:

- ``server.store.Store``: SQLite in a process of its own (a file path; the default);
- ``server.pgstore.PgStore``: PostgreSQL over psycopg's asyncio driver (a
  ``postgresql://`` URL), the store of a cluster (docs/cluster.md).

The server (``server.app``) sees only this interface; the same test suite
(tests/server/test_store_contract.py) runs against both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from server.accountdb import AccountQuery, RatedGame
from server.database import Batch, Loaded, Synchronous
from server.dburl import is_postgresql
from server.retention import Retention

T = TypeVar("T")


class Storage(Protocol):
    """Where rooms in play, their sessions, finished games and accounts are kept.

    Every write is durable when its ``done`` (or ``write``) returns: the server
    tells nobody about a move before that. Requests are answered in the order
    they were made.
    """

    write_seconds: Callable[[float], None]
    """Called with each commit's duration (metrics hook)."""
    lost: Callable[[str], None]
    """Called once, with the reason, when the store can no longer write."""
    rated: Callable[[list[RatedGame]], None]
    """Called with the rating changes a commit made, once it is durable (before ``done``)."""
    pruned: Callable[[int], None]
    """Called with how many finished games the store's own pruning deleted, when it did."""
    reconnects: int
    """Connections made again after the database went away between writes (a metric; always
    0 for SQLite, whose process is the server's own child)."""

    async def open(self) -> tuple[int, int]:
        """Open (creating and migrating the schema): its versions before and after."""
        ...

    async def load(self) -> Loaded:
        """Everything start-up recovery needs."""
        ...

    async def write(self, batch: Batch) -> None:
        """Commit ``batch`` and wait for it."""
        ...

    def submit(self, batch: Batch, done: Callable[[BaseException | None], None]) -> None:
        """Commit ``batch`` after everything submitted before it; ``done`` (called from the
        event loop) gets None once it is durable, or the error."""
        ...

    async def prune(self, now: float) -> int:
        """Delete every finished game the retention rule (``server.retention``) lets go as
        of ``now``: how many. Stores also prune by themselves (on opening, then hourly)."""
        ...

    async def ask(self, query: AccountQuery, reply: type[T]) -> T:
        """Answer one account query after everything sent before it."""
        ...

    async def close(self) -> None:
        """Finish what was submitted and close."""
        ...


def open_storage(
    db: str,
    synchronous: Synchronous,
    retry: float = 30.0,
    retention: Retention | None = None,
    alone: bool = False,
) -> Storage | None:
    """The store ``--db`` names: None for memory (empty), PostgreSQL for a
    ``postgresql://`` URL, else a SQLite file (``synchronous`` applies to SQLite only,
    ``retry`` and ``alone`` (a stand-alone server's: no other may use the database
    meanwhile) to PostgreSQL only: see ``server.pgstore.PgStore``; ``retention`` to both;
    a SQLite file is always held alone)."""
    if not db:
        return None
    if is_postgresql(db):
        from server.pgstore import PgStore

        return PgStore(db, retry=retry, retention=retention, alone=alone)
    from server.store import Store

    return Store(db, synchronous, retention)
