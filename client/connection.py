"""The link to the server: connect, greet, read, and come back after a drop.

``Connection.open`` makes the first connection and says ``hello``; it raises
``ConnectError`` with a sentence a player can act on (server down, wrong
address, incompatible version). ``Connection.run`` then reads frames and
posts them as events; when the link drops it tells so, waits with an
exponential backoff and jitter, reconnects and resumes the session with the
latest ``resume_token`` (a fresh ``hello`` if the server forgot it). What to
do after a reconnect (rejoin a seat, requeue) is the controller's business:
the connection only reports ``Connected``.

Nothing here knows about the game or the screen.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import shutil
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import (
    ConnectionClosed,
    InvalidHandshake,
    InvalidMessage,
    InvalidStatus,
    InvalidURI,
)

from protocol.codec import decode_server_message, encode
from protocol.compact import Follower
from protocol.messages import (
    VERSION,
    Error,
    ErrorCode,
    Hello,
    Leave,
    Request,
    ServerMessage,
    State,
    Sync,
    Watch,
    Welcome,
)

CLOSE_POLICY = 1008
CLOSE_RESTART = 1012
CLOSE_REPLACED = 4000

# -- events posted to the controller --------------------------------------------


@dataclass(frozen=True)
class Connected:
    """The link is back after a drop; ``resumed`` when the old session was taken back."""

    welcome: Welcome
    resumed: bool


@dataclass(frozen=True)
class Received:
    message: ServerMessage


@dataclass(frozen=True)
class Garbled:
    """A frame this client could not read, in words."""

    text: str


@dataclass(frozen=True)
class Lost:
    """The link dropped (or a reconnection failed); the next try is in ``retry_in`` seconds."""

    reason: str
    retry_in: float
    attempt: int


@dataclass(frozen=True)
class Failed:
    """The link is gone for good; ``run`` has returned."""

    reason: str


Event = Connected | Received | Garbled | Lost | Failed


class ConnectError(Exception):
    """Connecting or greeting failed; the message says why, for the player."""

    def __init__(self, message: str, retry: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.retry = retry
        """Worth trying again later (the server may come back); False for a refusal."""


@dataclass
class Backoff:
    """Exponential backoff with "equal jitter": half the delay fixed, half random."""

    base: float = 0.5
    cap: float = 15.0
    rng: random.Random | None = None

    def delay(self, attempt: int, cap: float | None = None) -> float:
        """Seconds to wait before try number ``attempt`` (0 for the first retry), the
        ceiling at most ``cap`` when given (a server restarting)."""
        longest = self.cap if cap is None else min(self.cap, cap)
        ceiling = min(longest, self.base * 2.0 ** min(attempt, 32))
        jitter: float = (self.rng or random).uniform(0, ceiling / 2)
        return ceiling / 2 + jitter


RESTART_CAP = 2.0
"""The longest backoff ceiling after the server said it restarts (1012): it is back in
seconds, and an operator's review saw players come back 8 s after it (try 6, 9.4 s)."""

DEFAULT_SERVER = "ws://127.0.0.1:8765"
"""Where the client looks for a server unless told (``--server``, ``QUORIDOR_SERVER``)."""


def normalize_url(text: str) -> str:
    """``host:port`` -> ``ws://host:port``; other schemes are refused with a reason."""
    url = text.strip()
    if "://" not in url:
        url = "ws://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss"):
        raise ConnectError(
            f"{text} is not a websocket address: use ws://host:port (or wss://)", retry=False
        )
    if not parts.hostname:
        raise ConnectError(f"{text} has no host name: use ws://host:port", retry=False)
    try:
        _ = parts.port  # read for its check: a port that is not a number raises
    except ValueError:
        raise ConnectError(
            f"{text} has no valid port (a number up to 65535): use ws://host:port", retry=False
        ) from None
    return url


def invoked_as(url: str) -> str:
    """The command line that runs this client on ``url``, for hints another person can type:
    ``quoridor`` when it is on the PATH, else the path typed (``.venv/bin/quoridor``); and
    ``--server`` unless the address is the default one."""
    typed = sys.argv[0] if sys.argv else ""
    name = os.path.basename(typed)
    if name == "__main__.py":
        command = "python -m client"
    elif os.sep in typed and shutil.which(name) is None:
        command = typed
    else:
        command = "quoridor"
    if url != normalize_url(DEFAULT_SERVER):
        command += f" --server {url}"
    return command


def passing(status: int) -> bool:
    """An HTTP answer that says "not now" rather than "not here": a reverse proxy (nginx,
    Caddy) whose server is down or restarting answers 502, 503 or 504, a busy one 429."""
    return status == 429 or 500 <= status < 600


def describe_connect_error(
    url: str, exc: BaseException, reconnecting: bool = False
) -> ConnectError:
    """A failed connection attempt as something the player can act on; ``reconnecting``
    once a session was established there: an HTTP 5xx or 429, or a connection closed before
    its answer, is then worth trying again (as websockets' own ``process_exception`` has it)."""
    where = urlsplit(url).netloc or url
    if isinstance(exc, InvalidURI):
        return ConnectError(f"{url} is not a websocket address: use ws://host:port", retry=False)
    if isinstance(exc, socket.gaierror):
        return ConnectError(f"cannot find the host in {url}: check the address")
    if isinstance(exc, ConnectionRefusedError):
        return ConnectError(
            f"nothing answers at {where}: is the server running, on that port? (another "
            "address: --server ws://host:port, or QUORIDOR_SERVER)"
        )
    if isinstance(exc, TimeoutError):
        return ConnectError(f"no answer from {where} in time: is the address right?")
    if isinstance(exc, InvalidStatus):
        status = exc.response.status_code
        if reconnecting and passing(status):
            # The address did speak websockets to us: a proxy in front of a server that is
            # not back yet, as "nothing answers" is without one.
            return ConnectError(f"{where} answered HTTP {status}: the server is not back yet")
        return ConnectError(
            f"{where} answered HTTP {status} instead of a websocket: is it a Quoridor server?",
            retry=False,
        )
    if reconnecting and isinstance(exc, InvalidMessage) and isinstance(exc.__cause__, EOFError):
        # Closed before its answer (a server stopping, a proxy losing it): a dropped link.
        return ConnectError(f"{where} closed the connection before answering")
    if isinstance(exc, InvalidHandshake):
        return ConnectError(
            f"{where} does not speak websockets ({exc}): is it a Quoridor server?", retry=False
        )
    if isinstance(exc, OSError):
        return ConnectError(f"cannot connect to {where}: {exc.strerror or exc}")
    return ConnectError(f"cannot connect to {where}: {exc}")


def describe_close(code: int | None, reason: str | None) -> tuple[str, bool]:
    """Why the server closed the link, and whether reconnecting makes sense."""
    said = f": {reason}" if reason else ""
    if code == CLOSE_REPLACED:
        return "this session was taken over by another connection of yours", False
    if code == CLOSE_POLICY:
        return f"the server closed the connection{said}", False
    if code == CLOSE_RESTART:
        return "the server is restarting", True
    if code in (None, 1005, 1006):
        return "the connection dropped", True
    return f"the connection closed (code {code}{said})", True


def garbled_text(frame: bytes | str, exc: Exception) -> str:
    """What to tell about a frame that did not decode: its error message if it has one."""
    try:
        data: Any = msgspec.json.decode(frame)
    except msgspec.DecodeError:
        return "the server sent something that is not JSON"
    if isinstance(data, dict):
        if data.get("type") == "error" and isinstance(data.get("message"), str):
            return str(data["message"])
        return f"could not read a {data.get('type')!r} message from the server ({exc})"
    return "the server sent a frame that is not a message"


def _major(version: str) -> str:
    return version.split(".")[0]


class Connection:
    """One player's link to the server, across reconnections."""

    def __init__(
        self,
        url: str,
        name: str,
        post: Callable[[Event], None],
        *,
        backoff: Backoff | None = None,
        give_up_after: float = 300.0,
        open_timeout: float = 10.0,
        ping_interval: float | None = 15.0,
        token: str | None = None,
        compact: bool = True,
    ) -> None:
        self.url = url
        self.compact = compact
        """Ask for ``moved`` events after moves (PROTOCOL.md, section 7a); the controller
        gets the states they lead to all the same (``protocol.compact.Follower``)."""
        self.follower = Follower()
        self.name = name
        self.token = token
        """A login token: hello plays as that account (``client.account``)."""
        self.post = post
        self.backoff = backoff or Backoff()
        self.give_up_after = give_up_after
        """Seconds of failed reconnections before giving up."""
        self.open_timeout = open_timeout
        self.ping_interval = ping_interval
        self.resume_token: str | None = None
        self.last_event: Callable[[], int | None] = lambda: None
        """The last room event seen, sent on resume so the server replays the ones missed."""
        self.welcome: Welcome | None = None
        self.ws: ClientConnection | None = None
        self._closing = False
        self._wakeup = asyncio.Event()
        self._asked = itertools.count(1)

    @property
    def connected(self) -> bool:
        return self.ws is not None

    async def open(self) -> Welcome:
        """Connect and greet for the first time; raise ConnectError saying why not."""
        self.ws, welcome, _ = await self._connect()
        return welcome

    async def run(self) -> None:
        """Read until ``close``, reconnecting after drops; post every event."""
        while not self._closing:
            ws = self.ws
            if ws is None:
                return
            await self._read(ws)
            self.ws = None
            if self._closing:
                return
            reason, again = describe_close(ws.close_code, ws.close_reason)
            if not again:
                self.post(Failed(reason))
                return
            if not await self._reconnect(reason, ws.close_code == CLOSE_RESTART):
                return

    async def send(self, message: msgspec.Struct) -> bool:
        """Send one request; False when there is no link right now."""
        ws = self.ws
        if ws is None:
            return False
        try:
            await ws.send(encode(message), text=True)
        except ConnectionClosed:
            return False
        return True

    async def ask(self, request: Request, within: float = 30.0) -> ServerMessage:
        """Send one request and return the reply that echoes its ``id``.

        For the one-shot commands (``history``, ``replay``) that never ``run``
        the reading loop; other messages are skipped. Raises ConnectError
        when the link drops or the server says nothing in time.
        """
        request.id = request_id = f"ask-{next(self._asked)}"
        return await self.ask_until(request, lambda message: message.id == request_id, within)

    async def look(self, room: str, within: float = 10.0) -> State | Error:
        """Room ``room``'s state, watched for a moment and left (the player's kept seat
        there, to tell whether its game is still going: ``quoridor`` with no command), or
        the error that refused the ``watch`` (``room_not_found``: gone)."""
        request = Watch(room=room, id=f"ask-{next(self._asked)}")
        seen = await self.ask_until(
            request,
            lambda m: (
                (isinstance(m, State) and m.room == room)
                or (isinstance(m, Error) and m.id == request.id)
            ),
            within,
        )
        if isinstance(seen, State):
            await self.ask(Leave(), within)
        assert isinstance(seen, State | Error)
        return seen

    async def ask_until(
        self, request: Request, done: Callable[[ServerMessage], bool], within: float = 30.0
    ) -> ServerMessage:
        """Send ``request`` and return the first message ``done`` accepts (others skipped)."""
        ws = self.ws
        if ws is None:
            raise ConnectError("not connected")
        try:
            await ws.send(encode(request), text=True)
            async with asyncio.timeout(within):
                while True:
                    frame = await ws.recv(decode=False)
                    try:
                        message = decode_server_message(frame)
                    except msgspec.DecodeError as exc:
                        raise ConnectError(garbled_text(frame, exc), retry=False) from None
                    if message is not None and done(message):
                        return message
        except ConnectionClosed as closed:
            said = closed.rcvd
            reason, _ = describe_close(said.code if said else None, said.reason if said else None)
            raise ConnectError(reason) from None
        except TimeoutError:
            raise ConnectError(f"no answer from {self.url} in {within:g} s") from None

    async def close(self) -> None:
        self._closing = True
        self._wakeup.set()
        ws = self.ws
        if ws is not None:
            await ws.close()

    # -- inside ---------------------------------------------------------------

    async def _connect(self, reconnecting: bool = False) -> tuple[ClientConnection, Welcome, bool]:
        try:
            ws = await connect(
                self.url,
                open_timeout=self.open_timeout,
                compression=None,
                ping_interval=self.ping_interval,
                ping_timeout=self.ping_interval,
                close_timeout=2,
                user_agent_header=f"quoridor-client (protocol {VERSION})",
            )
        except Exception as exc:
            raise describe_connect_error(self.url, exc, reconnecting) from None
        try:
            welcome, resumed = await self._greet(ws)
        except BaseException:
            await ws.close()
            raise
        self.welcome = welcome
        self.resume_token = welcome.resume_token
        self.follower.rebase()
        return ws, welcome, resumed

    async def _greet(self, ws: ClientConnection) -> tuple[Welcome, bool]:
        """Say hello (resuming when there is a token); the welcome and whether it resumed."""
        resume = self.resume_token
        last = self.last_event() if resume is not None else None
        hello = Hello(
            id="hello",
            version=VERSION,
            name=self.name,
            resume=resume,
            last_event=last,
            token=self.token,
            compact=self.compact,
        )
        reply = await self._ask(ws, hello)
        if resume is not None and isinstance(reply, Error) and reply.code == ErrorCode.BAD_TOKEN:
            resume = None
            fresh = Hello(
                id="hello", version=VERSION, name=self.name, token=self.token, compact=self.compact
            )
            reply = await self._ask(ws, fresh)
        if isinstance(reply, Error) and reply.code == ErrorCode.BAD_TOKEN:
            raise ConnectError(
                "your login no longer works (it expired or was revoked): "
                "run 'quoridor login' again, or 'quoridor logout' to play as a guest",
                retry=False,
            )
        if isinstance(reply, Error):
            if reply.code == ErrorCode.UNSUPPORTED_VERSION:
                raise ConnectError(
                    f"incompatible server: it does not speak this client's protocol {VERSION} "
                    f"({reply.message}); use a matching client",
                    retry=False,
                )
            # Busy or unavailable for now (in a cluster, the game's node is being taken over
            # by another): worth trying again, as after a dropped link.
            passing = reply.code in (ErrorCode.SERVER_BUSY, ErrorCode.SERVICE_UNAVAILABLE)
            raise ConnectError(f"the server refused to greet us: {reply.message}", retry=passing)
        if not isinstance(reply, Welcome):
            raise ConnectError(f"{self.url} is not a Quoridor server", retry=False)
        if _major(reply.version) != _major(VERSION):
            raise ConnectError(
                f"incompatible server: it speaks protocol {reply.version}, this client {VERSION}",
                retry=False,
            )
        return reply, resume is not None

    async def _ask(self, ws: ClientConnection, hello: Hello) -> ServerMessage:
        """Send ``hello`` and wait for its answer, skipping message types we do not know."""
        try:
            await ws.send(encode(hello), text=True)
            async with asyncio.timeout(self.open_timeout):
                while True:
                    frame = await ws.recv(decode=False)
                    try:
                        message = decode_server_message(frame)
                    except msgspec.DecodeError:
                        raise ConnectError(
                            f"{self.url} is not a Quoridor server (it sent something else)",
                            retry=False,
                        ) from None
                    if message is not None:
                        return message
        except ConnectionClosed as closed:
            reason, again = describe_close(closed.rcvd.code if closed.rcvd else None, None)
            if closed.rcvd is not None and closed.rcvd.reason:
                reason = f"the server closed the connection: {closed.rcvd.reason}"
            raise ConnectError(reason, retry=again) from None
        except TimeoutError:
            raise ConnectError(
                f"{self.url} did not answer hello: is it a Quoridor server?"
            ) from None

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for frame in ws:
                self._deliver(frame)
                if self.follower.ask():  # a compact event missed: the whole state again
                    await ws.send(encode(Sync(id="sync")), text=True)
        except ConnectionClosed:
            pass  # the close code and reason stay on ws

    def _deliver(self, frame: bytes | str) -> None:
        try:
            message = decode_server_message(frame)
        except msgspec.DecodeError as exc:
            self.post(Garbled(garbled_text(frame, exc)))
            return
        if message is not None:  # a type this client does not know is ignored, as it must be
            message = self.follower.take(message)  # a ``moved`` becomes its state
        if message is not None:
            self.post(Received(message))

    async def _reconnect(self, reason: str, restarting: bool = False) -> bool:
        """Try again and again, with backoff, until connected (True) or giving up (False);
        every two seconds at most for a server restarting."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        attempt = 0
        while not self._closing:
            delay = self.backoff.delay(attempt, RESTART_CAP if restarting else None)
            if loop.time() - started + delay > self.give_up_after:
                self.post(Failed(f"gave up reconnecting to {self.url}: {reason}"))
                return False
            attempt += 1
            self.post(Lost(reason, delay, attempt))
            self._wakeup.clear()
            try:
                async with asyncio.timeout(delay):
                    await self._wakeup.wait()
            except TimeoutError:
                pass
            if self._closing:
                return False
            try:
                ws, welcome, resumed = await self._connect(reconnecting=True)
            except ConnectError as error:
                if not error.retry:
                    self.post(Failed(error.message))
                    return False
                reason = error.message
                continue
            self.ws = ws
            self.post(Connected(welcome, resumed))
            return True
        return False
