"""The SQLite and PostgreSQL schemas, migrated fresh, match: drift fails here, not for a user.

Both live schemas are read from the catalogs (:mod:`schema_catalog`) and compared fact by
fact: tables, column order, each column's type, nullability and default, primary keys,
unique constraints, indexes (columns, uniqueness, predicate), CHECK constraints, foreign
keys and triggers (table, timing, events, columns). Where the dialects legitimately
differ, each difference is named below with its reason; a named difference that goes away
fails too, so the list stays true.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from library_backends import postgres_schema
from schema_catalog import Facts, postgres_facts, sqlite_facts
from toolsmith.library import ToolLibrary
from toolsmith.library.migrations import MIGRATIONS, POSTGRESQL, SQLITE

_FTS5 = "SQLite searches with an FTS5 table; PostgreSQL with search_index and search_postings"
_POSTINGS = "PostgreSQL ranks from per-lexeme postings that a trigger keeps in step with search_index"

ONLY_SQLITE: dict[tuple[str, str], str] = {
    ("table", "tools_fts"): _FTS5,
    ("columns", "tools_fts"): _FTS5,
    ("column", "tools_fts.name"): _FTS5,
    ("column", "tools_fts.keywords"): _FTS5,
    ("column", "tools_fts.description"): _FTS5,
}
# FTS5 keeps its index in shadow tables it makes and owns; their layout is SQLite's business.
FTS5_SHADOWS = tuple(f"tools_fts_{suffix}" for suffix in ("config", "content", "data", "docsize", "idx"))

ONLY_POSTGRESQL: dict[tuple[str, str], str] = {
    ("table", "search_index"): _FTS5,
    ("columns", "search_index"): _FTS5,
    ("column", "search_index.version_id"): _FTS5,
    ("column", "search_index.document"): _FTS5,
    ("primary key", "search_index"): _FTS5,
    ("foreign key", "search_index(version_id) -> versions(id)"): _FTS5,
    ("index", "search_index_document"): "the GIN index that serves tsvector matches",
    ("table", "search_postings"): _POSTINGS,
    ("columns", "search_postings"): _POSTINGS,
    ("column", "search_postings.lexeme"): _POSTINGS,
    ("column", "search_postings.version_id"): _POSTINGS,
    ("column", "search_postings.weight"): _POSTINGS,
    ("foreign key", "search_postings(version_id) -> search_index(version_id)"): _POSTINGS,
    ("index", "search_postings_best"): _POSTINGS,
    ("index", "search_postings_by_version"): _POSTINGS,
    ("trigger", "search_index_postings"): _POSTINGS,
    ("trigger", "audit_no_truncate"): "SQLite has no TRUNCATE, so nothing to refuse",
    ("trigger", "audit_announce"): "LISTEN/NOTIFY tells other machines of a change; SQLite readers poll",
}

_NULL_KEY = "SQLite lets a PRIMARY KEY that is not INTEGER hold NULL unless NOT NULL is declared; PostgreSQL never does"
DIFFERENT: dict[tuple[str, str], str] = {
    ("column", "tools.name"): _NULL_KEY,
    ("column", "purge_allow.name"): _NULL_KEY,
}


def drift(sqlite: Facts, postgres: Facts) -> list[str]:
    """Every difference between the two schemas that is not named above, one line each."""
    shadows = {key for key in sqlite if key[1].split(".")[0] in FTS5_SHADOWS}
    problems = [f"only in SQLite: {key}" for key in sorted(set(sqlite) - set(postgres) - shadows - set(ONLY_SQLITE))]
    problems += [f"only in PostgreSQL: {key}" for key in sorted(set(postgres) - set(sqlite) - set(ONLY_POSTGRESQL))]
    shared = set(sqlite) & set(postgres)
    for key in sorted(shared):
        if (sqlite[key] != postgres[key]) != (key in DIFFERENT):
            problems.append(f"{key}: SQLite {sqlite[key]!r}, PostgreSQL {postgres[key]!r}")
    for key in sorted(set(ONLY_SQLITE) - (set(sqlite) - set(postgres))):
        problems.append(f"named as SQLite's only, but it is not: {key}")
    for key in sorted(set(ONLY_POSTGRESQL) - (set(postgres) - set(sqlite))):
        problems.append(f"named as PostgreSQL's only, but it is not: {key}")
    problems += [f"named as different, but it is not in both: {key}" for key in sorted(set(DIFFERENT) - shared)]
    problems += [f"FTS5 shadow table {name} is missing" for name in FTS5_SHADOWS if ("table", name) not in sqlite]
    return problems


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[sqlite3.Connection, Any]]:
    """A fresh SQLite library and a fresh PostgreSQL one, each migrated by opening it."""
    import psycopg

    path = tmp_path / "library.db"
    ToolLibrary(path).close()
    with postgres_schema() as url:
        ToolLibrary(url).close()
        lite = sqlite3.connect(str(path), isolation_level=None)
        with psycopg.connect(url, autocommit=True) as pg:
            yield lite, pg
        lite.close()


@pytest.mark.postgres
def test_the_live_schemas_match_but_for_the_named_differences(live: tuple[sqlite3.Connection, Any]) -> None:
    lite, pg = live
    sqlite, postgres = sqlite_facts(lite), postgres_facts(pg)
    assert drift(sqlite, postgres) == []
    shared = set(sqlite) & set(postgres)
    assert {kind for kind, _ in shared} == {
        "table", "columns", "column", "primary key", "unique", "index", "check", "foreign key", "trigger",
    }  # fmt: skip


@pytest.mark.postgres
def test_drift_on_either_side_is_named(live: tuple[sqlite3.Connection, Any]) -> None:
    lite, pg = live
    lite.execute("CREATE INDEX versions_by_task ON versions (task)")
    lite.execute("DROP TRIGGER audit_append_only_delete")
    pg.execute("ALTER TABLE audit ALTER COLUMN actor DROP NOT NULL")
    pg.execute("ALTER TABLE versions ADD COLUMN tags TEXT NOT NULL DEFAULT ''")
    problems = drift(sqlite_facts(lite), postgres_facts(pg))
    assert "only in SQLite: ('index', 'versions_by_task')" in problems
    assert "only in PostgreSQL: ('trigger', 'audit_append_only_delete')" in problems
    assert "only in PostgreSQL: ('column', 'versions.tags')" in problems
    assert any(p.startswith("('columns', 'versions')") for p in problems)  # the order of columns differs
    assert "('column', 'audit.actor'): SQLite ('text', True, None), PostgreSQL ('text', False, None)" in problems


def test_each_dialect_numbers_its_migrations_as_existing_libraries_recorded_them() -> None:
    """Libraries in use recorded these numbers; a migration inserted mid-list would renumber them."""
    assert [(m.number, m.name) for m in SQLITE][:4] == [
        (1, "initial schema"),
        (2, "full-text search index"),
        (3, "search prior documents"),
        (4, "tool test cases"),
    ]
    assert [(m.number, m.name) for m in POSTGRESQL][:6] == [
        (1, "initial schema"),
        (2, "guards and change notices"),
        (3, "full-text search index"),
        (4, "tool test cases"),
        (5, "search query function"),
        (6, "search postings"),
    ]
    names = [m.name for m in MIGRATIONS]
    assert len(set(names)) == len(names)
    assert all(m.sqlite is not None or m.postgresql is not None for m in MIGRATIONS)
