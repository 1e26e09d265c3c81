"""Library backends for parametrised tests: a fresh SQLite file, or a fresh PostgreSQL schema.

PostgreSQL tests need ``TOOLSMITH_TEST_POSTGRES_URL`` (``scripts/postgres start DIR``
prints it; ``.ci/run`` exports it). Without it they are skipped, unless
``TOOLSMITH_REQUIRE_POSTGRES=1`` (set by ``.ci/run``) turns the skip into a failure.
Each PostgreSQL library lives in its own schema of one test database, dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from toolsmith.library import ToolSpec

URL_ENV = "TOOLSMITH_TEST_POSTGRES_URL"
TEST_DATABASE = "toolsmith_tests"

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def admin_url() -> str:
    url = os.environ.get(URL_ENV)
    if not url:
        if os.environ.get("TOOLSMITH_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{URL_ENV} is not set but TOOLSMITH_REQUIRE_POSTGRES=1")
        pytest.skip(f"no PostgreSQL server: set {URL_ENV} (scripts/postgres start DIR prints it)")
    return url


def database_url(database: str = TEST_DATABASE) -> str:
    """The server's URL pointing at ``database`` (created on first use)."""
    import psycopg
    from psycopg import sql

    url = admin_url()
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone() is None:
            # Another test process may make it first.
            with suppress(psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, ""))


def in_schema(url: str, schema: str) -> str:
    sep = "&" if urlsplit(url).query else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


@contextmanager
def postgres_schema() -> Iterator[str]:
    """The URL of a library in a new, empty schema; the schema is dropped afterwards."""
    import psycopg
    from psycopg import sql

    base = database_url()
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield in_schema(base, schema)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def library_target(kind: str, tmp_path: Path) -> Iterator[str]:
    """A fresh library location of ``kind``, as a library URL."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'library.db'}"
        return
    with postgres_schema() as url:
        yield url


def returning_spec(name: str, description: str, keywords: tuple[str, ...] = ()) -> ToolSpec:
    """A minimal tool that returns its own description: enough to fill a library in tests."""
    return ToolSpec(
        name=name,
        description=description,
        parameters={"type": "object", "properties": {}},
        code=f"def run():\n    return {description!r}\n",
        keywords=keywords,
    )


# The days_between tool as several test modules store it: one definition, so a change to its
# code (which changes its hash) reaches them all alike.
DAYS_SPEC = ToolSpec(
    name="days_between",
    description="Count the days between two ISO dates.",
    parameters={
        "type": "object",
        "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
        "required": ["start", "end"],
    },
    code="from datetime import date\n\n\ndef run(start, end):\n"
    "    return {'days': (date.fromisoformat(end) - date.fromisoformat(start)).days}\n",
    test_args={"start": "2020-01-01", "end": "2020-03-01"},
)
