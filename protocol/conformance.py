"""A stand-in server that plays a conformance transcript to a client under test.

The transcripts in ``protocol/transcripts/`` (PROTOCOL.md section 25) record
real server runs. This module serves one of them: it plays the server's side
for one player (``--conn alice``: the lines of ``alice``, ``alice-2``... in
order, each name one websocket) and checks that the client sends what the
recorded client sent.

- A ``send`` line: the next frame from the client must be JSON of the same
  ``type``, and every field it sends must be equal to the recorded one as the
  server reads them, defaults filled in (``"players": 2`` matches a recorded
  variant without it), except ``id`` (the client chooses its own). Fields the
  recording has and the client left out are reported as notes, not failures
  (a client may rely on defaults).
- A ``recv`` line: the frame is sent to the client, with the recorded request
  id replaced by the one the client used.
- A ``close`` line: 1000 waits for the client to close; 1006 cuts the link;
  other codes close with that code.

Usage::

    python -m protocol.conformance protocol/transcripts/two_player_game.jsonl \\
        --conn alice --port 9000

then point the client under test at ``ws://127.0.0.1:9000/``. The exit status
is 0 when every expected frame came, 1 at the first difference (printed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from protocol.codec import BadRequest, decode_request

Json = dict[str, Any]
WAIT = 30.0
"""Seconds to wait for each frame or connection from the client under test."""


class Mismatch(Exception):
    """The client did something else than the recording."""


def load(path: Path) -> list[Json]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def same_player(conn: str, player: str) -> bool:
    """``alice``, ``alice-2``, ``alice-3``... are the successive connections of ``alice``."""
    return conn == player or re.fullmatch(re.escape(player) + r"-\d+", conn) is not None


def connections(lines: list[Json], player: str) -> list[list[Json]]:
    """The player's lines, cut into one list per connection, in order.

    A ``recv`` line that answers the connection's own latest request is marked
    ``"reply": true``: only those get the client's own id in place of the recorded one
    (a state caused by another player's request keeps that player's id).
    """
    runs: list[list[Json]] = []
    last_sender = None
    for line in lines:
        if line["dir"] == "send":
            last_sender = line["conn"]
        if not same_player(line["conn"], player):
            continue
        if line["dir"] == "open":
            runs.append([])
        elif line["dir"] == "recv":
            runs[-1].append({**line, "reply": last_sender == line["conn"]})
        else:
            runs[-1].append(line)
    return runs


def compare(expected: Json, actual: Any) -> list[str]:
    """Differences that fail the check; raise Mismatch for them. Returns notes.

    Fields are compared as the server reads them, defaults filled in: a client that writes
    out a default the recording left out (``"players": 2`` in a ``variant``) sends the same
    request. A field the recording has and the client left out is only a note (the client
    may rely on the default, and the recording on another value: the replies will tell).
    Frames that are not valid requests (the error transcripts) are compared as written."""
    if not isinstance(actual, dict) or actual.get("type") != expected.get("type"):
        raise Mismatch(f"expected a {expected.get('type')!r} frame, got {actual!r}")
    read_expected, read_actual = _as_read(expected), _as_read(actual)
    notes = []
    for key in dict.fromkeys([*expected, *actual]):
        if key == "id":
            continue
        if key not in actual:
            notes.append(f"{expected['type']}: left out {key!r} (recorded {expected[key]!r})")
        elif read_expected is not None and read_actual is not None:
            if read_actual.get(key) != read_expected.get(key):
                recorded = expected.get(key, read_expected.get(key))
                raise Mismatch(
                    f"{expected['type']}.{key}: expected {recorded!r}, got {actual[key]!r}"
                )
        elif key in expected and actual[key] != expected[key]:
            raise Mismatch(
                f"{expected['type']}.{key}: expected {expected[key]!r}, got {actual[key]!r}"
            )
    return notes


def _as_read(frame: Json) -> Json | None:
    """The request as the server reads it, every default filled in; None if it is not a
    valid request."""
    try:
        request = decode_request(json.dumps(frame))
    except BadRequest:
        return None
    read: Json = msgspec.to_builtins(request)
    return read


@dataclass
class StandIn:
    """Serves one player's connections of a transcript, one after the other."""

    runs: list[list[Json]]
    notes: list[str] = field(default_factory=list)
    failure: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    _sent: tuple[Any, Any] | None = None
    """The recorded id of the client's latest request, and the id the client used."""

    async def handle(self, ws: ServerConnection) -> None:
        if not self.runs or self.done.is_set():
            await ws.close(1013, "no more connections in this transcript")
            return
        run = self.runs.pop(0)
        try:
            for line in run:
                await self._play(ws, line)
        except Mismatch as mismatch:
            self.failure = str(mismatch)
            await ws.close(1008, "conformance: mismatch")
        except (ConnectionClosed, TimeoutError) as error:
            self.failure = f"the client went before the transcript's end: {error!r}"
        if self.failure is not None or not self.runs:
            self.done.set()

    async def _play(self, ws: ServerConnection, line: Json) -> None:
        kind = line["dir"]
        if kind == "send":
            try:
                raw = await asyncio.wait_for(ws.recv(), WAIT)
            except TimeoutError:
                recorded = line.get("frame", line.get("raw"))
                raise Mismatch(
                    f"nothing from the client in {WAIT:.0f} s; the transcript's next frame from "
                    f"it is {json.dumps(recorded, separators=(',', ':'))}"
                ) from None
            if "raw" in line:
                if raw != line["raw"]:
                    raise Mismatch(f"expected the raw frame {line['raw']!r}, got {raw!r}")
                return
            try:
                actual = json.loads(raw)
            except json.JSONDecodeError:
                raise Mismatch(f"not JSON: {raw!r}") from None
            self.notes += compare(line["frame"], actual)
            self._sent = (line["frame"].get("id"), actual.get("id"))
        elif kind == "recv":
            frame = dict(line["frame"])
            if line["reply"] and self._sent is not None and frame.get("id") == self._sent[0]:
                frame["id"] = self._sent[1]
            await ws.send(json.dumps(frame, separators=(",", ":")))
        elif kind == "close":
            code = line["code"]
            if code == 1006:
                ws.transport.abort()
            elif code == 1000:
                await asyncio.wait_for(ws.wait_closed(), WAIT)
            else:
                await ws.close(code, "transcript")


@asynccontextmanager
async def serving(
    path: Path, player: str, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[tuple[StandIn, int]]:
    """The stand-in for ``player``'s part of ``path``, listening; and its port."""
    runs = connections(load(path), player)
    if not runs:
        raise ValueError(f"no connection named {player!r} in {path}")
    stand_in = StandIn(runs)
    async with serve(stand_in.handle, host, port, compression=None) as server:
        yield stand_in, server.sockets[0].getsockname()[1]


async def serve_transcript(path: Path, player: str, host: str, port: int) -> StandIn:
    """Serve ``player``'s part of ``path`` until it is played out or a mismatch."""
    async with serving(path, player, host, port) as (stand_in, bound):
        print(f"serving {path.name} as the server of {player!r} on ws://{host}:{bound}/")
        await stand_in.done.wait()
    return stand_in


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m protocol.conformance",
        description="Play a conformance transcript's server side to a client under test.",
    )
    parser.add_argument("transcript", type=Path)
    parser.add_argument("--conn", required=True, help="the player your client plays (alice...)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    stand_in = asyncio.run(serve_transcript(args.transcript, args.conn, args.host, args.port))
    for note in stand_in.notes:
        print("note:", note)
    if stand_in.failure is not None:
        print("FAILED:", stand_in.failure, file=sys.stderr)
        return 1
    print("passed: the client sent every frame of the transcript")
    return 0


if __name__ == "__main__":
    sys.exit(main())
