"""The library's schema: one list of migrations, one runner, SQL per dialect.

:mod:`~toolsmith.library.migrations.runner` holds the list (:data:`MIGRATIONS`, numbered
per dialect as :data:`SQLITE` and :data:`POSTGRESQL`) and :func:`migrate`;
:mod:`~toolsmith.library.migrations.sqlite` and
:mod:`~toolsmith.library.migrations.postgresql` hold each dialect's SQL and its
:class:`~toolsmith.library.migrations.runner.Schema` (how to identify, lock, run and
record). A database that holds anything else is refused untouched.
"""

from toolsmith.library.migrations.postgresql import CHANNEL, PostgresSchema
from toolsmith.library.migrations.runner import (
    MIGRATIONS,
    POSTGRESQL,
    SQLITE,
    Migration,
    Planned,
    Schema,
    identify,
    migrate,
)
from toolsmith.library.migrations.sqlite import SqliteSchema

__all__ = [
    "CHANNEL",
    "MIGRATIONS",
    "POSTGRESQL",
    "SQLITE",
    "Migration",
    "Planned",
    "PostgresSchema",
    "Schema",
    "SqliteSchema",
    "identify",
    "migrate",
]
