"""The conformance kit: real server runs recorded as JSON Lines, for client authors.

Each scenario starts the real server in-process on a free port, opens real
websockets, sends requests and records every frame that crosses a socket, in
both directions, one JSON object per line (see PROTOCOL.md section 25)::

    {"conn": "alice", "dir": "open"}
    {"conn": "alice", "dir": "send", "frame": {"type": "hello", ...}}
    {"conn": "alice", "dir": "recv", "frame": {"type": "welcome", ...}}
    {"conn": "alice", "dir": "send", "raw": "{not json"}
    {"conn": "alice", "dir": "close", "code": 1006}

Random and timing-dependent values are normalised so that two runs write the
same bytes: room codes, session ids, resume tokens and seat secrets become
``ROOM-1``, ``SESSION-1``, ``TOKEN-1``, ``SECRET-1``... (numbered in order of
first appearance in a server frame, the same value always the same placeholder, in
the client's later frames and in messages too);
``finished`` times become a fixed date; clock times (``remaining_ms``) and
absence countdowns (``claim_in_ms``) are rounded to 100 ms; the first-move countdown
(``first_move_in_ms``, 60 s less the moments a busy machine took) and the thinking limit's
(``move_claim_in_ms``, 600 s less as much) up to whole 10 s.

Usage::

    python -m tests.protocol.kit            # rewrite protocol/transcripts/*.jsonl
    python -m tests.protocol.kit --check    # exit 1 if a file differs from a fresh run

``tests/protocol/test_kit.py`` runs the check.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from protocol.messages import VERSION
from server.app import GameServer
from server.config import Config

HERE = Path(__file__).resolve().parents[2] / "protocol" / "transcripts"
TIMEOUT = 5.0
FINISHED = 1767225600.0
"""What every ``finished`` time becomes (2026-01-01 00:00 UTC)."""
ROUND_MS = 100
FIRST_MOVE_ROUND_MS = 10_000

Json = dict[str, Any]
PLACEHOLDERS = {
    "room": "ROOM",
    "session": "SESSION",
    "resume_token": "TOKEN",
    "resume": "TOKEN",
    "secret": "SECRET",
}
"""Fields whose string values are random, and the placeholder each becomes."""


class Recorder:
    """Real connections to one server, and every frame that crossed them, in order."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sockets: dict[str, ClientConnection] = {}
        self.lines: list[Json] = []

    async def open(self, name: str) -> None:
        self.sockets[name] = await connect(self.url, compression=None)
        self.lines.append({"conn": name, "dir": "open"})

    async def send(self, name: str, frame: Json | str, expect: dict[str, int]) -> list[Json]:
        """Send ``frame`` (a string goes as it is: a malformed frame) from ``name``, then
        take ``expect[c]`` frames at each connection ``c``: the sender's first, then the
        others in the order given. Returns the frames taken."""
        if isinstance(frame, str):
            self.lines.append({"conn": name, "dir": "send", "raw": frame})
            await self.sockets[name].send(frame)
        else:
            self.lines.append({"conn": name, "dir": "send", "frame": frame})
            await self.sockets[name].send(json.dumps(frame, separators=(",", ":")))
        order = {name: expect.pop(name, 0), **expect}
        return await self.receive(order)

    async def receive(self, expect: dict[str, int]) -> list[Json]:
        """Take ``expect[c]`` frames at each connection ``c``, in the order given (for
        frames the server pushes on its own: a flag, the next game of a match)."""
        taken = []
        for name, count in expect.items():
            for _ in range(count):
                raw = await asyncio.wait_for(self.sockets[name].recv(), TIMEOUT)
                frame: Json = json.loads(raw)
                self.lines.append({"conn": name, "dir": "recv", "frame": frame})
                taken.append(frame)
        return taken

    async def closed(self, name: str) -> None:
        """The server closed ``name``: record its close code."""
        ws = self.sockets.pop(name)
        await asyncio.wait_for(ws.wait_closed(), TIMEOUT)
        self.lines.append({"conn": name, "dir": "close", "code": ws.close_code})

    async def drop(self, name: str) -> None:
        """The link dies without a close handshake (what the client sees is 1006)."""
        self.sockets.pop(name).transport.abort()
        self.lines.append({"conn": name, "dir": "close", "code": 1006})

    async def close(self, name: str) -> None:
        """A clean close by the client (1000)."""
        await self.sockets.pop(name).close()
        self.lines.append({"conn": name, "dir": "close", "code": 1000})

    async def quiet(self, name: str, seconds: float = 0.1) -> None:
        """Nothing more arrives at ``name`` for a moment (a scenario's own check)."""
        try:
            extra = await asyncio.wait_for(self.sockets[name].recv(), seconds)
        except (TimeoutError, ConnectionClosed):
            return
        raise AssertionError(f"{name} got an unexpected frame: {extra!r}")

    async def leave_all(self, names: list[str], rid: int | str = 99) -> None:
        """Each of ``names`` leaves its room in turn; those still there are told."""
        for index, name in enumerate(names):
            told = dict.fromkeys(names[index + 1 :], 1)
            await self.send(name, {"type": "leave", "id": rid}, {name: 1, **told})

    async def close_all(self) -> None:
        """Close every connection cleanly, once nothing more is on its way to any."""
        for name in self.sockets:
            await self.quiet(name)
        for name in list(self.sockets):
            await self.close(name)


def hello(name: str, rid: int | str = 1, **extra: Any) -> Json:
    return {"type": "hello", "id": rid, "version": VERSION, "name": name, **extra}


def last(frames: list[Json], kind: str) -> Json:
    return next(f for f in reversed(frames) if f["type"] == kind)


# -- the scenarios ----------------------------------------------------------------


async def two_player_game(rec: Recorder) -> None:
    """A whole untimed game on 5x5: a chat line, walls, every move error, a resend, a jump,
    a declined draw offer, the win; then the history, the record and a replay."""
    await rec.open("alice")
    await rec.send("alice", hello("alice"), {"alice": 1})
    created = await rec.send(
        "alice", {"type": "create", "id": 2, "variant": {"size": 5, "walls": 3}}, {"alice": 2}
    )
    room = last(created, "joined")["room"]
    await rec.open("bob")
    await rec.send("bob", hello("bob", "b-1"), {"bob": 1})
    await rec.send("bob", {"type": "list_rooms", "id": "b-2"}, {"bob": 1})
    await rec.send("bob", {"type": "join", "id": "b-3", "room": room}, {"bob": 2, "alice": 1})
    both = {"alice": 1, "bob": 1}
    await rec.send("bob", {"type": "chat", "id": "b-4", "text": "good luck!"}, dict(both))
    plays = [
        ("alice", "c2", 0, both),
        ("bob", "c4", 1, both),
        ("alice", "d3h", 2, both),
        ("bob", "d3v", 3, {"bob": 1}),  # illegal_move: crosses d3h
        ("bob", "c3", 3, both),
        ("bob", "c3", 3, {"bob": 1}),  # a resend: answered, not applied again
        ("alice", "c4", 4, both),  # a jump over bob
        ("alice", "c5", 4, {"alice": 1}),  # stale_ply: ply 4 is played
    ]
    for number, (who, move, ply, expect) in enumerate(plays, 3):
        request = {"type": "move", "id": number, "move": move, "ply": ply}
        await rec.send(who, request, dict(expect))
    await rec.send("bob", {"type": "draw", "id": "b-5", "action": "offer"}, dict(both))
    await rec.send("alice", {"type": "draw", "id": 20, "action": "decline"}, dict(both))
    await rec.send("alice", {"type": "move", "id": 21, "move": "c5", "ply": 5}, {"alice": 1})
    await rec.send("bob", {"type": "move", "id": "b-6", "move": "c2", "ply": 5}, dict(both))
    await rec.send("alice", {"type": "move", "id": 22, "move": "c5", "ply": 6}, dict(both))
    listed = await rec.send("alice", {"type": "history", "id": 23}, {"alice": 1})
    game = listed[0]["games"][0]
    await rec.send("alice", {"type": "fetch_game", "id": 24, "game": game["game"]}, {"alice": 1})
    moves = ["c2", "c4", "d3h", "c3", "c4", "c2", "c5"]
    replay = {"type": "replay", "id": 25, "variant": {"size": 5, "walls": 3}, "moves": moves}
    await rec.send("alice", replay, {"alice": 1})
    await rec.send("alice", {"type": "leave", "id": 26}, dict(both))
    await rec.send("bob", {"type": "leave", "id": "b-7"}, {"bob": 1})
    await rec.close_all()


async def errors(rec: Recorder) -> None:
    """Every error a lone client can provoke, each answered, nothing changed."""
    await rec.open("eve")
    await rec.send("eve", {"type": "ping", "id": 1}, {"eve": 1})
    await rec.send("eve", {"type": "list_rooms", "id": 2}, {"eve": 1})  # hello_required
    await rec.send("eve", {"type": "hello", "id": 3, "version": "1.0"}, {"eve": 1})  # no name
    await rec.send("eve", hello("eve", 4), {"eve": 1})
    await rec.send("eve", hello("eve", 5), {"eve": 1})  # already_greeted
    await rec.send("eve", "{not json", {"eve": 1})
    await rec.send("eve", {"type": "dance", "id": 6}, {"eve": 1})
    await rec.send("eve", {"type": "move", "id": 7, "move": "e2"}, {"eve": 1})  # no ply
    await rec.send("eve", {"type": "move", "id": 1.5, "move": "e2", "ply": 0}, {"eve": 1})
    await rec.send("eve", {"type": "create", "id": 8, "variant": {"size": 6}}, {"eve": 1})
    await rec.send("eve", {"type": "join", "id": 9, "room": "nosuchroom"}, {"eve": 1})
    await rec.send("eve", {"type": "leave", "id": 10}, {"eve": 1})  # not_in_room
    await rec.send("eve", {"type": "move", "id": 11, "move": "e2", "ply": 0}, {"eve": 1})
    await rec.send("eve", {"type": "fetch_game", "id": 12, "game": 999}, {"eve": 1})
    await rec.send("eve", {"type": "create", "id": 13}, {"eve": 2})
    await rec.send("eve", {"type": "create", "id": 14}, {"eve": 1})  # already_in_room
    await rec.send("eve", {"type": "move", "id": 15, "move": "e2", "ply": 0}, {"eve": 1})
    await rec.send("eve", {"type": "rematch", "id": 16}, {"eve": 1})  # game_not_over
    await rec.open("mallory")
    await rec.send("mallory", hello("mallory", resume="not-a-token"), {"mallory": 1})
    await rec.send("mallory", {"type": "hello", "id": 2, "version": "2.0", "name": "m"}, {})
    await rec.receive({"mallory": 1})
    await rec.closed("mallory")
    await rec.close_all()


async def resume_with_replay(rec: Recorder) -> None:
    """Alice's link dies mid-game; Bob chats; Alice resumes with `last_event` and gets the
    events she missed replayed, then the state showing her back."""
    await rec.open("alice")
    welcome = (await rec.send("alice", hello("alice"), {"alice": 1}))[0]
    created = await rec.send(
        "alice", {"type": "create", "id": 2, "variant": {"size": 5}}, {"alice": 2}
    )
    room = last(created, "joined")["room"]
    await rec.open("bob")
    await rec.send("bob", hello("bob"), {"bob": 1})
    await rec.send("bob", {"type": "join", "id": 2, "room": room}, {"bob": 2, "alice": 1})
    both = {"alice": 1, "bob": 1}
    await rec.send("alice", {"type": "move", "id": 3, "move": "c2", "ply": 0}, dict(both))
    moved = await rec.send("bob", {"type": "move", "id": 3, "move": "c4", "ply": 1}, dict(both))
    seen = moved[-1]["event"]
    await rec.drop("alice")
    await rec.receive({"bob": 1})  # alice away, the claim countdown running
    await rec.send("bob", {"type": "chat", "id": 4, "text": "still there?"}, {"bob": 1})
    await rec.open("alice-2")
    resume = hello("alice", resume=welcome["resume_token"], last_event=seen)
    # welcome, the state of alice going away and the chat line replayed, the state of her return
    await rec.send("alice-2", resume, {"alice-2": 4, "bob": 1})
    await rec.send("alice-2", {"type": "move", "id": 5, "move": "c3", "ply": 2}, {
        "alice-2": 1, "bob": 1})  # fmt: skip
    await rec.leave_all(["alice-2", "bob"])
    await rec.close_all()


FOUR = ["ann", "ben", "cat", "dan"]


async def four_player_flag(rec: Recorder) -> None:
    """A timed four-player game: every seat's first move is free, then seat 0's clock runs
    out and the server pushes the flag by itself; seat 1 plays on."""
    for number, name in enumerate(FOUR):
        await rec.open(name)
        await rec.send(name, hello(name), {name: 1})
        if number == 0:
            create = {"type": "create", "id": 2, "variant": {"players": 4}, "clock": {"base": 0.5}}
            room = last(await rec.send(name, create, {name: 2}), "joined")["room"]
        else:
            join = {"type": "join", "id": 2, "room": room}
            await rec.send(name, join, {name: 2, **dict.fromkeys(FOUR[:number], 1)})
    everyone = dict.fromkeys(FOUR, 1)
    for ply, (name, move) in enumerate(zip(FOUR, ["e2", "b5", "e8", "h5"], strict=True)):
        await rec.send(name, {"type": "move", "id": 3, "move": move, "ply": ply}, dict(everyone))
    await rec.receive(dict(everyone))  # the flag: ann is out, ben's clock runs
    await rec.send("ben", {"type": "move", "id": 4, "move": "c5", "ply": 4}, dict(everyone))
    await rec.leave_all(FOUR)
    await rec.close_all()


async def match(rec: Recorder) -> None:
    """A two-game match on 5x5 without walls: each player opens once; the second game
    starts by itself with the seats turned; then both ask for a rematch: a new match."""
    await rec.open("carol")
    await rec.send("carol", hello("carol"), {"carol": 1})
    create = {"type": "create", "id": 2, "variant": {"size": 5, "walls": 0}, "match": True}
    room = last(await rec.send("carol", create, {"carol": 2}), "joined")["room"]
    await rec.open("dave")
    await rec.send("dave", hello("dave"), {"dave": 1})
    await rec.send("dave", {"type": "join", "id": 2, "room": room}, {"dave": 2, "carol": 1})
    both = {"carol": 1, "dave": 1}
    race = ["c2", "d5", "c3", "d4", "c4", "d3", "c5"]
    for ply, move in enumerate(race[:-1]):
        who = ("carol", "dave")[ply % 2]
        await rec.send(who, {"type": "move", "id": 10 + ply, "move": move, "ply": ply}, dict(both))
    # Game 1 ends: its final state, then each player's new seat, then game 2.
    final = {"type": "move", "id": 16, "move": "c5", "ply": 6}
    await rec.send("carol", final, {"carol": 3, "dave": 3})
    for ply, move in enumerate(race):
        who = ("dave", "carol")[ply % 2]
        expect = dict(both) if ply < len(race) - 1 else {"carol": 1, "dave": 1}
        await rec.send(who, {"type": "move", "id": 20 + ply, "move": move, "ply": ply}, expect)
    await rec.send("carol", {"type": "rematch", "id": 30}, dict(both))
    await rec.send("dave", {"type": "rematch", "id": 31}, {"dave": 2, "carol": 2})
    await rec.leave_all(["carol", "dave"])
    await rec.close_all()


Scenario = Callable[[Recorder], Awaitable[None]]
SCENARIOS: dict[str, tuple[Scenario, Config]] = {
    "two_player_game": (two_player_game, Config(port=0)),
    "errors": (errors, Config(port=0)),
    "resume_with_replay": (resume_with_replay, Config(port=0)),
    "four_player_flag": (four_player_flag, Config(port=0)),
    "match": (match, Config(port=0)),
}


# -- recording and normalising ----------------------------------------------------


async def run(scenario: Scenario, config: Config) -> list[Json]:
    """Play ``scenario`` against a fresh real server; its lines, not yet normalised."""
    async with GameServer(config).running() as server:
        rec = Recorder(f"ws://127.0.0.1:{server.port}")
        try:
            await scenario(rec)
        finally:
            for ws in rec.sockets.values():
                await ws.close()
        return rec.lines


class Normaliser:
    """Stable stand-ins for the random and timing-dependent parts of a recording."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.counts: dict[str, int] = {}

    def placeholder(self, kind: str, value: str) -> str:
        if value not in self.names:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.names[value] = f"{kind}-{self.counts[kind]}"
        return self.names[value]

    def collect(self, node: Any) -> None:
        """Give every random value a placeholder, in order of first appearance."""
        if isinstance(node, dict):
            for key, value in node.items():
                if key in PLACEHOLDERS and isinstance(value, str):
                    self.placeholder(PLACEHOLDERS[key], value)
                else:
                    self.collect(value)
        elif isinstance(node, list):
            for value in node:
                self.collect(value)

    def apply(self, node: Any, key: str = "") -> Any:
        if isinstance(node, dict):
            return {k: self.apply(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [self.apply(v, key) for v in node]
        if isinstance(node, str):
            for value, name in self.names.items():
                node = node.replace(value, name)
            return node
        if key == "finished" and isinstance(node, float):
            return FINISHED
        if key in ("first_move_in_ms", "move_claim_in_ms") and isinstance(node, int):
            return -(-node // FIRST_MOVE_ROUND_MS) * FIRST_MOVE_ROUND_MS
        if key in ("remaining_ms", "claim_in_ms") and isinstance(node, int):
            return round(node / ROUND_MS) * ROUND_MS
        return node


def normalise(lines: list[Json]) -> list[Json]:
    normaliser = Normaliser()
    for line in lines:
        if line["dir"] == "recv":  # the server's random values; a client's own stay as sent
            normaliser.collect(line["frame"])
    return [normaliser.apply(line) for line in lines]


def render(lines: list[Json]) -> str:
    return "".join(
        json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines
    )


async def generate() -> dict[Path, str]:
    """Every transcript file and the text a fresh run gives it."""
    files = {}
    for name, (scenario, config) in SCENARIOS.items():
        files[HERE / f"{name}.jsonl"] = render(normalise(await run(scenario, config)))
    return files


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.protocol.kit",
        description="Record the conformance transcripts (protocol/transcripts/*.jsonl).",
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 on drift")
    args = parser.parse_args(argv)
    files = asyncio.run(generate())
    if args.check:
        stale = [p for p, text in files.items() if not p.exists() or p.read_text("utf-8") != text]
        for path in stale:
            print(f"{path.name} drifted: run `python -m tests.protocol.kit`", file=sys.stderr)
        return 1 if stale else 0
    HERE.mkdir(exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
