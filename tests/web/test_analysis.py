"""The computer analysis in the browser's replay viewer, in a real Chromium."""

from __future__ import annotations

import colorsys
import re

import pytest
from playwright.async_api import Browser

from protocol.messages import (
    Create,
    History,
    HistoryList,
    Join,
    MoveRequest,
    Rematch,
    State,
    VariantSpec,
)
from server.app import GameServer
from tests.web.pages import close_all, create_room, open_player
from tests.wsclient import Client

pytestmark = pytest.mark.asyncio(loop_scope="session")

BLUNDER_GAME = "c2 d5 c3 d4 c4 b4h e4 d4h c4 d3 b4 d2 d1h c2 b3 c1".split()
"""5x5, two walls each: Alice's b3 (move 15) lets Bob in, where the wall b1h won."""


def hue_distance(first: str, second: str) -> float:
    """Degrees between the hues of two CSS ``rgb(r, g, b)`` colours."""
    hues = []
    for colour in (first, second):
        red, green, blue = (int(part) / 255 for part in re.findall(r"\d+", colour)[:3])
        hues.append(colorsys.rgb_to_hsv(red, green, blue)[0] * 360)
    apart = abs(hues[0] - hues[1])
    return min(apart, 360 - apart)


async def finished_game(site: GameServer) -> None:
    url = f"ws://127.0.0.1:{site.port}"
    alice, bob = await Client.connect(url, "Alice"), await Client.connect(url, "Bob")
    await alice.send(Create(variant=VariantSpec(size=5, walls=2)))
    while not isinstance(state := await alice.recv(), State):
        pass
    await bob.send(Join(room=state.room))
    for ply, move in enumerate(BLUNDER_GAME):
        await (alice, bob)[ply % 2].send(MoveRequest(move=move, ply=ply))
        while state.ply <= ply:
            message = await alice.recv()
            state = message if isinstance(message, State) else state
    await alice.close()
    await bob.close()


async def test_the_replay_shows_the_analysis_graph_bar_and_marks(
    browser: Browser, site: GameServer
) -> None:
    await finished_game(site)
    viewer = await open_player(browser, site, "Viewer", "/#/replay/1")
    await viewer.page.wait_for_function("() => document.body.dataset.replay === '16'")
    # The replay's board is not played on: its name says how to step, not "Enter plays".
    label = await viewer.page.locator("svg.board").get_attribute("aria-label")
    assert label is not None
    assert label.startswith("Replay board.")
    assert "Enter" not in label
    await viewer.page.click("text=Analyse")
    analysed = "() => document.body.dataset.analysed === '1'"
    await viewer.page.wait_for_function(analysed, timeout=60000)
    # The meter is named after the player, as the page names seats everywhere.
    assert await viewer.page.locator(".eval-bar").get_attribute("aria-label") == "Alice's chances"
    assert await viewer.page.locator(".eval-graph polyline").count() == 1
    blunder = viewer.page.locator('.movelist button[data-ply="15"]')
    assert await blunder.text_content() == "b3??"
    assert await blunder.get_attribute("title") == "blunder: better b1h"
    await blunder.click()
    await viewer.page.wait_for_function("() => document.body.dataset.replay === '15'")
    bar = await viewer.page.locator(".eval-bar").text_content()
    assert bar == "Alice's chances 0% · b3 blunder, better b1h"
    # The better move is drawn in no seat's colour: in the accent, it read as the reply
    # drawn beside it when the reply was red's (a newcomer's review).
    better, seats = await viewer.page.evaluate(
        """() => {
            const colour = (name) => {
                const probe = document.createElement('span');
                probe.style.color = `var(${name})`;
                document.body.append(probe);
                const found = getComputedStyle(probe).color;
                probe.remove();
                return found;
            };
            const hint = document.querySelector('[data-hint="b1h"]');
            return [getComputedStyle(hint).stroke, [colour('--seat0'), colour('--seat1')]];
        }"""
    )
    for seat in seats:  # hues apart, not just values (the accent was 11 degrees from red)
        assert hue_distance(better, seat) > 60, (better, seat)
    assert await viewer.page.locator(".reply.seat1").count() == 1
    # Shown, the blunder reads as the shown move does, not red on the accent (outside review
    # ui22, finding 11).
    shown, ink = await viewer.page.evaluate(
        """() => {
            const probe = document.createElement('span');
            probe.style.color = 'var(--accent-ink)';
            document.body.append(probe);
            const ink = getComputedStyle(probe).color;
            probe.remove();
            const shown = document.querySelector('.movelist button.shown.blunder');
            return [getComputedStyle(shown).color, ink];
        }"""
    )
    assert shown == ink
    assert viewer.errors == []
    await close_all(viewer)


async def test_a_finished_game_is_analysed_from_its_page_and_the_room_kept(
    browser: Browser, site: GameServer
) -> None:
    """The game's page offers its analysis once it ends (``result.game_id``); the replay
    goes back to the room, whose rematch is still open."""
    alice = await open_player(browser, site, "Alice")
    code = await create_room(alice)
    bob = await Client.connect(f"ws://127.0.0.1:{site.port}", "Bob")
    await bob.send(Join(room=code))
    await alice.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    # Alice walks up column c; Bob steps aside to d and walks down.
    for ply, move in enumerate("c2 d5 c3 d4 c4 d3 c5".split()):
        if ply % 2:
            await bob.send(MoveRequest(move=move, ply=ply))
        else:
            await alice.click_square(move)
        await alice.wait_ply(ply + 1)
    review = alice.page.locator(".actions button.review")
    assert await review.inner_text() == "Analyse"
    await review.click()
    await alice.page.wait_for_function("() => document.body.dataset.analysed !== undefined")
    game = await alice.page.evaluate("() => document.body.dataset.analysed")
    assert alice.page.url.endswith(f"#/replay/{game}/analyse")
    assert await alice.page.locator(".eval-graph polyline").count() == 1
    title = await alice.page.locator(".room-title").inner_text()
    assert title.startswith(f"Game {game} · 5\u00d75 · "), title  # and when it ended
    assert await alice.page.locator(".stepper button", has_text="Analyse").is_hidden()  # done
    # Each player's marks on their card; Alice's own game drawn from her side (row 1 down).
    stats = await alice.page.locator(".players .stats").all_inner_texts()
    assert len(stats) == 2
    for line in stats:
        assert re.fullmatch(r"\d+ inaccurac(y|ies) · \d+ mistakes? · \d+ blunders?", line), line
    (_, low), (_, high) = await alice.centers("c1", "c5")
    assert low > high
    # Bob, looking at it from the lobby, sees it from his side: row 5 down.
    bob_page = await open_player(browser, site, "Bob", f"/#/replay/{game}")
    await bob_page.page.wait_for_function("() => document.body.dataset.replay !== undefined")
    (_, top), (_, bottom) = await bob_page.centers("c1", "c5")
    assert top < bottom
    await close_all(bob_page)
    # Bob asks for a rematch meanwhile: the replay says so.
    await bob.send(Rematch())
    told = "Bob asks for a rematch: Back to the game to answer."
    await alice.page.locator("#toast").filter(has_text=told).wait_for()
    await alice.page.click("text=Back to the game")
    await alice.page.wait_for_function("() => document.body.dataset.view === 'game'")
    assert "You win" in await alice.banner()  # drawn at once, no event needed
    await alice.page.locator(".actions button", has_text="Accept rematch").wait_for()
    await bob.close()
    await close_all(alice)


async def test_on_a_phone_the_analysed_replay_keeps_its_caption_in_sight(
    browser: Browser, site: GameServer
) -> None:
    """On a phone the column holds the caption, the graph and the whole move list, and scrolls:
    showing the last move scrolled it and hid the caption; the list had a tiny scroll box of
    its own inside it (two reviews)."""
    await finished_game(site)
    client = await Client.connect(f"ws://127.0.0.1:{site.port}", "Look")
    await client.send(History(limit=1))
    (game,) = (await client.expect(HistoryList)).games
    await client.close()
    viewer = await open_player(
        browser, site, "Viewer", f"/#/replay/{game.game}/analyse", (360, 740), touch=True
    )
    page = viewer.page
    await page.wait_for_function(f"() => document.body.dataset.analysed === '{game.game}'")
    assert await page.evaluate("() => document.querySelector('.side').scrollTop") == 0
    # The list is whole in the column (no box of its own to scroll): the column scrolls.
    inner, shown = await page.evaluate(
        "() => { const p = document.querySelector('.panel.moves');"
        " return [p.scrollHeight, p.clientHeight]; }"
    )
    assert inner == shown
    assert await page.evaluate(
        "() => { const side = document.querySelector('.side');"
        " return side.scrollHeight > side.clientHeight; }"
    )
    caption = await page.locator(".replay .banner").inner_text()
    assert caption.startswith("Move 8 of 8: Bob moved to c1"), caption
    await close_all(viewer)
