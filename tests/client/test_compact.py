"""The terminal client's link with compact move events, against a real server: it turns
each ``moved`` into the state it leads to, and repairs a missed one with ``sync``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from client.connection import Connection, Event, Received
from protocol.messages import Chat, ChatMessage, Create, Join, Joined, MoveRequest, State, Watch
from tests.client.recorder import until


class Link:
    """A client ``Connection`` running, with every event it posted and every frame it read."""

    def __init__(self, url: str, name: str, compact: bool) -> None:
        self.events: list[Event] = []
        self.connection = Connection(url, name, self.events.append, compact=compact)
        self.frames: list[str] = []
        self.dropping = 0
        """Frames of ``moved`` events to lose on the way in (as a bug in between might)."""
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        welcome = await self.connection.open()
        assert welcome.compact is self.connection.compact
        deliver = self.connection._deliver

        def watched(frame: bytes | str) -> None:
            text = frame if isinstance(frame, str) else frame.decode()
            if self.dropping and '"type":"moved"' in text:
                self.dropping -= 1
                return
            self.frames.append(text)
            deliver(frame)

        self.connection._deliver = watched  # type: ignore[method-assign]
        self._task = asyncio.create_task(self.connection.run())

    def states(self) -> list[State]:
        return [
            e.message
            for e in self.events
            if isinstance(e, Received) and isinstance(e.message, State)
        ]

    def latest(self, ply: int) -> State | None:
        states = [state for state in self.states() if state.ply == ply]
        return states[-1] if states else None

    async def stop(self) -> None:
        await self.connection.close()
        if self._task is not None:
            await self._task


@pytest.fixture
async def table(url: str) -> AsyncIterator[tuple[Link, Link, Link]]:
    """Alice and Bob (compact) play; Carol watches with whole states."""
    alice, bob, carol = Link(url, "alice", True), Link(url, "bob", True), Link(url, "carol", False)
    for link in (alice, bob, carol):
        await link.start()
    await alice.connection.send(Create())
    joined = await until(
        lambda: next(
            (
                e.message
                for e in alice.events
                if isinstance(e, Received) and isinstance(e.message, Joined)
            ),
            None,
        )
    )
    await bob.connection.send(Join(room=joined.room))
    await carol.connection.send(Watch(room=joined.room))
    await until(lambda: carol.latest(0))
    yield alice, bob, carol
    for link in (alice, bob, carol):
        await link.stop()


async def play(alice: Link, bob: Link, carol: Link, moves: list[str], start: int = 0) -> None:
    for ply, move in enumerate(moves, start):
        mover = alice if ply % 2 == 0 else bob
        await mover.connection.send(MoveRequest(move=move, ply=ply))
        await until(lambda ply=ply: carol.latest(ply + 1))  # type: ignore[misc]


async def test_the_client_holds_the_states_it_would_have_been_sent(
    table: tuple[Link, Link, Link],
) -> None:
    alice, bob, carol = table
    await play(alice, bob, carol, ["e2", "e8", "e3", "e7", "d3h", "c6v"])
    truth = carol.latest(6)
    assert truth is not None
    for link in (alice, bob):
        held = await until(lambda link=link: link.latest(6))  # type: ignore[misc]
        assert held == truth
        # Each move came as a ``moved`` event, not as a whole state.
        assert sum('"type":"moved"' in frame for frame in link.frames) == 6
    assert not any('"type":"moved"' in frame for frame in carol.frames)


async def test_a_missed_event_is_repaired_with_sync(table: tuple[Link, Link, Link]) -> None:
    alice, bob, carol = table
    await play(alice, bob, carol, ["e2", "e8"])
    bob.dropping = 1  # bob never sees alice's e3
    await play(alice, bob, carol, ["e3", "e7", "e4"], start=2)
    truth = carol.latest(5)
    assert truth is not None
    held = await until(lambda: bob.latest(5))
    assert held == truth
    synced = [state for state in bob.states() if state.id == "sync"]
    assert len(synced) == 1, "one sync for one gap"
    # The move after the gap went unused; the sync's answer has it (ply 4, after e7, or
    # already 5 when alice's e4 came first: the event after it was dropped in the meantime).
    assert synced[0].ply in (4, 5)
    assert bob.latest(3) is None


async def test_a_chat_line_between_moves_is_no_gap(table: tuple[Link, Link, Link]) -> None:
    alice, bob, carol = table
    await play(alice, bob, carol, ["e2", "e8"])
    await alice.connection.send(Chat(text="good luck"))
    await until(
        lambda: any(
            isinstance(e, Received) and isinstance(e.message, ChatMessage) for e in bob.events
        )
    )
    await play(alice, bob, carol, ["e3", "e7"], start=2)
    truth = carol.latest(4)
    assert truth is not None
    for link in (alice, bob):
        held = await until(lambda link=link: link.latest(4))  # type: ignore[misc]
        assert held == truth
        # The chat line took an event number; the next ``moved`` followed it, no ``sync``.
        assert not [state for state in link.states() if state.id == "sync"]
        assert sum('"type":"moved"' in frame for frame in link.frames) == 4
