"""Accounts from the terminal: two people register, play a rated game, see their ratings.

Real processes: the server (with a database, Argon2id at test costs: see
tests/server/test_accounts.py) and ``quoridor`` runs, each user with a
configuration folder of their own.
"""

from __future__ import annotations

import asyncio
import json
import re
import stat
import sys
from pathlib import Path

from tests.client.test_e2e import ALICE, BOB, WITHIN, environment
from tests.process import ServerProcess

FAST_HASHING = ("--argon2-time-cost=1", "--argon2-memory-kib=64", "--argon2-parallelism=1")
PASSWORD = "correct horse battery"


async def quoridor(
    url: str, home: Path, *args: str, stdin: str = ""
) -> tuple[int, str, str, asyncio.subprocess.Process]:
    env = environment()
    env["XDG_CONFIG_HOME"] = str(home)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client",
        "--server",
        url,
        *args,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin.encode()), WITHIN)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode(), process


async def test_two_people_register_play_rated_and_see_ratings_and_profiles(
    tmp_path: Path,
) -> None:
    server = await ServerProcess(tmp_path / "q.db", *FAST_HASHING, "--provisional-games=1").start()
    url = server.url
    alice_home, bob_home = tmp_path / "alice", tmp_path / "bob"
    try:
        code, out, err, _ = await quoridor(url, alice_home, "register", "Alice", stdin=PASSWORD)
        assert (code, err) == (0, "")
        assert "Registered and logged in as Alice" in out
        saved = alice_home / "quoridor" / "logins.json"
        assert stat.S_IMODE(saved.stat().st_mode) == 0o600
        assert json.loads(saved.read_text())[url]["name"] == "Alice"
        code, out, err, _ = await quoridor(url, bob_home, "register", "Bob", stdin="wrong")
        # Too short a password, said in words before it is asked again (it was the server's
        # validator's "Expected `str` of length >= 8 - at `$.password`", after both).
        assert (code, err) == (1, "quoridor: a password has 8 to 128 characters\n")
        code, out, err, _ = await quoridor(url, bob_home, "register", "Bob!", stdin=PASSWORD)
        assert code == 1
        assert err.startswith("quoridor: a name has only letters"), err
        assert "$.name" not in err
        code, out, err, _ = await quoridor(url, bob_home, "register", "Bob", stdin=PASSWORD)
        assert code == 0, err
        code, out, err, _ = await quoridor(url, bob_home, "login", "bob", stdin="not it at all")
        assert (code, err) == (1, "quoridor: unknown name or wrong password\n")
        code, out, err, _ = await quoridor(url, bob_home, "login", "bob", stdin=PASSWORD)
        assert (code, out) == (0, "Logged in as Bob; your games will be rated by default.\n")

        alice_out, bob_out = await play_rated(url, alice_home, bob_home)
        alice_last, bob_last = alice_out.splitlines()[-1], bob_out.splitlines()[-1]
        assert alice_last.startswith("Ratings: you 15"), alice_out
        assert "(+" in alice_last
        assert bob_last.startswith("Ratings: Alice 15"), bob_out
        assert "you 14" in bob_last

        code, out, err, _ = await quoridor(url, bob_home, "profile", "alice")
        assert code == 0, err
        assert "1 game: 1 won, 0 lost, 0 drawn" in out
        assert "(1-0-0)  lately: " in out
        assert "9x9-untimed" in out
        assert "vs Bob" in out
        code, out, err, _ = await quoridor(url, alice_home, "leaderboard")
        assert code == 0, err
        assert [line.split()[1] for line in out.splitlines()[2:]] == ["Alice", "Bob"]

        # A new password: the wrong current one is refused, then the login goes on with the
        # new token (the old one no longer works), and the new password logs in.
        old_token = json.loads(saved.read_text())[url]["token"]
        code, out, err, _ = await quoridor(
            url, alice_home, "password", stdin="not it at all\nsomething new 1\n"
        )
        assert (code, err) == (1, "quoridor: unknown name or wrong password\n")
        code, out, err, _ = await quoridor(
            url, alice_home, "password", stdin=f"{PASSWORD}\nsomething new 1\n"
        )
        assert (code, out) == (0, "Password changed for Alice; your other logins have ended.\n")
        assert json.loads(saved.read_text())[url]["token"] != old_token
        # The kept token is the new one: a hello with a revoked one would be refused.
        code, out, err, _ = await quoridor(
            url, alice_home, "password", stdin="something new 1\nsomething new 2\n"
        )
        assert (code, err) == (0, "")
        code, out, err, _ = await quoridor(url, alice_home, "logout")
        assert (code, out) == (0, "Logged out.\n")
        assert url not in json.loads(saved.read_text())
        code, out, err, _ = await quoridor(url, alice_home, "password", stdin="a\nb\n")
        assert (code, err) == (
            1,
            "quoridor: not logged in to this server: quoridor login NAME first\n",
        )
        code, out, err, _ = await quoridor(
            url, alice_home, "login", "alice", stdin="something new 2"
        )
        assert (code, out) == (0, "Logged in as Alice; your games will be rated by default.\n")
    finally:
        await server.stop()


async def play_rated(url: str, alice_home: Path, bob_home: Path) -> tuple[str, str]:
    """Alice creates (rated, as she is logged in), Bob joins; both outputs."""
    env = environment()
    env["XDG_CONFIG_HOME"] = str(alice_home)
    alice = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client",
        "--server",
        url,
        "create",
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert alice.stdin is not None
    assert alice.stdout is not None
    alice.stdin.write(ALICE.replace(" ", "\n").encode() + b"\n")
    await alice.stdin.drain()
    alice.stdin.close()
    lines: list[str] = []
    async with asyncio.timeout(WITHIN):
        while not (found := re.search(r"joins with: .* join (\w+)", "".join(lines))):
            lines.append((await alice.stdout.readline()).decode())
    room = found.group(1)
    moves = BOB.replace(" ", "\n")
    code, bob_out, bob_err, _ = await quoridor(url, bob_home, "join", room, stdin=moves + "\n")
    rest, alice_err = await asyncio.wait_for(alice.communicate(), WITHIN)
    assert (alice.returncode, code) == (0, 0), alice_err.decode() + bob_err
    return "".join(lines) + rest.decode(), bob_out


async def test_a_logged_in_player_is_told_when_a_room_is_rated_and_may_play_as_a_guest(
    tmp_path: Path,
) -> None:
    """A newcomer's review: logged in, ``create`` made a rated room without a word, and the
    guest friend who ran the join command it gave was refused; ``--name Bob`` on the same
    machine took the account (and its seat) instead of Bob's name; against the computer a
    hint was refused with "Not in a rated game."."""
    server = await ServerProcess(tmp_path / "q.db", *FAST_HASHING).start()
    url = server.url
    alice_home, guest_home = tmp_path / "alice", tmp_path / "guest"
    try:
        code, _, err, _ = await quoridor(url, alice_home, "register", "Alice", stdin=PASSWORD)
        assert (code, err) == (0, "")
        env = environment()
        env["XDG_CONFIG_HOME"] = str(alice_home)
        alice = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "client", "--server", url, "create",
            env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert alice.stdout is not None
        seen = ""
        async with asyncio.timeout(WITHIN):
            while "leave it" not in seen:
                seen += (await alice.stdout.readline()).decode()
        assert "Connected to" in seen
        assert " as Alice." in seen
        assert "This room is rated: only players logged in can join it" in seen
        assert "add --casual to the command" in seen
        found = re.search(r"joins with: .* join (\w+)", seen)
        assert found is not None
        code, out, err, _ = await quoridor(url, guest_home, "--name", "Bob", "join", found[1])
        assert code == 1
        assert f"Room {found[1]} is rated: log in to play. To log in: " in out + err
        assert "login NAME (new here: " in out + err
        alice.kill()
        await alice.wait()

        # The same machine, another name: a guest, told so, in a casual room.
        code, out, err, _ = await quoridor(
            url, alice_home, "--name", "Bob", "create", stdin="quit\n"
        )
        assert code == 0, err
        assert f"Connected to {url} as Bob." in out
        assert "Playing as the guest Bob: this machine is logged in as Alice" in out
        assert "(leave out --name to play as Alice)" in out
        assert "rated" not in out.replace("logged in", "")

        code, out, err, _ = await quoridor(url, alice_home, "play", "--vs-ai", "1", "--size", "5")
        assert "A rated game: no hints or takebacks" in out, out + err
        assert "--name" not in out  # logged in, the account's name needs no --name
        code, out, err, _ = await quoridor(
            url, alice_home, "play", "--vs-ai", "1", "--size", "5", "--casual"
        )
        assert "rated" not in out, out + err
    finally:
        await server.stop()
