"""Small things a player sees on a phone (outside review ui22, finding 12): the board framed
in orange from the start, a player card splitting "8 to go" over two lines beside a clock, and
the chat box's focus ring cut at its edges."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, Page

from server.app import GameServer
from tests.web.pages import close_all, create_room, open_player

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def ringed(page: Page) -> bool:
    """Whether the board shows a focus ring."""
    style = "getComputedStyle(document.querySelector('svg.board')).outlineStyle"
    return bool(await page.evaluate(f"() => {style} !== 'none'"))


async def ring_clipped(page: Page, selector: str) -> bool:
    """Whether a box that clips (scrolls, or hides what overflows) cuts the focus ring (3 px,
    2 px off) round what ``selector`` finds."""
    return bool(
        await page.evaluate(
            """(selector) => {
                const node = document.querySelector(selector);
                const r = node.getBoundingClientRect();
                for (let box = node.parentElement; box; box = box.parentElement) {
                    const style = getComputedStyle(box);
                    if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
                    const b = box.getBoundingClientRect();
                    const left = b.left + box.clientLeft;
                    const top = b.top + box.clientTop;
                    if (r.left - 5 < left || r.top - 5 < top
                        || r.right + 5 > left + box.clientWidth
                        || r.bottom + 5 > top + box.clientHeight) return true;
                }
                return false;
            }""",
            selector,
        )
    )


async def test_a_phone_shows_no_ring_before_a_key_and_keeps_words_whole(
    browser: Browser, site: GameServer
) -> None:
    alice = await open_player(browser, site, "Alice")
    code = await create_room(alice, size=9, clock="60+0")
    bob = await open_player(browser, site, "Bob", f"/#/room/{code}", (360, 740), touch=True)
    page = bob.page
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    # The board has the focus, for a keyboard, but no ring until a key is used on it.
    assert await page.evaluate("() => document.activeElement.matches('svg.board')")
    assert not await ringed(page)
    await page.touchscreen.tap(*await bob.square_center("e5"))
    assert not await ringed(page)
    await page.keyboard.press("ArrowUp")
    assert await ringed(page)
    # Beside a clock, "8 to go" stays on one line.
    lines = await page.locator(".player .to-go").evaluate_all(
        "(spans) => spans.map((span) => span.getClientRects().length)"
    )
    assert lines == [1, 1]
    assert await page.locator(".player.you .to-go").inner_text() == "8 to go"
    # The chat box and the move box keep their whole focus ring (the toast gone: the column
    # under the board moves down to make room for it).
    await page.locator("#toast").wait_for(state="hidden", timeout=5000)
    await page.click(".tabs button:has-text('Chat')")
    assert await page.evaluate("() => document.activeElement.matches('.chatform input')")
    assert not await ring_clipped(page, ".chatform input")
    assert not await ring_clipped(page, "form.command input")
    assert not await ring_clipped(page, ".actions button")
    await close_all(alice, bob)


@pytest.mark.parametrize("viewport", [(1440, 900), (360, 740)])
async def test_the_new_game_checkboxes_are_one_size_whatever_their_label(
    browser: Browser, site: GameServer, viewport: tuple[int, int]
) -> None:
    """A check box whose label wraps to two lines ("Spectators may follow the evaluation (if
    every player allows it)") was squeezed by its label to 10 px, beside 13 px ones."""
    alice = await open_player(browser, site, "Alice", viewport=viewport)
    boxes = alice.page.locator(".lobby .checks input[type=checkbox]")
    await boxes.first.wait_for()
    sizes = set()
    for index in range(await boxes.count()):
        box = boxes.nth(index)
        if await box.is_visible():
            bounds = await box.bounding_box()
            assert bounds is not None
            sizes.add((round(bounds["width"]), round(bounds["height"])))
    assert len(sizes) == 1, sizes
    await close_all(alice)
