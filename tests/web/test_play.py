"""Whole games in a real Chromium: two browsers by clicks, rematch, replay."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import GameServer
from tests.web.pages import close_all, game_between, open_player, play

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_two_browsers_play_a_game_with_a_wall_and_a_jump(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), code = await game_between(browser, site)
    # The lobby's button went with the lobby: the board has the focus, for the keyboard.
    assert await alice.page.evaluate("document.activeElement.classList.contains('board')")
    assert "Your move" in await alice.banner()
    assert "Alice to move" in await bob.banner()
    # A player's first move says how a move is made, in a toast (a mouse here: "Click").
    toast = alice.page.locator("#toast")
    await toast.filter(has_text="Click a dot to step, or the groove between two squares").wait_for()
    # c2 c4 d3h c3 c4 (jumping Bob) c2 c5: Alice wins on a 5x5 board.
    plan = ["c2", "c4", "d3h", "c3", "c4", "c2", "c5"]
    latencies = []
    for ply, move in enumerate(plan):
        mover, other = (alice, bob) if ply % 2 == 0 else (bob, alice)
        if ply == 2:  # the keyboard's cursor starts on Alice's pawn where it is now (c2), not c1
            await mover.page.focus("svg.board")
            await mover.page.keyboard.press("ArrowUp")
            said = await mover.page.locator("#announcer").inner_text()
            assert said.startswith("c3"), said
            await mover.page.keyboard.press("Escape")
        if ply == 4:  # a click where no wall may go (d3h stands there): the server's reason
            await mover.page.mouse.click(*await mover.wall_point("d3h"))
            await toast.filter(has_text="Wall d3h is already on the board").wait_for()
            assert await mover.page.evaluate("document.body.dataset.ply") == "4"
        if ply == 5:  # an earlier move, numbered as the list numbers it: d3h, the 3rd, is in "2."
            await mover.page.click('.movelist button[data-ply="3"]')
            viewing = "Viewing move 2 of 3 (d3h) · live: your move"
            await mover.page.locator(".banner").filter(has_text=viewing).wait_for()
            await mover.page.click("text=Back to live")
        if move.endswith("h"):
            await mover.place_wall(move)
        else:
            await mover.click_square(move)
        await other.wait_ply(ply + 1)
        await mover.wait_ply(ply + 1)
        latencies.append(
            await other.page.evaluate("window.quoridorTimes.render")
            - await mover.page.evaluate("window.quoridorTimes.input")
        )
    assert await alice.page.locator('rect.wall[data-wall="d3h"]').count() == 1
    assert "You win" in await alice.banner()
    assert "Alice wins" in await bob.banner()
    print(f"click to the opponent's board: {sorted(latencies)} ms")
    # The move list shows past positions while the live game stays a click away.
    await alice.page.click('.movelist button[data-ply="2"]')
    await alice.page.wait_for_selector(".movelist button.shown")
    assert await alice.page.evaluate("document.activeElement.dataset.ply") == "2"
    # Stepped with the keys, the focus goes with the move shown (outside review ui22: e3 was
    # ringed beside e3h shown).
    await alice.page.keyboard.press("ArrowRight")
    await alice.page.wait_for_selector('.movelist button.shown[data-ply="3"]')
    assert await alice.page.evaluate("document.activeElement.dataset.ply") == "3"
    await alice.page.keyboard.press("ArrowLeft")
    await alice.page.wait_for_selector('.movelist button.shown[data-ply="2"]')
    assert await alice.page.evaluate("document.activeElement.dataset.ply") == "2"
    assert await alice.page.locator("rect.wall").count() == 0
    used = alice.page.locator('.player[data-seat="0"] .stock i.used')
    assert await used.count() == 0  # the walls left then, not now
    await alice.page.click("text=Back to live")
    await alice.page.wait_for_selector('rect.wall[data-wall="d3h"]')
    assert await used.count() == 1
    # Both ask for a rematch: a new game with the seats turned, so Bob opens.
    await alice.page.click("text=Rematch")
    await bob.page.click("text=Accept rematch")
    await bob.page.wait_for_function("() => document.body.dataset.ply === '0'")
    await bob.page.wait_for_selector(".banner.turn")
    assert "Your move" in await bob.banner()
    # Chat after the swap: a new line has the writer's new seat's colour.
    await bob.page.click(".tabs button:has-text('Chat')")
    await bob.page.fill(".chatform input", "again!")
    await bob.page.press(".chatform input", "Enter")
    await alice.page.wait_for_selector(".chatlog b.seat0:has-text('Bob')", state="attached")
    # Behind the Moves tab, the line shows in the toast too, not only as a dot on the Chat tab
    # (outside review ui22, finding 12).
    await alice.page.locator("#toast").filter(has_text="Chat · Bob: again!").wait_for()
    assert await alice.page.locator(".tabs button.unread").count() == 1
    assert await bob.page.locator("#toast").filter(has_text="Chat ·").count() == 0
    # The finished game is in the history: its replay steps with the keyboard. (The rematch
    # is on: leaving it is confirmed.)
    await alice.page.click(".actions button.leave")
    await alice.page.click(".actions button.leave-confirm")
    # Its 7 plies are 4 moves, as the move list numbers them (an outside review: "39 moves"
    # for a list of 20).
    row = alice.page.locator(".lobby tr").filter(has_text="Replay").first
    assert " · 4 moves · " in await row.inner_text()
    await alice.page.click(".lobby >> text=Replay")
    await alice.page.wait_for_function("() => document.body.dataset.replay === '7'")
    await alice.page.keyboard.press("ArrowLeft")
    await alice.page.wait_for_function("() => document.body.dataset.replay === '6'")
    # Numbered as in the live game: a round to a line, and the caption numbers moves as the list
    # does (outside review ui22: "Move 6 of 7" for the list's move 3 of 4).
    rounds = await alice.page.locator(".movelist li").all_inner_texts()
    assert [" ".join(r.split()) for r in rounds] == ["1. c2 c4", "2. d3h c3", "3. c4 c2", "4. c5"]
    caption = "Move 3 of 4: Bob moved to c2"
    await alice.page.locator(".replay .banner").filter(has_text=caption).wait_for()
    await alice.page.keyboard.press("Home")
    await alice.page.wait_for_function("() => document.body.dataset.replay === '0'")
    await alice.page.locator(".replay .banner").filter(has_text="Start · 4 moves").wait_for()
    assert await alice.page.locator("rect.wall").count() == 0
    await close_all(alice, bob)
    assert code


async def test_draws_aborts_and_resignations(browser: Browser, site: GameServer) -> None:
    (alice, bob), _ = await game_between(browser, site)
    await alice.page.click("text=Offer draw")
    # An open offer is said as one's own, not under one's name.
    await alice.page.wait_for_selector(".banner:has-text('draw offered by you')")
    await bob.page.wait_for_selector(".banner:has-text('draw offered by Alice')")
    # While it stands, the button says why it cannot be pressed again.
    offered = alice.page.locator(".actions button.draw")
    assert await offered.is_disabled()
    assert await offered.get_attribute("title") == (
        "Your draw offer stands until Bob answers; it lapses when you move."
    )
    await bob.page.click("text=Decline")
    # A declined offer is told, and not made again before her next move (PROTOCOL.md
    # section 14): the button is greyed, with the reason, rather than sending a refused offer.
    await alice.page.locator("#toast").filter(has_text="Bob declined your draw offer.").wait_for()
    greyed = alice.page.locator(".actions button.draw:has-text('Offer draw'):disabled")
    await greyed.wait_for()
    assert await greyed.get_attribute("title") == (
        "Your draw offer was declined: you can offer again after your next move."
    )
    # A reload forgets what the page saw: the server's refusal greys the button again.
    await alice.page.reload()
    await alice.page.wait_for_selector(".actions button.draw:has-text('Offer draw'):enabled")
    await alice.page.click("text=Offer draw")
    refused = alice.page.locator("#toast").filter(has_text="offer again after your next move")
    await refused.wait_for()
    await greyed.wait_for()
    # Her move frees it.
    await alice.click_square("c2")
    await alice.page.wait_for_selector(".actions button.draw:has-text('Offer draw'):enabled")
    await bob.click_square("c4")
    await alice.wait_ply(2)
    await bob.page.click("text=Offer draw")  # the one who declined may offer
    await alice.page.click("text=Accept draw")
    for player in (alice, bob):
        await player.page.wait_for_selector(".banner:has-text('Draw by agreement')")
    await alice.page.click("text=Rematch")
    await bob.page.click("text=Accept rematch")
    await bob.page.wait_for_selector(".banner.turn")
    await bob.page.click(".actions button:has-text('Abort')")
    # Who aborted, as far as the state tells: the other player ended it (an id not Alice's).
    by_bob = "Game aborted by Bob before the first moves."
    await alice.page.wait_for_selector(f".banner:has-text('{by_bob}')")
    await bob.page.wait_for_selector(".banner:has-text('Game aborted: you pressed Abort.')")
    await alice.page.click("text=Rematch")
    await bob.page.click("text=Accept rematch")
    await alice.page.wait_for_selector(".banner.turn")
    await alice.page.click("text=Resign")
    assert await alice.page.evaluate("() => document.body.dataset.status") == "playing"
    await alice.page.click("text=Really resign?")
    await bob.page.wait_for_selector(".banner.won:has-text('You win')")
    await alice.page.wait_for_selector(".banner.lost")
    for player in (alice, bob):  # no moves to type once the game is over
        assert await player.page.locator("form.command").is_hidden()
    await close_all(alice, bob)


async def test_quick_match_pairs_two_browsers(browser: Browser, site: GameServer) -> None:
    alice = await open_player(browser, site, "Alice")
    bob = await open_player(browser, site, "Bob")
    for player in (alice, bob):
        await player.page.select_option("select[name=size]", "7")
        await player.page.click("text=Quick match")
    for player in (alice, bob):
        await player.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert "7\u00d77" in await alice.page.locator(".room-title").inner_text()
    # The game is theirs to play: leaving the lobby once matched must not leave the game.
    seats = [await p.page.evaluate("document.body.dataset.seat") for p in (alice, bob)]
    first = (alice, bob)[seats.index("0")]
    await first.click_square("d2")
    for player in (alice, bob):
        await player.wait_ply(1)
    assert "away" not in await alice.page.locator(".players").inner_text()
    # Before every first move, aborting or resigning costs a wait before the next quick
    # match (PROTOCOL.md section 4): the page says so before, and asks.
    second = bob if first is alice else alice
    await second.page.click(".actions button:has-text('Abort')")
    note = second.page.locator(".walkout-note")
    assert "wait before your next quick match" in await note.inner_text()
    await second.page.click("text=Keep playing")
    assert await note.count() == 0
    assert await second.page.evaluate("() => document.body.dataset.status") == "playing"
    await second.click_square("d6")
    for player in (alice, bob):
        await player.wait_ply(2)
    await first.page.click(".actions button:has-text('Resign')")  # a game now: no wait
    await first.page.wait_for_selector("text=Really resign?")
    assert await first.page.locator(".walkout-note").count() == 0
    await close_all(alice, bob)


async def test_quick_match_says_how_long_it_looked_and_who_it_can_meet(
    browser: Browser, site: GameServer
) -> None:
    """A guest and a logged-in player (rated by default) looked for each other and never met,
    told nothing (an outside review): the note counts the wait, and after 20 s says who can
    be matched."""
    alice = await open_player(browser, site, "Alice")
    await alice.page.clock.install()
    await alice.page.select_option("select[name=size]", "5")
    await alice.page.click("text=Quick match")
    waited = alice.page.locator(".waited")
    await waited.filter(has_text="0 s").wait_for()
    await alice.page.clock.fast_forward("00:25")
    said = "0:25: only players who chose the same board, clock and casual game are matched."
    await waited.filter(has_text=said).wait_for()
    await alice.page.click("button:text-is('Cancel')")
    await waited.wait_for(state="hidden")
    await close_all(alice)


async def test_leave_during_a_game_asks_first(browser: Browser, site: GameServer) -> None:
    (alice, bob), code = await game_between(browser, site)
    page = alice.page
    await page.click(".actions button.leave")
    note = page.locator(".leave-note")
    await note.filter(has_text="Your seat is kept for you").wait_for()
    assert "Bob may claim the game" in await note.inner_text()
    await page.click(".actions button.stay")  # changed their mind: nothing happened
    assert await note.count() == 0
    assert await page.evaluate("() => document.body.dataset.view") == "game"
    assert "online" in await bob.page.locator(".player.seat0").inner_html()
    await page.click(".actions button.leave")
    await page.click(".actions button.leave-confirm")
    await page.wait_for_function("() => document.body.dataset.view === 'lobby'")
    await bob.page.locator(".away").first.wait_for()
    # A spectator, or a player of a game over, leaves at once.
    spectator = await open_player(browser, site, "Sam", f"/#/watch/{code}")
    await spectator.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await spectator.page.click(".actions button.leave")
    await spectator.page.wait_for_function("() => document.body.dataset.view === 'lobby'")
    await bob.resign()
    await bob.page.wait_for_selector(".banner:has-text('Alice wins')")
    await bob.page.click(".actions button.leave")
    await bob.page.wait_for_function("() => document.body.dataset.view === 'lobby'")
    await close_all(alice, bob, spectator)


async def test_a_new_game_starts_with_an_empty_move_box(browser: Browser, site: GameServer) -> None:
    (alice, bob), _ = await game_between(browser, site)
    box = alice.page.locator("form.command input")
    await box.fill("e7v")
    await box.press("Enter")  # refused: it comes back into the box
    await alice.page.locator(".command-why").filter(has_text="e7v").wait_for()
    assert await box.input_value() == "e7v"
    await alice.resign()
    await bob.page.click("text=Rematch")
    await alice.page.click("text=Accept rematch")
    await alice.page.wait_for_function(
        "() => document.body.dataset.status === 'playing' && document.body.dataset.ply === '0'"
    )
    assert await box.input_value() == ""  # the last game's refused move means nothing here
    await close_all(alice, bob)


async def test_a_button_keeps_the_focus_when_the_other_player_moves(
    browser: Browser, site: GameServer
) -> None:
    """A move redraws the game's buttons: each one drawn as it was stays in place, so a
    keyboard player's focus on "Offer draw" is not thrown back to the page (and a click whose
    press and release straddle the move still lands)."""
    (alice, bob), _ = await game_between(browser, site)
    await play([alice, bob], ["c2"])
    await alice.page.focus(".actions button.draw")
    await play([alice, bob], ["c4"], start=1)
    focused = "() => document.activeElement?.textContent"
    assert await alice.page.evaluate(focused) == "Offer draw"
    await alice.page.keyboard.press("Enter")
    await bob.page.locator(".actions button:has-text('Accept draw')").wait_for()
    offers = alice.sent("draw")
    assert len(offers) == 1, offers  # the button kept in place calls its handler once
    await close_all(alice, bob)
