"""The library's schema on SQLite: each migration's SQL, and the runner's view of one file.

:mod:`toolsmith.library.migrations.runner` holds the one list of migrations and applies
them; this module gives the SQLite text of each step and :class:`SqliteSchema`, which
reads the recorded schema number, opens each migration's ``BEGIN IMMEDIATE`` and records
it (``schema_migrations``, ``PRAGMA user_version``, toolsmith's ``application_id``).
The check "is it applied yet?" happens under the write lock, so several processes
opening a new library at once apply each migration exactly once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from toolsmith.errors import CorruptLibraryError
from toolsmith.library.db import APPLICATION_ID, immediate

# The content columns of a version: everything except status and status_reason.
_IMMUTABLE = (
    "id, name, version, hash, code_hash, description, parameters, code, test_args, requirements, "
    "keywords, gate, task, model, sources, prov_created_at, session_id, origin, "
    "parent_version, created_at"
)

INITIAL = f"""
CREATE TABLE schema_migrations (
    number INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE tools (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    latest_version INTEGER NOT NULL DEFAULT 0,
    active_version INTEGER
);
CREATE TABLE versions (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL REFERENCES tools(name),
    version INTEGER NOT NULL CHECK (version >= 1),
    hash TEXT NOT NULL,
    code_hash TEXT NOT NULL,
    description TEXT NOT NULL,
    parameters TEXT NOT NULL,
    code TEXT NOT NULL,
    test_args TEXT NOT NULL,
    requirements TEXT NOT NULL,
    keywords TEXT NOT NULL,
    gate TEXT NOT NULL,
    task TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    sources TEXT NOT NULL DEFAULT '[]',
    prov_created_at TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    origin TEXT NOT NULL DEFAULT 'agent',
    parent_version INTEGER,
    status TEXT NOT NULL CHECK (status IN ('active', 'pending', 'quarantined', 'retired')),
    status_reason TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (name, version)
);
CREATE INDEX versions_by_hash ON versions (name, hash);
CREATE INDEX versions_by_code ON versions (code_hash);
-- The database itself guarantees at most one active version per tool.
CREATE UNIQUE INDEX versions_one_active ON versions (name) WHERE status = 'active';
CREATE TABLE stats (
    version_id INTEGER PRIMARY KEY REFERENCES versions(id),
    calls INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    total_latency_ms REAL NOT NULL DEFAULT 0,
    last_called_at TEXT
);
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    name TEXT,
    version INTEGER,
    reason TEXT,
    details TEXT NOT NULL DEFAULT '{{}}'
);
CREATE INDEX audit_by_name ON audit (name, id);
-- Rows exist here only inside a purge transaction: the delete triggers look for them.
CREATE TABLE purge_allow (name TEXT PRIMARY KEY);

CREATE TRIGGER versions_immutable BEFORE UPDATE OF {_IMMUTABLE} ON versions
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: tool versions are immutable');
END;
CREATE TRIGGER versions_no_delete BEFORE DELETE ON versions
WHEN NOT EXISTS (SELECT 1 FROM purge_allow WHERE name = OLD.name)
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: tool versions are deleted only by purge');
END;
CREATE TRIGGER stats_no_delete BEFORE DELETE ON stats
WHEN NOT EXISTS (
    SELECT 1 FROM purge_allow p JOIN versions v ON v.name = p.name WHERE v.id = OLD.version_id
)
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: usage stats are deleted only by purge');
END;
CREATE TRIGGER tools_fixed_identity BEFORE UPDATE OF name, created_at ON tools
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: a tool keeps its name and creation time');
END;
CREATE TRIGGER tools_no_delete BEFORE DELETE ON tools
WHEN NOT EXISTS (SELECT 1 FROM purge_allow WHERE name = OLD.name)
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: tools are deleted only by purge');
END;
CREATE TRIGGER audit_append_only_update BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: the audit trail is append-only');
END;
CREATE TRIGGER audit_append_only_delete BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: the audit trail is append-only');
END;
"""

# Text is pre-processed in Python (see search.py) before it reaches this index, so the
# tokenizer only has to split on spaces, fold case and stem English words.
SEARCH_INDEX = """
CREATE VIRTUAL TABLE tools_fts USING fts5 (
    name, keywords, description, tokenize = 'porter unicode61'
);
INSERT INTO tools_fts (tools_fts, rank) VALUES ('rank', 'bm25(10.0, 4.0, 1.0)');
"""


# FTS5's BM25 clamps the IDF of any term found in half the documents or more to ~0, so in
# a library of one or two tools every score was ~0. Prior documents (negative rowids, one
# private-use token that no query can produce) act as IDF smoothing: real terms always
# keep a positive weight, and at 100k tools their effect vanishes.
PRIOR_DOCUMENTS = 100
PRIOR_TOKEN = "\ue000"


def add_prior_documents(conn: sqlite3.Connection) -> None:
    # Sized like a typical tool (name, a few keywords, a one-line description), so the
    # average document length BM25 normalises by stays realistic.
    name, keywords, description = (" ".join([PRIOR_TOKEN] * n) for n in (3, 3, 14))
    conn.executemany(
        "INSERT INTO tools_fts (rowid, name, keywords, description) VALUES (?, ?, ?, ?)",
        [(-i, name, keywords, description) for i in range(1, PRIOR_DOCUMENTS + 1)],
    )


# Tools carry their own test cases (issue #10); old versions get none. The new column is
# as immutable as the others, by a trigger of its own.
TESTS = """
ALTER TABLE versions ADD COLUMN tests TEXT NOT NULL DEFAULT '[]';
CREATE TRIGGER versions_tests_immutable BEFORE UPDATE OF tests ON versions
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: tool versions are immutable');
END;
"""


# What an approval was given (issue #21): the version's own tests as they ran, the sandbox
# and its version. Bound to the version's hash by a trigger, append-only, deleted only by purge.
EVIDENCE = """
CREATE TABLE evidence (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    version_id INTEGER NOT NULL REFERENCES versions(id),
    hash TEXT NOT NULL,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    details TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX evidence_by_version ON evidence (version_id, id);
CREATE TRIGGER evidence_bound_to_hash BEFORE INSERT ON evidence
WHEN NEW.hash IS NOT (SELECT hash FROM versions WHERE id = NEW.version_id)
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: evidence must carry its version''s hash');
END;
CREATE TRIGGER evidence_append_only BEFORE UPDATE ON evidence
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: approval evidence is append-only');
END;
CREATE TRIGGER evidence_no_delete BEFORE DELETE ON evidence
WHEN NOT EXISTS (
    SELECT 1 FROM purge_allow p JOIN versions v ON v.name = p.name WHERE v.id = OLD.version_id
)
BEGIN
    SELECT RAISE(ABORT, 'toolsmith: approval evidence is deleted only by purge');
END;
"""


class SqliteSchema:
    """One SQLite library file as :func:`~toolsmith.library.migrations.runner.migrate` sees it."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    def current(self, latest: int) -> int:
        """The schema number of the file (0 for an empty database). Read-only.

        The header and the schema are read in one read transaction: read separately,
        another process's first migration could commit in between, and a half-seen new
        library would look like a foreign database.
        """
        if self.conn.in_transaction:
            return self._current(latest)
        self.conn.execute("BEGIN")
        try:
            return self._current(latest)
        finally:
            self.conn.execute("COMMIT")

    def _current(self, latest: int) -> int:
        conn, path = self.conn, self.path
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        tables = [
            str(r[0])
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
                "ORDER BY name"
            )
        ]
        if app_id == 0:
            if not tables:
                return 0
            shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
            raise CorruptLibraryError(path, f"a foreign SQLite database with tables {shown}")
        if app_id != APPLICATION_ID:
            raise CorruptLibraryError(path, f"SQLite application_id {app_id:#x} is not toolsmith's")
        if "schema_migrations" not in tables:
            raise CorruptLibraryError(path, "the schema_migrations table is missing")
        number = int(conn.execute("SELECT COALESCE(MAX(number), 0) FROM schema_migrations").fetchone()[0])
        if number > latest:
            raise CorruptLibraryError(
                path,
                f"it uses schema {number}, newer than the {latest} this toolsmith knows; upgrade toolsmith to open it",
            )
        return number

    def exclusive(self) -> AbstractContextManager[object]:
        return nullcontext()  # each migration's BEGIN IMMEDIATE already excludes other writers

    def transaction(self) -> AbstractContextManager[object]:
        return immediate(self.conn)

    def run(self, step: str | Callable[[sqlite3.Connection], None]) -> None:
        if callable(step):
            step(self.conn)
            return
        for statement in split_statements(step):
            self.conn.execute(statement)

    def record(self, number: int, name: str, applied_at: str) -> None:
        self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        self.conn.execute(
            "INSERT INTO schema_migrations (number, name, applied_at) VALUES (?, ?, ?)", (number, name, applied_at)
        )
        self.conn.execute(f"PRAGMA user_version = {number}")


def split_statements(script: str) -> list[str]:
    """Split a script into complete statements (``;`` inside a trigger body stays put).

    ``executescript`` is not used because it commits any open transaction first.
    """
    statements: list[str] = []
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            text = buffer.strip()
            if text.strip(";").strip() and not _only_comments(text):
                statements.append(text)
            buffer = ""
    return statements


def _only_comments(text: str) -> bool:
    lines = [ln.strip() for ln in text.splitlines()]
    return all(not ln or ln.startswith("--") or ln == ";" for ln in lines)
