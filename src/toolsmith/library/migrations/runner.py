"""The one list of the library's migrations, and the one runner that applies them.

Each :class:`Migration` has a name and its step per dialect: SQL text, or code where a
dialect needs it (SQLite's search prior documents). A dialect that has no such step says
``None``, with the reason beside it. A dialect's migrations are numbered in the order of
this list, counting only its own steps, which is how existing libraries recorded them
(SQLite 1-5, PostgreSQL 1-7): new migrations are appended, never inserted.

:func:`migrate` applies what a database lacks, each migration in its own transaction,
re-reading the recorded number inside it so concurrent openers apply each exactly once.
The database is reached through a :class:`Schema`: one per dialect, in
:mod:`~toolsmith.library.migrations.sqlite` and :mod:`~toolsmith.library.migrations.postgresql`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from toolsmith.library.migrations import postgresql, sqlite

if TYPE_CHECKING:
    import psycopg

C = TypeVar("C")
C_co = TypeVar("C_co", covariant=True)
# A migration step on a connection of type C: a script, or code.
Step = str | Callable[[C], None]


class Schema(Protocol[C_co]):
    """A database as the runner sees it (one per dialect)."""

    def current(self, latest: int) -> int:
        """The recorded schema number, 0 when empty; refuses (untouched) a database that is
        not a toolsmith library or is newer than ``latest``."""
        ...

    def exclusive(self) -> AbstractContextManager[object]:
        """Held around the whole run: keeps other machines from migrating at the same time."""
        ...

    def transaction(self) -> AbstractContextManager[object]:
        """One migration's write transaction."""
        ...

    def run(self, step: Step[C_co]) -> None: ...

    def record(self, number: int, name: str, applied_at: str) -> None: ...


@dataclass(frozen=True)
class Migration:
    name: str
    sqlite: Step[sqlite3.Connection] | None
    postgresql: Step[psycopg.Connection[Any]] | None


MIGRATIONS: tuple[Migration, ...] = (
    Migration("initial schema", sqlite.INITIAL, postgresql.TABLES),
    # SQLite's triggers are part of its initial schema; PostgreSQL's need functions first.
    Migration("guards and change notices", None, postgresql.GUARDS),
    Migration("full-text search index", sqlite.SEARCH_INDEX, postgresql.SEARCH),
    # FTS5's BM25 needs IDF smoothing; PostgreSQL ranks by its own postings (below).
    Migration("search prior documents", sqlite.add_prior_documents, None),
    Migration("tool test cases", sqlite.TESTS, postgresql.TESTS),
    # PostgreSQL only: the GIN index and the postings serve its search; FTS5 is one index.
    Migration("search query function", None, postgresql.SEARCH_QUERY),
    Migration("search postings", None, postgresql.POSTINGS),
    Migration("approval evidence", sqlite.EVIDENCE, postgresql.EVIDENCE),
)


@dataclass(frozen=True)
class Planned(Generic[C]):
    """A migration as one dialect numbers it."""

    number: int
    name: str
    step: Step[C]


def _numbered(steps: Sequence[tuple[str, Step[C] | None]]) -> tuple[Planned[C], ...]:
    present = [(name, step) for name, step in steps if step is not None]
    return tuple(Planned(number, name, step) for number, (name, step) in enumerate(present, 1))


SQLITE: tuple[Planned[sqlite3.Connection], ...] = _numbered([(m.name, m.sqlite) for m in MIGRATIONS])
POSTGRESQL: tuple[Planned[psycopg.Connection[Any]], ...] = _numbered([(m.name, m.postgresql) for m in MIGRATIONS])


def identify(schema: Schema[C], plan: Sequence[Planned[C]]) -> int:
    """The database's schema number, refusing a foreign or newer one untouched. Read-only."""
    return schema.current(len(plan))


def migrate(schema: Schema[C], plan: Sequence[Planned[C]]) -> list[int]:
    """Apply every migration of ``plan`` the database lacks, each in its own transaction.

    Returns the numbers applied (none when another process got there first)."""
    latest = len(plan)
    if schema.current(latest) == latest:
        return []
    applied: list[int] = []
    with schema.exclusive():
        for planned in plan:
            with schema.transaction():
                if schema.current(latest) >= planned.number:
                    continue
                schema.run(planned.step)
                schema.record(planned.number, planned.name, datetime.now(timezone.utc).isoformat(timespec="seconds"))
            applied.append(planned.number)
    return applied
