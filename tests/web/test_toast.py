"""Where the page's toasts go: over nothing a player needs (an outside review: on a phone the
first tip and the refusals covered the move list and the chat's input; on a desktop a refusal
stayed after the game had moved on)."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, Page

from server.app import GameServer
from tests.web.pages import close_all, create_room, game_between, open_player

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def overlaps(page: Page, selector: str) -> bool:
    """Whether the toast shown covers any part of what ``selector`` finds."""
    return bool(
        await page.evaluate(
            """(selector) => {
                const t = document.getElementById('toast').getBoundingClientRect();
                return [...document.querySelectorAll(selector)].some((node) => {
                    const b = node.getBoundingClientRect();
                    return b.width > 0 && t.left < b.right && b.left < t.right
                        && t.top < b.bottom && b.top < t.bottom;
                });
            }""",
            selector,
        )
    )


NEEDED = ".side button, .side input, .tabs, .panel:not([hidden]), .wallbar"


@pytest.mark.parametrize("viewport", [(360, 740), (1440, 900)])
async def test_toasts_cover_no_control_and_go_when_the_game_moves_on(
    browser: Browser, site: GameServer, viewport: tuple[int, int]
) -> None:
    touch = viewport[0] < 800
    alice = await open_player(browser, site, "Alice", viewport=viewport, touch=touch)
    code = await create_room(alice, size=9)
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}")
    page = alice.page
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    toast = page.locator("#toast")
    await toast.filter(has_text="a dot to step").wait_for()  # the first tip
    assert not await overlaps(page, NEEDED)
    await page.click(".tabs button:has-text('Chat')")
    await alice.click_square("a5")
    await toast.filter(has_text="You can't move to a5").wait_for()
    assert not await overlaps(page, NEEDED)
    # Alice moves on: the refusal goes at once, not seconds later.
    await page.fill("form.command input", "e2")
    await page.press("form.command input", "Enter")
    await bob.wait_ply(1)
    await toast.wait_for(state="hidden", timeout=1500)
    await close_all(alice, bob)


async def test_on_a_phone_toasts_show_under_the_board_not_over_it(
    browser: Browser, site: GameServer
) -> None:
    """An outside review: at 360x740 a toast at the top of the screen hid the top of the
    board (a two-line tip its far goal line, a three-line premove note a row and a half).
    Under the board, it must not hide the wall bar shown there while a wall waits. The tip,
    a declined draw offer that comes while the wall bar shows, and a premove's note."""
    alice = await open_player(browser, site, "Alice", viewport=(360, 740), touch=True)
    code = await create_room(alice, size=9)
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}")
    page = alice.page
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    toast = page.locator("#toast")

    async def clear_of_the_board() -> None:
        assert not await overlaps(page, "svg.board")
        assert not await overlaps(page, NEEDED)
        bottom = await page.evaluate(
            "() => document.getElementById('toast').getBoundingClientRect().bottom"
        )
        assert bottom <= 740  # on the screen

    await toast.filter(has_text="a dot to step").wait_for()
    await clear_of_the_board()
    await page.click("text=Offer draw")
    await bob.page.wait_for_selector("text=Decline")
    await page.touchscreen.tap(*await alice.wall_point("e5h"))  # shown, not placed
    await page.locator(".wallbar").wait_for()
    await bob.page.click("text=Decline")
    await toast.filter(has_text="declined your draw offer").wait_for()
    await clear_of_the_board()
    await page.click(".wallbar button:has-text('Cancel')")
    await page.fill("form.command input", "e2")
    await page.press("form.command input", "Enter")
    await bob.wait_ply(1)
    # A premove: the longest note, three lines.
    await page.touchscreen.tap(*await alice.square_center("e3"))
    await toast.filter(has_text="is played when yours comes").wait_for()
    await clear_of_the_board()
    await close_all(alice, bob)


async def covered(page: Page, over: str, under: str) -> bool:
    """Whether anything shown that ``over`` finds covers part of what ``under`` finds."""
    return bool(
        await page.evaluate(
            """([over, under]) => {
                const boxes = (s) => [...document.querySelectorAll(s)]
                    .map((node) => node.getBoundingClientRect()).filter((b) => b.width > 0);
                return boxes(over).some((t) => boxes(under).some((b) =>
                    t.left < b.right && b.left < t.right && t.top < b.bottom && b.top < t.bottom));
            }""",
            [over, under],
        )
    )


async def board_box(page: Page) -> list[float]:
    return list(
        await page.evaluate(
            "() => { const b = document.querySelector('svg.board').getBoundingClientRect();"
            " return [b.x, b.y, b.width, b.height]; }"
        )
    )


OFFLINE = "ERR_INTERNET_DISCONNECTED"  # Chromium logs each attempt made offline: expected


async def test_on_a_phone_nothing_covers_the_turn_banner(
    browser: Browser, site: GameServer
) -> None:
    """Outside review ui22, finding 3: at 360x740 the wall bar ("Wall b6v? Place wall / Rotate
    / Cancel") and the toasts (the tip, a refusal, "Not connected") covered "Your move"; offline
    the toast left the banner's last word showing under it. The column under the board makes
    room for them instead; the board stays where it is."""
    alice = await open_player(browser, site, "Alice", viewport=(360, 740), touch=True)
    code = await create_room(alice, size=9)
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}")
    page = alice.page
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert await page.evaluate("() => document.body.dataset.seat") == "0"
    toast = page.locator("#toast")
    board = await board_box(page)

    async def readable(banner: str) -> None:
        await page.locator(".banner").filter(has_text=banner).wait_for()
        for over in ("#toast", ".wallbar", "svg.board"):
            assert not await covered(page, over, ".banner"), over
        assert not await covered(page, "#toast", ".wallbar")
        assert not await covered(page, "#toast", NEEDED)
        # Its words within its box: squeezed, its second line spilt under it ("back").
        assert await page.locator(".banner").evaluate("(b) => b.scrollHeight <= b.clientHeight")
        box = await page.locator(".banner").bounding_box()
        assert box is not None
        assert box["y"] + box["height"] <= 740
        assert await board_box(page) == board

    await toast.filter(has_text="a dot to step").wait_for()
    await readable("Your move")
    await page.touchscreen.tap(*await alice.wall_point("e5h"))
    await page.locator(".wallbar").filter(has_text="Wall e5h?").wait_for()
    await readable("Your move")
    await page.touchscreen.tap(*await alice.square_center("a5"))
    await toast.filter(has_text="You can't move to a5").wait_for()
    await readable("Your move")
    await page.click(".wallbar button:has-text('Cancel')")
    await page.locator(".wallbar").wait_for(state="hidden")
    await readable("Your move")
    await alice.context.set_offline(True)
    await page.wait_for_function("() => document.body.dataset.link === 'offline'")
    await page.touchscreen.tap(*await alice.square_center("e2"))
    await toast.filter(has_text="Not connected").wait_for()
    await readable("Your move, once the connection is back")
    await toast.click()  # a tap hides it: the column goes back up under the board
    await toast.wait_for(state="hidden")
    assert (
        await page.evaluate("() => getComputedStyle(document.querySelector('.side')).marginTop")
        == "0px"
    )
    await alice.context.set_offline(False)
    await page.wait_for_function("() => document.body.dataset.link === 'online'")
    alice.errors[:] = [error for error in alice.errors if OFFLINE not in error]
    await close_all(alice, bob)


@pytest.mark.parametrize("viewport", [(360, 740), (1440, 900)])
async def test_the_board_stays_put_when_the_connection_drops(
    browser: Browser, site: GameServer, viewport: tuple[int, int]
) -> None:
    """Outside review ui22, finding 10: the "Connection lost" bar pushed a phone's board down
    and shrank a desktop's. It shows over the header instead, in full."""
    alice = await open_player(browser, site, "Alice", viewport=viewport, touch=viewport[0] < 800)
    code = await create_room(alice, size=9)
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}")
    page = alice.page
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    board = await board_box(page)
    await alice.context.set_offline(True)
    link = page.locator("#link")
    await link.wait_for(state="visible")
    assert await board_box(page) == board
    assert not await covered(page, "#link", "svg.board, .side")
    box = await link.bounding_box()
    assert box is not None
    assert box["y"] >= 0
    assert box["width"] == viewport[0]
    await alice.context.set_offline(False)
    await link.wait_for(state="hidden")
    assert await board_box(page) == board
    alice.errors[:] = [error for error in alice.errors if OFFLINE not in error]
    await close_all(alice, bob)


async def test_a_games_toast_goes_with_the_game(browser: Browser, site: GameServer) -> None:
    """Outside review ui22: a refusal said in a game still showed in the lobby a moment after
    leaving it."""
    (alice, bob), _ = await game_between(browser, site)
    page = alice.page
    await alice.click_square("a5")
    toast = page.locator("#toast")
    await toast.filter(has_text="You can't move to a5").wait_for()
    await page.click(".actions button.leave")
    await page.click(".actions button.leave-confirm")
    await page.wait_for_function("() => document.body.dataset.view === 'lobby'")
    assert await toast.is_hidden()
    await close_all(alice, bob)
