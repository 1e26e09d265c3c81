"""The relevance floor: does a found tool really match the task, or only share a word?

BM25 ranks well but never says "nothing fits": a task about restaurant bookings still
gets the tool that shares one word with it. The floor measures *coverage*, the share
of the query's intent words that the tool's name, keywords and description contain,
and drops hits below it. It needs no corpus statistics, so every library backend can
apply the same floor to its own candidates (SQLite FTS5 today, PostgreSQL next).

Three rules keep coverage fair to parameterised tools:

* **Values are optional.** Tools take their values as arguments, so a word that looks
  like a value (quoted text, a number and its unit, a URL or path, a capitalised name,
  a ticker, a time word such as "tomorrow") does not count against a tool that lacks it; it still
  counts for a tool that has it ("PDF", "IP").
* **A CJK run is one unit.** Chinese and Japanese have no word boundaries, so a run of
  CJK text is covered when any of its meaningful bigrams matches.
* **Word forms are folded** by a light suffix stemmer on both sides, so "translation"
  covers "translate" and "holidays" covers "holiday".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from toolsmith.library.models import SearchHit
from toolsmith.library.search import CJK_RANGES, query_terms, tokens

DEFAULT_FLOOR = 0.3
"""Minimum coverage for a hit to count as a match (see ``bench/search.py`` for the trade-off)."""

_CJK_RUN = re.compile(f"[{CJK_RANGES}]+")
_VALUE = re.compile(
    r"'[^']*'|\"[^\"]*\"|“[^”]*”"  # quoted text
    r"|\S*[/.:@]\S*\w"  # URLs, paths, domains, repos, e-mail addresses, dotted numbers
    r"|(?<=\w[ ,;])[A-Z][\w.-]*"  # a capitalised word that does not start the sentence
    r"|\b[A-Z]{2,}[\w.]*"  # acronyms and tickers
    r"|\S*\d\S*(?:\s+[^\W\d_]+)?"  # anything with a digit, and a unit word after a number
)
_TIME_WORDS = frozenset(
    [
        "today",
        "tomorrow",
        "tonight",
        "yesterday",
        "now",
        "next",
        "last",
        "this",
        "week",
        "month",
        "year",
        "current",
        "latest",
        "recent",
        "morning",
        "evening",
        "afternoon",
        "weekend",
    ]
)
_SUFFIXES = ("ion", "ing", "ed", "er")


@functools.lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """A light suffix stemmer: enough to fold plurals and the common verb/noun endings."""
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    return word


@dataclass(frozen=True)
class QueryUnits:
    """A query split into what the tool must cover and what it may lack."""

    intent: tuple[frozenset[str], ...]  # each unit: the forms that cover it
    values: tuple[frozenset[str], ...]

    @classmethod
    def of(cls, query: str) -> QueryUnits:
        value_words = {tok for match in _VALUE.finditer(query) for tok in tokens(match.group())}
        intent: list[frozenset[str]] = []
        values: list[frozenset[str]] = []
        for term in query_terms(_CJK_RUN.sub(" ", query)):
            unit = frozenset({stem(term)})
            (values if term in value_words or term in _TIME_WORDS else intent).append(unit)
        for run in _CJK_RUN.findall(query):
            grams = frozenset(query_terms(run))
            if grams:
                intent.append(grams)
        return cls(tuple(intent), tuple(values))


def document_forms(parts: Iterable[str]) -> frozenset[str]:
    """The stemmed tokens of a tool's searchable text (name, keywords, description)."""
    return frozenset(stem(tok) for part in parts for tok in tokens(part))


def coverage(query: str | QueryUnits, document: frozenset[str]) -> float:
    """Share of the query's intent the document covers, in [0, 1]; 0 when nothing matches.

    Matched values count on both sides of the fraction, unmatched values on neither.
    """
    units = QueryUnits.of(query) if isinstance(query, str) else query
    intent_hits = sum(bool(unit & document) for unit in units.intent)
    value_hits = sum(bool(unit & document) for unit in units.values)
    if intent_hits + value_hits == 0:
        return 0.0
    return (intent_hits + value_hits) / (len(units.intent) + value_hits)


def candidates(limit: int, floor: float) -> int:
    """How many BM25 candidates a backend should fetch so ``limit`` survive the floor."""
    return limit if floor <= 0 else 2 * limit + 5


def above_floor(query: str, hits: list[SearchHit], floor: float, limit: int) -> list[SearchHit]:
    """The first ``limit`` hits whose coverage of ``query`` reaches ``floor``, with it set."""
    units = QueryUnits.of(query)
    kept: list[SearchHit] = []
    for hit in hits:
        if len(kept) == limit:
            break
        spec = hit.tool.spec
        match = coverage(units, _forms(spec.name, spec.keywords, spec.description))
        if match >= floor and (match > 0 or floor <= 0):
            kept.append(replace(hit, match=round(match, 3)))
    return kept


@functools.lru_cache(maxsize=4096)
def _forms(name: str, keywords: tuple[str, ...], description: str) -> frozenset[str]:
    return document_forms([name, *keywords, description])
