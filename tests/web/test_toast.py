"""Where the page's toasts go: over nothing a player needs (an outside review: on a phone the
first tip and the refusals covered the move list and the chat's input; on a desktop a refusal
stayed after the game had moved on)."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, Page

from server.app import GameServer
from tests.web.pages import close_all, create_room, open_player

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
    await page.fill("form.command input", "a5")
    await page.press("form.command input", "Enter")
    await toast.filter(has_text="a5 is not").wait_for()
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
    await page.fill("form.command input", "e3")  # a premove: the longest note, three lines
    await page.press("form.command input", "Enter")
    await toast.filter(has_text="is played when yours comes").wait_for()
    await clear_of_the_board()
    await close_all(alice, bob)
