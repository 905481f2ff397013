"""The home page is the lobby: a session resumed at `/` leaves its room, a game still on
offered back (outside review ui24, finding 1: `/` opened after a finished game showed it)."""

from __future__ import annotations

import asyncio
import re

import pytest
from playwright.async_api import Browser

from server.app import GameServer
from tests.web.pages import close_all, game_between, play

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_opening_the_home_page_after_a_finished_game_shows_the_lobby(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    await alice.resign()
    await alice.page.wait_for_selector(".banner:has-text('Bob wins')")
    # Said to each as theirs: "by resignation" read as the winner's doing.
    assert await alice.banner() == "Bob wins — you resigned"
    assert await bob.banner() == "You win — by resignation"
    # The same tab, its session's resume token kept: `/` typed, or a tab restored there.
    await alice.page.goto(f"http://127.0.0.1:{site.port}/")
    await alice.page.wait_for_function("() => document.body.dataset.link === 'online'")
    await alice.page.locator(".lobby .list").first.wait_for()
    # The resumed session leaves the room (Bob sees her gone), and nothing offers it back.
    await bob.page.locator(".room-note").filter(has_text="Alice").wait_for()
    assert await alice.page.evaluate("() => document.body.dataset.view") == "lobby"
    assert await alice.page.evaluate("() => location.hash") == ""
    assert await alice.page.locator(".kept-seat").count() == 0
    await close_all(alice, bob)


async def test_the_home_page_offers_a_game_in_progress_back(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), code = await game_between(browser, site)
    await play([alice, bob], ["c2"])
    # Back later in the same tab (its session kept), at the lobby's own address.
    # A new page load, as when the address is typed again: another address first would do,
    # but /healthz (no HTML) makes Chromium ask for /favicon.ico, whose 404 shows as a
    # console error some of the time, and about:blank refuses the page's scripts its storage.
    await alice.page.goto(f"http://127.0.0.1:{site.port}/?again#/")
    await alice.page.wait_for_function("() => document.body.dataset.link === 'online'")
    assert await alice.page.evaluate("() => location.hash") == "#/"
    kept = alice.page.locator(".kept-seat")
    await kept.filter(has_text=code).wait_for()
    await bob.page.wait_for_selector('.player[data-seat="0"] .away')
    assert await alice.page.evaluate("() => document.body.dataset.view") == "lobby"
    await kept.locator("text=Back to your game").click()
    await alice.wait_ply(1)
    assert await alice.page.evaluate("() => document.body.dataset.seat") == "0"
    await bob.click_square("c4")
    await alice.wait_ply(2)
    assert "Your move" in await alice.banner()
    await close_all(alice, bob)


async def test_a_game_that_ended_while_its_tab_was_closed_is_not_offered_back(
    browser: Browser, short_grace_site: GameServer
) -> None:
    """An outside review: a game that ended while no tab of the player was open (the opponent
    claimed it) was offered back from the lobby, which remembers the room. It says how it
    ended instead."""
    site = short_grace_site
    (alice, bob), _ = await game_between(browser, site)
    await play([alice, bob], ["c2", "c4"])
    await alice.page.close()
    await bob.page.click(".actions button.claim")  # enabled once Alice's grace is over
    await bob.page.wait_for_selector(".banner:has-text('You win')")
    # A new tab, a new session: only the browser's storage remembers the room.
    page = alice.page = await alice.context.new_page()
    await page.goto(f"http://127.0.0.1:{site.port}/")
    ended = page.locator(".kept-ended")
    await ended.wait_for()
    # Said to Alice, who stayed away, as hers: "the opponent abandoned" read as if Bob had.
    said = "Your game against Bob ended: Bob won (you did not come back in time)."
    assert await ended.inner_text() == said
    assert said in await page.locator("#announcer").inner_text()
    assert await page.locator(".kept-seat").count() == 0
    await close_all(alice, bob)


def requests_of(site: GameServer, kind: str) -> int:
    """How many requests of a type the server has answered, as its metrics count them."""
    text = site.metrics.render().decode()
    found = re.search(rf'^quoridor_request_seconds_count{{type="{kind}"}} (\S+)$', text, re.M)
    return int(float(found.group(1))) if found else 0


async def test_the_lobby_looks_into_the_kept_game_once_not_at_each_refresh(
    browser: Browser, site: GameServer
) -> None:
    """The lobby looked into the kept seat's room at each of its 4-second refreshes: the
    player joined their own game as a spectator and left it again, every 4 s, and the
    opponent saw "1 watching" come and go. It looks once each time it is shown."""
    (alice, bob), code = await game_between(browser, site)
    await play([alice, bob], ["c2"])
    await alice.page.click(".actions button.leave")
    await alice.page.click(".actions button.leave-confirm")
    await alice.page.locator(".kept-seat").filter(has_text=code).wait_for()
    watches = requests_of(site, "watch")
    assert watches == 1  # the look of this visit
    # Two of the lobby's refreshes: its lists asked for again, twice.
    listed = requests_of(site, "list_rooms")
    while requests_of(site, "list_rooms") < listed + 2:  # noqa: ASYNC110 (not signalled)
        await asyncio.sleep(0.1)
    assert requests_of(site, "watch") == watches
    assert await alice.page.locator(".kept-seat").filter(has_text=code).count() == 1
    # Shown again, the lobby looks again.
    await alice.page.locator(".kept-seat button").click()
    await alice.wait_ply(1)
    await alice.page.click(".actions button.leave")
    await alice.page.click(".actions button.leave-confirm")
    await alice.page.locator(".kept-seat").filter(has_text=code).wait_for()
    while requests_of(site, "watch") < watches + 1:  # noqa: ASYNC110 (not signalled)
        await asyncio.sleep(0.05)
    await close_all(alice, bob)


async def test_a_game_that_ends_while_the_lobby_is_shown_shows_its_result_when_gone_back_to(
    browser: Browser, short_grace_site: GameServer
) -> None:
    """The lobby does not look again while it is shown: "Back to your game" still stands
    after the game ended, and takes the player to the game over, its result said."""
    (alice, bob), code = await game_between(browser, short_grace_site)
    await play([alice, bob], ["c2", "c4"])
    await alice.page.click(".actions button.leave")
    await alice.page.click(".actions button.leave-confirm")
    await alice.page.locator(".kept-seat").filter(has_text=code).wait_for()
    await bob.page.click(".actions button.claim")
    await bob.page.wait_for_selector(".banner:has-text('You win')")
    await alice.page.locator(".kept-seat button").click()
    await alice.page.wait_for_selector(".banner.lost:has-text('Bob wins')")
    assert await alice.page.evaluate("() => document.body.dataset.seat") == "0"
    # Over, it is no longer offered once left.
    await alice.page.click(".actions button.leave")
    await alice.page.wait_for_selector(".lobby")
    await alice.page.locator(".lobby .list").first.wait_for()
    assert await alice.page.locator(".kept-seat").count() == 0
    await close_all(alice, bob)


async def test_a_room_the_server_has_closed_is_not_offered_back(
    browser: Browser, short_grace_site: GameServer
) -> None:
    site = short_grace_site
    (alice, bob), code = await game_between(browser, site)
    await play([alice, bob], ["c2", "c4"])
    await alice.page.close()
    await close_all(bob)
    # Every player away past the grace period: the game is aborted and the room forgotten.
    while code in site.core.host.rooms:  # noqa: ASYNC110 (not signalled)
        await asyncio.sleep(0.05)
    page = alice.page = await alice.context.new_page()
    await page.goto(f"http://127.0.0.1:{site.port}/")
    closed = page.locator(".kept-ended")
    await closed.wait_for()
    assert await closed.inner_text() == f"Room {code} is closed: there is no game to go back to."
    assert await page.locator(".kept-seat").count() == 0
    await close_all(alice)


async def test_back_during_ones_game_asks_before_leaving_it(
    browser: Browser, site: GameServer
) -> None:
    """The browser's Back (a phone's back swipe) took a player out of their game at once, a
    leave on purpose that lets the opponent claim sooner. It asks now, as Leave does."""
    (alice, bob), code = await game_between(browser, site)
    await play([alice, bob], ["c2"])
    leaves = requests_of(site, "leave")
    # Alice came to the room from the lobby: Back is the lobby.
    await alice.page.evaluate("history.back()")
    note = alice.page.locator(".actions .leave-note")
    await note.wait_for()
    assert (await note.inner_text()).startswith("Leave the game?")
    assert alice.page.url.endswith(f"#/room/{code}")
    assert await alice.page.evaluate("document.activeElement.className") == "stay"
    await alice.page.click(".actions button.stay")
    await play([alice, bob], ["c4"], start=1)  # still in the game: it goes on
    assert requests_of(site, "leave") == leaves
    # The header's link asks too (Esc says no, as Stay does); leaving then goes to the lobby,
    # the seat kept. Staying leaves the browser's history as it was (it had two more entries).
    entries = await bob.page.evaluate("history.length")
    await bob.page.click("header .brand")
    await bob.page.locator(".actions .leave-note").wait_for()
    await bob.page.keyboard.press("Escape")
    await bob.page.locator(".actions .leave-note").wait_for(state="detached")
    assert await bob.page.evaluate("history.length") == entries
    assert bob.page.url.endswith(f"#/room/{code}")
    await bob.page.click("header .brand")
    await bob.page.click(".actions button.leave-confirm")
    await bob.page.locator(".kept-seat").filter(has_text=code).wait_for()
    await close_all(alice, bob)


async def test_leaving_the_page_during_ones_game_is_asked_by_the_browser(
    browser: Browser, site: GameServer
) -> None:
    """Came to the room from another site, Back left the page (and the game) without a word.
    The page asks the browser to confirm (``beforeunload``) while its game is on, and only then."""
    (alice, bob), _ = await game_between(browser, site)
    await play([alice, bob], ["c2"])
    asked: list[str] = []
    bob.page.on("dialog", lambda dialog: asked.append(dialog.type))
    await bob.page.reload()  # answered by the pages' helper: leave
    await bob.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert asked == ["beforeunload"]
    await bob.resign()
    await bob.page.wait_for_function("() => document.body.dataset.status === 'finished'")
    await bob.page.reload()  # the game is over: nothing to ask
    await bob.page.wait_for_function("() => document.body.dataset.link === 'online'")
    assert asked == ["beforeunload"]
    await close_all(alice, bob)
