"""Fixtures shared by the whole suite."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.process import kill_leftovers
from tests.services import PostgresServer, RedisServer

_numbers = itertools.count(1)


@pytest.fixture(autouse=True)
def no_server_left_behind() -> Iterator[None]:
    """A test that fails midway leaves no server process running (they piled up)."""
    yield
    kill_leftovers()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL for the whole session (each test gets a database of its own)."""
    server = PostgresServer().start()
    yield server
    server.close()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh, empty database on the session's PostgreSQL."""
    return postgres_server.create_database(f"test_{next(_numbers)}")


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL of the test's own, for tests that stop or restart it (seconds to set up:
    use sparingly)."""
    server = PostgresServer().start()
    yield server
    server.close()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One Redis for the whole session (each test gets a key prefix of its own)."""
    server = RedisServer().start()
    yield server
    server.close()


@pytest.fixture
def redis_prefix() -> str:
    """Keys of one test, apart from every other test's on the shared Redis."""
    return f"test{next(_numbers)}:"


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A Redis of the test's own, for tests that stop or restart it."""
    server = RedisServer().start()
    yield server
    server.close()
