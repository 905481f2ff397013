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
