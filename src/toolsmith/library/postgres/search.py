"""Full-text search on PostgreSQL: a weighted tsvector per served tool, a GIN index.

The text is cut into tokens by :mod:`toolsmith.library.search` exactly as for SQLite
(names split on ``_`` and camelCase, CJK runs as bigrams, query stop words dropped);
PostgreSQL stems them (``toolsmith_lexemes``) and does the matching and ranking. Field
weights follow the SQLite index (name 10 : keywords 4 : description 1).
"""

from __future__ import annotations

from typing import Any

from toolsmith.library.models import SearchHit, ToolSpec
from toolsmith.library.rows import VERSION_COLUMNS, to_version
from toolsmith.library.search import MAX_LIMIT, query_terms, tokens

# ts_rank's weight array is {D, C, B, A}: description in C, keywords in B, name in A.
_WEIGHTS = "{0, 0.1, 0.4, 1.0}"
# Normalisation 1 divides by 1 + log(document length), like BM25's length term.
_NORMALISATION = 1

# How many of each query lexeme's best postings are read, and how many of the tools they
# name are ranked: enough that the bench's relevance figures match ranking every match.
_PER_LEXEME = 400
_CANDIDATES = 300

_DOCUMENT = (
    "toolsmith_weighted(%s::text[], 'A') || toolsmith_weighted(%s::text[], 'B') || toolsmith_weighted(%s::text[], 'C')"
)


def _fields(spec: ToolSpec) -> tuple[list[str], list[str], list[str]]:
    keywords = [tok for word in spec.keywords for tok in tokens(word)]
    return tokens(spec.name), keywords, tokens(spec.description)


def index(conn: Any, version_id: int, spec: ToolSpec) -> None:
    conn.execute(
        f"INSERT INTO search_index (version_id, document) VALUES (%s, {_DOCUMENT}) "
        f"ON CONFLICT (version_id) DO UPDATE SET document = EXCLUDED.document",
        (version_id, *_fields(spec)),
    )


def unindex(conn: Any, version_id: int) -> None:
    conn.execute("DELETE FROM search_index WHERE version_id = %s", (version_id,))


def rebuild(conn: Any) -> int:
    conn.execute("DELETE FROM search_index")
    rows = conn.execute(
        f"SELECT {VERSION_COLUMNS} FROM tools t JOIN versions v "
        "ON v.name = t.name AND v.version = t.active_version "
        "LEFT JOIN stats s ON s.version_id = v.id WHERE v.status = 'active'"
    ).fetchall()
    with conn.cursor() as cursor:  # one pipelined batch, not a round trip per tool
        cursor.executemany(
            f"INSERT INTO search_index (version_id, document) VALUES (%s, {_DOCUMENT})",
            [(int(row["id"]), *_fields(to_version(row).spec)) for row in rows],
        )
    # Fresh statistics, or the planner may ignore the GIN index after a bulk load.
    conn.execute("ANALYZE search_index")
    conn.execute("ANALYZE search_postings")
    conn.execute("ANALYZE versions")
    return len(rows)


def search(conn: Any, query: str, limit: int) -> list[SearchHit]:
    """The ``limit`` best served active tools for ``query``, best first (higher scores).

    Candidates are the union of each query lexeme's best postings, summed per tool; only
    those are ranked with ts_rank, so the cost no longer grows with how many tools match.
    """
    terms = query_terms(query)
    if not terms:
        return []
    limit = min(limit, MAX_LIMIT)
    # toolsmith_query ORs quoted lexemes built by PostgreSQL itself, so no user text is
    # ever parsed as tsquery syntax.
    rows = conn.execute(
        "WITH q AS (SELECT DISTINCT unnest(toolsmith_lexemes(%s::text[])) AS lexeme), "
        "candidates AS (SELECT p.version_id FROM q CROSS JOIN LATERAL "
        "  (SELECT s.version_id, s.weight FROM search_postings s WHERE s.lexeme = q.lexeme "
        "   ORDER BY s.weight DESC LIMIT %s) p "
        "  GROUP BY p.version_id ORDER BY SUM(p.weight) DESC, p.version_id LIMIT %s), "
        # A subquery per candidate: a join let the planner hash the whole index table. The
        # tsquery is an InitPlan, made once even in a generic plan of a prepared statement.
        "hits AS (SELECT c.version_id, (SELECT ts_rank(%s::real[], i.document, "
        "  (SELECT toolsmith_query(%s::text[])), %s) FROM search_index i WHERE i.version_id = c.version_id) AS rank "
        "  FROM candidates c "
        "  ORDER BY rank DESC, c.version_id LIMIT %s) "
        f"SELECT hits.rank AS rank, {VERSION_COLUMNS} FROM hits "
        "JOIN versions v ON v.id = hits.version_id LEFT JOIN stats s ON s.version_id = v.id "
        "WHERE v.status = 'active' ORDER BY hits.rank DESC, v.id",
        (terms, _PER_LEXEME, max(_CANDIDATES, 4 * limit), _WEIGHTS, terms, _NORMALISATION, limit),
    ).fetchall()
    return [SearchHit(tool=to_version(row), score=float(row["rank"])) for row in rows]
