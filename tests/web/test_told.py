"""What the page tells a player in words, in a real Chromium: the first-move countdown and why a
game was aborted, whose turn it is when a tap cannot move, an absent opponent at a rematch, who
declined one, and a board that is offline. Everything said comes from the state or the server's
own words."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, WebSocketRoute

from protocol.messages import Abort, Create, Join, Joined, MoveRequest, Resign, VariantSpec
from server.app import GameServer
from server.config import Config
from tests.web.pages import Player, close_all, create_room, game_between, open_player, play
from tests.wsclient import Client

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest_asyncio.fixture(loop_scope="session")
async def quick_abort_site() -> AsyncIterator[GameServer]:
    """First moves must come within 3 seconds (the default is 60)."""
    config = Config(port=0, rate=1000, burst=1000, grace=30, deliberate_grace=30, first_move=3)
    async with GameServer(config).running() as running:
        yield running


async def test_the_first_move_countdown_is_shown_and_its_end_is_told(
    browser: Browser, quick_abort_site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, quick_abort_site)
    countdown = alice.page.locator(".countdown")
    await countdown.filter(has_text="You have").wait_for()
    assert "s to make your first move, or the game is aborted." in await countdown.inner_text()
    assert "Alice has" in await bob.page.locator(".countdown").inner_text()
    # Nobody moves: the server aborts the game, and each page says why.
    await alice.page.wait_for_selector(
        ".banner:has-text('Game aborted: you did not make your first move in time.')"
    )
    await bob.page.wait_for_selector(
        ".banner:has-text('Game aborted: Alice did not make the first move in time.')"
    )
    assert await countdown.is_hidden()
    await close_all(alice, bob)


async def test_a_spectator_is_told_a_game_ended_because_every_player_went_away(
    browser: Browser, short_grace_site: GameServer
) -> None:
    """Still in its first moves, not for want of a first move: both players closed their
    pages, and the server aborted the game once their grace was over."""
    (alice, bob), code = await game_between(browser, short_grace_site)
    spectator = await open_player(browser, short_grace_site, "Sam", f"/#/watch/{code}")
    await spectator.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await close_all(alice, bob)
    await spectator.page.wait_for_selector(
        ".banner:has-text('Game aborted: every player went away.')"
    )
    await close_all(spectator)


async def test_a_tap_that_cannot_move_says_why(browser: Browser, site: GameServer) -> None:
    (alice, bob), code = await game_between(browser, site)
    await bob.click_square("c4")  # queued for his turn (a premove): said so
    toast = bob.page.locator("#toast")
    queued = "It is Alice's turn: c4 is played when yours comes"
    await toast.filter(has_text=queued).wait_for()
    # Said to screen readers too, through the page's live region.
    assert queued in await bob.page.locator("#announcer").inner_text()
    spectator = await open_player(browser, site, "Sam", f"/#/watch/{code}")
    await spectator.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await spectator.click_square("c3")
    await spectator.page.locator("#toast").filter(has_text="spectators cannot move").wait_for()
    # The server's seat numbers are said as names ("you" for one's own seat).
    said = await bob.page.evaluate(
        """() => import('/words.js').then((words) => {
            const state = {players: [{name: 'Alice'}, {name: 'Bob'}]};
            return [
                words.withNames("wall e5h would leave seat 0 no path to row 5", state, 1),
                words.withNames("it is seat 1's turn", state, 1),
                words.withNames("seat 1 has no walls left", state, 1),
                words.withNames("seat 0 has no walls left", state, 1),
                words.withNames("the game is over: seat 1 has won", state, 1),
                words.withNames("seat 1 is not in the game", state, 1),
            ];
        })"""
    )
    assert said == [
        "Wall e5h would leave Alice no path to row 5",
        "It is your turn",
        "You have no walls left",
        "Alice has no walls left",
        "The game is over: you have won",
        "You are not in the game",
    ]
    await close_all(alice, bob, spectator)


async def test_offline_the_board_takes_no_move_and_says_so(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    page = alice.page
    await page.wait_for_selector("circle.target")
    await alice.context.set_offline(True)
    await page.wait_for_selector(".banner:has-text('Your move, once the connection is back')")
    assert await page.locator("circle.target").count() == 0
    await alice.click_square("c2")
    await page.locator("#toast").filter(has_text="Not connected").wait_for()
    await alice.context.set_offline(False)
    await page.wait_for_function("() => document.body.dataset.link === 'online'")
    await page.wait_for_selector(".banner.turn:has-text('Your move')")
    await alice.click_square("c2")
    await bob.wait_ply(1)
    await close_all(alice, bob)


async def test_a_rematch_with_a_player_who_left_says_it_waits_for_them(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    await alice.resign()
    await bob.page.wait_for_selector(".banner:has-text('You win')")
    await alice.page.click(".actions button.leave")
    await alice.page.wait_for_function("() => document.body.dataset.view === 'lobby'")
    note = bob.page.locator(".room-note")
    await note.filter(has_text="Alice is not in the room").wait_for()
    await bob.page.click(".actions button:has-text('Rematch (if Alice comes back)')")
    await bob.page.wait_for_selector(
        ".actions button:disabled:has-text('Rematch asked: waits for Alice to come back')"
    )
    await (
        bob.page.locator(".rematch-note")
        .filter(has_text="You asked for a rematch: waiting for Alice.")
        .wait_for()
    )
    await close_all(alice, bob)


@pytest_asyncio.fixture(loop_scope="session")
async def one_room_site() -> AsyncIterator[GameServer]:
    """A server full with one room, which gives a game over for 0.5 s to a new one."""
    config = Config(port=0, rate=1000, burst=1000, grace=0.5, max_rooms=1)
    async with GameServer(config).running() as running:
        yield running


async def test_a_room_closed_by_a_full_server_says_why_and_shows_the_lobby(
    browser: Browser, one_room_site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, one_room_site)
    await alice.resign()
    await bob.page.wait_for_selector(".banner:has-text('You win')")
    await asyncio.sleep(0.6)
    newcomer = await Client.connect(f"ws://127.0.0.1:{one_room_site.port}", "Carol")
    await newcomer.send(Create(id="new"))
    assert (await newcomer.expect(Joined)).id == "new"
    for player in (alice, bob):
        await player.page.wait_for_function("() => document.body.dataset.view === 'lobby'")
        toast = player.page.locator(".toast")
        await toast.filter(has_text="The server is full and closed this finished game").wait_for()
    await newcomer.close()
    await close_all(alice, bob)


def contrast(a: list[float], b: list[float]) -> float:
    """WCAG contrast ratio of two sRGB colours (0-255)."""

    def luminance(rgb: list[float]) -> float:
        lin = [
            c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4
            for c in rgb
        ]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


async def test_the_lobby_picture_is_no_control_and_buttons_read_well(
    browser: Browser, site: GameServer
) -> None:
    player = await open_player(browser, site, "Ann")
    board = player.page.locator(".hero-board svg")
    assert await board.get_attribute("role") == "presentation"
    assert await board.get_attribute("aria-label") is None
    assert await board.get_attribute("tabindex") is None
    colours = await player.page.evaluate(
        """() => {
            const style = getComputedStyle(document.querySelector('form.create button.primary'));
            const rgb = (text) => text.match(/[\\d.]+/g).slice(0, 3).map(Number);
            return [rgb(style.color), rgb(style.backgroundColor)];
        }"""
    )
    assert contrast(*colours) >= 4.5
    await close_all(player)


async def test_a_link_opened_before_any_name_was_chosen_asks_for_one(
    browser: Browser, site: GameServer
) -> None:
    alice = await open_player(browser, site, "Alice")
    code = await create_room(alice)
    context = await browser.new_context(viewport={"width": 360, "height": 740})
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    await page.goto(f"http://127.0.0.1:{site.port}/#/room/{code}")
    name = page.locator("form.join-as input[name=name]")
    await name.wait_for()
    assert (await name.input_value()).startswith("Guest ")  # offered as it is, to keep or change
    await name.fill("Carol")
    await page.click("form.join-as button[type=submit]")
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await alice.page.wait_for_selector(".players .name:text-is('Carol')")
    # Chosen once: a reload takes the seat back without asking.
    await page.reload()
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert await page.locator("form.join-as").count() == 0
    await context.close()
    assert not errors, errors
    await close_all(alice)


async def test_a_refusal_that_opens_with_a_move_keeps_it_lower_case(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    page = alice.page
    await page.fill("form.command input", "a5")
    await page.press("form.command input", "Enter")
    refusal = page.locator(".command-why").filter(
        has_text="a5 is not one step or jump away from c1"
    )
    await refusal.wait_for()
    assert (await refusal.inner_text()).startswith("a5 ")
    await page.fill("form.command input", "a9h")
    await page.press("form.command input", "Enter")
    toast = page.locator(".command-why").filter(has_text="a9h")
    await toast.wait_for()
    assert (await toast.inner_text()).startswith("a9h ")
    await close_all(alice, bob)


async def test_a_link_to_a_game_in_progress_offers_to_watch_not_to_join(
    browser: Browser, site: GameServer
) -> None:
    """An outside review: the link of a room whose game was on invited a newcomer to "Join the
    game", and Join only made them a watcher."""
    (alice, bob), code = await game_between(browser, site)
    context = await browser.new_context(viewport={"width": 360, "height": 740})
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{site.port}/#/room/{code}")
    card = page.locator(".join-as")
    await card.filter(has_text="This game is in progress").wait_for(timeout=5000)
    assert f"Every seat in room {code} is taken: you can watch the game." in (
        await card.inner_text()
    )
    assert await page.locator("input[name=name]").count() == 0
    await page.click("text=Watch it")
    await page.wait_for_function("() => document.body.dataset.role === 'spectator'")
    assert await page.evaluate("() => document.body.dataset.status") == "playing"
    # Joined by its code from the lobby (as a private room, never listed, is): Join says it
    # only made Carol a watcher.
    carol = await open_player(browser, site, "Carol")
    await carol.page.fill("input[name=code]", code)
    await carol.page.click("form.join button[type=submit]")
    await (
        carol.page.locator("#toast")
        .filter(has_text=f"Every seat in room {code} is taken: you are watching the game.")
        .wait_for()
    )
    assert await carol.page.evaluate("() => document.body.dataset.role") == "spectator"
    await context.close()
    await close_all(alice, bob, carol)


async def test_a_link_to_a_private_room_says_what_it_holds_before_asking_a_name(
    browser: Browser, site: GameServer
) -> None:
    """A private room is never listed: its link asked a newcomer's name and offered Join
    whatever the room held, and Join only made them a watcher. The page looks into the room
    first (a watch, then a leave), as the list says of a public one."""
    url = f"ws://127.0.0.1:{site.port}"
    alice, bob = await Client.connect(url, "Alice"), await Client.connect(url, "Bob")
    await alice.send(Create(private=True))
    code = (await alice.expect(Joined)).room
    await bob.send(Join(room=code))
    await bob.expect(Joined)
    context = await browser.new_context(viewport={"width": 360, "height": 740})
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{site.port}/#/room/{code}")
    card = page.locator(".join-as")
    await card.filter(has_text="This game is in progress").wait_for(timeout=5000)
    assert await page.locator("input[name=name]").count() == 0
    await context.close()
    await bob.send(Resign())
    # Another newcomer (the first has a name now: a link of theirs joins at once).
    context = await browser.new_context(viewport={"width": 360, "height": 740})
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{site.port}/#/room/{code}")
    card = page.locator(".join-as")
    await card.filter(has_text="This game is over").wait_for(timeout=5000)
    await page.click("text=See how it ended")
    await page.wait_for_function("() => document.body.dataset.status === 'finished'")
    assert await page.evaluate("() => document.body.dataset.role") == "spectator"
    await context.close()
    # A room there is not: said at once, not after a name asked for nothing.
    context = await browser.new_context(viewport={"width": 360, "height": 740})
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{site.port}/#/room/nosuchroom")
    await page.locator("#toast").filter(has_text="There is no room nosuchroom.").wait_for()
    await page.wait_for_function("() => document.body.dataset.view === 'lobby'")
    assert await page.locator("form.join-as").count() == 0
    await context.close()
    await alice.close()
    await bob.close()


async def test_a_link_to_a_private_room_opened_while_watching_another_says_what_it_holds(
    browser: Browser, site: GameServer
) -> None:
    """A newcomer watching one game opens the link of a private one in progress: the look
    into it was refused while they watched, and the name form came back (a review's finding)."""
    url = f"ws://127.0.0.1:{site.port}"
    players = [await Client.connect(url, name) for name in ("Alice", "Bob", "Carol", "Dan")]
    codes = []
    for (first, second), private in (((0, 1), True), ((2, 3), False)):
        await players[first].send(Create(private=private))
        codes.append((await players[first].expect(Joined)).room)
        await players[second].send(Join(room=codes[-1]))
        await players[second].expect(Joined)
    context = await browser.new_context(viewport={"width": 360, "height": 740})
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{site.port}/#/watch/{codes[1]}")
    await page.wait_for_function("() => document.body.dataset.role === 'spectator'")
    await page.goto(f"http://127.0.0.1:{site.port}/#/room/{codes[0]}")
    await page.locator(".join-as").filter(has_text="This game is in progress").wait_for()
    assert await page.locator("form.join-as").count() == 0
    await context.close()
    for player in players:
        await player.close()


async def test_a_rematch_says_who_asks_and_how_the_seats_turn(
    browser: Browser, site: GameServer
) -> None:
    """Outside review ui22, finding 7: the button read "Accept rematch (1/2)" ("1/2" looked
    like a draw score), no line said who asked, there was no way to say no, and the colours
    swapped in the new game without a word."""
    (alice, bob), code = await game_between(browser, site)
    sam = await open_player(browser, site, "Sam", f"/#/watch/{code}")
    await alice.resign()
    await bob.page.wait_for_selector(".banner:has-text('You win')")
    await alice.page.click(".actions button:has-text('Rematch')")
    asks = bob.page.locator(".rematch-note").filter(has_text="Alice asks for a rematch.")
    await asks.wait_for()
    await sam.page.locator(".rematch-note").filter(has_text="Alice asks for a rematch.").wait_for()
    await (
        alice.page.locator(".rematch-note")
        .filter(has_text="You asked for a rematch: waiting for Bob.")
        .wait_for()
    )
    assert await alice.page.locator(".actions button:disabled:text-is('Rematch asked')").count()
    accept = bob.page.locator(".actions button.primary:text-is('Accept rematch')")
    await accept.wait_for()
    await bob.page.locator(".actions button:text-is('Decline and leave')").wait_for()
    await accept.click()
    # Bob now opens: each is told their new seat, the spectator who opens.
    await (
        bob.page.locator(".room-note")
        .filter(has_text="New game, the seats turned: you now play red (circle) and move first.")
        .wait_for()
    )
    await (
        alice.page.locator(".room-note")
        .filter(has_text="New game, the seats turned: you now play blue (diamond) and move second.")
        .wait_for()
    )
    await (
        sam.page.locator(".room-note")
        .filter(has_text="New game, the seats turned: Bob now opens, as red (circle).")
        .wait_for()
    )
    assert await bob.page.locator(".room-note svg.swatch .pawn.seat0").count() == 1
    # Said until both have moved once.
    await bob.click_square("c2")
    await alice.wait_ply(1)
    assert await alice.page.locator(".room-note").is_visible()
    await alice.click_square("c4")
    await bob.wait_ply(2)
    await bob.page.locator(".room-note").wait_for(state="hidden")
    # Declined on the way out: Bob resigns and asks again; Alice declines and leaves.
    await bob.resign()
    await alice.page.wait_for_selector(".banner:has-text('You win')")
    await bob.page.click(".actions button:has-text('Rematch')")
    await alice.page.locator(".rematch-note").filter(has_text="Bob asks for a rematch.").wait_for()
    await alice.page.click(".actions button:text-is('Decline and leave')")
    await alice.page.wait_for_function("() => document.body.dataset.view === 'lobby'")
    # Said as what it was (outside review ui24, finding 4: it read "Alice is not in the
    # room", never a decline), to the spectator too, and nothing waits for her.
    await (
        bob.page.locator(".room-note")
        .filter(has_text="Alice declined the rematch and left.")
        .wait_for()
    )
    assert "not in the room" not in await bob.page.locator(".room-note").inner_text()
    assert await bob.page.locator(".rematch-note").count() == 0  # her decline withdrew his
    await bob.page.locator(".actions button.primary:text-is('Rematch')").wait_for()
    await (
        sam.page.locator(".rematch-note")
        .filter(has_text="Alice declined the rematch and left.")
        .wait_for()
    )
    await close_all(alice, bob, sam)


async def test_a_declined_rematch_is_said_to_the_whole_room(
    browser: Browser, site: GameServer
) -> None:
    """A player who does not want to play again says so with a button beside the request,
    and stays: the one who asked, and a spectator, read who declined (PROTOCOL.md section
    15), where the page could only guess from a departure. The one declined may ask again."""
    (alice, bob), code = await game_between(browser, site)
    sam = await open_player(browser, site, "Sam", f"/#/watch/{code}")
    await play([alice, bob], ["c2"])  # a game with a move has its Analyse button
    await alice.resign()
    await bob.page.wait_for_selector(".banner:has-text('You win')")
    await alice.page.click(".actions button:text-is('Rematch')")
    await bob.page.locator(".rematch-note").filter(has_text="Alice asks for a rematch.").wait_for()
    # The answer's buttons make a row, the others the next ("Decline and leave" wrapped alone).
    tops = await bob.page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll(".actions button")]
            .map((b) => [b.textContent, Math.round(b.getBoundingClientRect().top)]))"""
    )
    assert tops["Accept rematch"] == tops["Decline"] < tops["Analyse"] == tops["Decline and leave"]
    await bob.page.click(".actions button:text-is('Decline')")
    # The one declined reads what the buttons under the line do (it said only who declined).
    declined = "Bob declined the rematch: “Rematch” asks again, “Leave” goes back to the lobby."
    for player, text in (
        (alice, declined),
        (bob, "You declined the rematch."),
        (sam, "Bob declined the rematch."),
    ):
        await player.page.locator(".rematch-note").filter(has_text=text).wait_for()
    assert await sam.page.locator(".rematch-note").inner_text() == "Bob declined the rematch."
    assert await bob.page.locator(".actions button:text-is('Decline')").count() == 0
    assert await bob.page.evaluate("() => document.body.dataset.view") == "game"  # he stayed
    # Alice asks again: the question is open again, and Bob may still say no.
    await alice.page.click(".actions button.primary:text-is('Rematch')")
    await bob.page.locator(".rematch-note").filter(has_text="Alice asks for a rematch.").wait_for()
    await bob.page.locator(".actions button:text-is('Decline')").wait_for()
    await (
        alice.page.locator(".rematch-note")
        .filter(has_text="You asked for a rematch: waiting for Bob.")
        .wait_for()
    )
    await close_all(alice, bob, sam)


async def test_a_rematch_every_seat_asked_waits_for_the_one_away(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    await alice.resign()
    await alice.page.click(".actions button:text-is('Rematch')")
    await alice.page.locator(".rematch-note").wait_for()
    await alice.page.click(".actions button.leave")  # her request stands (PROTOCOL.md 15)
    await alice.page.wait_for_function("() => document.body.dataset.view === 'lobby'")
    # Said as gone, not "Alice asks for a rematch" over "Alice is not in the room".
    note = bob.page.locator(".rematch-note")
    await note.filter(has_text="Alice asked for a rematch, then left.").wait_for()
    assert await note.inner_text() == "Alice asked for a rematch, then left."
    await bob.page.click(".actions button:has-text('Rematch (if Alice comes back)')")
    await (
        bob.page.locator(".rematch-note")
        .filter(has_text="You and Alice asked for a rematch: waiting for Alice to come back.")
        .wait_for()
    )
    await close_all(alice, bob)


async def test_a_move_that_raced_the_end_of_the_game_says_what_to_do_now(
    browser: Browser, site: GameServer
) -> None:
    """A move sent as the game ended (here the opponent's resignation is held on its way to
    the page) is refused with "the game is over": the toast says what the buttons under the
    result do, where it stopped at the refusal."""
    alice = await Client.connect(f"ws://127.0.0.1:{site.port}", "Alice")
    await alice.send(Create(variant=VariantSpec(size=5)))
    code = (await alice.expect(Joined)).room
    held: list[str | bytes] = []
    holding = False
    finished = asyncio.Event()

    def route(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def down(message: str | bytes) -> None:
            if holding and '"type":"error"' not in str(message):
                held.append(message)
                if '"finished"' in str(message):
                    finished.set()
                return
            ws.send(message)

        server.on_message(down)

    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    await context.route_web_socket(lambda _: True, route)
    await context.add_init_script("localStorage.setItem('quoridor.name', 'Bob');")
    page = await context.new_page()
    bob = Player(context, page)
    page.on("pageerror", lambda error: bob.errors.append(str(error)))
    await page.goto(f"http://127.0.0.1:{site.port}/#/room/{code}")
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await alice.send(MoveRequest(move="c2", ply=0))
    await bob.wait_ply(1)
    holding = True
    await alice.send(Resign())
    await asyncio.wait_for(finished.wait(), 10)
    await bob.click_square("c4")
    toast = page.locator("#toast")
    await toast.filter(has_text="The game is over").wait_for()
    told = "The game is over. “Rematch” asks to play again, “Leave” goes back to the lobby."
    assert await toast.inner_text() == told
    await page.wait_for_selector(".banner.won")  # the state came with the refusal
    await close_all(bob)
    await alice.close()


async def test_a_match_says_its_score_between_games_and_its_verdict(
    browser: Browser, site: GameServer
) -> None:
    """An outside review: game 2 of a match started as game 1 ended, so game 1's result and
    the score were never on screen; and a match drawn 1-1 ended on "Alice wins ... match 1-1
    (over)" in the loser's red (the page writes an en dash between the points)."""
    alice = await open_player(browser, site, "Alice")
    page = alice.page
    await page.wait_for_selector(".lobby form.create")
    await page.select_option("select[name=size]", "5")
    await page.check("form.create input[name=match]")
    await page.click("form.create button[type=submit]")
    await page.wait_for_selector(".banner.waiting")
    code = page.url.rsplit("/", 1)[1]
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}")
    for player in (alice, bob):
        await player.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    title = bob.page.locator(".room-title .variant")
    await title.filter(has_text="· match, game 1 of 2").wait_for()
    await alice.resign()  # game 1 to Bob; game 2 starts at once, the seats turned
    await title.filter(has_text="· match, game 2 of 2").wait_for()
    note = bob.page.locator(".room-note")
    turned = "seats turned: you now play red (circle) and move first."
    await note.filter(has_text=f"{turned} Match after game 1: you 1, Alice 0.").wait_for()
    # By seat, as the board shows them: Bob opens game 2.
    await (
        alice.page.locator(".room-note")
        .filter(has_text="Match after game 1: Bob 1, you 0.")
        .wait_for()
    )
    await bob.resign()  # game 2 to Alice: 1-1
    for player in (alice, bob):
        banner = player.page.locator(".banner")
        await banner.filter(has_text="match drawn 1\u20131").wait_for()
        assert "draw" in (await banner.get_attribute("class") or "")
    await close_all(alice, bob)


async def test_an_abort_sent_without_an_id_is_told_as_that_players(
    browser: Browser, site: GameServer
) -> None:
    """A client that sends ``abort`` with no ``id`` (another author's bot): the state's
    ``result.by`` names it, where the page once read the missing id as the server's own abort
    ("you did not make your first move in time")."""
    bob = await Client.connect(f"ws://127.0.0.1:{site.port}", "Bob")
    await bob.send(Create(variant=VariantSpec(size=5)))
    code = (await bob.expect(Joined)).room
    alice = await open_player(browser, site, "Alice", f"/#/room/{code}")
    spectator = await open_player(browser, site, "Sam", f"/#/watch/{code}")
    for page in (alice.page, spectator.page):
        await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await bob.send(Abort())
    told = "Game aborted by Bob before the first moves."
    for page in (alice.page, spectator.page):
        await page.locator(".banner").filter(has_text=told).wait_for()
    final = await bob.state()
    while final.result is None:
        final = await bob.state()
    assert (final.result.by, final.result.reason) == (0, "aborted")
    await bob.close()
    await close_all(alice, spectator)
