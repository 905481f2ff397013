"""Players' names in the lobby's lists stay whole on a phone: an outside review saw the
Recent games list split "Comput" / "er L2" across lines at 360 px."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from protocol.messages import AiSpec, Create, Join, Joined, MoveRequest, Resign, State, VariantSpec
from server.app import GameServer
from server.config import Config
from tests.web.pages import close_all, open_player, resigned_game
from tests.wsclient import Client

pytestmark = pytest.mark.asyncio(loop_scope="session")

LINES_OF_EACH_WORD = """(words) => {
    const rows = [];
    for (const cell of document.querySelectorAll(".list td.names")) {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const word of words) {
                const at = node.data.indexOf(word);
                if (at < 0) continue;
                const range = document.createRange();
                range.setStart(node, at);
                range.setEnd(node, at + word.length);
                const rects = [...range.getClientRects()];
                const tops = new Set(rects.map((r) => Math.round(r.top)));
                // Cut short by an ellipsis: the word's text runs past its name's box.
                const box = node.parentElement.getBoundingClientRect();
                const whole = rects.every((r) => r.right <= box.right + 0.5);
                rows.push([word, tops.size, whole]);
            }
        }
    }
    return rows;
}"""
"""Each word found in the lists' names: the number of lines it is drawn on, and whether it
is shown whole (not cut short by an ellipsis)."""


async def resign_against_the_computer(site: GameServer, name: str) -> None:
    """A finished game between ``name`` and Computer L2, for the Recent games list."""
    client = await Client.connect(f"ws://127.0.0.1:{site.port}", name)
    await client.send(Create(ai=AiSpec(level=2)))
    await client.expect(Joined)
    await client.send(MoveRequest(move="e2", ply=0))
    while not isinstance(message := await client.recv(10), State) or message.ply < 2:
        pass
    await client.send(Resign())
    while not isinstance(message := await client.recv(), State) or message.status != "finished":
        pass
    await client.close()


@pytest.mark.parametrize("viewport", [(360, 740), (1440, 900)])
async def test_recent_games_never_split_a_word_of_a_name(
    browser: Browser, site: GameServer, viewport: tuple[int, int]
) -> None:
    await resign_against_the_computer(site, "Alexandra")
    await resign_against_the_computer(site, "Maximilianaugustus")
    player = await open_player(browser, site, "Carol", viewport=viewport)
    page = player.page
    await page.wait_for_selector(".list td.names:has-text('Maximilianaugustus')")
    words = ["Computer", "L2", "Alexandra", "Maximilianaugustus"]
    shown = await page.evaluate(LINES_OF_EACH_WORD, words)
    assert {word for word, _, _ in shown} == set(words)
    assert [word for word, lines, _ in shown if lines != 1] == []
    # Names of an ordinary length whole; a long one may end in an ellipsis, whole in its title.
    assert [w for w, _, whole in shown if not whole and w != "Maximilianaugustus"] == []
    titles = await page.locator(".list td.names .one-name").evaluate_all(
        "(names) => names.map((name) => name.title)"
    )
    assert "Maximilianaugustus" in titles
    # Nothing is pushed out of its card to keep them whole (the Replay buttons were).
    past = await page.evaluate(
        """() => [...document.querySelectorAll(".list")].filter((table) => {
            const card = table.closest(".card").getBoundingClientRect();
            return table.getBoundingClientRect().right > card.right;
        }).length"""
    )
    assert past == 0
    await close_all(player)


async def lose_to(site: GameServer, winner: str) -> None:
    """A finished game ``winner`` won, Bob resigning, for the Recent games list."""
    url = f"ws://127.0.0.1:{site.port}"
    await resigned_game(await Client.connect(url, winner), await Client.connect(url, "Bob"))


LONGEST_NAME = "Maximilianaugustusbartholomewxyz"  # 32 letters, as long as a name may be


@pytest.mark.parametrize("viewport", [(360, 740), (1440, 900)])
async def test_a_long_winners_name_stays_inside_the_recent_games_card(
    browser: Browser, site: GameServer, viewport: tuple[int, int]
) -> None:
    await lose_to(site, LONGEST_NAME)
    player = await open_player(browser, site, "Carol", viewport=viewport)
    page = player.page
    result = page.locator(".list td:has-text('won (by resignation)')")
    await result.wait_for()
    card = page.locator(".card:has(td:has-text('won (by resignation)'))")
    scroll, box = await card.evaluate("(card) => [card.scrollWidth, card.clientWidth]")
    assert scroll <= box, f"the Recent games card is {scroll} px wide inside {box} px"
    assert await page.evaluate("document.documentElement.scrollWidth") <= viewport[0]
    # Cut short (if at all) with its whole in the title.
    assert await result.locator(".one-name").get_attribute("title") == LONGEST_NAME
    await close_all(player)


async def test_a_game_won_by_absence_names_who_stayed_away_in_the_recent_games(
    browser: Browser,
) -> None:
    """ "Alice won (the opponent abandoned)" named nobody, and either player could be meant:
    the list says who stayed away, in the words of the game's banner."""
    config = Config(port=0, rate=1000, burst=1000, grace=1, deliberate_grace=1, hard_limit=1)
    async with GameServer(config).running() as site:
        url = f"ws://127.0.0.1:{site.port}"
        alice, bob = await Client.connect(url, "Alice"), await Client.connect(url, "Bob")
        await alice.send(Create(variant=VariantSpec(size=5)))
        room = (await alice.expect(Joined)).room
        await bob.send(Join(room=room))
        await bob.expect(Joined)
        for ply, (player, move) in enumerate(((alice, "c2"), (bob, "c4"))):
            await player.send(MoveRequest(move=move, ply=ply))
            while not isinstance(state := await alice.recv(), State) or state.ply != ply + 1:
                pass
        await bob.close()  # Bob goes, and stays away past the hard limit
        while not isinstance(state := await alice.recv(), State) or state.status != "finished":
            pass
        assert state.result is not None
        assert state.result.reason == "abandon"
        carol = await open_player(browser, site, "Carol")
        said = carol.page.locator(".list td:has-text('Alice won (Bob did not come back in time)')")
        await said.wait_for()
        await alice.close()
        await close_all(carol)


async def test_saving_a_blank_or_the_same_name_says_so(browser: Browser, site: GameServer) -> None:
    """An outside review: Save with a blank name, or the name already used, did nothing."""
    alice = await open_player(browser, site, "Alice")
    page, toast = alice.page, alice.page.locator("#toast")
    await page.fill(".name-form input[name=name]", "   ")
    await page.click(".name-form button[type=submit]")
    await toast.filter(has_text="A name needs at least one visible character").wait_for()
    await page.fill(".name-form input[name=name]", "Alice")
    await page.click(".name-form button[type=submit]")
    await toast.filter(has_text="You are already Alice").wait_for()
    await close_all(alice)
