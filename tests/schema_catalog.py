"""A live database schema, read from the catalog, as comparable facts.

Both readers return the same shape: ``{(kind, name): detail}``, where kind is ``table``,
``columns`` (their order), ``column``, ``primary key``, ``unique``, ``index``, ``check``,
``foreign key`` or ``trigger``. Details are normalised only where the dialects spell one
thing two ways: integer/bigint, real/double precision, ``'x'::text`` for ``'x'``, the
parentheses PostgreSQL puts around an index predicate. SQLite is read from
``sqlite_master`` and its pragmas, PostgreSQL from ``information_schema`` and ``pg_catalog``.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

Facts = dict[tuple[str, str], Any]

_TYPES = {
    "integer": "integer",
    "bigint": "integer",
    "smallint": "integer",
    "text": "text",
    "real": "real",
    "double precision": "real",
}


def _type(declared: str) -> str:
    return _TYPES.get(declared.lower(), declared.lower())


def _default(value: str | None) -> str | None:
    if value is None:
        return None
    text = re.sub(r"::[a-z ]+$", "", value.strip())
    try:
        return repr(float(text))
    except ValueError:
        return text


def _predicate(text: str | None) -> str | None:
    if text is None:
        return None
    return re.sub(r"[()\s]", "", re.sub(r"::[a-z ]+", "", text)).lower()


# --- SQLite ---------------------------------------------------------------------------


def sqlite_facts(conn: sqlite3.Connection) -> Facts:
    facts: Facts = {}
    tables = [
        (str(name), str(sql or ""))
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    for table, sql in tables:
        facts[("table", table)] = "virtual" if sql.upper().startswith("CREATE VIRTUAL TABLE") else True
        columns = conn.execute(f"PRAGMA table_info('{table}')").fetchall()
        facts[("columns", table)] = tuple(str(c[1]) for c in columns)
        keys = sorted((int(c[5]), str(c[1])) for c in columns if c[5])
        if keys:
            facts[("primary key", table)] = tuple(name for _, name in keys)
        for _, name, declared, notnull, default, pk in columns:
            # An INTEGER PRIMARY KEY is the rowid, which is never NULL.
            rowid = pk and str(declared).upper() == "INTEGER" and len(keys) == 1
            facts[("column", f"{table}.{name}")] = (_type(str(declared)), bool(notnull or rowid), _default(default))
        _sqlite_indexes(conn, table, facts)
        _sqlite_checks(sql, table, [str(c[1]) for c in columns], facts)
        for fk in conn.execute(f"PRAGMA foreign_key_list('{table}')").fetchall():
            facts[("foreign key", f"{table}({fk[3]}) -> {fk[2]}({fk[4]})")] = str(fk[6]).lower()
    for name, table, sql in conn.execute("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"):
        facts[("trigger", str(name))] = _sqlite_trigger(str(table), str(sql))
    return facts


def _sqlite_indexes(conn: sqlite3.Connection, table: str, facts: Facts) -> None:
    for _, name, unique, origin, _partial in conn.execute(f"PRAGMA index_list('{table}')").fetchall():
        columns = tuple(str(r[2]) for r in conn.execute(f"PRAGMA index_info('{name}')").fetchall())
        if origin == "u":
            facts[("unique", f"{table}({', '.join(columns)})")] = True
        elif origin == "c":
            row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)).fetchone()
            where = re.search(r"\bWHERE\b(.*)$", str(row[0]), flags=re.S | re.I)
            facts[("index", str(name))] = (table, columns, bool(unique), _predicate(where.group(1) if where else None))


def _sqlite_checks(sql: str, table: str, columns: list[str], facts: Facts) -> None:
    """CHECK constraints, as the columns each one reads (SQLite keeps only their text)."""
    for start in (m.end() for m in re.finditer(r"\bCHECK\s*\(", sql, flags=re.I)):
        depth, end = 1, start
        while depth:
            depth += {"(": 1, ")": -1}.get(sql[end], 0)
            end += 1
        words = set(re.findall(r"\b\w+\b", re.sub(r"'[^']*'", "", sql[start : end - 1])))
        facts[("check", f"{table}({', '.join(c for c in columns if c in words)})")] = True


def _sqlite_trigger(table: str, sql: str) -> tuple[str, str, frozenset[str], frozenset[str]]:
    found = re.search(
        r"CREATE\s+TRIGGER\s+\w+\s+(BEFORE|AFTER|INSTEAD\s+OF)\s+(DELETE|INSERT|UPDATE)(?:\s+OF\s+(.*?))?\s+ON\s",
        sql,
        flags=re.S | re.I,
    )
    assert found, sql
    timing, event, columns = found.groups()
    names = frozenset(c.strip() for c in columns.split(",")) if columns else frozenset()
    return table, timing.lower(), frozenset({event.lower()}), names


# --- PostgreSQL -------------------------------------------------------------------------

_PG_TABLES = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
_PG_COLUMNS = """
SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position
"""
_PG_INDEXES = """
SELECT t.relname, i.relname, x.indisunique, pg_get_expr(x.indpred, x.indrelid),
       ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY AS k(n, o)
             JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.n ORDER BY k.o)::text[],
       (SELECT c.contype FROM pg_constraint c WHERE c.conindid = i.oid AND c.contype IN ('p', 'u'))
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
WHERE t.relnamespace = current_schema()::regnamespace
"""
_PG_CONSTRAINTS = """
SELECT t.relname, c.contype, c.confdeltype, r.relname,
       ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(n, o)
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o)::text[],
       ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(n, o)
             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.o)::text[]
FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid LEFT JOIN pg_class r ON r.oid = c.confrelid
WHERE t.relnamespace = current_schema()::regnamespace AND c.contype IN ('c', 'f')
"""
_PG_TRIGGERS = """
SELECT g.tgname, t.relname, g.tgtype,
       ARRAY(SELECT a.attname FROM unnest(g.tgattr) AS k(n)
             JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.n)::text[]
FROM pg_trigger g JOIN pg_class t ON t.oid = g.tgrelid
WHERE t.relnamespace = current_schema()::regnamespace AND NOT g.tgisinternal
"""
_FK_ACTIONS = {"a": "no action", "r": "restrict", "c": "cascade", "n": "set null", "d": "set default"}


def postgres_facts(conn: Any) -> Facts:
    """``conn``: a psycopg connection whose current schema holds the library."""
    facts: Facts = {}
    for (table,) in conn.execute(_PG_TABLES).fetchall():
        facts[("table", table)] = True
    order: dict[str, list[str]] = {}
    for table, column, declared, nullable, default in conn.execute(_PG_COLUMNS).fetchall():
        order.setdefault(table, []).append(column)
        facts[("column", f"{table}.{column}")] = (_type(declared), nullable == "NO", _default(default))
    facts.update({("columns", table): tuple(columns) for table, columns in order.items()})
    for table, name, unique, predicate, columns, constraint in conn.execute(_PG_INDEXES).fetchall():
        if constraint == "p":
            facts[("primary key", table)] = tuple(columns)
        elif constraint == "u":
            facts[("unique", f"{table}({', '.join(columns)})")] = True
        else:
            facts[("index", name)] = (table, tuple(columns), bool(unique), _predicate(predicate))
    for table, kind, on_delete, target, columns, targets in conn.execute(_PG_CONSTRAINTS).fetchall():
        if kind == "c":
            facts[("check", f"{table}({', '.join(columns)})")] = True
        else:
            key = f"{table}({', '.join(columns)}) -> {target}({', '.join(targets)})"
            facts[("foreign key", key)] = _FK_ACTIONS[on_delete]
    for name, table, bits, columns in conn.execute(_PG_TRIGGERS).fetchall():
        timing = "before" if bits & 2 else "instead of" if bits & 64 else "after"
        events = frozenset(
            e for bit, e in ((4, "insert"), (8, "delete"), (16, "update"), (32, "truncate")) if bits & bit
        )
        facts[("trigger", name)] = (table, timing, events, frozenset(columns))
    return facts
