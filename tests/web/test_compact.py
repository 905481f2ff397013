"""The browser client's compact move events (PROTOCOL.md, section 7a).

``applyMoved`` (web/connection.js), run by Node over random games played on the real
core, gives exactly the states sent in full; and in a real Chromium a page that misses a
``moved`` event asks for ``sync`` and shows the game as it is.
"""

from __future__ import annotations

import json
import random
import subprocess
from importlib.resources import files
from pathlib import Path
from typing import Literal

import msgspec
import pytest
from playwright.async_api import Browser, WebSocketRoute

from engine import Game
from protocol.codec import encode
from protocol.messages import (
    VERSION,
    Chat,
    ChatMessage,
    Create,
    Hello,
    Join,
    Joined,
    Moved,
    MoveRequest,
    State,
    VariantSpec,
    Watch,
)
from server.app import GameServer
from tests.server.driver import Driver
from tests.web.test_javascript import node
from tests.wsclient import Client

FOLD = """
import { applyChat, applyMoved } from %s;
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const game of JSON.parse(input)) {
  let held = null;
  const states = [];
  for (const message of game) {
    if (message.type === "state") held = message;
    else if (message.type === "chat_line") {
      held = applyChat(held, message);
      if (held === null) throw new Error(`chat ${message.event} does not follow`);
    } else {
      held = applyMoved(held, message);
      if (held === null) throw new Error(`moved ${message.event} does not follow`);
    }
    states.push(held);
  }
  out.push(states);
}
console.log(JSON.stringify(out));
"""


def random_game(rng: random.Random) -> tuple[list[bytes], list[bytes]]:
    """One game on the core, played to its end or 60 plies: what a compact spectator and a
    spectator without compact events were sent."""
    driver = Driver()
    conns = []
    for name, asks in (("a", True), ("b", False), ("c", True), ("d", False)):
        conn = driver.open()
        driver.send(conn, Hello(version=VERSION, name=name, compact=asks))
        conns.append(conn)
    a, b, compact_watcher, full_watcher = conns
    size: Literal[5, 7, 9] = rng.choice([5, 7, 9])
    driver.send(a, Create(variant=VariantSpec(size=size)))
    room = next(m for m in driver.inbox[a] if isinstance(m, Joined)).room
    driver.send(b, Join(room=room))
    driver.send(compact_watcher, Watch(room=room))
    driver.send(full_watcher, Watch(room=room))
    game = Game(2, size)
    while game.winner is None and game.ply < 60:
        driver.clock.advance(rng.random())
        if rng.random() < 0.1:  # a chat line: an event, which the next moved follows
            driver.send(a if rng.random() < 0.5 else b, Chat(text="nice"))
        move = rng.choice(game.legal_pawn_moves() + game.legal_walls())
        driver.send(a if game.turn == 0 else b, MoveRequest(move=move, ply=game.ply))
        game.play(move)
    kinds = (State, Moved, ChatMessage)
    compact = [encode(m) for m in driver.inbox[compact_watcher] if isinstance(m, kinds)]
    full = [encode(m) for m in driver.inbox[full_watcher] if isinstance(m, State)]
    return compact, full


def test_apply_moved_in_javascript_gives_exactly_the_states_sent_in_full() -> None:
    rng = random.Random(20)
    games = [random_game(rng) for _ in range(12)]
    module = json.dumps(Path(str(files("web").joinpath("connection.js"))).as_uri())
    source = (FOLD % module).encode()
    stdin = b"[" + b",".join(b"[" + b",".join(compact) + b"]" for compact, _ in games) + b"]"
    result = subprocess.run(
        [node(), "--input-type=module", "-e", source.decode()],
        input=stdin,
        capture_output=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    folded = json.loads(result.stdout)
    moved = 0
    for (compact, full), states in zip(games, folded, strict=True):
        moved += sum(b'"type":"moved"' in frame for frame in compact)
        # The states of the events after both watched (the watching itself is no event).
        by_event = {state["event"]: state for state in states}
        truth = [msgspec.json.decode(frame) for frame in full[1:]]
        assert len(truth) > 2
        assert [by_event[state["event"]] for state in truth] == truth
    assert moved > 100  # the games were mostly sent as ``moved`` events


async def until_ply(client: Client, ply: int) -> None:
    while True:
        message = await client.recv()
        if isinstance(message, State) and message.ply == ply:
            return


@pytest.mark.asyncio(loop_scope="session")
async def test_a_page_that_misses_a_moved_event_asks_for_sync(
    browser: Browser, site: GameServer
) -> None:
    url = f"ws://127.0.0.1:{site.port}"
    alice, bob = await Client.connect(url, "alice"), await Client.connect(url, "bob")
    await alice.send(Create(variant=VariantSpec(size=5)))
    room = (await alice.expect(Joined)).room
    await bob.send(Join(room=room))
    sent: list[str] = []
    dropped: list[str] = []

    def route(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def up(message: str | bytes) -> None:
            sent.append(str(message))
            server.send(message)

        def down(message: str | bytes) -> None:
            if '"type":"moved"' in str(message) and not dropped:
                dropped.append(str(message))  # lost on the way, once
                return
            ws.send(message)

        ws.on_message(up)
        server.on_message(down)

    context = await browser.new_context()
    await context.route_web_socket(lambda _: True, route)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    await page.goto(f"http://127.0.0.1:{site.port}/#/watch/{room}")
    await page.wait_for_function("() => document.body.dataset.status === 'playing'")
    plan = ["c2", "c4", "d3h", "c3", "b2h"]
    for ply, move in enumerate(plan):
        await (alice if ply % 2 == 0 else bob).send(MoveRequest(move=move, ply=ply))
        await until_ply(alice, ply + 1)
        await until_ply(bob, ply + 1)
    await page.wait_for_function(f"() => document.body.dataset.ply === '{len(plan)}'")
    assert json.loads(sent[0])["compact"] is True
    assert dropped
    assert sum('"type":"sync"' in message for message in sent) == 1
    walls = await page.locator("rect.wall").evaluate_all(
        "(walls) => walls.map((wall) => wall.dataset.wall).sort()"
    )
    assert walls == ["b2h", "d3h"]
    assert not errors, errors
    await context.close()
    await alice.close()
    await bob.close()
