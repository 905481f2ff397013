"""What a move the page cannot take says, where the player looks (outside review ui24):
a square the pawn cannot reach (finding 2), and a move typed in the box, refused or typed out
of turn (finding 3)."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import GameServer
from tests.web.pages import close_all, game_between

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_square_the_pawn_cannot_reach_says_where_it_can_go(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    page = alice.page
    await page.wait_for_selector("circle.target")
    toast = page.locator("#toast")
    await alice.click_square("e4")
    await toast.filter(
        has_text="You can't move to e4: your pawn can go to the marked squares (b1, c2 and d1)."
    ).wait_for()
    await alice.click_square("c1")  # its own square
    await toast.filter(
        has_text="Your pawn is on c1: click one of the marked squares (b1, c2 and d1) to move it."
    ).wait_for()
    # Nothing was sent: the move is still Alice's, and a marked square moves.
    assert await page.evaluate("() => document.body.dataset.ply") == "0"
    await alice.click_square("c2")
    await bob.wait_ply(1)
    await close_all(alice, bob)


async def test_a_typed_move_says_what_became_of_it_under_the_box(
    browser: Browser, site: GameServer
) -> None:
    (alice, bob), _ = await game_between(browser, site)
    page = alice.page
    box = page.locator(".command input")
    why = page.locator(".command .command-why")
    # Refused: the server's reason under the box, the move selected so that typing replaces it.
    await box.fill("c3")
    await box.press("Enter")
    await why.filter(has_text="c3 is not one step or jump away from c1").wait_for()
    assert "refused" in (await why.get_attribute("class") or "")
    assert await box.evaluate(
        "(input) => document.activeElement === input"
        " && input.selectionStart === 0 && input.selectionEnd === input.value.length"
    )
    await page.keyboard.type("c2")
    assert await box.input_value() == "c2"
    assert await why.is_hidden()  # typing takes the old reason away
    await page.keyboard.press("Enter")
    await bob.wait_ply(1)
    # Out of turn: said under the box that it waits for the turn; played then, or refused
    # there, back in the box.
    await box.fill("e5")
    await box.press("Enter")
    await why.filter(
        has_text="It is Bob's turn: e5 is played when yours comes (Esc cancels it)."
    ).wait_for()
    assert "queued" in (await why.get_attribute("class") or "")
    await bob.click_square("c4")
    await why.filter(has_text="Premove e5 not played. e5 is not one step or jump away").wait_for()
    assert await box.input_value() == "e5"
    await close_all(alice, bob)
