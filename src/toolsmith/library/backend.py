"""The interface every library backend implements beneath :class:`ToolLibrary`.

:class:`ToolLibrary` owns the rules (versions, statuses, audit, locking between
threads); a backend owns a connection to one database and what differs between
databases: how a write transaction excludes other writers, how errors read, how the
schema is created and migrated, and how the search index is kept and queried.

SQL shared by every backend is written once with ``?`` placeholders and standard
syntax; a backend's :class:`Tx` adapts it to its driver.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from toolsmith.library.location import LibraryLocation
from toolsmith.library.models import SearchHit, ToolSpec


class Tx(ABC):
    """One connection in use: statements, plus the backend's search-index upkeep."""

    @abstractmethod
    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        """Run one statement; the result has ``fetchone``/``fetchall`` and yields rows
        that can be read by column name and by position."""

    @abstractmethod
    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    @abstractmethod
    def index(self, version_id: int, spec: ToolSpec) -> None:
        """Make a version findable (it just became the served active version)."""

    @abstractmethod
    def unindex(self, version_id: int) -> None: ...

    @abstractmethod
    def ids_copied(self) -> None:
        """Rows were inserted with explicit ids (a copy): make new rows continue after them."""


class Backend(ABC):
    """A connection to one library database. Not thread-safe: ToolLibrary serialises use."""

    location: LibraryLocation
    #: The driver's exception base classes; ToolLibrary hands them to :meth:`translate`.
    errors: tuple[type[BaseException], ...] = ()
    #: Driver errors only a mistake in toolsmith causes (the driver's API misused, SQL that
    #: does not parse): ToolLibrary lets them go on as the bugs they are, untranslated.
    bugs: tuple[type[BaseException], ...] = ()
    #: Whether :meth:`wait_for_change` returns as soon as another connection changes something.
    announces_changes = False

    @abstractmethod
    def reading(self) -> AbstractContextManager[Tx]:
        """A connection for reads; each statement sees one consistent snapshot."""

    @abstractmethod
    def snapshot(self) -> AbstractContextManager[Tx]:
        """A read-only transaction: several statements see one consistent state."""

    @abstractmethod
    def writing(self) -> AbstractContextManager[Tx]:
        """One write transaction that excludes every other writer of this library
        (on any connection, in any process), committed on success, rolled back on error."""

    @abstractmethod
    def translate(self, exc: BaseException) -> Exception:
        """The driver error as an error of our hierarchy (naming the location, no secrets)."""

    @abstractmethod
    def search(self, tx: Tx, query: str, limit: int) -> list[SearchHit]: ...

    @abstractmethod
    def rebuild_index(self, tx: Tx) -> int:
        """Re-create every search-index row from the served versions; returns their number."""

    @abstractmethod
    def close(self) -> None: ...

    def wait_for_change(self, timeout_s: float) -> bool:
        """Block until another connection changes the library, at most ``timeout_s``.

        True means "something changed"; False means "timed out, look for yourself".
        Backends without change notices just wait, so callers poll.
        """
        time.sleep(max(timeout_s, 0.0))
        return False
