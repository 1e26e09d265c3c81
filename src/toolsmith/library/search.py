"""Full-text search over served tools: text pre-processing, the FTS5 index and the query.

The FTS5 ``unicode61`` tokenizer splits on punctuation only, so a whole run of Chinese
or Japanese text would become one token and never match a differently worded query.
We therefore pre-process every document and every query the same way in Python:
names split on ``_`` and camelCase, CJK runs become overlapping bigrams, and the result
is joined by spaces for the ``porter unicode61`` tokenizer (case folding, stemming).

Only the served, active version of each tool has a row in the index (the store keeps
it up to date inside the same transaction as every status change), so one search is a
single FTS query with a LIMIT however large the library grows.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator

from toolsmith.library.models import SearchHit, ToolSpec
from toolsmith.library.rows import VERSION_COLUMNS, to_version

MAX_LIMIT = 100
_MAX_QUERY_TERMS = 32

# Hangul Jamo, CJK radicals, kana, bopomofo, Hangul compatibility, CJK ext. A, unified
# ideographs, Hangul syllables, compatibility ideographs, half-width kana, ext. B and up.
CJK_RANGES = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0002fa1f"
)
_TOKEN = re.compile(rf"(?P<cjk>[{CJK_RANGES}]+)|(?P<word>(?:(?![{CJK_RANGES}])[^\W_])+)")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

# Words that say nothing about which tool a task needs. Only queries are filtered:
# documents keep every word, BM25 already gives common words little weight.
_STOP_EN_WORDS = """
    a about above after again all also am an and any are as at be been before being
    below both but by can could did do does doing done down during each else etc every
    few for from further had has have having he her here hers him his how i if in into
    is it its itself just let like many may me might more most much must my no nor not
    now of off on once only or other our ours out over own per please same shall she
    should so some such than that the their theirs them then there these they this
    those through to too under until up upon us very via was we were what whatever when
    where whether which while who whom whose why will with within without would you
    your yours get give gives find tell show want need needs help use using used
"""
_STOP_EN = frozenset(_STOP_EN_WORDS.split())
# Chinese (and a few Japanese) function characters: a bigram made only of these, or a
# single one of them, is dropped from queries.
_STOP_CJK_CHARS = frozenset(
    "的地得了着过是在和与及或而且把被给对向从吗呢吧啊呀么之也都就还又很请我你他她它们这那哪有个のはがをにでとも"
)
_STOP_CJK_BIGRAM_TEXT = """
    多少 什么 怎么 怎样 如何 为什 请问 一下 帮我 我们 你们 他们 可以 能否 是否 哪些 哪个 这个
    那个 一个 告诉 知道 需要 想要 使用 查询 获取 给出 现在 目前 です ます
"""
_STOP_CJK_BIGRAMS = frozenset(_STOP_CJK_BIGRAM_TEXT.split())


# --- text pre-processing -------------------------------------------------------------


def _pieces(text: str) -> Iterator[tuple[bool, str]]:
    """(is_cjk, token) pairs: CJK bigrams and lower-cased word parts."""
    text = unicodedata.normalize("NFKC", text)
    for match in _TOKEN.finditer(text):
        run = match.group("cjk")
        if run:
            if len(run) == 1:
                yield True, run
            else:
                for i in range(len(run) - 1):
                    yield True, run[i : i + 2]
        else:
            for part in _CAMEL.sub(" ", match.group("word")).split():
                yield False, part.lower()


def tokens(text: str) -> list[str]:
    """The tokens of a document text (nothing dropped)."""
    return [tok for _, tok in _pieces(text)]


def document_text(parts: Iterable[str]) -> str:
    return " ".join(tok for part in parts for tok in tokens(part))


def query_terms(text: str) -> list[str]:
    """The distinct meaningful tokens of a query, in order of appearance."""
    seen: dict[str, None] = {}
    for is_cjk, tok in _pieces(text):
        if is_cjk:
            if tok in _STOP_CJK_BIGRAMS or all(ch in _STOP_CJK_CHARS for ch in tok):
                continue
        elif tok in _STOP_EN or tok.isdigit() or len(tok) < 2:
            continue
        seen.setdefault(tok, None)
    return list(seen)[:_MAX_QUERY_TERMS]


def match_expression(text: str) -> str | None:
    """The FTS5 MATCH expression for a query, or None when nothing meaningful is left."""
    terms = query_terms(text)
    if not terms:
        return None
    # Quoting makes every term a literal string, so no user text is FTS5 syntax.
    return " OR ".join(f'"{term}"' for term in terms)


# --- the index -----------------------------------------------------------------------


def index(conn: sqlite3.Connection, version_id: int, spec: ToolSpec) -> None:
    """Make a version findable (called when it becomes the served active version)."""
    conn.execute(
        "INSERT INTO tools_fts (rowid, name, keywords, description) VALUES (?, ?, ?, ?)",
        (
            version_id,
            document_text([spec.name]),
            document_text(spec.keywords),
            document_text([spec.description]),
        ),
    )


def unindex(conn: sqlite3.Connection, version_id: int) -> None:
    conn.execute("DELETE FROM tools_fts WHERE rowid = ?", (version_id,))


def rebuild(conn: sqlite3.Connection) -> int:
    """Re-create every index row from the served versions (after a pre-processing change)."""
    conn.execute("DELETE FROM tools_fts WHERE rowid > 0")  # keep the prior documents
    rows = conn.execute(
        f"SELECT {VERSION_COLUMNS} FROM tools t JOIN versions v "
        "ON v.name = t.name AND v.version = t.active_version "
        "LEFT JOIN stats s ON s.version_id = v.id WHERE v.status = 'active'"
    ).fetchall()
    for row in rows:
        index(conn, int(row["id"]), to_version(row).spec)
    return len(rows)


def search(conn: sqlite3.Connection, query: str, limit: int) -> list[SearchHit]:
    """The ``limit`` best served active tools for ``query`` by BM25, best first."""
    expression = match_expression(query)
    if expression is None:
        return []
    rows = conn.execute(
        f"SELECT hits.rank AS rank, {VERSION_COLUMNS} FROM "
        "(SELECT rowid AS id, rank FROM tools_fts WHERE tools_fts MATCH ? "
        " ORDER BY rank LIMIT ?) AS hits "
        "JOIN versions v ON v.id = hits.id LEFT JOIN stats s ON s.version_id = v.id "
        "WHERE v.status = 'active' ORDER BY hits.rank",
        (expression, min(limit, MAX_LIMIT)),
    ).fetchall()
    # FTS5's bm25() is lower-is-better; callers get higher-is-better.
    return [SearchHit(tool=to_version(row), score=-float(row["rank"])) for row in rows]
