"""Live evaluation for spectators: only where the players allowed it, never to a player."""

from __future__ import annotations

import asyncio

from engine.ai.evaluation import evaluate
from protocol.messages import (
    AiSpec,
    Chat,
    Create,
    Error,
    Evaluation,
    Join,
    LiveEval,
    LiveEvalSet,
    MoveRequest,
    State,
    TimeControl,
    Watch,
)
from server.app import GameServer
from server.config import Config
from server.core import LIVE_DEPTH, LIVE_NODES, LiveEvalStep
from tests.server.driver import Driver
from tests.server.test_accounts import account_with
from tests.wsclient import Client


def room_with_watchers(driver: Driver, allow: tuple[bool, bool] = (True, True)) -> tuple[int, ...]:
    """Alice and Bob (allowing or not) in a game; two spectators, neither following yet."""
    alice, _ = driver.greet("alice")
    bob, _ = driver.greet("bob")
    driver.send(alice, Create(spectator_eval=allow[0]))
    room = driver.last_state(alice).room
    driver.send(bob, Join(room=room, spectator_eval=allow[1]))
    fan, _ = driver.greet("fan")
    other, _ = driver.greet("other")
    driver.send(fan, Watch(room=room))
    driver.send(other, Watch(room=room))
    return alice, bob, fan, other


def test_the_state_that_starts_the_game_says_spectators_may_follow() -> None:
    """Not only from the next event on: the joiner's consent counts in the state its join
    pushes (it was set after that state was made)."""
    driver = Driver()
    _, bob, fan, _ = room_with_watchers(driver)
    started = driver.last_state(bob)
    assert started.status == "playing"
    assert started.spectator_eval
    assert driver.last_state(fan).spectator_eval


def test_a_game_against_the_computer_says_so_from_its_first_state() -> None:
    driver = Driver()
    alice, _ = driver.greet("alice")
    driver.send(alice, Create(spectator_eval=True, ai=AiSpec(level=1)))
    assert driver.last_state(alice).status == "playing"
    assert driver.last_state(alice).spectator_eval


def run_step(driver: Driver, step: LiveEvalStep) -> None:
    found = evaluate(step.actions, depth=LIVE_DEPTH, nodes=LIVE_NODES)
    driver.run(driver.core.live_evaluated(step, found))


def evaluations(driver: Driver, conn: int) -> list[Evaluation]:
    return [m for m in driver.inbox[conn] if isinstance(m, Evaluation)]


def test_a_follower_gets_one_evaluation_per_move_and_players_none() -> None:
    driver = Driver()
    alice, bob, fan, other = room_with_watchers(driver)
    actions = driver.core.receive(fan, b'{"type": "live_eval", "id": 1}')
    driver.run(actions)
    (step,) = [a for a in actions if isinstance(a, LiveEvalStep)]
    assert step.ply == 0
    assert isinstance(driver.inbox[fan][-1], LiveEvalSet)
    run_step(driver, step)
    (first,) = evaluations(driver, fan)
    assert (first.ply, first.best in ("e2", "d1", "f1")) == (0, True)
    assert 0.0 < first.win < 1.0
    # A move asks for the next position, once; chat does not ask again.
    actions = driver.core.receive(alice, b'{"type": "move", "move": "e2", "ply": 0}')
    driver.run(actions)
    (step,) = [a for a in actions if isinstance(a, LiveEvalStep)]
    chat = driver.core.receive(bob, b'{"type": "chat", "text": "hm"}')
    assert not any(isinstance(a, LiveEvalStep) for a in chat)
    driver.run(chat)
    run_step(driver, step)
    assert [e.ply for e in evaluations(driver, fan)] == [0, 1]
    # Seat 1 is to move at ply 1: the numbers are still seat 0's.
    assert evaluations(driver, fan)[1].score > 0
    for conn in (alice, bob, other):
        assert evaluations(driver, conn) == []


def test_a_stale_evaluation_is_dropped_and_players_cannot_follow() -> None:
    driver = Driver()
    alice, bob, fan, _ = room_with_watchers(driver)
    actions = driver.core.receive(fan, b'{"type": "live_eval"}')
    (step,) = [a for a in actions if isinstance(a, LiveEvalStep)]
    driver.send(alice, MoveRequest(move="e2", ply=0))  # the game moves on meanwhile
    run_step(driver, step)
    assert evaluations(driver, fan) == []
    for player in (alice, bob):
        for on in (True, False):
            (error,) = driver.send(player, LiveEval(id="p", on=on))
            assert isinstance(error, Error)
            assert error.code == "cannot_evaluate"
            assert "players never" in error.message
    (off,) = driver.send(fan, LiveEval(id="off", on=False))
    assert isinstance(off, LiveEvalSet)
    assert off.on is False


def test_no_evaluation_unless_every_player_allowed_it_untimed() -> None:
    driver = Driver()
    _, _, fan, _ = room_with_watchers(driver, allow=(True, False))
    (error,) = driver.send(fan, LiveEval(id=1))
    assert isinstance(error, Error)
    assert error.code == "cannot_evaluate"
    # Turning it off is always answered (PROTOCOL.md, live_eval), and players, on or off, never.
    (off,) = driver.send(fan, LiveEval(id=3, on=False))
    assert isinstance(off, LiveEvalSet)
    assert off.on is False
    timed = Driver()
    alice, _ = timed.greet("alice")
    bob, _ = timed.greet("bob")
    timed.send(alice, Create(spectator_eval=True, clock=TimeControl(base=60)))
    timed.send(bob, Join(room=timed.last_state(alice).room, spectator_eval=True))
    fan, _ = timed.greet("fan")
    timed.send(fan, Watch(room=timed.last_state(alice).room))
    (error,) = timed.send(fan, LiveEval(id=2))
    assert isinstance(error, Error)
    assert error.code == "cannot_evaluate"


async def test_over_websockets_the_spectator_follows_and_the_players_never_hear() -> None:
    async with GameServer(Config(port=0, rate=1000, burst=1000)).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        alice = await Client.connect(url, "alice")
        bob = await Client.connect(url, "bob")
        fan = await Client.connect(url, "fan")
        await alice.send(Create(spectator_eval=True))
        while not isinstance(state := await alice.recv(), State):
            pass
        await bob.send(Join(room=state.room, spectator_eval=True))
        await fan.send(Watch(room=state.room))
        await fan.send(LiveEval(id="on"))
        moves = ["e2", "e8", "e3", "e7"]
        for ply, move in enumerate(moves):
            await (alice, bob)[ply % 2].send(MoveRequest(move=move, ply=ply))
            await asyncio.sleep(0.3)  # time for the position's evaluation
        seen: list[Evaluation] = []
        while len({e.ply for e in seen}) < 1:
            message = await fan.recv(within=20)
            if isinstance(message, Evaluation):
                seen.append(message)
        await asyncio.sleep(1.0)
        await alice.send(Chat(text="done"))
        await asyncio.sleep(0.3)
        seen += [m for m in fan.seen if isinstance(m, Evaluation) and m not in seen]
        plies = [e.ply for e in seen]
        assert len(plies) == len(set(plies))  # at most one per position
        assert set(plies) <= set(range(len(moves) + 1))
        for player in (alice, bob):
            assert not [m for m in player.seen if isinstance(m, Evaluation)]
        for client in (alice, bob, fan):
            await client.close()


def test_the_players_permission_survives_a_restart() -> None:
    from server.database import Loaded

    driver = Driver()
    driver.core.persistent = True
    alice, _, _, _ = room_with_watchers(driver)
    code = driver.last_state(alice).room
    batch = driver.core.take_changes()
    restarted = Driver()
    restarted.core.restore(Loaded([r for r, _ in batch.rooms], batch.sessions, batch.games))
    assert restarted.core.rooms[code].evaluable()
    refused = Driver()
    refused.core.persistent = True
    alice, _, _, _ = room_with_watchers(refused, allow=(True, False))
    batch = refused.core.take_changes()
    again = Driver()
    again.core.restore(Loaded([r for r, _ in batch.rooms], batch.sessions, batch.games))
    assert not again.core.rooms[refused.last_state(alice).room].evaluable()


def test_a_player_watching_their_own_game_gets_no_evaluation() -> None:
    """An outside review followed the computer's best move each ply from a second connection
    of a player of the game: refused to a spectator logged in as one of its players."""
    driver = Driver()
    alice = account_with(driver, "alice", 1500)
    bob = account_with(driver, "bob", 1500)
    driver.send(alice, Create(spectator_eval=True, rated=False))
    room = driver.last_state(alice).room
    driver.send(bob, Join(room=room, spectator_eval=True))
    again = account_with(driver, "alice", 1500)  # the same account, another connection
    driver.send(again, Watch(room=room))
    (refused,) = driver.send(again, LiveEval(id="mine"))
    assert isinstance(refused, Error)
    assert (refused.code, refused.id) == ("cannot_evaluate", "mine")
    fan, _ = driver.greet("fan")  # a guest, whatever its address
    driver.send(fan, Watch(room=room))
    replies = driver.send(fan, LiveEval(id="on"))
    assert isinstance(replies[0], LiveEvalSet)
