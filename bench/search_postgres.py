"""The PostgreSQL side of ``bench/search.py --backend postgresql``.

The server is ``--postgres-url`` (or ``TOOLSMITH_TEST_POSTGRES_URL``); without one, a
throwaway cluster is started with ``scripts/postgres`` and stopped afterwards. Each
library size gets a fresh schema, dropped at the end.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "postgres"


@contextmanager
def server(url: str | None) -> Iterator[str]:
    """A PostgreSQL server URL: the given one, the test one, or a throwaway cluster."""
    given = url or os.environ.get("TOOLSMITH_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="toolsmith-bench-pg-") as tmp:
        os.chmod(tmp, 0o755)
        started = subprocess.run([str(SCRIPT), "start", tmp], check=True, capture_output=True, text=True)
        try:
            # the script prints one shell line: export NAME='URL'
            yield shlex.split(started.stdout.strip().split("=", 1)[1])[0]
        finally:
            subprocess.run([str(SCRIPT), "stop", tmp], check=False)


@contextmanager
def fresh_schema(url: str) -> Iterator[str]:
    """A library URL in a new schema of the server's database; dropped afterwards."""
    import psycopg
    from psycopg import sql

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    sep = "&" if urlsplit(url).query else "?"
    try:
        yield f"{url}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def print_backends(rows: list[dict[str, object]], query_count: int) -> None:
    """SQLite and PostgreSQL side by side, measured in the same run on the same queries."""
    print(f"\nSearch latency by backend over {query_count} queries (top-5, relevance floor on)")
    columns = [f"{'tools':>8}", f"{'sqlite p50':>10}", f"{'sqlite p99':>10}", f"{'pg p50':>9}", f"{'pg p99':>9}"]
    header = " | ".join([*columns, f"{'pg/sqlite p50':>13}"])
    print(header)
    print("-" * len(header))
    for row in rows:
        ours, pg = row["ours"], row.get("pg")
        if pg is None:
            continue
        p50, p99 = ours.p50_ms, ours.p99_ms
        pg50, pg99 = pg.p50_ms, pg.p99_ms
        print(
            f"{row['size']:>8,} | {p50:>8.3f}ms | {p99:>8.3f}ms | {pg50:>7.3f}ms | {pg99:>7.3f}ms | "
            f"{pg50 / p50:>12.1f}x"
        )
    for row in rows:
        if "pg" in row:
            print(f"postgresql at {row['size']:,}: copied in {row['pg_build_s']:.1f} s; {row['pg_quality']}")


def check_targets(rows: list[dict[str, object]]) -> bool:
    ok = True
    for row in rows:
        pg = row.get("pg")
        if pg is None or int(str(row["size"])) < 100_000:
            continue
        verdict = pg.p50_ms <= 10.0
        ok &= verdict
        print(
            f"target postgresql p50 <= 10 ms at {row['size']:,}: {'PASS' if verdict else 'FAIL'} ({pg.p50_ms:.3f} ms)"
        )
    return ok
