"""Server configuration: flags, each with a matching environment variable.

Precedence: a flag on the command line, then the environment variable, then
the embedded default. Every setting is documented in the README.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Config:
    host: str = "127.0.0.1"
    """Interface to listen on (QUORIDOR_HOST)."""
    port: int = 8765
    """TCP port; 0 picks a free one (QUORIDOR_PORT)."""
    db: str = ""
    """SQLite file for games in progress and the history; created on first start.
    Empty keeps everything in memory only (the command line's default is quoridor.db)."""
    sync: str = "normal"
    """SQLite synchronous mode: normal survives a crash of the server, full also a power cut."""
    max_message: int = 4096
    """Largest frame a client may send, in bytes; larger closes with 1009."""
    rate: float = 20.0
    """Requests a second a connection may send on average."""
    burst: float = 40.0
    """Requests a connection may send at once before the rate applies."""
    grace: float = 60.0
    """Seconds a dropped player has to come back before the others may claim the game."""
    deliberate_grace: float = 15.0
    """The same, for a player who closed the connection or left the room on purpose."""
    hard_limit: float = 600.0
    """Seconds after which an unclaimed game is decided against the absent player."""
    ping_interval: float = 20.0
    """Seconds between keepalive pings; a peer silent for another such span is dropped."""
    log_level: str = "INFO"


ENV_PREFIX = "QUORIDOR_"
COMMAND_LINE_DEFAULTS = {"db": "quoridor.db"}
"""Where the command line differs from ``Config()`` (which tests build directly)."""


def env_name(field_name: str) -> str:
    return ENV_PREFIX + field_name.upper()


def parse_config(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Build the configuration from ``argv`` and ``env`` (default: the process's)."""
    env = os.environ if env is None else env
    parser = argparse.ArgumentParser(
        prog="quoridor-server",
        description="Authoritative Quoridor game server over websockets.",
    )
    defaults = Config()
    for item in fields(Config):
        embedded = COMMAND_LINE_DEFAULTS.get(item.name, getattr(defaults, item.name))
        kind = type(getattr(defaults, item.name))
        default = kind(env.get(env_name(item.name), embedded))
        parser.add_argument(
            "--" + item.name.replace("_", "-"),
            type=kind,
            default=default,
            help=f"(env {env_name(item.name)}, default {embedded!r})",
        )
    return Config(**vars(parser.parse_args(argv)))
