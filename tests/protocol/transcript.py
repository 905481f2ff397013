"""Record a real game between two clients and print it as annotated markdown.

The transcript in PROTOCOL.md is this script's output, pasted. It starts the
real server in-process on a free port, connects two websocket clients, Alice
and Bob, and plays a complete game on a 5x5 board: a chat line, a wall, a move
the server rejects, a resend of an applied move, a jump, a draw offer that is
declined, a move out of turn and a win.
Every frame in both directions is recorded exactly as it crossed the socket.

Usage::

    python -m tests.protocol.transcript > transcript.md

Session ids, tokens, secrets and the room code are random, so two runs differ
in those values only.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from protocol.messages import VERSION
from server.app import GameServer
from server.config import Config

SERVER = "server"
TIMEOUT = 5.0
"""Seconds to wait for each expected frame before giving up."""

Json = dict[str, Any]


@dataclass(frozen=True)
class Frame:
    """One websocket text frame: who sent it, who received it, and its exact text."""

    sender: str
    recipients: tuple[str, ...]
    raw: str

    @property
    def from_client(self) -> bool:
        return self.sender != SERVER

    @property
    def message(self) -> Json:
        decoded: Json = json.loads(self.raw)
        return decoded


@dataclass
class Step:
    """One request and everything the server sent because of it."""

    title: str
    note: str
    frames: list[Frame] = field(default_factory=list)


class Player:
    """A bare client: a websocket, a name, and the last ``state`` it received."""

    def __init__(self, name: str, ws: ClientConnection) -> None:
        self.name = name
        self.ws = ws
        self.state: Json | None = None
        self.room: str | None = None

    async def receive(self) -> str:
        frame = await asyncio.wait_for(self.ws.recv(), TIMEOUT)
        assert isinstance(frame, str), "the server sends text frames only"
        message = json.loads(frame)
        if message["type"] == "state":
            self.state = message
        elif message["type"] == "error" and message.get("state") is not None:
            self.state = message["state"]
        elif message["type"] == "joined":
            self.room = message["room"]
        return frame

    @property
    def ply(self) -> int:
        assert self.state is not None
        ply: int = self.state["ply"]
        return ply


class Recorder:
    """Plays requests one at a time and records what each one caused."""

    def __init__(self, players: list[Player]) -> None:
        self.players = players
        self.steps: list[Step] = []

    async def say(
        self,
        player: Player,
        request: Json,
        title: str,
        note: str,
        expect: dict[Player, int],
    ) -> Step:
        """Send ``request`` from ``player``; wait for ``expect[p]`` frames at each player."""
        step = Step(title, note)
        raw = json.dumps(request, separators=(",", ":"))
        step.frames.append(Frame(player.name, (SERVER,), raw))
        await player.ws.send(raw)
        received: dict[Player, list[str]] = {}
        for target in self.players:
            count = expect.get(target, 0)
            try:
                received[target] = [await target.receive() for _ in range(count)]
            except TimeoutError:
                raise RuntimeError(
                    f"step {title!r}: {target.name} expected {count} frames"
                ) from None
        step.frames += self._merge(player, received)
        self.steps.append(step)
        return step

    def _merge(self, first: Player, received: dict[Player, list[str]]) -> list[Frame]:
        """One frame per distinct payload, listing everyone who got it (the sender first)."""
        order = [first, *(p for p in self.players if p is not first)]
        pending = {p: list(received.get(p, [])) for p in order}
        frames: list[Frame] = []
        for player in order:
            while pending[player]:
                raw = pending[player].pop(0)
                recipients = [player.name]
                for other in order:
                    if other is not player and raw in pending[other]:
                        pending[other].remove(raw)
                        recipients.append(other.name)
                frames.append(Frame(SERVER, tuple(recipients), raw))
        return frames


async def play(server_url: str) -> list[Step]:
    """Play the transcript's game against the server at ``server_url``."""
    alice = Player("alice", await connect(server_url, compression=None))
    bob = Player("bob", await connect(server_url, compression=None))
    rec = Recorder([alice, bob])
    try:
        await _game(rec, alice, bob)
    finally:
        await alice.ws.close()
        await bob.ws.close()
    return rec.steps


async def _game(rec: Recorder, alice: Player, bob: Player) -> None:
    both = {alice: 1, bob: 1}

    await rec.say(
        alice,
        {"type": "hello", "id": 1, "version": VERSION, "name": "alice"},
        "Alice says hello",
        "The first frame of every connection. The `welcome` echoes the request `id`, names"
        " the new session and hands out a `resume_token`: keep it secret, it takes the"
        " session back after a lost connection.",
        {alice: 1},
    )
    await rec.say(
        alice,
        {"type": "create", "id": 2, "variant": {"players": 2, "size": 5, "walls": 3}},
        "Alice creates a room",
        "A public, untimed two-player room on a 5x5 board with 3 walls each. Alice gets"
        " seat 0 and its `secret`, then the room's first `state` (event 1): `waiting`, since"
        " seat 1 is free. A state pushed because someone joined, left or lost their"
        " connection carries `id: null`; `clock` and `match` are null in an untimed,"
        " single-game room.",
        {alice: 2},
    )
    await rec.say(
        bob,
        {"type": "hello", "id": "b-1", "version": VERSION, "name": "bob"},
        "Bob says hello",
        "Ids are chosen by the client: integers or strings, as it likes.",
        {bob: 1},
    )
    await rec.say(
        bob,
        {"type": "list_rooms", "id": "b-2"},
        "Bob lists the public rooms",
        "Public rooms that are not finished, newest first, with their time control and"
        " whether they play a match.",
        {bob: 1},
    )
    assert alice.room is not None
    await rec.say(
        bob,
        {"type": "join", "id": "b-3", "room": alice.room},
        "Bob joins Alice's room",
        "Bob takes the first free seat, 1. Every seat is taken, so the game starts: event 2"
        " goes to everyone in the room, `status` is `playing`, `game` is 1, seat 0 (Alice,"
        " on c1) is to move, and `legal_pawn_moves` lists where she may step.",
        {bob: 2, alice: 1},
    )
    await rec.say(
        bob,
        {"type": "chat", "id": "b-4", "text": "good luck!"},
        "Bob chats",
        "A chat line goes to everyone in the room, Bob included, with Bob's request id. It"
        " is a room event too: it takes event number 3, so the next state is event 4.",
        both,
    )
    await rec.say(
        alice,
        {"type": "move", "id": 3, "move": "c2", "ply": alice.ply},
        "Alice steps forward",
        "A move names the ply it is meant for: the `ply` of the state it answers. The"
        " resulting state (event 4) goes to both players and carries Alice's request id;"
        " `last_move` says who moved.",
        both,
    )
    await rec.say(
        bob,
        {"type": "move", "id": "b-5", "move": "c4", "ply": bob.ply},
        "Bob steps forward",
        "Bob's move carries Bob's id, and Alice receives it too: match a state to your own"
        " request by `id` *and* `last_move.seat`.",
        both,
    )
    await rec.say(
        alice,
        {"type": "move", "id": 4, "move": "d3h", "ply": alice.ply},
        "Alice places a wall",
        "`d3h` is a horizontal wall below d4 and e4. Alice's `walls_left` drops to 2.",
        both,
    )
    await rec.say(
        bob,
        {"type": "move", "id": "b-6", "move": "d3v", "ply": bob.ply},
        "Bob tries an illegal wall",
        "`d3v` would cross `d3h` at its midpoint. The server answers Bob alone with"
        " `illegal_move` and attaches the current state; it is not a new event (still 6) and"
        " nothing changed.",
        {bob: 1},
    )
    ply = bob.ply
    await rec.say(
        bob,
        {"type": "move", "id": "b-7", "move": "c3", "ply": ply},
        "Bob steps next to Alice",
        "Bob moves to c3, face to face with Alice on c2.",
        both,
    )
    await rec.say(
        bob,
        {"type": "move", "id": "b-7", "move": "c3", "ply": ply},
        "Bob resends his move",
        "As if Bob had lost the reply and sent the same move for the same ply again. It is"
        " never applied twice: Bob alone gets the current state with his id, and the same"
        " event number (7), so it is not a new event. Alice receives nothing.",
        {bob: 1},
    )
    await rec.say(
        alice,
        {"type": "move", "id": 5, "move": "c4", "ply": alice.ply},
        "Alice jumps over Bob",
        "Bob's pawn is on c3, right in front of Alice, and c4 behind it is free: Alice jumps"
        " straight over him to c4. One step from row 5.",
        both,
    )
    await rec.say(
        bob,
        {"type": "draw", "id": "b-8", "action": "offer"},
        "Bob offers a draw",
        "Behind in the race, Bob offers a draw. Offers can be made at any time, on your turn"
        " or not. The new state lists Bob's seat in `draw_offers`; the offer would lapse if"
        " Bob moved.",
        both,
    )
    await rec.say(
        alice,
        {"type": "draw", "id": 6, "action": "decline"},
        "Alice declines",
        "Declining clears `draw_offers`; the game goes on, Bob still to move.",
        both,
    )
    await rec.say(
        alice,
        {"type": "move", "id": 7, "move": "c5", "ply": alice.ply},
        "Alice plays out of turn",
        "It is Bob's turn: `not_your_turn`, with the state attached.",
        {alice: 1},
    )
    await rec.say(
        bob,
        {"type": "move", "id": "b-9", "move": "c2", "ply": bob.ply},
        "Bob steps toward row 1",
        "Bob heads for row 1, but he is two steps away and Alice one.",
        both,
    )
    await rec.say(
        alice,
        {"type": "move", "id": 8, "move": "c5", "ply": alice.ply},
        "Alice wins",
        "Alice reaches row 5, her goal: `status` is `finished`, `turn` is null, and"
        " `result` names the winner, the reason, `goal`, and the game's id in the history"
        " (`game_id`: `fetch_game` and `analyse` take it). Either player could now ask for"
        " a `rematch`.",
        both,
    )
    await rec.say(
        alice,
        {"type": "leave", "id": 9},
        "Alice leaves",
        "`left` answers Alice; Bob, still in the room, gets a new event showing her disconnected.",
        {alice: 1, bob: 1},
    )
    await rec.say(
        bob,
        {"type": "leave", "id": "b-10"},
        "Bob leaves",
        "The room is now empty and finished, so the server forgets it. Both clients then"
        " close their websockets.",
        {bob: 1},
    )


async def record() -> list[Step]:
    """Start a real server on a free port, play the game, and stop the server."""
    async with GameServer(Config(port=0)).running() as server:
        return await play(f"ws://127.0.0.1:{server.port}")


def to_markdown(steps: list[Step]) -> str:
    """The transcript: a heading, the annotation and the frames of every step."""
    width = max(len(_label(frame)) for step in steps for frame in step.frames)  # aligns the JSON
    lines: list[str] = []
    for number, step in enumerate(steps, 1):
        lines += [f"#### {number}. {step.title}", "", step.note, "", "```text"]
        lines += [f"{_label(frame):<{width}}  {frame.raw}" for frame in step.frames]
        lines += ["```", ""]
    return "\n".join(lines)


def _label(frame: Frame) -> str:
    return f"{frame.sender} → {', '.join(frame.recipients)}"


def main() -> None:
    print(to_markdown(asyncio.run(record())), end="")


if __name__ == "__main__":
    main()
