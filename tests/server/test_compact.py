"""Compact move events (PROTOCOL.md, section 7a), through the socket-free core.

A client that asked for them in ``hello`` and applies each ``moved`` event to the state it
holds (``protocol.compact.apply_moved``, what the terminal client does) must hold, after
every event, exactly the state a client without them was sent.
"""

from __future__ import annotations

from typing import Literal

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game
from protocol.compact import apply_chat, apply_moved
from protocol.messages import (
    VERSION,
    Chat,
    ChatMessage,
    Create,
    Draw,
    Error,
    ErrorCode,
    Hello,
    Join,
    Moved,
    MoveRequest,
    ServerMessage,
    State,
    Sync,
    TimeControl,
    VariantSpec,
    Watch,
    Welcome,
)
from tests.server.driver import Driver


def greet(driver: Driver, name: str, compact: bool) -> int:
    conn = driver.open()
    (welcome,) = driver.send(conn, Hello(version=VERSION, name=name, compact=compact))
    assert isinstance(welcome, Welcome)
    assert welcome.compact is compact
    return conn


class Follower:
    """What a compact client holds: the last state, with each ``moved`` applied to it."""

    def __init__(self) -> None:
        self.state: State | None = None
        self.moved = 0
        self.chats = 0

    def take(self, messages: list[ServerMessage]) -> None:
        for message in messages:
            if isinstance(message, State):
                self.state = message
            elif isinstance(message, Moved):
                assert self.state is not None
                applied = apply_moved(self.state, message)
                assert applied is not None, (self.state.event, message.event)
                self.state, self.moved = applied, self.moved + 1
            elif isinstance(message, ChatMessage):
                assert self.state is not None
                chatted = apply_chat(self.state, message)
                assert chatted is not None, (self.state.event, message.event)
                self.state, self.chats = chatted, self.chats + 1


def read(driver: Driver, conn: int, seen: dict[int, int]) -> list[ServerMessage]:
    """The messages ``conn`` got since the last read."""
    messages = driver.inbox[conn][seen.get(conn, 0) :]
    seen[conn] = len(driver.inbox[conn])
    return messages


@settings(max_examples=40, deadline=None)
@given(
    size=st.sampled_from([5, 7, 9]),
    players=st.sampled_from([2, 4]),
    timed=st.booleans(),
    data=st.data(),
)
def test_applying_moved_events_gives_exactly_the_states_sent_in_full(
    size: Literal[5, 7, 9], players: Literal[2, 4], timed: bool, data: st.DataObject
) -> None:
    driver = Driver()
    seats = [greet(driver, f"p{n}", compact=n % 2 == 0) for n in range(players)]
    clock = TimeControl(base=60, increment=2) if timed else None
    driver.send(seats[0], Create(variant=VariantSpec(players=players, size=size), clock=clock))
    room = driver.joined(seats[0]).room
    for conn in seats[1:]:
        driver.send(conn, Join(room=room))
    full_watcher = greet(driver, "full", compact=False)
    compact_watcher = greet(driver, "compact", compact=True)
    driver.send(full_watcher, Watch(room=room))
    driver.send(compact_watcher, Watch(room=room))
    followers = {conn: Follower() for conn in (*seats[::2], compact_watcher)}
    full = [seats[n] for n in range(1, players, 2)] + [full_watcher]
    seen: dict[int, int] = {}
    game = Game(players, size)
    for _ in range(data.draw(st.integers(1, 40), label="moves")):
        state = driver.last_state(full_watcher)
        if state.status != "playing":
            break
        driver.clock.advance(data.draw(st.floats(0, 3), label="think"))
        if data.draw(st.integers(0, 5), label="aside") == 0:
            aside(driver, data, seats, state, room)
        state = driver.last_state(full_watcher)
        if state.status != "playing" or state.turn is None:
            break
        assert game.ply == state.ply
        assert game.turn == state.turn
        choices = game.legal_pawn_moves() + game.legal_walls()
        move = data.draw(st.sampled_from(choices), label="move")
        driver.send(seats[state.turn], MoveRequest(id=game.ply, move=move, ply=state.ply))
        game.play(move)
        for conn, follower in followers.items():
            follower.take(read(driver, conn, seen))
        truth = driver.last_state(full_watcher)
        for conn in full:
            assert driver.last_state(conn) == truth
        for follower in followers.values():
            assert follower.state == truth
    # Moves were sent compactly, not just in full.
    if game.ply and game.winner is None:
        assert all(follower.moved for follower in followers.values())


def aside(driver: Driver, data: st.DataObject, seats: list[int], state: State, room: str) -> None:
    """Something else that happens in a room between moves: a draw offer (which the next
    move of its seat lapses), a chat line (an event: the next ``moved`` follows its number),
    or a spectator arriving or going (not an event)."""
    assert state.turn is not None
    match data.draw(st.sampled_from(["offer", "chat", "watch", "unwatch"]), label="what"):
        case "offer":
            driver.send(seats[data.draw(st.sampled_from(range(len(seats))))], Draw(action="offer"))
        case "chat":
            driver.send(seats[data.draw(st.sampled_from(range(len(seats))))], Chat(text="gl"))
        case "watch":
            driver.send(greet(driver, "extra", compact=False), Watch(room=room))
        case "unwatch":
            driver.drop(greet(driver, "gone", compact=True))


def test_a_gap_is_repaired_with_sync() -> None:
    driver = Driver()
    a, b = greet(driver, "alice", True), greet(driver, "bob", True)
    driver.send(a, Create())
    room = driver.joined(a).room
    driver.send(b, Join(room=room))
    driver.send(a, MoveRequest(move="e2", ply=0))
    (moved,) = [m for m in driver.inbox[b] if isinstance(m, Moved)]
    driver.send(b, MoveRequest(move="e8", ply=1))
    held = next(m for m in driver.inbox[a] if isinstance(m, State) and m.ply == 0)
    # Alice missed the first move: the second does not follow what she holds.
    second = driver.inbox[a][-1]
    assert isinstance(second, Moved)
    assert second.event == moved.event + 1
    assert apply_moved(held, second) is None
    (synced,) = driver.send(a, Sync(id="again"))
    assert isinstance(synced, State)
    assert (synced.id, synced.event, synced.ply, synced.moves) == (
        "again",
        second.event,
        2,
        ["e2", "e8"],
    )
    assert synced.pawns == second.pawns
    # A sync is no event: it repeats the latest one.
    assert driver.inbox[b][-1] == second


def test_sync_outside_a_room_is_refused() -> None:
    driver = Driver()
    conn = greet(driver, "alice", True)
    (refusal,) = driver.send(conn, Sync(id=1))
    assert isinstance(refusal, Error)
    assert refusal.code == ErrorCode.NOT_IN_ROOM


def two_compact_players(size: Literal[5, 9] = 9) -> tuple[Driver, int, int, int]:
    """A game between two compact players, watched by a compact spectator."""
    driver = Driver()
    a, b, c = greet(driver, "alice", True), greet(driver, "bob", True), greet(driver, "carol", True)
    driver.send(a, Create(variant=VariantSpec(size=size)))
    room = driver.joined(a).room
    driver.send(b, Join(room=room))
    driver.send(c, Watch(room=room))
    return driver, a, b, c


def test_a_move_while_a_player_is_away_goes_as_the_whole_state() -> None:
    driver, a, b, c = two_compact_players()
    driver.send(a, MoveRequest(move="e2", ply=0))
    driver.send(b, MoveRequest(move="e8", ply=1))
    assert isinstance(driver.inbox[c][-1], Moved)
    driver.drop(b)  # a countdown to a claim now runs in ``players``: it changes every state
    driver.clock.advance(1)
    driver.send(a, MoveRequest(move="e3", ply=2))
    state = driver.inbox[c][-1]
    assert isinstance(state, State)
    assert state.ply == 3
    assert state.players[1].claim_in_ms is not None


def test_the_move_that_ends_the_game_goes_as_the_whole_state() -> None:
    driver, a, b, c = two_compact_players(size=5)
    for ply, move in enumerate(["c2", "b5", "c3", "a5", "c4", "b5", "c5"]):
        driver.send(a if ply % 2 == 0 else b, MoveRequest(move=move, ply=ply))
        last = driver.inbox[c][-1]
        assert isinstance(last, State if move == "c5" else Moved), (move, last)
    assert isinstance(last, State)
    assert last.result is not None
    assert last.status == "finished"


def test_a_resume_replays_moved_events_only_to_a_compact_client() -> None:
    driver, a, b, _ = two_compact_players()
    welcome = next(m for m in driver.inbox[b] if isinstance(m, Welcome))
    last = driver.last_state(b).event
    driver.send(a, MoveRequest(move="e2", ply=0))
    driver.drop(b)
    for compact in (True, False):
        again = driver.open()
        hello = Hello(
            version=VERSION, name="bob", resume=welcome.resume_token, last_event=last,
            compact=compact,
        )  # fmt: skip
        greeted, *replayed = driver.send(again, hello)
        assert isinstance(greeted, Welcome)
        assert greeted.compact is compact
        welcome = greeted
        # The move was logged as a ``moved`` event (only compact clients were there):
        # replayed to a compact client, left out for the other, whose state after the
        # replay has it all the same.
        kinds = [type(message) for message in replayed]
        assert (kinds[0] is Moved) is compact, kinds
        assert (Moved in kinds) is compact, kinds
        assert isinstance(replayed[-1], State)
        assert replayed[-1].moves == ["e2"]
        driver.drop(again)
