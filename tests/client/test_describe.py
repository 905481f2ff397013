"""One line per event, in words, for the plain mode and the log."""

from __future__ import annotations

import msgspec

from client.describe import (
    aborted_why,
    clock_text,
    describe,
    result_text,
    rooms_text,
    situation,
    time_control_text,
    variant_text,
    with_names,
)
from client.status import first_move_note, status_lines, thinking_note
from protocol.messages import ClockInfo, MatchInfo, Result, RoomInfo, TimeControl, VariantSpec
from tests.client.states import make_state


def test_the_first_state_introduces_the_room() -> None:
    state = make_state(status="waiting", names=("Alice", None))
    line = describe(None, state, 0)
    assert line == (
        "Room room1: 2 players, 9x9, 10 walls each. Seat 0 Alice (you), seat 1 free. "
        "You race to row 9. Waiting for players: 1 of 2 seats taken."
    )


def test_the_game_starts_when_the_second_player_sits_down() -> None:
    before = make_state(status="waiting", names=("Alice", None))
    after = make_state(event=2, legal=("d1", "f1", "e2"))
    assert describe(before, after, 0) == (
        "Bob took seat 1. The game starts. Your move (move 1). Pawn moves: d1, f1, e2. "
        "Walls left: you 10, Bob 10. Steps to go: you 8, Bob 8."
    )
    assert describe(before, after, 1) == "The game starts. Alice to move."


def test_a_room_open_again_says_who_left_without_playing() -> None:
    """A joiner aborted a public room's first game: out of it, the room waits again (PROTOCOL.md
    section 14); it said "Game 2 starts." of a game waiting for players."""
    aborted = Result(winner=None, reason="aborted", game_id=1)
    before = make_state(event=3, status="finished", turn=None, result=aborted)
    after = make_state(event=4, status="waiting", names=("Alice", None), game=2, turn=None)
    line = describe(before, after, 0)
    assert line.startswith("Bob left without playing: the room waits for another player.")
    assert "starts" not in line


def test_moves_and_walls_are_told_by_who_played_them() -> None:
    before = make_state(event=5, ply=4, turn=0)
    wall = make_state(event=6, ply=5, turn=1, walls=("e3h",), last="e3h", last_seat=0)
    assert describe(before, wall, 1).startswith("Alice placed a wall at e3h. Your move (move 3).")
    assert describe(before, wall, 0) == "You placed a wall at e3h. Bob to move."
    step = make_state(event=6, ply=5, turn=1, last="e2", last_seat=0, pawns=("e2", "e9"))
    assert describe(before, step, None) == "Alice moved to e2. Bob to move."


def test_results_say_how_the_game_was_won() -> None:
    playing = make_state(event=3, ply=2)
    for reason, mine, theirs in [
        ("goal", "Game over: you win!", "Game over: you lose, Alice wins."),
        (
            "resign",
            "Game over: you win (by resignation)!",
            "Game over: you lose, Alice wins (by resignation).",
        ),
        (
            "time",
            "Game over: you win (on time)!",
            "Game over: you lose, Alice wins (on time).",
        ),
    ]:
        over = make_state(
            event=4,
            ply=2,
            status="finished",
            result=Result(winner=0, reason=reason),
        )
        assert situation(over, 0, brief=True) == mine
        assert situation(over, 1, brief=True) == theirs
        assert describe(playing, over, 0, brief=True) == mine
    draw = make_state(event=4, status="finished", result=Result(winner=None, reason="draw"))
    assert situation(draw, 0, brief=True) == "Game over: a draw."
    assert situation(draw, 0).endswith("Type rematch to play again, or quit.")


def test_draw_offers_rematches_and_absences_are_told() -> None:
    before = make_state(event=3, ply=2)
    offer = make_state(event=4, ply=2, draw_offers=[1])
    assert describe(before, offer, 0).startswith("Bob offers a draw: accept or decline?")
    declined = make_state(event=5, ply=2)
    assert describe(offer, declined, 0).startswith("The draw offer was declined.")
    away = make_state(event=4, ply=2, connected=[True, False])
    assert describe(before, away, 0).startswith("Bob is away.")
    over = make_state(event=9, status="finished", result=Result(winner=0, reason="goal"))
    again = make_state(event=10, status="finished", result=over.result, rematch=[1])
    assert describe(over, again, 0).startswith(
        "Bob asks for a rematch: type rematch to play, or decline."
    )
    no = msgspec.structs.replace(again, event=11, rematch=[], rematch_declined=0)
    # The one declined reads what they may do now; the decliner and a spectator need not.
    assert describe(again, no, 1).startswith(
        "Alice declined the rematch: type rematch to ask again, or quit."
    )
    assert describe(again, no, 0).startswith("You declined the rematch.")
    assert describe(again, no, None).startswith("Alice declined the rematch.")
    # An opponent who goes once it is over is said to have gone, when they go.
    gone = msgspec.structs.replace(
        over,
        event=10,
        players=[over.players[0], msgspec.structs.replace(over.players[1], connected=False)],
    )
    assert describe(over, gone, 0).startswith(
        "Bob left the room (a rematch can start only if they come back)."
    )
    assert describe(over, gone, None).startswith("Bob left the room.")


def test_clocks_and_time_controls_read_naturally() -> None:
    assert clock_text(299_500) == "4:59"
    assert clock_text(3_725_000) == "1:02:05"
    assert clock_text(-5) == "0:00.0"
    assert clock_text(9_450) == "0:09.4"  # tenths under 10 s
    assert clock_text(10_000) == "0:10"
    assert time_control_text(TimeControl(base=300, increment=3)) == "5+3"
    assert time_control_text(TimeControl(base=90, increment=0)) == "90s+0"
    assert time_control_text(None) == "untimed"
    clock = ClockInfo(base_ms=300_000, increment_ms=0, remaining_ms=[61_000, 300_000], running=0)
    state = make_state(clock=clock, legal=("e2",))
    assert situation(state, 0, elapsed=2.0).endswith("Clock: you 0:59, Bob 5:00.")


def test_the_room_list_is_a_table() -> None:
    rooms = [
        RoomInfo(
            room="abc",
            variant=VariantSpec(players=2, size=9, walls=10),
            clock=TimeControl(base=300, increment=3),
            match=False,
            status="waiting",
            players=["Alice", None],
            spectators=1,
        )
    ]
    lines = rooms_text(rooms)
    assert lines[0].split() == ["ROOM", "GAME", "CLOCK", "STATUS", "PLAYERS"]
    assert lines[1].split() == [*"abc 9x9 5+3 waiting Alice, (free) +1 watching".split()]
    crowded = RoomInfo(
        room="k3m9qr2xvb",
        variant=VariantSpec(players=4, size=11, walls=3),
        clock=TimeControl(base=5400, increment=30),
        match=False,
        status="playing",
        players=["Alexandra-the-Great", "Bartholomew", "Cunegonde", "Dagobert"],
        spectators=12,
    )
    assert all(len(line) <= 80 for line in rooms_text([crowded]))
    assert rooms_text([])[0].startswith("No public rooms")
    # The hint is the command as this client was run (a newcomer review typed
    # "quoridor join ROOM" from a .venv/bin/quoridor --server ... run: not found).
    command = ".venv/bin/quoridor --server ws://127.0.0.1:9200"
    assert rooms_text(rooms, command)[-2:] == [
        f"Join one:  {command} join ROOM",
        f"Watch one: {command} watch ROOM",
    ]


def test_the_panel_names_players_in_offers_and_uses_the_servers_computer_name() -> None:
    state = make_state(names=("Alice", "Computer L1"), draw_offers=[1], rematch=[])
    state.players[1].bot = 1
    text = ["".join(t for _, t in line) for line in status_lines(state, 0, width=40)]
    assert "Computer L1 offers a draw" in text
    assert any(line.startswith("◆ Computer L1 ") for line in text)
    assert "computer 1" not in "".join(text)


def test_a_game_won_by_absence_names_the_absent_player_in_a_two_player_game() -> None:
    """In the browser's words (web/words.js): "you did not come back in time" to the one who
    stayed away, where the terminal said "you stayed away"; the name to the others."""
    state = make_state(status="finished", result=Result(winner=0, reason="abandon"))
    assert result_text(state, 0) == "Game over: you win (Bob did not come back in time)!"
    assert result_text(state, 1) == (
        "Game over: you lose, Alice wins (you did not come back in time)."
    )
    assert result_text(state, None) == "Game over: Alice wins (Bob did not come back in time)."


def test_clocks_show_low_time_frozen_links_and_the_free_first_move() -> None:
    clock = ClockInfo(base_ms=60_000, increment_ms=0, remaining_ms=[9_000, 60_000], running=0)
    state = make_state(clock=clock, ply=2)
    styles = {style: text for line in status_lines(state, 0) for style, text in line}
    assert styles["class:clock.low.running"] == "0:09.0"
    frozen = status_lines(state, 0, elapsed=0.0, link="reconnecting")
    texts = ["".join(t for _, t in line) for line in frozen]
    assert "offline, clocks stopped" in texts[0]
    assert any(style == "class:clock.frozen" for line in frozen for style, _ in line)
    # A narrower panel: the note on a row of its own, not broken mid-word by the terminal
    # ("clocks stop" / "ped", an outside review at 80 columns).
    narrow = status_lines(state, 0, width=30, link="reconnecting")
    rows = ["".join(t for _, t in line) for line in narrow]
    assert rows[:2] == [f"Room {state.room}", "offline, clocks stopped"]
    assert all(len(row) <= 30 for row in rows[:2])
    first = make_state(
        clock=ClockInfo(base_ms=60_000, increment_ms=0, remaining_ms=[60_000] * 2, running=None)
    )
    first.first_move_in_ms = 42_000
    assert first_move_note(first, 0, elapsed=2) == (
        "First moves are free: the clocks start once everyone has moved. "
        "Aborted unless you move in 40 s."
    )
    assert first_move_note(first, 1).endswith("Aborted unless Alice moves in 42 s.")
    first.match = MatchInfo(game=2, games=2, scores=[0.0, 1.0], over=False, winner=None)
    assert first_move_note(first, 0).endswith("You must move in 42 s or lose the game.")
    assert first_move_note(first, 1).endswith("Alice must move in 42 s or lose the game.")
    assert first_move_note(state, 0) == ""  # ply 2: everyone has moved


def test_server_messages_say_names_and_you_rather_than_seat_numbers() -> None:
    """An outside review: "b2h refused: seat 1 has no walls left." was said to seat 1."""
    state = make_state()
    assert with_names("seat 1 has no walls left", state, 1) == "you have no walls left"
    assert with_names("seat 1 has no walls left", state, 0) == "Bob has no walls left"
    assert with_names("e4 is occupied by seat 1's pawn", state, 1) == "e4 is occupied by your pawn"
    assert (
        with_names("wall c1v would leave seat 0 no path to row 5", state, 1)
        == "wall c1v would leave Alice no path to row 5"
    )
    assert with_names("it is seat 0's turn", state, None) == "it is Alice's turn"
    assert with_names("seat 1 is not in the game", state, 1) == "you are not in the game"
    free = make_state(names=("Alice", None))
    assert with_names("seat 1 in room r is taken", free, 0) == "seat 1 in room r is taken"
    assert with_names("seat 7 does not exist", state, 0) == "seat 7 does not exist"


def test_a_state_that_only_tells_an_absence_does_not_repeat_whose_move_it_is() -> None:
    """An outside review: plain mode said "Computer L2 to move." twice, and "Your move (ply
    11). Pawn moves: ..." after each of three players went away."""
    before = make_state(event=3, ply=2, turn=0)
    away = make_state(event=4, ply=2, turn=0, connected=(True, False))
    assert describe(before, away, 0) == "Bob is away."
    assert describe(away, make_state(event=5, ply=2, turn=0), 0) == "Bob is back."
    assert describe(before, make_state(event=4, ply=2, turn=0), 0) == ""
    # Just after this client's link came back (a server restart: everyone was away).
    assert describe(before, away, 0, presence=False) == ""
    assert describe(away, make_state(event=5, ply=2, turn=0), 0, presence=False) == ""


def test_one_wall_is_one_wall() -> None:
    variant = VariantSpec(size=5, walls=1)
    assert variant_text(variant) == "2 players, 5x5, 1 wall each"
    state = make_state(size=5, pawns=("c1", "c5"))
    state.variant = variant
    text = ["".join(t for _, t in line) for line in status_lines(state, 0)]
    assert text[1] == "5x5, 1 wall each"
    assert text[2].split() == ["player", "walls", "to", "go"]


def test_a_seat_out_of_a_four_player_game_is_told_how() -> None:
    names = ("Ann", "Ben", "Cat", "Dan")
    pawns = ("e1", "a5", "e9", "i5")
    before = make_state(event=5, ply=2, turn=2, names=names, pawns=pawns)
    before.moves = ["e2", "b5"]
    resigned = make_state(event=6, ply=2, turn=2, names=names, pawns=pawns)
    resigned.moves = ["e2", "b5", "retire 3"]
    resigned.players[3].active = False
    assert describe(before, resigned, 0, screen=True) == "Dan resigned."
    assert describe(before, resigned, 3, screen=True) == "You resigned."
    before.players[3].connected = resigned.players[3].connected = False
    before.players[3].claim_in_ms = 0
    assert describe(before, resigned, 0, screen=True) == "Dan was removed for staying away."
    assert describe(before, resigned, 3, screen=True) == "You were removed for staying away."
    clock = ClockInfo(base_ms=60_000, increment_ms=0, remaining_ms=[1, 1, 1, 0], running=2)
    resigned.clock = clock
    assert describe(before, resigned, 0, screen=True) == "Dan ran out of time."


def test_the_thinking_limit_shows_in_its_last_minutes() -> None:
    state = make_state(ply=3, turn=1)
    state.move_claim_in_ms = 300_000
    assert thinking_note(state, 0) == ""  # minutes to go: nothing to say yet
    state.move_claim_in_ms = 90_000
    assert thinking_note(state, 0, elapsed=30) == "Bob has not moved: claim in 60s"
    assert thinking_note(state, 1) == "Move within 90s, or the game may be claimed from you"
    assert thinking_note(state, 0, elapsed=90) == "Bob has not moved: claim now"
    texts = ["".join(t for _, t in line) for line in status_lines(state, 0, elapsed=90)]
    assert "Bob has not moved: claim now" in texts
    state.move_claim_in_ms = None
    assert thinking_note(state, 0) == ""


def test_an_aborted_game_says_what_ended_it() -> None:
    """A newcomer's review: a first move that never came and an opponent's abort both read
    "The game was aborted." alone."""
    opening = msgspec.structs.replace(make_state(ply=1, turn=1), first_move_in_ms=60_000)
    aborted = make_state(status="finished", ply=1, result=Result(winner=None, reason="aborted"))
    assert aborted_why(opening, aborted, 0, 60.2) == "Bob made no first move within 60 s"
    assert aborted_why(opening, aborted, 1, 60.2) == "you made no first move within 60 s"
    assert aborted_why(opening, aborted, 0, 3.0) == ""  # not the countdown: nothing to say
    # A player's own request, named by the result (``by``), whenever it came.
    by_bob = msgspec.structs.replace(aborted, result=Result(winner=None, reason="aborted", by=1))
    told = "ended it before every player had moved"
    assert aborted_why(opening, by_bob, 0, 3.0) == f"Bob {told}"
    assert aborted_why(opening, by_bob, 1, 60.2) == f"you {told}"
    assert aborted_why(opening, by_bob, None, 3.0) == f"Bob {told}"  # to a spectator
    begun = make_state(ply=6, turn=0)  # every player went away: nothing seen to say
    assert aborted_why(begun, aborted, 0, 90.0) == ""
    why = aborted_why(opening, aborted, 0, 61.0)
    assert describe(opening, aborted, 0, why=why).startswith(
        "The game was aborted: Bob made no first move within 60 s; no result."
    )
    gone = msgspec.structs.replace(aborted, ply=6)
    assert describe(begun, gone, 0).startswith("The game was aborted; no result.")
