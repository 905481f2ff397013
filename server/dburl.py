"""What ``--db`` names: a SQLite file's path, or a PostgreSQL URL; and how to show it."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


def is_postgresql(db: str) -> bool:
    return db.startswith(POSTGRESQL_SCHEMES)


def shown(db: str) -> str:
    """``db`` (or a ``redis://`` URL) as logs and messages show it: a URL's password
    replaced by ``***``."""
    if "://" not in db:
        return db
    parts = urlsplit(db)
    if parts.password is None:
        return db
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))
