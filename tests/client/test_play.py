"""Clients playing through a real server on 127.0.0.1: whole games, refusals, chat, resuming."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import time
from typing import TextIO

import msgspec
import pytest

from client.__main__ import INTENTS, dispatch, parse
from client.controller import Controller
from client.offers import DECLINED, NO_OFFER_TO_ACCEPT, NO_OFFER_TO_DECLINE, STANDING
from protocol.messages import (
    AiSpec,
    Create,
    Join,
    Joined,
    Leave,
    ListRooms,
    MoveRequest,
    Resign,
    State,
    TimeControl,
    VariantSpec,
    Watch,
)
from server.app import GameServer
from server.config import Config
from tests.client.recorder import Recorder, start, until
from tests.wsclient import Client

ALICE = "e2 e3 e4 e5 e6 e7 e8 e9".split()
BOB = "d9 d8 a6h d7 d6 d5 d4".split()
"""A short game Alice (seat 0) wins on her eighth move."""


async def seated(url: str) -> tuple[Controller, Recorder, asyncio.Task[int], str]:
    """Alice's controller in a new room; the room's code."""
    alice, view, task = await start(url, "Alice", Create())
    text = await view.wait_for("quoridor join ")
    return alice, view, task, text.rsplit(" ", 1)[1]


async def two_players(
    url: str,
) -> tuple[Controller, Recorder, Controller, Recorder, tuple[asyncio.Task[int], ...]]:
    """Alice (seat 0) and Bob in a new room, staying when a game ends, once the game has
    started; the tasks of both controllers."""
    alice, alice_view, alice_task = await start(url, "Alice", Create(), exit_when_over=False)
    room = (await alice_view.wait_for("quoridor join ")).rsplit(" ", 1)[1]
    bob, bob_view, bob_task = await start(url, "Bob", Join(room=room), exit_when_over=False)
    await bob_view.wait_for("Alice to move.")
    return alice, alice_view, bob, bob_view, (alice_task, bob_task)


async def test_two_scripted_players_play_a_whole_game(url: str) -> None:
    alice, alice_view, alice_task, room = await seated(url)
    for move in ALICE:
        alice.type(move)  # all at once: each waits for Alice's turn
    bob, bob_view, bob_task = await start(url, "Bob", Join(room=room))
    for move in BOB:
        bob.type(move)
    assert await asyncio.wait_for(alice_task, 5) == 0
    assert await asyncio.wait_for(bob_task, 5) == 0
    assert alice_view.texts("event")[-1] == "You moved to e9. Game over: you win!"
    assert bob_view.texts("event")[-1] == "Alice moved to e9. Game over: you lose, Alice wins."
    assert bob_view.has("Alice placed a wall") is False
    assert alice_view.has("Bob placed a wall at a6h.")
    assert not alice_view.texts("error")
    assert not bob_view.texts("error")
    assert alice.state is not None
    assert alice.state.walls == ["a6h"]
    # The last words say how to see the game again: its id in the history, as the server
    # named it (``result.game_id``), with the computer's analysis.
    assert alice.state.result is not None
    assert alice.state.result.game_id is not None
    assert bob.summary() == [
        "Game over: you lose, Alice wins.",
        "Replay it with the computer's analysis:",
        f"quoridor analyse {alice.state.result.game_id} --replay",
    ]


async def test_a_rejected_wall_shows_the_reason_and_the_game_goes_on(url: str) -> None:
    alice, alice_view, alice_task, room = await seated(url)
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    alice.type("e3h")
    await alice_view.wait_for("You placed a wall at e3h.")
    await bob.send(MoveRequest(move="e8", ply=1))
    alice.type("wall e3v")  # crosses e3h
    alice.type("e2")
    error = await alice_view.wait_for("refused")
    assert error == "e3v refused: wall e3v crosses e3h."
    await alice_view.wait_for("You moved to e2.")
    assert alice.state is not None
    assert alice.state.walls == ["e3h"]
    alice.type("quit")
    assert await asyncio.wait_for(alice_task, 5) == 0
    await bob.close()


async def test_a_refused_pawn_move_says_where_the_pawn_can_go(url: str) -> None:
    """A newcomer at 80x24: "e5 refused: e5 is not one step or jump away from e1." said what
    was wrong, not what to type instead. The squares are the server's legal moves."""
    alice, alice_view, alice_task, room = await seated(url)
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    await alice_view.wait_for("Your move")
    alice.type("e5")
    assert await alice_view.wait_for("e5 refused") == (
        "e5 refused: e5 is not one step or jump away from e1. Your pawn can go to d1, f1 or e2."
    )
    alice.type("i9h")  # a wall refused says why alone: the walls are too many to list
    assert await alice_view.wait_for("i9h refused") == (
        "i9h refused: i9h is not a wall on a 9x9 board (a1..h8)."
    )
    alice.type("quit")
    assert await asyncio.wait_for(alice_task, 5) == 0
    await bob.close()


async def test_a_move_out_of_turn_is_the_servers_to_refuse(url: str) -> None:
    alice, _, alice_task, room = await seated(url)
    bob, bob_view, bob_task = await start(url, "Bob", Join(room=room), premove=False)
    await bob_view.wait_for("Alice to move.")
    bob.type("e8")  # not queued without premove: sent, and refused
    assert await bob_view.wait_for("refused") == "e8 refused: it is Alice's turn."
    for controller in (alice, bob):
        controller.type("quit")
    await asyncio.gather(alice_task, bob_task)


async def test_chat_and_resign(url: str) -> None:
    _, alice_view, alice_task, room = await seated(url)
    bob, bob_view, bob_task = await start(url, "Bob", Join(room=room), exit_when_over=False)
    await bob_view.wait_for("Alice to move.")
    bob.type("chat good luck!")
    assert await alice_view.wait_for("good luck") == "Bob: good luck!"
    assert await bob_view.wait_for("good luck") == "you: good luck!"
    bob.type("resign")
    assert await bob_view.wait_for("Game over") == (
        "Game over: you lose, Alice wins (by resignation). Type rematch to play again, or quit."
    )
    assert await asyncio.wait_for(alice_task, 5) == 0  # a script stops when the game is over
    assert alice_view.texts("event")[-1] == "Game over: you win (by resignation)!"
    bob.type("quit")
    assert await asyncio.wait_for(bob_task, 5) == 0
    assert bob.summary() == ["Game over: you lose, Alice wins (by resignation)."]


async def test_a_rematch_turns_the_seats(url: str) -> None:
    alice, alice_view, bob, bob_view, tasks = await two_players(url)
    alice.type("draw")
    await bob_view.wait_for("Alice offers a draw: accept or decline?")
    bob.type("accept")
    await alice_view.wait_for("Game over: a draw.")
    alice.type("rematch")
    await bob_view.wait_for("Alice asks for a rematch: type rematch to play, or decline.")
    bob.type("rematch")
    turned = "The seats turn: you now move first and race to row 9."
    assert await bob_view.wait_for("seats turn") == turned
    game_two = await alice_view.wait_for("Game 2 starts.")
    assert "Seat 0 Bob, seat 1 Alice (you). You race to row 1." in game_two
    bob.type("e2")  # Bob opens the second game
    await alice_view.wait_for("Bob moved to e2. Your move (move 1).")
    for controller in (alice, bob):
        controller.type("quit")
    await asyncio.gather(*tasks)


async def test_a_rematch_declined_is_told_and_may_be_asked_again(url: str) -> None:
    """``decline`` once the game is over says no to the rematch asked (PROTOCOL.md section
    15), and so does ``rematch decline``; the one who asked reads who declined."""
    alice, alice_view, bob, bob_view, tasks = await two_players(url)
    bob.type("resign")
    await alice_view.wait_for("Game over")
    # A move once the game is over: refused, with what may be done now (it said only "the
    # game is over").
    alice.type("e2")
    refused = "e2 refused: the game is over. Type rematch to play again, or quit."
    assert await alice_view.wait_for("e2 refused") == refused
    alice.type("rematch")
    await bob_view.wait_for("Alice asks for a rematch: type rematch to play, or decline.")
    bob.type("decline")
    # The one declined reads what to do next (it said only "Bob declined the rematch.").
    told = await alice_view.wait_for("Bob declined the rematch")
    assert told == "Bob declined the rematch: type rematch to ask again, or quit."
    await bob_view.wait_for("You declined the rematch.")

    def said(view: Recorder, text: str) -> int:
        return sum(text in line for line in view.texts())

    alice.type("rematch")  # asked again
    await until(lambda: said(bob_view, "Alice asks for a rematch") == 2 or None)
    bob.type("rematch decline")
    await until(lambda: said(alice_view, "Bob declined the rematch:") == 2 or None)
    for controller in (alice, bob):
        controller.type("quit")
    await asyncio.gather(*tasks)


async def test_a_spectator_sees_the_moves(url: str) -> None:
    alice, _, alice_task, room = await seated(url)
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    watcher, view, watch_task = await start(url, "Carol", Watch(room=room))
    await view.wait_for("Alice to move.")
    alice.type("e2")
    assert await view.wait_for("Alice moved") == "Alice moved to e2. Bob to move."
    watcher.type("e8")
    assert await view.wait_for("refused") == (
        "e8 refused: spectators can watch and read the chat, not play or write."
    )
    watcher.type("quit")
    alice.type("quit")
    await asyncio.gather(alice_task, watch_task)
    await bob.close()


async def test_the_room_list_answers_and_ends(url: str) -> None:
    _, _, alice_task, room = await seated(url)
    _, view, task = await start(url, "Lister", ListRooms())
    assert await asyncio.wait_for(task, 5) == 0
    table = view.texts("info")[-1].splitlines()
    assert table[1].startswith(room)
    alice_task.cancel()


async def test_a_dropped_link_reconnects_and_resumes_the_seat(url: str, server: GameServer) -> None:
    alice, alice_view, alice_task, room = await seated(url)
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    await alice_view.wait_for("Your move")
    alice.type("e2")
    await alice_view.wait_for("You moved to e2.")
    token = alice.connection.resume_token
    for ws in list(server.sockets.values()):
        if ws.remote_address[1] == alice.connection.ws.local_address[1]:  # type: ignore[union-attr]
            ws.transport.abort()  # the network drops Alice without a word
    assert await alice_view.wait_for("Connection lost") == (
        "Connection lost: the connection dropped. Reconnecting..."
    )
    assert await alice_view.wait_for("Reconnected") == f"Reconnected: back in room {room}."
    assert alice.connection.resume_token != token  # tokens rotate on each resume
    await until(lambda: alice.link == "connected" or None)
    await bob.send(MoveRequest(move="e8", ply=1))
    await alice_view.wait_for("Bob moved to e8.")
    alice.type("e3")
    await alice_view.wait_for("You moved to e3.")
    assert not alice_view.texts("error")
    alice.type("quit")
    await alice_task
    await bob.close()


async def test_a_waiting_room_survives_a_drop(url: str, server: GameServer) -> None:
    alice, alice_view, alice_task, room = await seated(url)
    for ws in list(server.sockets.values()):
        ws.transport.abort()
    # The server keeps the seat for the grace period: Alice resumes into the same room,
    # and the code she shared still works.
    await until(lambda: len(server.sockets) == 1 or None)
    await until(lambda: alice.room == room or None)
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    await alice_view.wait_for("The game starts.")
    alice.type("quit")
    await alice_task
    await bob.close()


async def test_playing_the_computer(url: str) -> None:
    alice, view, task = await start(url, "Alice", Create(ai=AiSpec(level=1, seconds=0.1)))
    first = await view.wait_for("Room ")
    assert "Seat 0 Alice (you), seat 1 Computer" in first
    assert not view.has("Your opponent joins with")
    alice.type("e2")
    assert (await view.wait_for("Your move (move 2)", within=10)).startswith("Computer")
    alice.type("quit")
    await task


@pytest.mark.parametrize("lost", ["request", "answer"])
async def test_a_move_lost_in_a_drop_is_sent_again_and_played_once(url: str, lost: str) -> None:
    alice, alice_view, alice_task, room = await seated(url)
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    await alice_view.wait_for("Your move")
    connection = alice.connection
    send, deliver = connection.send, connection._deliver

    async def send_into_the_void(message: msgspec.Struct) -> bool:
        if not isinstance(message, MoveRequest):
            return await send(message)
        connection.send = send  # type: ignore[method-assign]
        assert connection.ws is not None
        connection.ws.transport.abort()  # the link dies before the move leaves
        return True

    def lose_the_answer(frame: bytes | str) -> None:
        text = frame if isinstance(frame, str) else frame.decode()
        if '"type":"state"' in text or '"type":"moved"' in text:  # the move's answer
            connection._deliver = deliver  # type: ignore[method-assign]
            assert connection.ws is not None
            connection.ws.transport.abort()  # the move was played; its answer never arrives
            return
        deliver(frame)

    if lost == "request":
        connection.send = send_into_the_void  # type: ignore[method-assign]
    else:
        connection._deliver = lose_the_answer  # type: ignore[method-assign]
    alice.type("e2")
    alice.type("e3")  # queued behind e2: it must wait for e2's answer
    await alice_view.wait_for("Reconnected")
    state = await until(lambda: alice.state if alice.state and alice.state.ply == 1 else None)
    assert state.pawns == ["e2", "e9"]
    await bob.send(MoveRequest(move="e8", ply=1))
    await alice_view.wait_for("You moved to e3.")
    assert alice.state is not None
    assert alice.state.pawns == ["e3", "e8"]
    assert not alice_view.texts("error")
    alice.type("quit")
    await alice_task
    await bob.close()


def test_play_vs_ai_is_create_with_the_computer() -> None:
    play = parse(["play", "--vs-ai", "4", "--size", "7", "--clock", "5+3"])
    assert INTENTS[play.command](play) == Create(
        variant=VariantSpec(size=7), clock=TimeControl(base=300, increment=3), ai=AiSpec(level=4)
    )
    create = parse(["create", "--computer", "2"])  # the older spelling still works
    assert INTENTS[create.command](create) == Create(ai=AiSpec(level=2))
    second = parse(["play", "--vs-ai", "1", "--seat", "1"])
    assert INTENTS[second.command](second) == Create(ai=AiSpec(level=1), seat=1)
    for argv in (["play"], ["play", "--vs-ai", "6"], ["play", "--vs-ai", "1", "--seat", "4"]):
        with pytest.raises(SystemExit):
            parse(argv)


async def test_play_second_against_the_computer(url: str) -> None:
    """``quoridor play --vs-ai 1 --seat 1``: the computer opens, then the player's line."""
    from tests.client.test_leaving import run_client

    argv = ["--server", url, "--name", "Ann", "play", "--vs-ai", "1", "--seat", "1", "--size", "5"]
    # Level 1 may open with a wall across c5-c4; one wall cannot close that step and both
    # sideways ones, so one of these lines is Ann's first move (the others get refused).
    code, text = await asyncio.wait_for(run_client(argv, "c4\nb5\nd5\n"), 30)
    assert code == 0
    assert "You have seat 1" in text
    opened = re.search(r"Computer L1 (moved to|placed a wall at) \S+\.", text)
    moved = re.search(r"You moved to (c4|b5|d5)\.", text)
    assert opened is not None
    assert moved is not None
    assert opened.start() < moved.start()


async def test_a_piped_quit_comes_after_the_moves_before_it(url: str) -> None:
    """An outside review: ``c2``, ``c3``, ``quit`` piped in left at once, nothing played."""
    from tests.client.test_leaving import run_client

    argv = ["--server", url, "--name", "Pia", "play", "--vs-ai", "1", "--size", "5"]
    code, text = await asyncio.wait_for(run_client(argv, "c2\nquit\n"), 30)
    assert code == 0
    assert "You moved to c2." in text, text
    assert text.index("You moved to c2.") < text.index("You left a game against the computer")


async def test_the_join_command_printed_allows_what_the_creator_asked_for(url: str) -> None:
    """An outside review: ``create --spectator-eval`` printed a join command without the flag,
    and spectators never got the evaluation (every player must allow it)."""
    from tests.client.test_leaving import run_client

    argv = ["--server", url, "--name", "Eve", "create", "--spectator-eval"]
    code, text = await asyncio.wait_for(run_client(argv, "quit\n"), 30)
    assert code == 0
    assert re.search(r"Your opponent joins with: .*join \w+ --spectator-eval$", text, re.M), text


def test_spectator_eval_is_asked_for_with_create_and_join() -> None:
    create = parse(["create", "--spectator-eval"])
    assert INTENTS[create.command](create) == Create(spectator_eval=True)
    join = parse(["join", "k3m9qr2xvb", "--spectator-eval"])
    assert INTENTS[join.command](join) == Join(room="k3m9qr2xvb", spectator_eval=True)
    plain = parse(["join", "k3m9qr2xvb"])
    assert INTENTS[plain.command](plain) == Join(room="k3m9qr2xvb")  # off unless asked


def pipe() -> tuple[TextIO, TextIO]:
    """Standard input for a client, and the end to type into."""
    read, write = os.pipe()
    return open(read, encoding="utf-8"), open(write, "w", encoding="utf-8")


async def test_play_vs_ai_in_plain_mode(url: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    args = parse(["--server", url, "--name", "Alice", "play", "--vs-ai", "1", "--size", "5"])
    stdin, typing = pipe()
    with stdin, typing:
        task = asyncio.create_task(dispatch(args, stdin, out, err))

        async def your_move(ply: int) -> str:
            """The line that says it is Alice's move at ``ply``; the first pawn move it offers."""
            line = await until(
                lambda: next(
                    (x for x in out.getvalue().splitlines() if f"(move {ply // 2 + 1})" in x), None
                ),
                within=10,
            )
            offered = line.split("Pawn moves: ")[1].split(".")[0]
            return offered.split(", ")[0]

        for ply in (0, 2, 4):  # Alice plays a move the server offers; the computer answers
            typing.write(await your_move(ply) + "\n")
            typing.flush()
        await your_move(6)
        typing.close()  # the end of the input, on Alice's turn: the client leaves
        code = await asyncio.wait_for(task, 10)
    lines = out.getvalue().splitlines()
    assert (code, err.getvalue()) == (0, "")
    assert lines[0] == f"Connected to {url} as Alice."
    room = next(line for line in lines if line.startswith("Room "))
    assert "Seat 0 Alice (you), seat 1 Computer" in room
    assert sum(line.startswith("You moved to ") for line in lines) == 3
    assert sum(line.startswith("Computer L1 ") for line in lines) == 3
    assert lines[-8] == "End of input: leaving."
    assert not any("refused" in line or "joins with" in line for line in lines)


def terminal() -> tuple[int, TextIO]:
    """A pseudo-terminal: the end to read what is shown from, and the client's output."""
    main, side = os.openpty()
    return main, open(side, "w", encoding="utf-8")


async def test_plain_mode_on_a_terminal_breaks_lines_between_words(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newcomer at 80x24 with --plain: the terminal broke the long lines mid-word ("Seat 1
    Compu" / "ter L1"). On a terminal they are broken between words, the rows after the
    first indented; a command to copy wider than the terminal goes on over rows ending in a
    shell's line continuation (kept whole, the terminal broke it mid-word: a second review)."""
    monkeypatch.setenv("COLUMNS", "60")
    main, out = terminal()
    args = parse(["--server", url, "--name", "Alice", "--plain", "play", "--vs-ai", "1"])
    code = await dispatch(args, io.StringIO("quit\n"), out, io.StringIO())
    out.close()
    shown = b""
    os.set_blocking(main, False)
    with contextlib.suppress(BlockingIOError, OSError):
        while chunk := os.read(main, 65536):
            shown += chunk
    os.close(main)
    rows = shown.decode().replace("\r\n", "\n").splitlines()
    assert code == 0
    room = next(i for i, row in enumerate(rows) if row.startswith("Room "))
    assert rows[room + 1].startswith("  ")  # the long line goes on, indented
    for row in rows:
        assert len(row) <= 60, row
    said = " ".join(row.strip() for row in rows[room:] if row.startswith(("Room ", "  ")))
    assert "Seat 0 Alice (you), seat 1 Computer L1. You race to row 9." in said
    come_back = next(i for i, row in enumerate(rows) if row == "To come back:") + 1
    command = [rows[come_back]]
    while command[-1].endswith(" \\"):
        command.append(rows[come_back + len(command)])
    assert len(command) > 1  # wider than 60 columns: over rows, as a shell reads them
    assert all(row.startswith("    ") for row in command[1:])
    typed = " ".join(row.strip().removesuffix(" \\") for row in command)
    assert re.fullmatch(r"\S.* --server \S+ --name Alice join \w+", typed)


async def test_piped_input_leaves_when_the_opponent_stays_away() -> None:
    """The input is over, the opponent left on their turn: nobody can type claim, so the
    client says how to come back and exits instead of waiting for ever."""
    config = Config(port=0, rate=1000, burst=1000, deliberate_grace=0.5)
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        out, err = io.StringIO(), io.StringIO()
        args = parse(["--server", url, "--name", "Alice", "create"])
        stdin, typing = pipe()
        with stdin, typing:
            task = asyncio.create_task(dispatch(args, stdin, out, err))
            typing.write("e2\n")
            typing.close()  # one move, then the end of the input (not her turn yet)
            line = await until(lambda: _first(out.getvalue(), "Room "))
            bob = await Client.connect(url, "Bob")
            await bob.send(Join(room=line.split()[1].rstrip(":")))
            await bob.expect(Joined)
            while (await bob.expect(State)).ply != 1:
                pass
            await bob.send(Leave())  # on his turn
            code = await asyncio.wait_for(task, 10)
            await bob.close()
    lines = out.getvalue().splitlines()
    assert (code, err.getvalue()) == (0, "")
    assert "Bob stayed away too long: type claim to win the game." in lines
    assert lines[-8] == "End of input: leaving."
    assert lines[-7].startswith("You left a game in progress")


def _first(text: str, start: str) -> str | None:
    """The first line of ``text`` that starts with ``start``."""
    return next((line for line in text.splitlines() if line.startswith(start)), None)


async def test_piped_lines_are_answered_in_their_order(url: str) -> None:
    """What each piped line did comes in the lines' order: the seat before the first move
    ('e2: sent when it is your turn' came before 'You have seat 0'), and a bad line after
    the move before it ("Error: 'foo'" came before 'You moved to e3')."""
    out = io.StringIO()
    argv = ["--server", url, "play", "--vs-ai", "1"]
    await dispatch(parse(argv), io.StringIO("e2\ne3\nfoo\ne3h\n"), out, io.StringIO())
    text = out.getvalue()
    seat = text.index("You have seat 0")
    e2 = text.index("You moved to e2")
    e3 = min(text.find(said) % len(text) for said in ("You moved to e3", "e3 refused"))
    foo = text.index("'foo' is not a move")
    wall = min(text.find(said) % len(text) for said in ("You placed a wall at e3h", "e3h refused"))
    assert seat < e2 < e3 < foo < wall, text


async def test_a_full_room_gives_the_command_to_watch_it(url: str) -> None:
    alice, _, alice_task, room = await seated(url)
    bob, _, bob_task = await start(url, "Bob", Join(room=room))
    carol, carol_view, carol_task = await start(url, "Carol", Join(room=room))
    assert await asyncio.wait_for(carol_task, 5) == 1
    [error] = carol_view.texts("error")
    said = f"Room {room} is full: every seat is taken. To watch its game: {carol.command} watch"
    assert error == f"{said} {room}"
    for player, task in ((alice, alice_task), (bob, bob_task)):
        player.leave()
        await asyncio.wait_for(task, 5)


async def test_a_rematch_asked_after_the_opponent_left_says_they_left(url: str) -> None:
    alice, view, task = await start(url, "Alice", Create(), exit_when_over=False)
    room = (await view.wait_for("quoridor join ")).rsplit(" ", 1)[1]
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    alice.type("e2")
    await view.wait_for("You moved to e2")
    await bob.send(Resign())
    await view.wait_for("Game over")
    await bob.close()
    said = await view.wait_for("Bob left the room")
    assert said.endswith("Bob left the room: quit, or type rematch to wait for them.")
    alice.type("rematch")
    said = await view.wait_for("You ask for a rematch")
    assert said.startswith("You ask for a rematch; Bob left: it starts if they come back.")
    alice.leave()
    assert await asyncio.wait_for(task, 5) == 0


async def test_a_person_keeps_one_move_waiting_and_is_told_a_refusal_once(url: str) -> None:
    """An outside review: a 4-player log said "c3v refused: seat 3 has no walls left." twice,
    to seat 3. A second move typed before the turn replaces the first (both were sent, both
    refused), and the server's seat numbers are said as names, "you" for one's own."""
    variant = VariantSpec(size=5, walls=1)
    alice, view, task = await start(
        url, "Alice", Create(variant=variant), interactive=True, exit_when_over=False
    )
    room = (await view.wait_for("quoridor join ")).rsplit(" ", 1)[1]
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    await view.wait_for("Your move")
    alice.type("b2h")  # her only wall
    await view.wait_for("You placed a wall at b2h.")
    alice.type("c3v")
    alice.type("c4v")
    said = await view.wait_for("replaces")
    assert said == "c4v replaces c3v: sent when it is your turn (cancel drops it)."
    await bob.send(MoveRequest(move="c4", ply=1))
    assert await view.wait_for("refused") == "c4v refused: you have no walls left."
    alice.type("c2")
    await view.wait_for("You moved to c2.")
    refusals = [text for text in view.texts() if "refused" in text]
    assert refusals == ["c4v refused: you have no walls left."]
    alice.leave()
    assert await asyncio.wait_for(task, 5) == 0
    await bob.close()


async def test_a_draw_offer_that_cannot_work_is_said_not_sent(url: str) -> None:
    """One offer per move (PROTOCOL.md section 14): after a decline, and while the offer
    stands, ``draw`` says why at once instead of sending an offer the server refuses."""
    alice, alice_view, bob, bob_view, tasks = await two_players(url)
    alice.type("draw")
    await bob_view.wait_for("Alice offers a draw: accept or decline?")
    alice.type("draw")
    await alice_view.wait_for(STANDING)
    bob.type("decline")
    await alice_view.wait_for("The draw offer was declined.")
    alice.type("draw")
    await alice_view.wait_for(DECLINED)
    assert ("info", STANDING) in alice_view.notices
    assert ("info", DECLINED) in alice_view.notices
    assert not alice_view.texts("error")  # nothing was sent to be refused
    alice.type("e2")  # her move: she may offer again
    await bob_view.wait_for("Alice moved to e2.")
    alice.type("draw")
    await until(
        lambda: len([t for t in bob_view.texts() if "Alice offers a draw" in t]) == 2 or None
    )
    assert not alice_view.texts("error")
    for controller in (alice, bob):
        controller.type("quit")
    await asyncio.gather(*tasks)


async def test_an_answer_with_no_offer_on_the_table_is_said_not_sent(url: str) -> None:
    """``accept`` and ``decline`` answer another seat's offer (PROTOCOL.md section 14): with
    none on the table, or only one's own, the terminal says so at once instead of sending a
    request the server answers with no_offer."""
    alice, alice_view, bob, bob_view, tasks = await two_players(url)
    bob.type("accept")
    await bob_view.wait_for(NO_OFFER_TO_ACCEPT)
    bob.type("draw decline")
    await bob_view.wait_for(NO_OFFER_TO_DECLINE)
    alice.type("draw")
    await bob_view.wait_for("Alice offers a draw: accept or decline?")
    alice.type("accept")  # only her own offer stands
    await until(lambda: alice_view.texts("info").count(NO_OFFER_TO_ACCEPT) == 1 or None)
    bob.type("decline")  # Alice's offer: answered
    await alice_view.wait_for("The draw offer was declined.")
    bob.type("decline")  # gone now
    await until(lambda: bob_view.texts("info").count(NO_OFFER_TO_DECLINE) == 2 or None)
    for player, view in ((alice, alice_view), (bob, bob_view)):
        player.type("chat done")  # answered after anything sent before it
        await view.wait_for("you: done")
        assert not view.texts("error")  # nothing was sent to be refused
    for controller in (alice, bob):
        controller.type("quit")
    await asyncio.gather(*tasks)


async def test_a_claim_made_early_by_a_stall_of_the_server_goes_again_when_due() -> None:
    """The server's clock leaves out its own stalls (PROTOCOL.md section 12), the client counts
    down in real time: after a stall it says "type claim" before the server allows it. The
    refusal ("too early: you may claim in 1 s") is not shown: the claim goes again
    once the refusal's countdown has run out."""
    config = Config(port=0, rate=1000, burst=1000, deliberate_grace=0.5)
    async with GameServer(config).running() as server:
        url = f"ws://127.0.0.1:{server.port}"
        alice, view, task, room = await seated(url)
        bob = await Client.connect(url, "Bob")
        await bob.send(Join(room=room))
        await bob.expect(Joined)
        alice.type("e2")  # sent once the game starts
        while (await bob.expect(State)).ply != 1:
            pass
        await bob.send(Leave())  # on his turn
        await until(
            lambda: (alice.state and alice.state.players[1].claim_in_ms is not None) or None
        )
        time.sleep(1.0)  # noqa: ASYNC251 (the server, in this loop, stalls: its clock stands still)
        await view.wait_for("Bob stayed away too long: type claim to win the game.")
        alice.type("claim")
        await view.wait_for("Not quite yet on the server's clock: claiming again in")
        await view.wait_for("you win")
        assert not view.texts("error")
        assert await asyncio.wait_for(task, 5) == 0
        await bob.close()


async def test_a_move_waiting_for_a_turn_that_never_comes_is_not_sent(url: str) -> None:
    """An outside review: a person's move typed during the opponent's turn was sent once the
    opponent's move ended the game, and came back as a refusal. It is dropped, and said so."""
    alice, view, task = await start(url, "Alice", Create(), interactive=True, exit_when_over=False)
    room = (await view.wait_for("quoridor join ")).rsplit(" ", 1)[1]
    bob = await Client.connect(url, "Bob")
    await bob.send(Join(room=room))
    await view.wait_for("Your move")
    alice.type("e2")
    await view.wait_for("You moved to e2.")
    alice.type("e3")
    await view.wait_for("e3: sent when it is your turn")
    await bob.send(Resign())
    assert await view.wait_for("e3: not sent") == "e3: not sent, the game is over."
    await view.wait_for("Game over")
    assert not [text for text in view.texts() if "refused" in text]
    alice.leave()
    assert await asyncio.wait_for(task, 5) == 0
    await bob.close()


@pytest.mark.parametrize("absolute", [False, True])
async def test_the_plain_board_is_drawn_from_the_players_side(url: str, absolute: bool) -> None:
    """A newcomer review: seat 1 saw plain mode's ``board`` with row 1 at the bottom where
    the full screen turns it (``--absolute`` keeps row 1 at the bottom in both)."""
    alice = await Client.connect(url, "Alice")
    await alice.send(Create())
    room = (await alice.expect(Joined)).room
    argv = ["--server", url, "--name", "Bob", "--plain", *(["--absolute"] * absolute)]
    out = io.StringIO()
    typed = io.StringIO("board\n")
    bob = asyncio.create_task(dispatch(parse([*argv, "join", room]), typed, out, out))
    await until(lambda: "You have seat 1" in out.getvalue() or None)
    await alice.send(MoveRequest(move="e2", ply=0))
    await until(lambda: "Alice moved to e2" in out.getvalue() or None)
    await alice.close()
    await asyncio.wait_for(bob, 10)
    rows = out.getvalue().splitlines()
    letters = next(row for row in rows if row.lstrip().startswith(("a ", "i ")))
    mine = next(i for i, row in enumerate(rows) if "◆" in row and "│" in row)
    theirs = next(i for i, row in enumerate(rows) if "●" in row and "│" in row)
    if absolute:
        assert (letters.split()[0], rows[mine][0], theirs > mine) == ("a", "9", True)
    else:  # Bob's pawn at the bottom, on row 9, as on the full screen
        assert (letters.split()[0], rows[mine][0], theirs < mine) == ("i", "9", True)
