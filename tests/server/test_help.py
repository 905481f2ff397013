"""Hints and takebacks: casual games against the computer only."""

from __future__ import annotations

from engine import Game
from protocol.messages import (
    AiSpec,
    Create,
    Error,
    Hint,
    Join,
    MoveRequest,
    State,
    Suggestion,
    Takeback,
    TimeControl,
    VariantSpec,
)
from server.app import GameServer
from server.config import Config
from server.core import Suggest, Think
from tests.server.driver import Driver
from tests.wsclient import Client


def casual_game(driver: Driver) -> tuple[int, str]:
    """A human (seat 0) against the computer, untimed; e2 e8 played."""
    conn, _ = driver.greet("human")
    driver.send(conn, Create(ai=AiSpec(level=2)))
    room = driver.last_state(conn).room
    driver.send(conn, MoveRequest(move="e2", ply=0))
    driver.run(driver.core.bot_move(room, 1, 1, "e8"))
    return conn, room


def test_takeback_undoes_your_move_and_the_computers_reply() -> None:
    driver = Driver()
    conn, room = casual_game(driver)
    driver.send(conn, MoveRequest(move="e3", ply=2))
    driver.run(driver.core.bot_move(room, 1, 3, "e7"))
    (state,) = driver.send(conn, Takeback(id="t"))
    assert isinstance(state, State)
    assert (state.id, state.ply, state.turn, state.moves) == ("t", 2, 0, ["e2", "e8"])
    assert state.pawns == ["e2", "e8"]
    actions = driver.core.receive(conn, b'{"type": "move", "move": "d2", "ply": 2}')
    assert any(isinstance(a, Think) and a.actions == ["e2", "e8", "d2"] for a in actions)


def test_takeback_refusals() -> None:
    driver = Driver()
    conn, _ = casual_game(driver)
    driver.send(conn, Takeback())
    (error,) = driver.send(conn, Takeback(id=1))  # back at the start: nothing of yours left
    assert isinstance(error, Error)
    assert (error.code, error.message) == ("cannot_take_back", "you have no move to take back")
    driver.send(conn, MoveRequest(move="e2", ply=0))  # the computer is thinking now
    (error,) = driver.send(conn, Takeback(id=2))
    assert isinstance(error, Error)
    assert error.code == "cannot_take_back"
    assert "your turn" in error.message
    # Against a person, or on the clock: never.
    a, _ = driver.greet("a")
    b, _ = driver.greet("b")
    driver.send(a, Create())
    driver.send(b, Join(room=driver.last_state(a).room))
    driver.send(a, MoveRequest(move="e2", ply=0))
    driver.send(b, MoveRequest(move="e8", ply=1))
    for request in (Takeback(id=3), Hint(id=4)):
        (error,) = driver.send(a, request)
        assert isinstance(error, Error)
        assert error.code in ("cannot_take_back", "cannot_hint")
        assert "against the computer" in error.message
    timed, _ = driver.greet("timed")
    driver.send(timed, Create(ai=AiSpec(level=1), clock=TimeControl(base=60)))
    (error,) = driver.send(timed, Hint(id=5))
    assert isinstance(error, Error)
    assert error.code == "cannot_hint"


def test_hint_asks_the_computer_and_answers_only_the_asker() -> None:
    driver = Driver()
    conn, room = casual_game(driver)
    watcher, _ = driver.greet("watcher")
    driver.send(watcher, b'{"type": "watch", "room": "%s"}' % room.encode())
    (suggest,) = driver.core.receive(conn, b'{"type": "hint", "id": "h"}')
    assert isinstance(suggest, Suggest)
    assert (suggest.ply, suggest.actions) == (2, ["e2", "e8"])
    (busy,) = driver.send(conn, Hint(id="again"))  # one at a time
    assert isinstance(busy, Error)
    assert busy.code == "cannot_hint"
    before = len(driver.inbox[watcher])
    driver.run(driver.core.hint_move(suggest, "e3"))
    reply = driver.inbox[conn][-1]
    assert isinstance(reply, Suggestion)
    assert (reply.id, reply.ply, reply.move) == ("h", 2, "e3")
    assert len(driver.inbox[watcher]) == before  # a spectator never sees it
    (error,) = driver.send(watcher, Hint(id="w"))
    assert isinstance(error, Error)
    assert error.code == "not_a_player"


async def test_a_hint_over_websockets_is_a_legal_move() -> None:
    async with GameServer(Config(port=0)).running() as server:
        human = await Client.connect(f"ws://127.0.0.1:{server.port}", "human")
        await human.send(Create(variant=VariantSpec(size=5), ai=AiSpec(level=1, seconds=0.05)))
        while not isinstance(await human.recv(), State):
            pass
        await human.send(Hint(id=1))
        reply = await human.expect(Suggestion, within=20)
        assert reply.ply == 0
        assert Game(size=5).is_legal(reply.move)
        await human.close()
