"""``quoridor bot`` on a real server on 127.0.0.1: whole games, rematches, refusals, drops."""

from __future__ import annotations

import asyncio
import io
import re

from client.__main__ import dispatch, parse
from client.bot import Bot, Thought, greedy_step
from client.connection import Backoff
from protocol.messages import (
    Create,
    History,
    HistoryList,
    Join,
    Joined,
    MoveRequest,
    Rematch,
    Resign,
    State,
    VariantSpec,
)
from server.app import GameServer
from tests.client.states import make_state
from tests.wsclient import Client

WITHIN = 20.0
"""Seconds a whole game may take (5x5 boards and short thinking: far less in practice)."""

SMALL = ["--size", "5", "--walls", "3", "--level", "3", "--seconds", "0.05"]


async def bot_command(url: str, *argv: str) -> tuple[int, str]:
    """``quoridor --server URL bot ARGV``, in this process; its exit status and its log."""
    log = io.StringIO()
    args = parse(["--server", url, "bot", *argv])
    code = await dispatch(args, io.StringIO(), io.StringIO(), log)
    return code, log.getvalue()


def moves_logged(log: str, game: int) -> list[str]:
    """The moves of one game, in order, as the bot's log tells them."""
    found = re.findall(rf"game {game} move (\d+): .* \(seat \d\) (\w+)", log)
    assert [int(number) for number, _ in found] == list(range(1, len(found) + 1)), log
    return [move for _, move in found]


async def greedy_opponent(client: Client, seat: int, *, stop_after: int | None = None) -> State:
    """A scripted player: one greedy step each turn until the game is over; the last state."""
    while True:
        message = await client.recv(WITHIN)
        if not isinstance(message, State):
            continue
        if message.status == "finished" or (stop_after is not None and message.ply >= stop_after):
            return message
        if message.status == "playing" and message.turn == seat:
            move = greedy_step(message, seat)
            await client.send(MoveRequest(move=move, ply=message.ply))


async def test_two_bots_quick_match_and_play_two_games_to_the_end(
    url: str, server: GameServer
) -> None:
    (code_a, log_a), (code_b, log_b) = await asyncio.wait_for(
        asyncio.gather(
            bot_command(url, "--name", "Ann", "--games", "2", *SMALL),
            bot_command(url, "--name", "Ben", "--games", "2", "--match", *SMALL),
        ),
        WITHIN,
    )
    assert (code_a, code_b) == (0, 0), log_a + log_b
    for log in (log_a, log_b):
        assert "waiting for an opponent (quick match)" in log
        assert "asking for a rematch" in log
        assert log.rstrip().endswith("done: played 2 games")
        assert "refused" not in log
    # Both saw the same moves, one log line each, and the seats turned for game 2.
    for game in (1, 2):
        assert moves_logged(log_a, game) == moves_logged(log_b, game)
        assert len(moves_logged(log_a, game)) >= 8  # 4 steps at least for the winner
    assert re.search(r"game 1 move 1: (\w+) \(seat 0\)", log_a) is not None
    opener_1 = re.search(r"game 1 move 1: (\w+)", log_a)
    opener_2 = re.search(r"game 2 move 1: (\w+)", log_a)
    assert opener_1 is not None
    assert opener_2 is not None
    assert {opener_1.group(1), opener_2.group(1)} == {"Ann", "Ben"}
    # The server kept both games, with the moves the bots logged.
    client = await Client.connect(url, "Reader")
    await client.send(History(id=1))
    listing = await client.expect(HistoryList)
    assert [len(moves_logged(log_a, game)) for game in (2, 1)] == [g.plies for g in listing.games]
    await client.close()


async def test_a_bot_joins_by_code_and_beats_a_scripted_player(url: str) -> None:
    alice = await Client.connect(url, "Alice")
    await alice.send(Create(variant=VariantSpec(size=5, walls=3)))
    room = (await alice.expect(Joined)).room
    bot = asyncio.create_task(bot_command(url, "--join", room, "--name", "Robo", *SMALL))
    final = await asyncio.wait_for(greedy_opponent(alice, 0), WITHIN)
    code, log = await asyncio.wait_for(bot, WITHIN)
    assert code == 0, log
    assert final.result is not None
    assert log.splitlines()[1] == f"[Robo] seat 1 in room {room}"
    assert len(moves_logged(log, 1)) == final.ply
    assert "[Robo] done: played 1 game" in log
    await alice.close()


async def test_a_bot_stops_when_its_rematch_is_declined(url: str) -> None:
    """It asked for a rematch (two games to play) and the other player said no: it stops at
    once rather than waiting a minute for an answer given already."""
    alice = await Client.connect(url, "Alice")
    await alice.send(Create(variant=VariantSpec(size=5, walls=3)))
    room = (await alice.expect(Joined)).room
    bot = asyncio.create_task(bot_command(url, "--join", room, "--games", "2", *SMALL))
    while (await alice.state()).status != "playing":
        pass
    await alice.send(Resign())
    while (await alice.state()).rematch != [1]:
        pass
    await alice.send(Rematch(action="decline"))
    code, log = await asyncio.wait_for(bot, WITHIN)
    assert code == 0, log
    assert "Alice declined the rematch; played 1" in log
    await alice.close()


async def test_a_bot_reads_the_state_again_after_a_stale_ply(url: str) -> None:
    alice = await Client.connect(url, "Alice")
    await alice.send(Create(variant=VariantSpec(size=5, walls=3)))
    room = (await alice.expect(Joined)).room
    log = io.StringIO()
    bot = Bot(url, "Robo", Join(room=room), level=2, seconds=0.05, log=log)
    honest = bot.play

    async def wrong_ply_once(thought: Thought) -> None:
        bot.play = honest  # type: ignore[method-assign]
        await honest(Thought(thought.game, thought.ply + 3, thought.move, thought.seconds))

    bot.play = wrong_ply_once  # type: ignore[method-assign]
    task = asyncio.create_task(bot.run())
    final = await asyncio.wait_for(greedy_opponent(alice, 0), WITHIN)
    assert await asyncio.wait_for(task, WITHIN) == 0, log.getvalue()
    assert final.result is not None
    text = log.getvalue()
    assert re.search(r"move 1/4 refused: .* \(stale_ply\)", text), text
    assert len(moves_logged(text, 1)) == final.ply
    await alice.close()


async def test_a_bot_comes_back_after_a_dropped_link(url: str, server: GameServer) -> None:
    alice = await Client.connect(url, "Alice")
    await alice.send(Create(variant=VariantSpec(size=7, walls=4)))
    room = (await alice.expect(Joined)).room
    log = io.StringIO()
    bot = Bot(
        url, "Robo", Join(room=room), level=3, seconds=0.05, log=log, backoff=Backoff(0.02, 0.1)
    )
    task = asyncio.create_task(bot.run())
    await asyncio.wait_for(greedy_opponent(alice, 0, stop_after=4), WITHIN)
    ws = bot.connection.ws
    assert ws is not None
    port = ws.local_address[1]
    for server_side in list(server.sockets.values()):
        if server_side.remote_address[1] == port:
            server_side.transport.abort()  # the network drops the bot without a word
    # Alice waits for the bot's answer at ply 5: it comes once the bot is back.
    final = await asyncio.wait_for(greedy_opponent(alice, 0), WITHIN)
    assert await asyncio.wait_for(task, WITHIN) == 0, log.getvalue()
    text = log.getvalue()
    assert f"reconnected: back in room {room}" in text
    assert "moves were missed" not in text  # the server replayed what the bot missed
    assert final.result is not None
    assert len(moves_logged(text, 1)) == final.ply
    await alice.close()


async def test_a_bot_says_why_it_cannot_join(url: str) -> None:
    code, log = await bot_command(url, "--join", "nosuchroom", "--name", "Robo")
    assert code == 1
    assert log.splitlines()[-1] == "[Robo] cannot play: no room 'nosuchroom'"


async def test_a_bot_says_when_there_is_no_server() -> None:
    code, log = await bot_command("ws://127.0.0.1:9", "--name", "Robo")
    assert code == 1
    assert log == (
        "[Robo] nothing answers at 127.0.0.1:9: is the server running, on that port? (another"
        " address: --server ws://host:port, or QUORIDOR_SERVER)\n"
    )


def test_the_greedy_step_heads_for_each_seats_goal() -> None:
    state = make_state(pawns=("e5", "e6"), legal=("d5", "f5", "e4", "e7"))
    assert greedy_step(state, 0) == "e7"
    assert greedy_step(state, 1) == "e4"


async def test_bots_on_a_bad_address_are_refused_plainly() -> None:
    code, log = await bot_command("http://example.org", "--name", "Robo")
    assert code == 1
    assert "not a websocket address" in log
