"""Playing the computer: the core asks, a worker process thinks, the move comes back."""

from __future__ import annotations

import asyncio

from protocol.messages import (
    Abort,
    AiSpec,
    Create,
    Draw,
    Error,
    ErrorCode,
    Joined,
    Leave,
    MoveRequest,
    Resign,
    Result,
    State,
    TimeControl,
    VariantSpec,
)
from server.app import GameServer
from server.config import Config
from server.core import Think
from tests.server.driver import Driver
from tests.wsclient import Client


def test_the_core_asks_the_computer_and_plays_its_answer() -> None:
    driver = Driver()
    conn, _ = driver.greet("human")
    actions = driver.core.receive(conn, b'{"type": "create", "ai": {"level": 2, "seconds": 0.1}}')
    assert not any(isinstance(a, Think) for a in actions)  # the human (seat 0) opens
    driver.run(actions)
    state = driver.last_state(conn)
    assert state.status == "playing"
    assert state.players[1].bot == 2
    assert state.players[1].connected
    actions = driver.core.receive(conn, b'{"type": "move", "move": "e2", "ply": 0}')
    (think,) = [a for a in actions if isinstance(a, Think)]
    assert (think.seat, think.ply, think.actions, think.level, think.seconds) == (
        1,
        1,
        ["e2"],
        2,
        0.1,
    )
    driver.run(actions)
    assert driver.core.bot_move(think.room, 1, 0, "e8") == []  # a stale answer is dropped
    driver.run(driver.core.bot_move(think.room, 1, 1, "e8"))
    state = driver.last_state(conn)
    assert (state.ply, state.turn, state.last_move and state.last_move.move) == (2, 0, "e8")


def test_a_failed_search_still_moves_and_rematch_needs_only_the_human() -> None:
    driver = Driver()
    conn, _ = driver.greet("human")
    driver.send(conn, Create(ai=AiSpec(level=1)))
    driver.send(conn, MoveRequest(move="e2", ply=0))
    room = driver.last_state(conn).room
    driver.run(driver.core.bot_move(room, 1, 1, None))
    assert driver.last_state(conn).ply == 2
    driver.send(conn, Resign())
    actions = driver.core.receive(conn, b'{"type": "rematch"}')
    driver.run(actions)
    fresh = driver.last_state(conn)
    assert (fresh.game, fresh.status) == (2, "playing")
    assert fresh.players[0].bot == 1  # the computer opens the rematch
    assert next(a for a in actions if isinstance(a, Think)).ply == 0


def test_a_draw_offer_to_the_computer_is_refused_and_changes_nothing() -> None:
    """It never agrees: the offer stood unanswered for the rest of the game ("Draw offered"
    on the button, "You offer a draw." in the terminal, and nothing ever came)."""
    driver = Driver()
    conn, _ = driver.greet("human")
    driver.send(conn, Create(ai=AiSpec(level=1)))
    before = driver.last_state(conn)
    for action in ("offer", "accept"):
        (error,) = driver.send(conn, Draw(id=action, action=action))
        assert isinstance(error, Error)
        assert (error.code, error.id) == (ErrorCode.CANNOT_DRAW, action)
        assert error.message == "the computer never agrees to a draw: play on, or resign"
        assert error.state is not None
        assert (error.state.event, error.state.draw_offers) == (before.event, [])
    (error,) = driver.send(conn, Draw(action="decline"))
    assert isinstance(error, Error)
    assert error.code == ErrorCode.NO_OFFER


def test_one_address_plays_the_computer_in_a_few_rooms_at_most() -> None:
    """Twenty rooms of one address (its room limit), each moving at once, kept the workers
    saturated: every other player's new computer game was refused."""
    driver = Driver()
    sessions = [driver.greet(f"p{n}", address="203.0.113.9")[0] for n in range(2)]
    for n in range(4):
        driver.send(sessions[n % 2], Create(ai=AiSpec(level=1)))
        assert driver.last_state(sessions[n % 2]).players[1].bot == 1
        driver.send(sessions[n % 2], Leave())  # the room stays, the game on, for a while
    (refused,) = driver.send(sessions[1], Create(id="fifth", ai=AiSpec(level=1)))
    assert isinstance(refused, Error)
    assert (refused.code, refused.id) == (ErrorCode.TOO_MANY_ROOMS, "fifth")
    assert refused.message.startswith("your address already plays the computer in 4 rooms")
    assert refused.message.endswith(  # how long until it may, said (an outside review)
        "(a game you left ends, and its room closes, within 15 s; 60 s after a lost connection)"
    )
    driver.clock.advance(15)  # as said: the games left are over, their rooms gone
    driver.run(driver.core.tick())
    driver.send(sessions[1], Create(id="now", ai=AiSpec(level=1)))
    assert driver.last_state(sessions[1]).players[1].bot == 1
    driver.send(sessions[1], Leave())
    driver.send(sessions[1], Create())  # a room for people is still allowed
    assert driver.joined(sessions[1]).role == "player"
    other, _ = driver.greet("elsewhere", address="198.51.100.7")
    driver.send(other, Create(ai=AiSpec(level=1)))
    assert driver.last_state(other).players[1].bot == 1


async def test_a_game_against_the_computer_over_websockets() -> None:
    async with GameServer(Config(port=0)).running() as server:
        human = await Client.connect(f"ws://127.0.0.1:{server.port}", "human")
        await human.send(Create(ai=AiSpec(level=3, seconds=0.2)))
        await human.expect(Joined)
        state = await human.state()
        for ply in range(0, 8, 2):
            while state.turn != 0 or state.ply != ply:
                state = await human.state()
            await human.send(MoveRequest(move=state.legal_pawn_moves[-1], ply=ply))
        while state.ply < 8:
            state = await human.state()
        assert [state.last_move and state.last_move.seat] == [1]
        await human.close()


def test_a_seat_chosen_against_the_computer_lets_it_open() -> None:
    """An AI author could not have the computer open but by playing a first game: ``seat``
    (with ``ai`` only) chooses the human's seat, the computer takes the others."""
    driver = Driver()
    conn, _ = driver.greet("human")
    actions = driver.core.receive(conn, b'{"type": "create", "ai": {"level": 2}, "seat": 1}')
    (think,) = [a for a in actions if isinstance(a, Think)]  # the computer opens at once
    assert (think.seat, think.ply, think.actions) == (0, 0, [])
    driver.run(actions)
    assert driver.joined(conn).seat == 1
    state = driver.last_state(conn)
    assert (state.status, state.turn, state.players[0].bot, state.players[1].bot) == (
        "playing",
        0,
        2,
        None,
    )
    driver.run(driver.core.bot_move(think.room, 0, 0, "e2"))
    assert driver.send(conn, MoveRequest(move="e8", ply=1))[-1].ply == 2  # type: ignore[union-attr]
    four = driver.greet("four")[0]
    driver.send(four, Create(ai=AiSpec(level=1), variant=VariantSpec(players=4), seat=3))
    assert [p.bot for p in driver.last_state(four).players] == [1, 1, 1, None]
    names = [p.name for p in driver.last_state(four).players[:3]]
    assert names == ["Computer L1", "Computer L1 (2)", "Computer L1 (3)"]
    # Refused, changing nothing: without ai, or a seat the game does not have.
    other = driver.greet("other")[0]
    for request, said in (
        (Create(seat=1), "seat: only a game against the computer (with ai) chooses the seat"),
        (Create(ai=AiSpec(level=1), seat=2), "seat 2 does not exist: this game has 2 seats"),
    ):
        (refused,) = driver.send(other, request)
        assert isinstance(refused, Error)
        assert refused.code == ErrorCode.INVALID_FIELD
        assert refused.message.startswith(said)
    assert len(driver.core.rooms) == 2


async def test_the_computer_does_not_lose_on_time_in_bullet() -> None:
    """It budgets its time from its clock: at its level's own 2 s a move, Computer L5 lost
    every 10 s bullet game on time to a player who only shuffled a pawn (an outside review).
    Here 5 s and no increment, which it used to run out of at its third timed move."""
    async with GameServer(Config(port=0)).running() as server:
        human = await Client.connect(f"ws://127.0.0.1:{server.port}", "human")
        await human.send(Create(ai=AiSpec(level=5), clock=TimeControl(base=5, increment=0)))
        await human.expect(Joined)
        state = await human.state()
        async with asyncio.timeout(60):
            while state.status == "playing":
                if state.turn == 0:
                    await human.send(MoveRequest(move=state.legal_pawn_moves[0], ply=state.ply))
                state = await human.state()
        assert state.result is not None
        assert state.result.reason != "time", (state.result, state.clock)
        assert state.result.winner == 1  # and it played well enough to win
        await human.close()


async def test_four_players_with_three_computers() -> None:
    async with GameServer(Config(port=0)).running() as server:
        human = await Client.connect(f"ws://127.0.0.1:{server.port}", "human")
        variant = VariantSpec(players=4, size=5)
        await human.send(Create(variant=variant, ai=AiSpec(level=1, seconds=0.05)))
        await human.expect(Joined)
        state: State = await human.state()
        await human.send(MoveRequest(move=state.legal_pawn_moves[0], ply=0))
        while state.ply < 4:
            state = await human.state()
        assert state.turn == 0
        assert [p.bot for p in state.players] == [None, 1, 1, 1]
        await human.close()


def test_several_computer_seats_have_names_of_their_own_for_the_whole_room() -> None:
    """Three seats all called "Computer L3" could not be told apart in the player list, the
    moves or "X resigned". Each keeps its name when the seats turn for a rematch."""
    driver = Driver()
    conn, _ = driver.greet("human")
    driver.send(conn, Create(variant=VariantSpec(players=4, size=5), ai=AiSpec(level=3)))
    names = [p.name for p in driver.last_state(conn).players]
    assert names == ["human", "Computer L3", "Computer L3 (2)", "Computer L3 (3)"]
    driver.send(conn, Abort())
    driver.run(driver.core.receive(conn, b'{"type": "rematch"}'))
    fresh = driver.last_state(conn)
    assert fresh.game == 2
    turned = {p.name: p.bot for p in fresh.players}
    assert turned == {name: None if name == "human" else 3 for name in names}


def test_after_a_restart_the_computer_moves_again_if_it_was_its_turn() -> None:
    from server.database import Loaded

    driver = Driver()
    driver.core.persistent = True
    conn, _ = driver.greet("human")
    driver.send(conn, Create(ai=AiSpec(level=2)))
    driver.send(conn, MoveRequest(move="e2", ply=0))  # the computer's turn now
    batch = driver.core.take_changes()
    loaded = Loaded([record for record, _ in batch.rooms], batch.sessions, batch.games)
    restarted = Driver()
    restarted.core.restore(loaded)
    (think,) = restarted.core.wake()
    assert isinstance(think, Think)
    assert (think.seat, think.ply, think.actions) == (1, 1, ["e2"])


def test_a_game_left_to_the_computer_alone_is_capped() -> None:
    from server.rooms import BOT_PLY_CAP

    driver = Driver()
    conn, _ = driver.greet("human")
    driver.send(conn, Create(variant=VariantSpec(players=4, size=5), ai=AiSpec(level=1)))
    room = driver.core.rooms[driver.last_state(conn).room]
    driver.send(conn, Resign())  # the computers play on among themselves
    game = room.game

    def away_from_goal(move: str) -> int:
        game.play(move)
        distance = game.distance(seat)
        game.undo()
        return distance

    while room.result is None:  # each computer steps away from its goal: nobody ever wins
        seat = game.turn
        move = max(game.legal_pawn_moves(), key=away_from_goal)
        driver.run(driver.core.bot_move(room.code, seat, game.ply, move))
    assert room.game.ply == BOT_PLY_CAP
    assert room.result.reason == "ply_cap"
    assert room.result.winner is None


def _leave_a_match_against_the_computer(moved: bool) -> tuple[Driver, int, str]:
    """A person opens a match against the computer (making a first move or not, and the
    computer answering) and leaves; its grace runs out."""
    driver = Driver()
    conn, _ = driver.greet("leaver")
    driver.send(conn, Create(ai=AiSpec(level=1), match=True))
    room = driver.last_state(conn).room
    if moved:
        driver.send(conn, MoveRequest(move="e2", ply=0))
        driver.run(driver.core.bot_move(room, 1, 1, "e8"))
    driver.send(conn, Leave())
    driver.clock.advance(16)  # past the grace after leaving on purpose (15 s)
    return driver, conn, room


def test_leaving_a_computer_match_before_moving_ends_the_match() -> None:
    """An outside review: the game was aborted for the person gone, replayed at once with the
    person still gone, aborted again, without end (millions of games a minute, a server that
    answered nobody, and again after every restart). The match ends there."""
    driver, _, code = _leave_a_match_against_the_computer(moved=False)
    room = driver.core.rooms.get(code)
    driver.run(driver.core.tick())
    assert room is not None
    assert (room.number, room.status, room.result and room.result.reason) == (
        1,
        "finished",
        "aborted",
    )
    assert room.match_over()
    deadline = driver.core.next_deadline()
    assert deadline is None or deadline > driver.clock.now  # nothing left overdue


def test_a_computer_match_left_after_moving_ends_with_the_abandoned_game() -> None:
    """The same review: game 1 ended by abandon, then game 2 started only to be decided
    against the absent person at once, with no move. The match ends with game 1."""
    driver, _, code = _leave_a_match_against_the_computer(moved=True)
    room = driver.core.rooms[code]
    driver.run(driver.core.tick())
    assert (room.number, room.result and room.result.reason) == (1, "abandon")
    assert room.result is not None
    assert room.result.winner == 1  # the computer
    assert room.match_over()


def test_leaving_the_computer_before_moving_in_game_two_loses_it() -> None:
    """In a later game of a match, the player who does not make a first move loses that game
    rather than end the match on the points so far (as between people: tests/server/
    test_match.py)."""
    driver = Driver()
    conn, _ = driver.greet("leaver")
    driver.send(conn, Create(ai=AiSpec(level=1), match=True))
    code = driver.last_state(conn).room
    driver.send(conn, Resign())  # game 1 to the computer; it opens game 2
    room = driver.core.rooms[code]
    driver.run(driver.core.bot_move(code, 0, 0, "e2"))
    driver.send(conn, Leave())
    driver.clock.advance(16)  # past the grace after leaving on purpose (15 s)
    driver.run(driver.core.tick())
    assert (room.number, room.result) == (2, Result(winner=0, reason="abandon", game_id=2))
    assert room.match_over()
    assert [holder and holder.points for holder in room.seats] == [2.0, 0.0]
