"""Server configuration: flags, each with a matching environment variable.

Precedence: a flag on the command line, then the environment variable
(``QUORIDOR_`` + the flag in capitals, ``--max-per-ip`` -> ``QUORIDOR_MAX_PER_IP``),
then the embedded default. ``quoridor-server --help`` lists them all;
deploy/README.md documents them for operators.
"""

from __future__ import annotations

import argparse
import difflib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import Any, NoReturn
from urllib.parse import urlsplit

from server.dburl import is_postgresql, shown


def _setting(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Config:
    host: str = _setting("127.0.0.1", "interface to listen on (0.0.0.0 for every interface)")
    port: int = _setting(8765, "TCP port; 0 picks a free one")
    db: str = _setting(
        "",
        "SQLite file for games in progress and the history, created on first start; "
        "or a postgresql:// URL (the store of a cluster, docs/cluster.md); "
        "empty keeps everything in memory",
    )
    sync: str = _setting(
        "normal",
        "SQLite synchronous mode: normal survives a server crash, full a power cut too, "
        "off neither (for throwaway test servers)",
    )
    db_retry: float = _setting(
        30.0,
        "a stand-alone server on PostgreSQL: seconds it may be away (a restart, a failover; "
        "noticed idle or during a write) before the server stops; moves made meanwhile wait, "
        "unacknowledged, and go through once it is back. A cluster node never stops for it: "
        "it refuses moves meanwhile",
    )
    redis: str = _setting(
        "",
        "redis://host:port/db URL: with a postgresql:// --db the server runs as one node of a "
        "cluster (docs/cluster.md); empty runs it alone",
    )
    redis_prefix: str = _setting(
        "quoridor:", "prefix of every Redis key of the cluster (clusters sharing a Redis differ)"
    )
    node_id: str = _setting(
        "", "this node's name in the cluster, unique among its nodes; empty: host name and port"
    )
    lease_ttl: float = _setting(
        3.0,
        "seconds a node's hold on its rooms lasts unless renewed (every third of it): how long "
        "a dead node's games wait before another node takes them over",
    )
    short_game_days: float = _setting(
        1.0,
        "days the database keeps short games (aborted, over before every seat made two moves, "
        "or one of a flood from one address or account) beyond the newest 200, registered "
        "players' too, with their computer analyses; rated games are kept",
    )
    history_days: float = _setting(
        0.0,
        "days the database keeps played games; 0 keeps them for ever (registered players' "
        "played games, rated or analysed games are kept whatever this says)",
    )
    max_message: int = _setting(
        4096,
        "largest frame a client may send, in bytes (at least 1024); larger ones close with 1009",
    )
    rate: float = _setting(20.0, "requests a second a connection may send on average")
    burst: float = _setting(40.0, "requests a connection may send at once before the rate applies")
    address_share: float = _setting(
        5.0,
        "connections' worth of --rate and --burst that the connections of one IP address "
        "(IPv6: its /64) may use together; past it their requests get rate_limited",
    )
    grace: float = _setting(
        60.0,
        "seconds a dropped player has to come back before the others may claim the game (a "
        "game every player is away from past it is aborted)",
    )
    deliberate_grace: float = _setting(
        15.0,
        "the same, for a player who left the room or closed the connection on purpose (code "
        "1000; 1001, which browsers send when a tab closes, gets --grace)",
    )
    hard_limit: float = _setting(
        600.0,
        "seconds after which an unclaimed game is decided against the absent player, while "
        "another is there; at least --grace and --deliberate-grace (the claim comes first)",
    )
    first_move: float = _setting(
        60.0,
        "seconds each seat has for its first move of a game once its turn comes; "
        "past it the server aborts the game, or in game 2 of a match that seat loses it "
        "(0: no limit)",
    )
    think_limit: float = _setting(
        600.0,
        "seconds the player to move may think in an untimed game between people; past it "
        "the others may claim the game, as against an absent player (0: no limit)",
    )
    ping_interval: float = _setting(
        20.0, "seconds between keepalive pings; a peer silent for as long again is dropped"
    )
    origins: str = _setting(
        "",
        "comma-separated Origins browsers may connect from besides the server's own site, "
        "each a scheme and a host as browsers send it (https://play.example.org); clients "
        "that send no Origin are always allowed, other browsers get 403",
    )
    max_per_ip: int = _setting(
        20,
        "open connections one IP address (IPv6: its /64) may hold; more get 429 (it may "
        "open 5 times as many a second, 50 times at once)",
    )
    max_connections: int = _setting(
        0,
        "TCP connections the server holds at once, counted from accept, less a reserve (1/32, "
        "1 to 32) for those closing; when full, a newcomer takes the place of the longest idle "
        "connection not seated in a game in progress (closed with 1013), or gets 503. "
        "0: the open-file limit (ulimit -n) less 100",
    )
    backlog_budget: int = _setting(
        128,
        "MiB of frames all clients that stopped reading may hold in the server together (each "
        "at most 1 MiB); past it, those with the largest backlogs are cut off first",
    )
    replay_plies: float = _setting(
        4000.0,
        "moves all replay requests together may work through a second (each costs about 12 us "
        "of CPU), one IP address a quarter of it; past it replays get server_busy, so games "
        "in play keep the server",
    )
    http_rate: float = _setting(
        20.0,
        "plain HTTP requests (the browser client's files, health checks, metrics; not "
        "websocket upgrades) one IP address (IPv6: its /64) may make a second on average, "
        "ten times as many at once; more get 429",
    )
    http_rate_total: float = _setting(
        2000.0,
        "plain HTTP requests the whole server answers a second on average, as many at once "
        "(the browser client's files and metrics; not /healthz, /readyz or websocket "
        "upgrades); more get 503",
    )
    max_spectators: int = _setting(100, "spectators one room takes; more get room_full")
    hellos_per_second: float = _setting(
        1.0,
        "hellos the connections of one IP address may say a second on average; a resume "
        "that replays events costs one more per 64 KiB of them; over it hello gets "
        "rate_limited",
    )
    hello_burst: float = _setting(
        20.0, "hellos one IP address may say at once before that rate applies"
    )
    rooms_per_ip: int = _setting(
        20,
        "rooms the players of one IP address (IPv6: its /56) may hold open at once (a quarter "
        "of them waiting for players); more get too_many_rooms",
    )
    max_rooms: int = _setting(
        5000,
        "rooms the server holds at most; past it a new room takes the place of the one nobody "
        "has been in the longest, or else of the game over the longest (for the grace period "
        "at least), and is refused with server_busy when there is none",
    )
    trusted_proxies: str = _setting(
        "",
        "comma-separated addresses or networks (10.0.0.0/8) of reverse proxies whose "
        "X-Forwarded-For header names the real client, for the per-IP cap and the logs",
    )
    advertise: str = _setting(
        "",
        "cluster node: HOST:PORT where the other nodes reach this one (its node endpoint); "
        "empty: the listening host and port",
    )
    cluster_secret: str = _setting(
        "",
        "cluster node: the secret every node of the cluster shares, 16 characters or more; a "
        "node hands a client over to another only with it (required in cluster mode)",
    )
    hello_timeout: float = _setting(
        10.0, "seconds a new connection has to say hello before it is closed"
    )
    idle_timeout: float = _setting(
        600.0, "seconds a connection outside any room may stay silent before it is closed"
    )
    ai_workers: int = _setting(
        0,
        "processes that think for the computer opponents (searches never run in the server's "
        "loop); 0 is one per core. One IP address plays the computer in 2 rooms per process "
        "at most",
    )
    shutdown_delay: float = _setting(
        0.0,
        "seconds /readyz answers 503 after SIGTERM before the server stops listening, "
        "so a load balancer can stop sending players first (at most 300; a second SIGTERM "
        "or Ctrl-C skips the rest)",
    )
    logins_per_minute: float = _setting(
        6.0,
        "login attempts a minute one address may make on average, and failed ones on one "
        "account name from one address (from all addresses: ten times that)",
    )
    login_burst: float = _setting(10.0, "login attempts allowed at once before that rate applies")
    registrations_per_hour: float = _setting(
        10.0, "accounts one address may register an hour on average"
    )
    registration_burst: float = _setting(5.0, "registrations allowed at once from one address")
    token_days: float = _setting(30.0, "days a login token works (logout or a new password end it)")
    provisional_games: int = _setting(
        10, "rated games in a pool before a rating is established and listed on leaderboards"
    )
    argon2_time_cost: int = _setting(
        0, "Argon2id passes per password hash; 0 for argon2-cffi's default (keep it in production)"
    )
    argon2_memory_kib: int = _setting(
        0, "Argon2id memory per password hash in KiB; 0 for argon2-cffi's default (64 MiB)"
    )
    argon2_parallelism: int = _setting(0, "Argon2id lanes per hash; 0 for argon2-cffi's default")
    log_level: str = _setting("INFO", "DEBUG, INFO, WARNING or ERROR (any case)")
    log_format: str = _setting("plain", "plain (one readable line per event) or json")

    @property
    def origin_list(self) -> list[str]:
        return [origin.strip() for origin in self.origins.split(",") if origin.strip()]

    @property
    def proxy_networks(self) -> list[IPv4Network | IPv6Network]:
        items = (item.strip() for item in self.trusted_proxies.split(","))
        return [ip_network(item, strict=False) for item in items if item]


ENV_PREFIX = "QUORIDOR_"
COMMAND_LINE_DEFAULTS = {"db": "quoridor.db"}
"""Where the command line differs from ``Config()`` (which tests build directly)."""


def env_name(field_name: str) -> str:
    return ENV_PREFIX + field_name.upper()


OTHER_VARIABLES = {"QUORIDOR_SERVER", "QUORIDOR_DEBUG", "QUORIDOR_DOMAIN", "QUORIDOR_CHROMIUM"}
"""``QUORIDOR_`` variables that are not the server's: the terminal client's, the deployment
files', the tests'."""


def unknown_variables(env: Mapping[str, str] | None = None) -> list[str]:
    """One sentence for each ``QUORIDOR_`` variable in ``env`` that is no setting (a typo
    would otherwise leave the setting at its default without a word)."""
    env = os.environ if env is None else env
    known = {env_name(item.name) for item in fields(Config)}
    said = []
    for name in sorted(env):
        if name.startswith(ENV_PREFIX) and name not in known | OTHER_VARIABLES:
            # The part after the prefix: the prefix alone made QUORIDOR_X "resemble"
            # QUORIDOR_PORT.
            settings = {known_name.removeprefix(ENV_PREFIX): known_name for known_name in known}
            close = difflib.get_close_matches(name.removeprefix(ENV_PREFIX), settings, n=1)
            hint = f" (did you mean {settings[close[0]]}?)" if close else ""
            said.append(f"{name} is not a setting of the server and is ignored{hint}")
    return said


CHOICES = {
    "sync": ("off", "normal", "full"),
    "log_level": ("DEBUG", "INFO", "WARNING", "ERROR"),
    "log_format": ("plain", "json"),
}
AT_LEAST_ONE = {
    "max_message", "max_per_ip", "rooms_per_ip", "max_rooms", "burst", "login_burst",
    "address_share",
    "registration_burst", "hello_burst", "backlog_budget",
}  # fmt: skip
"""Settings below 1 would refuse everyone (``--max-per-ip 0``: every connection a 429)."""
POSITIVE = {
    "rate", "ping_interval", "hello_timeout", "idle_timeout", "lease_ttl", "replay_plies",
    "logins_per_minute", "registrations_per_hour", "token_days", "hellos_per_second",
    "http_rate", "http_rate_total",
}  # fmt: skip
"""Settings that must be above 0; every other number may be 0 but not negative."""


MIN_MESSAGE = 1024
"""Bytes --max-message is at least: a hello with a resume token, a login with the longest
password or a chat line must fit (every client would be closed with 1009 at its hello)."""
MAX_SHUTDOWN_DELAY = 300.0
"""Seconds --shutdown-delay may be at most: any load balancer's health checks notice a 503
well within it, and a longer one is a typo that would make every stop end in SIGKILL."""
MIN_SECRET = 16
"""Characters a cluster secret has at least: whoever knows it can hand clients to a node."""


def problem(config: Config) -> str | None:
    """What is wrong with ``config``, in one sentence naming the flag; None if nothing."""
    for item in fields(Config):
        flag, value = "--" + item.name.replace("_", "-"), getattr(config, item.name)
        choices = CHOICES.get(item.name)
        said = str(value).upper() if item.name == "log_level" else value  # the level in any case
        if choices is not None and said not in choices:
            return f"{flag} must be one of {', '.join(choices)}, not {value!r}"
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not math.isfinite(value):
            return f"{flag} must be a finite number, not {value:g}"
        if item.name in AT_LEAST_ONE and value < 1:
            return f"{flag} must be at least 1, not {value:g}"
        if item.name in POSITIVE and not value > 0:
            return f"{flag} must be above 0, not {value:g}"
        if value < 0:
            return f"{flag} cannot be negative ({value:g})"
    if config.max_message < MIN_MESSAGE:
        return (
            f"--max-message must be at least {MIN_MESSAGE} bytes (a client's hello would not "
            f"fit), not {config.max_message}"
        )
    if "://" in config.db and not is_postgresql(config.db):
        return f"--db takes a file's path or a postgresql:// URL, not {shown(config.db)!r}"
    if (wrong := cluster_problem(config)) is not None:
        return wrong
    for origin in config.origin_list:
        if not _is_origin(origin):
            return (
                "--origins takes sites as browsers name them, a scheme and a host "
                f"(https://play.example.org, http://localhost:8080; no path), not {origin!r}"
            )
    if config.cluster_secret and len(config.cluster_secret) < MIN_SECRET:
        return (
            f"--cluster-secret must be at least {MIN_SECRET} characters long (a random one: "
            f"openssl rand -hex 32), not {len(config.cluster_secret)}"
        )
    if config.hard_limit < max(config.grace, config.deliberate_grace):
        return (
            f"--hard-limit ({config.hard_limit:g}) must be at least --grace "
            f"({config.grace:g}) and --deliberate-grace ({config.deliberate_grace:g}): "
            "the opponent's claim comes first"
        )
    if config.shutdown_delay > MAX_SHUTDOWN_DELAY:
        return (
            f"--shutdown-delay must be at most {MAX_SHUTDOWN_DELAY:g} s (load balancers notice a "
            f"503 within seconds), not {config.shutdown_delay:g}"
        )
    if config.port > 65535:
        return f"--port must be a TCP port, 0 to 65535, not {config.port}"
    try:
        config.proxy_networks  # noqa: B018 (parsed for its errors)
    except ValueError as error:
        return f"--trusted-proxies: {error}"
    return None


def cluster_problem(config: Config) -> str | None:
    """What is wrong with ``config``'s cluster settings (--redis), or None."""
    if config.redis and not is_postgresql(config.db):
        return (
            "--redis needs a PostgreSQL --db (postgresql://...): the nodes of a cluster "
            "share their games there (docs/cluster.md)"
        )
    if config.redis and not config.cluster_secret:
        return (
            "--redis needs --cluster-secret (the same on every node): nodes hand clients "
            "over to each other only with it (docs/cluster.md)"
        )
    return None


def _is_origin(origin: str) -> bool:
    """Whether ``origin`` is one as a browser sends it: http(s), a host, maybe a port."""
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 (parsed for its errors)
    except ValueError:
        return False
    return (
        parts.scheme in ("http", "https")
        and bool(parts.hostname)
        and not (parts.path or parts.query or parts.fragment or parts.username)
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One sentence and where to look: the usage names every setting (50 lines).
        self.exit(2, f"{self.prog}: error: {message} (--help lists the settings)\n")


def parse_config(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Build the configuration from ``argv`` and ``env`` (default: the process's). A value
    that makes no sense ends the program with one sentence naming it (exit status 2)."""
    env = os.environ if env is None else env
    parser = _Parser(
        prog="quoridor-server",
        description="Authoritative Quoridor game server over websockets.",
    )
    defaults = Config()
    for item in fields(Config):
        embedded = COMMAND_LINE_DEFAULTS.get(item.name, getattr(defaults, item.name))
        kind = type(getattr(defaults, item.name))
        try:
            default = kind(env.get(env_name(item.name), embedded))
        except ValueError:
            name = env_name(item.name)
            what = "a whole number" if kind is int else "a number"
            parser.error(f"{name} must be {what}, not {env[name]!r}")
        parser.add_argument(
            "--" + item.name.replace("_", "-"),
            type=kind,
            default=default,
            help=f"{item.metadata['help']} (env {env_name(item.name)}, default {embedded!r})",
        )
    config = Config(**vars(parser.parse_args(argv)))
    if (wrong := problem(config)) is not None:
        parser.error(wrong)
    return config
