"""Accounts and ratings in a real Chromium (PROTOCOL.md section 26): register, a
rated game to the end, new ratings, profiles, the leaderboard, logout, a wrong password."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from protocol.messages import (
    VERSION,
    Hello,
    LoggedIn,
    Register,
    Welcome,
)
from server.app import GameServer
from server.config import Config
from tests.web.pages import Player, close_all, create_room, open_player, resigned_game
from tests.wsclient import Client

pytestmark = pytest.mark.asyncio(loop_scope="session")

PASSWORD = "correct horse battery"
MINUS = "\u2212"  # the page writes a loss as a real minus sign


@pytest_asyncio.fixture(loop_scope="session")
async def rated_site(tmp_path: Path) -> AsyncIterator[GameServer]:
    """A server with a database (accounts need one), cheap password hashing, and
    ratings established after one game so the leaderboard has something to show."""
    config = Config(
        port=0,
        db=str(tmp_path / "accounts.db"),
        rate=1000,
        burst=1000,
        grace=30,
        deliberate_grace=30,
        argon2_time_cost=1,
        argon2_memory_kib=64,
        argon2_parallelism=1,
        provisional_games=1,
    )
    async with GameServer(config).running() as running:
        yield running


async def account_form(player: Player, name: str, password: str, button: str) -> None:
    page = player.page
    if not await page.locator(".login[open]").count():
        await page.click(".login summary")
    await page.fill(".login-form input[name=account]", name)
    await page.fill(".login-form input[name=password]", password)
    await page.click(f".login-form button:text-is('{button}')")


async def register(player: Player, name: str) -> None:
    await account_form(player, name, PASSWORD, "Register")
    await player.page.wait_for_selector(f".account .me:text-is('{name}')")
    await player.page.wait_for_function("() => document.body.dataset.link === 'online'")


async def signed_up(browser: Browser, site: GameServer, name: str) -> Player:
    """A browser whose player registered an account called ``name`` (a guest of that name
    before)."""
    player = await open_player(browser, site, name)
    await register(player, name)
    return player


async def rating_text(player: Player, seat: int) -> str:
    return (await player.page.locator(f".players .player.seat{seat} .rating").inner_text()).strip()


async def test_two_accounts_play_a_rated_game_and_see_their_new_ratings(
    browser: Browser, rated_site: GameServer
) -> None:
    alicia = await open_player(browser, rated_site, "Guest 1")
    bruno = await open_player(browser, rated_site, "Guest 2")
    await register(alicia, "Alicia")
    await register(bruno, "Bruno")
    # Logged in, the create form offers Rated, checked by default.
    assert await alicia.page.is_checked("form.create input[name=rated]")
    code = await create_room(alicia, size=5)
    await alicia.page.wait_for_selector(".room-title .rated-tag")
    await bruno.page.evaluate(f"location.hash = '#/room/{code}'")
    for player in (alicia, bruno):
        await player.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert await alicia.page.evaluate("document.body.dataset.seat") == "0"
    assert await rating_text(bruno, 0) == "1500? ·"
    assert await rating_text(alicia, 1) == "1500? ·"
    # A guest who opens the link may not sit in a rated room: the page watches instead.
    guest = await open_player(browser, rated_site, "Guest 9", f"/#/room/{code}")
    await guest.page.wait_for_function("() => document.body.dataset.role === 'spectator'")
    assert "log in to take a seat" in await guest.page.locator("#toast").inner_text()
    # c2 c4 d3h c3 c4 (jumping Bruno) c2 c5: Alicia wins on a 5x5 board.
    for ply, move in enumerate(["c2", "c4", "d3h", "c3", "c4", "c2", "c5"]):
        mover, other = (alicia, bruno) if ply % 2 == 0 else (bruno, alicia)
        if move.endswith("h"):
            await mover.place_wall(move)
        else:
            await mover.click_square(move)
        await other.wait_ply(ply + 1)
    # Both see both ratings move: the winner's up, the loser's down by as much.
    for player in (alicia, bruno):
        await player.page.wait_for_selector(".player.seat1 .rating-change")
        winner, loser = await rating_text(player, 0), await rating_text(player, 1)
        assert "+" in winner, winner
        assert MINUS in loser, loser
        gain = int(winner.split("+")[1].split()[0])
        loss = int(loser.split(MINUS)[1].split()[0])
        assert gain > 0
        assert loss > 0
        assert int(winner.split()[0]) == 1500 + gain
        assert int(loser.split()[0]) == 1500 - loss
    new_alicia = int((await rating_text(alicia, 0)).split()[0])
    new_bruno = int((await rating_text(alicia, 1)).split()[0])
    # Each opens the other's profile: the rating in the small-board pool and the record.
    for player, whose, rating, record in (
        (alicia, "Bruno", new_bruno, "1 game: 0 won, 1 lost, 0 drawn"),
        (bruno, "Alicia", new_alicia, "1 game: 1 won, 0 lost, 0 drawn"),
    ):
        if player is alicia:  # a rated room's names open the profiles
            await player.page.click(f".players a.name:text-is('{whose}')")
        else:
            await player.page.evaluate(f"location.hash = '#/profile/{whose.lower()}'")
        await player.page.wait_for_function(f"() => document.body.dataset.profile === '{whose}'")
        row = player.page.locator('.ratings tr[data-pool="small"] td.rating')
        assert (await row.inner_text()).strip() == str(rating)
        assert record in await player.page.locator(".profile .record").inner_text()
        assert "Alicia vs Bruno" in await player.page.locator(".recent").inner_text()
        # How it ended, and the other player's name opens their profile (a rated game).
        result = "won" if whose == "Alicia" else "lost"
        assert f"{result} · rated" in await player.page.locator(".recent").inner_text()
        opponent = "Bruno" if whose == "Alicia" else "Alicia"
        assert await player.page.locator(f".recent a:has-text('{opponent}')").count() == 1
        assert await player.page.locator(f".recent a:has-text('{whose}')").count() == 0
    # The leaderboard of the pool has both, the winner first. The pool is switched twice at
    # once, as a quick hand does: the server answers one account request at a time per
    # connection, so the page sends them in turn and draws the last pool picked (sent together,
    # the second was refused and the page showed the refusal).
    await alicia.page.evaluate("location.hash = '#/'")
    await alicia.page.wait_for_selector("select[name=pool]")
    await alicia.page.evaluate(
        """() => {
            const pool = document.querySelector("select[name=pool]");
            for (const value of ["9x9-blitz", "small"]) {
                pool.value = value;
                pool.dispatchEvent(new Event("change"));
            }
        }"""
    )
    await alicia.page.wait_for_selector(".leaderboard td a:text-is('Bruno')")
    leaders = await alicia.page.locator(".leaderboard tbody tr").all_inner_texts()
    assert [line.split("\t")[1] for line in leaders] == ["Alicia", "Bruno"]
    # Under it, her own rating in the pool shown (the leaderboard's are established only).
    mine = alicia.page.locator(".my-rating")
    await mine.filter(has_text=f"rating: {new_alicia}").wait_for()
    assert "1 game: 1 won, 0 lost, 0 drawn" in await mine.inner_text()
    await alicia.page.select_option("select[name=pool]", "9x9-blitz")
    await mine.filter(has_text="No 9\N{MULTIPLICATION SIGN}9 blitz rating of yours yet").wait_for()
    await close_all(alicia, bruno, guest)


async def test_logout_ends_the_token_and_a_wrong_password_is_told(
    browser: Browser, rated_site: GameServer
) -> None:
    carla = await open_player(browser, rated_site, "Guest 3")
    page = carla.page
    # A guest's games are casual: the create form has no Rated box (shown once logged in).
    rated = page.locator("form.create label.rated")
    assert await rated.is_hidden()
    await register(carla, "Carla")
    assert await rated.is_visible()
    token = await page.evaluate("localStorage.getItem('quoridor.login')")
    assert token
    await page.click("button.logout")
    await page.wait_for_selector(".account .name-form")
    assert await page.evaluate("localStorage.getItem('quoridor.login')") is None
    # The old token, presented again by a new tab, is refused: the page greets as a guest.
    await page.evaluate(
        f"""() => {{
            localStorage.setItem('quoridor.login', {token!r});
            localStorage.setItem('quoridor.account', 'Carla');
            sessionStorage.clear();
        }}"""
    )
    await page.reload()
    await page.wait_for_function("() => document.body.dataset.link === 'online'")
    await page.wait_for_selector(".account .name-form")
    assert "log in again" in await page.locator("#toast").inner_text()
    assert await page.evaluate("localStorage.getItem('quoridor.login')") is None
    # A wrong password is told in the form, and nothing changes.
    await account_form(carla, "carla", "not the password", "Log in")
    error = page.locator(".login-form .form-error")
    await error.wait_for()
    assert await error.inner_text() == "Unknown name or wrong password."
    assert await page.locator(".account .me").count() == 0
    # A taken name is told too; the right password logs in (the name in any case).
    await account_form(carla, "CARLA", PASSWORD, "Register")
    taken = "'CARLA' (or a name that looks like it) is taken."
    await error.filter(has_text=taken).wait_for()
    assert await error.inner_text() == taken
    # Why a name is refused, in the server's words ("taken or not allowed" said neither).
    for name, why in [
        ("al", "A name has 3 to 20 characters."),
        ("al!x", "A name has only letters, digits and _ - .; not “!” (exclamation mark)."),
    ]:
        await account_form(carla, name, PASSWORD, "Register")
        await error.filter(has_text=why).wait_for()
    # A refused name or password says which, and why.
    await account_form(carla, "Carlos12", "short", "Register")
    await page.wait_for_selector(
        ".form-error:text-is('That password is not allowed: a password has 8\u2013128 characters.')"
    )
    await account_form(carla, "Carlos12", "Carlos12", "Register")
    await page.wait_for_selector(".form-error:text-is('The password must differ from the name.')")
    await account_form(carla, "CARLA", PASSWORD, "Register")
    await page.click(".login-form button:text-is('Log in')")
    await page.wait_for_selector(".account .me:text-is('Carla')")
    # The password is changed beside "Log out" (there was no way to): the current one is
    # asked, a wrong one is told, and the page keeps its login (a reload still logs in).
    await page.click(".password summary")
    form = page.locator(".password .login-form")
    await form.locator("input[name=password]").fill("not the password")
    await form.locator("input[name=new-password]").fill("a new password")
    await form.locator("button:text-is('Change password')").click()
    await form.locator(".form-error:text-is('The current password is wrong.')").wait_for()
    await form.locator("input[name=password]").fill(PASSWORD)
    await form.locator("button:text-is('Change password')").click()
    toast = page.locator("#toast").filter(
        has_text="Password changed: your other logins have ended."
    )
    await toast.wait_for()
    await page.reload()
    await page.wait_for_selector(".account .me:text-is('Carla')")
    await page.click(".account .logout")
    await account_form(carla, "carla", PASSWORD, "Log in")  # the old one no longer opens it
    await error.filter(has_text="Unknown name or wrong password.").wait_for()
    await account_form(carla, "carla", "a new password", "Log in")
    await page.wait_for_selector(".account .me:text-is('Carla')")
    await close_all(carla)


async def test_a_guest_invited_to_a_rated_room_is_told_why_and_logs_in_to_take_the_seat(
    browser: Browser, rated_site: GameServer
) -> None:
    alicia = await signed_up(browser, rated_site, "Alicia")
    code = await create_room(alicia)  # "Rated" ticked, as by default
    await (
        alicia.page.locator(".room-note")
        .filter(has_text="only a player logged in to an account can take the free seat")
        .wait_for()
    )
    # A visitor who never chose a name: no name is asked for a seat only an account takes (a
    # review chose one, then learnt it could only watch): the room's note says why at once.
    fresh = "localStorage.removeItem('quoridor.name')"
    guest = await open_player(browser, rated_site, "", f"/#/room/{code}", script=fresh)
    note = guest.page.locator(".room-note")
    await note.filter(has_text="so you are watching").wait_for()
    assert await guest.page.locator(".join-as").count() == 0
    await asyncio.sleep(4)  # longer than a toast stays
    assert await note.is_visible()
    # Registering from the note greets again as the account and takes the seat.
    await account_form(guest, "Gina1", PASSWORD, "Register")
    await guest.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert await guest.page.evaluate("document.body.dataset.role") == "player"
    assert await note.is_hidden()
    await close_all(alicia, guest)


async def test_a_rated_room_can_be_made_casual_for_a_guest(
    browser: Browser, rated_site: GameServer
) -> None:
    alicia = await signed_up(browser, rated_site, "Alicia")
    code = await create_room(alicia)
    await alicia.page.click(".room-note button:has-text('Make a casual room instead')")
    await alicia.page.wait_for_function(
        f"() => /#\\/room\\/./.test(location.hash) && !location.hash.includes('{code}')"
    )
    await alicia.page.wait_for_selector(".banner.waiting")
    assert await alicia.page.locator(".rated-tag").count() == 0
    casual = alicia.page.url.rsplit("/", 1)[1]
    guest = await open_player(browser, rated_site, "Gina", f"/#/room/{casual}")
    await guest.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    assert await guest.page.evaluate("document.body.dataset.role") == "player"
    await close_all(alicia, guest)


async def test_a_chosen_wall_count_unticks_rated_and_says_why(
    browser: Browser, rated_site: GameServer
) -> None:
    alicia = await signed_up(browser, rated_site, "Alicia")
    page = alicia.page
    rated = page.locator("input[name=rated]")
    assert await rated.is_checked()
    await page.fill("input[name=walls]", "5")
    assert not await rated.is_checked()
    assert await rated.is_disabled()
    await page.locator(".rated-note").filter(has_text="standard number of walls").wait_for()
    await page.click("form.create button[type=submit]")
    await page.wait_for_selector(".banner.waiting")
    assert await page.locator(".rated-tag").count() == 0
    assert "rated" not in await page.locator("#toast").inner_text()
    await page.click(".actions button.leave")
    await page.wait_for_selector("input[name=walls]")
    await page.fill("input[name=walls]", "")
    assert await rated.is_checked()
    assert await rated.is_enabled()
    await close_all(alicia)


LONGEST_NAME = "Maximilianaugustusbartholomewxyz"  # 32 letters, as long as a name may be


async def registered_player(url: str, name: str) -> Client:
    """A client logged in to a new account called ``name``."""
    signing = await Client.connect(url, hello=False)
    await signing.send(Register(name=name, password=PASSWORD))
    token = (await signing.expect(LoggedIn)).token
    await signing.close()
    client = await Client.connect(url, hello=False)
    await client.send(Hello(version=VERSION, name=name, token=token))
    client.welcome = await client.expect(Welcome)
    return client


async def test_a_long_name_stays_inside_a_profiles_games_at_360px(
    browser: Browser, rated_site: GameServer
) -> None:
    """The profile's games list names each player in a span of its own, as the lobby's
    lists do: a guest's 32-letter name pushed the card past a phone's screen."""
    url = f"ws://127.0.0.1:{rated_site.port}"
    winner = await Client.connect(url, LONGEST_NAME)  # a guest: account names stop at 20
    await resigned_game(winner, await registered_player(url, "Bobby"))
    player = await open_player(browser, rated_site, "Carol", viewport=(360, 740))
    page = player.page
    await page.evaluate("location.hash = '#/profile/bobby'")
    names = page.locator(".profile-body td.names")
    await names.first.wait_for()
    card = page.locator(".card:has(.profile-body td.names)")
    scroll, box = await card.evaluate("(card) => [card.scrollWidth, card.clientWidth]")
    assert scroll <= box, f"the profile's games are {scroll} px wide inside {box} px"
    assert await page.evaluate("document.documentElement.scrollWidth") <= 360
    titles = await names.first.locator(".one-name").evaluate_all("(s) => s.map((e) => e.title)")
    assert LONGEST_NAME in titles
    await close_all(player)


async def test_resigning_a_rated_game_before_the_first_moves_says_it_aborts_it(
    browser: Browser, rated_site: GameServer
) -> None:
    """An outside review: Resign before any move in a rated game (which the server aborts:
    PROTOCOL.md, resign) said "Game aborted: you pressed Abort."."""
    alicia = await signed_up(browser, rated_site, "Alicia")
    bruno = await signed_up(browser, rated_site, "Bruno")
    code = await create_room(alicia, size=5)
    await bruno.page.evaluate(f"location.hash = '#/room/{code}'")
    for player in (alicia, bruno):
        await player.page.wait_for_function("() => document.body.dataset.status === 'playing'")
    await alicia.page.click(".actions button:has-text('Resign')")
    await alicia.page.click(".actions button:has-text('Really resign?')")
    said = "Game aborted: resigning before the first moves aborts a rated game."
    await alicia.page.locator(".banner").filter(has_text=said).wait_for()
    await bruno.page.locator(".banner").filter(has_text="Game aborted by Alicia before").wait_for()
    await close_all(alicia, bruno)


async def test_a_log_out_in_another_tab_is_followed_by_the_lobby(
    browser: Browser, rated_site: GameServer
) -> None:
    """The lobby went on saying "Logged in as ..." after a log-out in another tab, until a
    reload (an outside review): it follows at once, and a log-in too."""
    first = await signed_up(browser, rated_site, "Tabby")
    second = await first.context.new_page()
    await second.goto(first.page.url)
    await second.wait_for_selector(".account .me:text-is('Tabby')")
    await second.click(".account .logout")
    await first.page.locator(".account .me").wait_for(state="detached")
    await first.page.locator(
        ".account summary:text-is('Log in or register to play rated games')"
    ).wait_for()
    await first.page.locator("#toast").filter(has_text="Logged out in another tab").wait_for()
    await account_form(Player(first.context, second), "Tabby", PASSWORD, "Log in")
    await first.page.wait_for_selector(".account .me:text-is('Tabby')")
    await close_all(first)
