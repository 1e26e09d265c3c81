"""The relevance floor: does a found tool really match the task, or only share a word?

BM25 ranks well but never says "nothing fits": a task about restaurant bookings still
gets the tool that shares one word with it. The floor measures *coverage*, the share
of the query's intent words that the tool's name, keywords and description contain,
and drops hits below it. It needs no corpus statistics, so every library backend can
apply the same floor to its own candidates (SQLite FTS5 and PostgreSQL).

Four rules keep coverage fair to parameterised tools:

* **Values are optional.** Tools take their values as arguments, so a word that looks
  like a value (quoted text, a number and its unit, a URL or path, a capitalised name,
  a ticker) does not count against a tool that lacks it; it still counts for a tool that
  has it ("PDF", "IP"). Time words ("tomorrow", "latest") count on neither side.
* **A command's verb is an action, not a word.** In "book a table" the verb is what
  the task wants done; it is covered only by what a tool does (the first word of its
  name, or a description verb followed by a noun phrase), never by a noun of the same
  spelling ("the book details"), and it weighs double. Without this, "book a table at a
  restaurant" matches an ISBN tool that returns its results "as a table".
* **A CJK run is one unit.** Chinese and Japanese have no word boundaries, so a run of
  CJK text is covered when any of its meaningful bigrams matches.
* **Word forms are folded** by a light suffix stemmer on both sides, so "translation"
  covers "translate" and "holidays" covers "holiday".

Verbs are told from nouns by one cue, the word that follows: English commands put a
noun phrase right after the verb ("book a table"), unless the determiner opens a time
phrase ("weather this weekend"). It misses verbs that share a sense with a tool's
("order a pizza" still meets a tool that orders lists); ``bench/relevance_heldout.py``
prints such cases.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from toolsmith.library.models import SearchHit
from toolsmith.library.search import CJK_RANGES, query_terms, tokens

DEFAULT_FLOOR = 0.3
"""Minimum coverage for a hit to count as a match (see ``bench/search.py`` for the trade-off)."""

_CJK_RUN = re.compile(f"[{CJK_RANGES}]+")
_VALUE = re.compile(
    r"(?<!\w)'[^']*'(?!\w)|\"[^\"]*\"|“[^”]*”"  # quoted text, not the apostrophes of "I'm ... what's"
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


# Words that open a noun phrase. A task word right before one is being used as a verb
# ("book a table", "order me a pizza"); a tool word right after one is a noun ("the book").
_DETERMINERS = frozenset(
    {"a", "an", "the", "this", "that", "these", "those", "some", "my", "your", "our", "his", "her", "its"}
    | {"their", "me", "us", "him", "them"}
)
# A word with the next two, spaces only between: "records (A, MX)" has no article.
_WORD_RUN = re.compile(r"(?=\b([^\W_]+) +([^\W_]+)(?: +([^\W_]+))?)")
# What a determiner opens when it starts a time phrase, not an object: "weather this weekend".
_TIME_NOUNS = _TIME_WORDS | {"day", "days", "night", "hour", "hours", "time", "weeks", "months", "years"}


def _before_noun_phrase(text: str) -> Iterator[str]:
    """The words of ``text`` (lower-cased) that a noun phrase follows: its likely verbs."""
    for word, determiner, head in _WORD_RUN.findall(text.lower()):
        if determiner in _DETERMINERS and head not in _TIME_NOUNS:
            yield word


@dataclass(frozen=True)
class QueryUnits:
    """A query split into what the tool must cover and what it may lack.

    ``action`` is the task's verb when the task is phrased as a command ("book a table").
    It is covered only by what a tool *does*, never by a noun of the same spelling, and it
    weighs :data:`ACTION_WEIGHT`: a tool that shares the task's nouns but not its action
    is usually about something else.
    """

    intent: tuple[frozenset[str], ...]  # each unit: the forms that cover it
    values: tuple[frozenset[str], ...]
    action: str | None = None

    @classmethod
    def of(cls, query: str) -> QueryUnits:
        value_words = {tok for match in _VALUE.finditer(query) for tok in tokens(match.group())}
        terms = [t for t in query_terms(_CJK_RUN.sub(" ", query)) if t not in _TIME_WORDS]
        verb = _command_verb(query, [t for t in terms if t not in value_words])
        intent: list[frozenset[str]] = []
        values: list[frozenset[str]] = []
        for term in terms:
            if term == verb:
                continue
            (values if term in value_words else intent).append(frozenset({stem(term)}))
        for run in _CJK_RUN.findall(query):
            grams = frozenset(query_terms(run))
            if grams:
                intent.append(grams)
        return cls(tuple(intent), tuple(values), stem(verb) if verb else None)


def _command_verb(query: str, intent_terms: list[str]) -> str | None:
    """The task's verb: its first intent word, when a noun phrase follows it directly.

    A command's verb is in its base form; "I'm planning a trip" or "I booked a room" tells
    what happened, not what to do, so ``-ing`` and ``-ed`` forms are not taken.
    """
    if not intent_terms:
        return None
    first = intent_terms[0]
    if len(first) > 5 and first.endswith(("ing", "ed")):
        return None
    return first if first in _before_noun_phrase(query) else None


@dataclass(frozen=True)
class ToolForms:
    """What a tool's searchable text offers: every word form, and the forms of what it does."""

    words: frozenset[str]
    actions: frozenset[str]


def document_forms(parts: Iterable[str]) -> frozenset[str]:
    """The stemmed tokens of a tool's searchable text (name, keywords, description)."""
    return frozenset(stem(tok) for part in parts for tok in tokens(part))


def tool_forms(name: str, keywords: Iterable[str], description: str) -> ToolForms:
    """A tool's word forms, with its actions: the verbs that say what it does.

    Those are the first word of its name (``convert_units``) and any description word that
    a noun phrase follows ("Parse and validate a phone number"). A description's first word
    is not enough: "Book details for an ISBN" opens with a noun.
    """
    actions = {stem(tok) for tok in tokens(name)[:1]}
    # query_terms() drops stop words: "for a domain" does not make "for" an action
    actions.update(stem(word) for word in _before_noun_phrase(description) if query_terms(word))
    return ToolForms(document_forms([name, *keywords, description]), frozenset(actions))


ACTION_WEIGHT = 2
"""How much the task's verb counts, against 1 for each other intent word."""


def coverage(query: str | QueryUnits, document: frozenset[str] | ToolForms) -> float:
    """Share of the query's intent the document covers, in [0, 1]; 0 when nothing matches.

    Matched values count on both sides of the fraction, unmatched values on neither. A
    plain set of word forms has no known actions, so it covers a task's verb as a word.
    """
    units = QueryUnits.of(query) if isinstance(query, str) else query
    forms = document if isinstance(document, ToolForms) else ToolForms(document, document)
    hits = sum(bool(unit & forms.words) for unit in units.intent)
    total = len(units.intent)
    value_hits = sum(bool(unit & forms.words) for unit in units.values)
    hits += value_hits
    total += value_hits
    if units.action is not None:
        total += ACTION_WEIGHT
        hits += ACTION_WEIGHT if units.action in forms.actions else 0
    if hits == 0:
        return 0.0
    return hits / total


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
def _forms(name: str, keywords: tuple[str, ...], description: str) -> ToolForms:
    return tool_forms(name, keywords, description)
