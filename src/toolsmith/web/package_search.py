"""The package-index search backend: candidate Python packages from the index alone.

Candidates come from two places: the index's full project listing, matched by name
(``qrcode`` for "qr code", ``pytz`` for "timezone"), and the shipped list of the ~15,000
most used projects, matched by their one-line summaries, which finds projects whose
name says nothing (``pint``: "Physical quantities module"; ``schwifty``: "IBAN parsing
and validation"). Each candidate's score blends

* coverage: the share of the query's words (weighted by rarity) that the name or the
  summary has (the index's metadata for the shortlist, else the shipped summary);
* the name's own fit: its matched words less its unrelated ones (plug-ins, stubs);
* popularity: being on the shipped list at all (0.5), more by download rank (up to 1),
  times the square root of the coverage;
  a project that covers the query (``schwifty`` for "IBAN") outranks a famous one that
  shares one common word with it (``pyparsing`` for "parse IBAN").
"""

from __future__ import annotations

import itertools
import json
import math
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import httpx

from toolsmith.config import Settings
from toolsmith.errors import SearchBackendError, ToolsmithError
from toolsmith.library.relevance import stem
from toolsmith.packages.index import LISTING_TTL_S, PackageIndex, ProjectInfo, normalize_name
from toolsmith.web.backend import SearchResult

_STOP_TEXT = """a about after all also an and any api apis app are as at based be best between by
can compute calculate do does easy et fast find for free from function get good how i in into
is it its key library libraries lib like me module modules my need no of on one or package packages
pip py pypi python python3 simple so some than that the them then this to tool tools two use used
using want way what which with without work"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())
# Name tokens that say nothing about what a project does.
_GENERIC_TOKENS = frozenset({"python", "py", "py3", "python3", "lib", "pypi"})
# Name tokens of projects that are never what a capability search wants (type stubs).
_STUB_TOKENS = frozenset({"types", "stubs"})
# Plug-ins for a framework are rarely what a plain capability search wants.
_ECOSYSTEM_TOKENS = frozenset(
    {"django", "flask", "pytest", "sphinx", "mkdocs", "jupyterlab", "airflow", "odoo", "plone"}
    | {"ckanext", "llama", "langchain", "mcp", "pulumi", "streamlit", "wagtail", "fastapi"}
)
# Well-known short names that project names use for a concept.
_ALIASES: dict[str, tuple[str, ...]] = {
    "timezone": ("tz", "zoneinfo"),
    "image": ("img",),
    "configuration": ("config", "conf"),
    "statistics": ("stats",),
    "regex": ("re",),
    "markdown": ("md",),
    "spreadsheet": ("xlsx", "excel"),
    "excel": ("xlsx", "xls", "openpyxl"),
    "yaml": ("yml",),
}
# Weights chosen on real queries (IBAN, unit conversion, pinyin, time zones, slugs...):
COVER_WEIGHT = 10.0  # the share of the query's words the name or summary has
POPULARITY_WEIGHT = 12.0  # being among the most used projects, by rank
NAME_WEIGHT = 3.0  # the name's own fit (its matched words less its unrelated ones)
METADATA_BUDGET_S = 8.0
METADATA_TTL_S = 24 * 3600.0
_LISTINGS: dict[str, tuple[float, list[str]]] = {}


@dataclass(frozen=True)
class _Term:
    word: str
    forms: frozenset[str]  # whole-token spellings: the word, its singular, known aliases
    stem: str  # matched inside longer tokens too
    weight: float = 1.0
    joined: bool = False  # two query words written as one ("qr code" -> "qrcode")
    parts: tuple[str, ...] = ()  # for a joined term: the words it joins


@dataclass
class _Candidate:
    name: str
    score: float
    rank: int | None = None
    info: ProjectInfo | None = field(default=None, repr=False)


def query_terms(query: str) -> list[_Term]:
    """The query's content words, each with its plural-free forms and a matching stem."""
    terms: list[_Term] = []
    seen: set[str] = set()
    words = [w for w in re.findall(r"[a-z0-9]+", query.lower()) if w not in _STOP_WORDS]
    for word in words:
        if len(word) < 2 or word in seen:
            continue
        seen.add(word)
        forms = {word, _singular(word)}
        stem = min(forms, key=len)
        if stem.endswith("ing") and len(stem) > 5:
            stem = stem[:-3]
        for form in list(forms):
            forms.update(_ALIASES.get(form, ()))
        terms.append(_Term(word, frozenset(forms), stem))
    for first, second in itertools.pairwise(words):
        joined = first + _singular(second)
        if len(joined) >= 5 and joined not in seen:
            seen.add(joined)
            forms = {joined, first + second, *_ALIASES.get(joined, ())}
            terms.append(_Term(joined, frozenset(forms), joined, joined=True, parts=(first, second)))
    return terms


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


@dataclass(frozen=True)
class Popular:
    """One of the most used projects: its download rank and its one-line summary."""

    rank: int
    summary: str


@lru_cache(maxsize=1)
def popular_packages() -> dict[str, Popular]:
    """The list shipped with toolsmith (rank, name, summary), by normalised name."""
    text = (resources.files("toolsmith") / "data" / "popular-packages.tsv").read_text("utf-8")
    found: dict[str, Popular] = {}
    for line in text.splitlines():
        rank, _, rest = line.partition("\t")
        name, _, summary = rest.partition("\t")
        if rank.isdigit() and name.strip():
            found.setdefault(normalize_name(name.strip()), Popular(int(rank), summary.strip()))
    return found


@lru_cache(maxsize=1)
def popular_ranks() -> dict[str, int]:
    """Download rank of the most used projects, from the list shipped with toolsmith."""
    return {name: entry.rank for name, entry in popular_packages().items()}


@lru_cache(maxsize=1)
def _summary_index() -> dict[str, frozenset[str]]:
    """Word -> the popular projects whose shipped summary has it."""
    index: dict[str, set[str]] = {}
    for name, entry in popular_packages().items():
        for word in set(_words(entry.summary)):
            index.setdefault(word, set()).add(name)
    return {word: frozenset(names) for word, names in index.items()}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _summary_pool(terms: list[_Term]) -> set[str]:
    """Popular projects whose summary has a query word (or a word starting with its stem)."""
    index = _summary_index()
    pool: set[str] = set()
    for term in terms:
        if term.joined:
            continue
        for form in term.forms:
            pool |= index.get(form, frozenset())
        root = stem(term.word)
        for word, names in index.items():
            if word[:2] == root[:2] and stem(word) == root:
                pool |= names
    return pool


def _fast_normal(name: str) -> str:
    key = name.lower().replace("_", "-").replace(".", "-")
    return normalize_name(key) if "--" in key else key


class PackageIndexBackend:
    """Candidate Python packages for a query, from the package index alone."""

    name = "pypi"

    def __init__(self, settings: Settings, *, index: PackageIndex | None = None) -> None:
        self.settings = settings
        self.index = index or PackageIndex(settings.index_url, cache_dir=settings.cache_dir, timeout_s=8.0)
        self.listing_error: str | None = None

    def search(self, query: str, n: int) -> list[SearchResult]:
        terms = query_terms(query)
        if not terms:
            raise SearchBackendError("the query has no content words left after stop words")
        weighted, matching = _match(terms, self._names())
        pool = _candidates(weighted, matching | _summary_pool(weighted), popular_packages())
        shortlist = pool[: min(max(3 * n, 12), 24)]
        described = self._describe_all(shortlist)
        for cand in described:
            info = cand.info
            assert info is not None
            cand.score = _blend(weighted, cand.name, f"{info.summary} {info.keywords}", cand.rank)
        described.sort(key=lambda c: (-c.score, c.name))
        return [self._result(c) for c in described[:n]]

    def _names(self) -> list[str]:
        """The normalised listing (kept in memory per index); the popular list if it fails."""
        key = self.index.simple_url
        cached = _LISTINGS.get(key)
        if cached and time.time() - cached[0] < LISTING_TTL_S:
            return cached[1]
        try:
            raw = self.index.project_names()
        except (httpx.HTTPError, OSError, ValueError) as exc:
            self.listing_error = f"{type(exc).__name__}: {exc}"
            return sorted(popular_ranks())
        names = sorted({_fast_normal(n) for n in raw})
        _LISTINGS[key] = (time.time(), names)
        return names

    def _describe_all(self, shortlist: list[_Candidate]) -> list[_Candidate]:
        cache = _MetadataCache(self.index, self.settings.cache_dir)
        deadline = time.monotonic() + METADATA_BUDGET_S
        described: list[_Candidate] = []
        errors: list[str] = []
        for cand in shortlist:
            if time.monotonic() > deadline:
                break
            try:
                cand.info = cache.get(cand.name)
            except (httpx.HTTPError, ToolsmithError, ValueError) as exc:
                errors.append(f"{cand.name}: {type(exc).__name__}: {exc}")
                continue
            if cand.info is not None:
                described.append(cand)
        if not described and errors:
            raise SearchBackendError("package metadata unavailable: " + "; ".join(errors[:3]))
        return described

    def _result(self, cand: _Candidate) -> SearchResult:
        info = cand.info
        assert info is not None
        urls = dict(info.project_urls)
        if info.home_page and info.home_page not in urls.values():
            urls["Home page"] = info.home_page
        return SearchResult(
            title=f"{info.name} {info.version}".strip(),
            url=self.index.project_page_url(info.name),
            snippet=info.summary,
            package=info.name,
            version=info.version,
            summary=info.summary,
            project_urls=urls,
            popularity_rank=cand.rank,
        )


def _match(terms: list[_Term], names: list[str]) -> tuple[list[_Term], set[str]]:
    """Names matching any term, and each term weighted by how rare it is.

    Rarity is the lower of two: among project names, and among the shipped summaries, so
    a word that is common in either ("text", "data") weighs little in both.
    """
    total = len(names) + 1
    described = len(popular_packages()) + 1
    weighted: list[_Term] = []
    pool: set[str] = set()
    for term in terms:
        stem = term.stem
        hits = [name for name in names if stem in name] if len(stem) >= 3 else []
        short = sorted(f for f in term.forms if len(f) < 3 or stem not in f)
        if short:  # short words and aliases (qr, tz) only match whole name tokens
            alts = "|".join(re.escape(f) for f in short)
            token = re.compile(rf"(?:^|-)(?:py)?(?:{alts})(?:-|$)")
            hits.extend(name for name in names if token.search(name))
        pool.update(hits)
        weight = math.log(total / (len(hits) + 1))
        if not term.joined:
            in_summaries = len(_summary_pool([term]))
            weight = min(weight, math.log(described / (in_summaries + 1)))
        weighted.append(_Term(term.word, term.forms, term.stem, max(weight, 0.5), term.joined, term.parts))
    return weighted, pool


def _candidates(terms: list[_Term], pool: set[str], popular: dict[str, Popular]) -> list[_Candidate]:
    """Every name- or summary-matched project, scored with the shipped summary where known."""
    candidates: list[_Candidate] = []
    for name in pool:
        entry = popular.get(name)
        rank = entry.rank if entry else None
        score = _blend(terms, name, entry.summary if entry else None, rank)
        if score > 0:
            candidates.append(_Candidate(name, score, rank))
    candidates.sort(key=lambda c: (-c.score, c.name))
    return candidates


def _blend(terms: list[_Term], name: str, summary: str | None, rank: int | None) -> float:
    """Coverage of the query, popularity, and the name's own fit, added up.

    ``summary`` None means not known yet (before the shortlist's metadata is fetched);
    "" means the project has none, which costs it.
    """
    if _STUB_TOKENS & set(name.split("-")):
        return 0.0
    cover = _coverage(terms, name, summary or "")
    if cover == 0:
        return 0.0  # popularity ranks matches; it never makes one
    named = _name_score(name, terms) / max(sum(t.weight for t in terms if not t.joined), 1.0)
    missing = -3.0 if summary == "" else 0.0
    return (
        COVER_WEIGHT * cover + POPULARITY_WEIGHT * _popularity(rank) * math.sqrt(cover) + NAME_WEIGHT * named + missing
    )


def _coverage(terms: list[_Term], name: str, summary: str) -> float:
    """Weighted share of the query's words that the name or the summary has."""
    tokens = name.split("-")
    words = set(_words(summary))
    joined_in_name = {
        part for t in terms if t.joined and any(_token_match(tok, t) for tok in tokens) for part in t.parts
    }
    plain = [t for t in terms if not t.joined]
    total = sum(t.weight for t in plain)
    hit = sum(
        t.weight
        for t in plain
        if t.word in joined_in_name or any(_token_match(tok, t) for tok in tokens) or _in_words(t, words)
    )
    return hit / total if total else 0.0


def _in_words(term: _Term, words: set[str]) -> bool:
    """The summary has the word, or another form of it ("parsing" for "parse")."""
    return bool(term.forms & words) or stem(term.word) in {stem(w) for w in words}


def _name_score(name: str, terms: list[_Term]) -> float:
    tokens = name.split("-")
    score = 0.0
    matched: set[int] = set()
    for term in terms:
        best, where = 0.0, -1
        for i, token in enumerate(tokens):
            strength = _token_match(token, term)
            if strength > best:
                best, where = strength, i
        if best:
            score += best * term.weight
            matched.add(where)
    if not matched:
        return 0.0
    core = [t for t in tokens if t not in _GENERIC_TOKENS]
    unmatched = [t for i, t in enumerate(tokens) if i not in matched and t not in _GENERIC_TOKENS]
    score -= 2.0 * len(unmatched)
    if _ECOSYSTEM_TOKENS & set(unmatched):
        score -= 5.0
    if len(core) == 1 and any(core[0] in t.forms or core[0] == "py" + t.stem for t in terms):
        score += 2.0  # the project is named exactly for the capability
    return score


def _token_match(token: str, term: _Term) -> float:
    if token in term.forms or (token.startswith("py") and token[2:] in term.forms):
        return 1.0
    if len(term.stem) < 3:
        return 0.0
    if token.startswith(term.stem) or token.endswith(term.stem):
        return 0.6
    return 0.35 if term.stem in token else 0.0


def _popularity(rank: int | None) -> float:
    """0 for a project off the shipped list; 0.5 to 1 on it, by download rank.

    Being among the ~15,000 most used of the index's projects at all is the strong signal:
    such projects are far likelier to be maintained and to be what the agent wants.
    """
    if rank is None:
        return 0.0
    return 0.5 + 0.5 * max(0.0, 1.0 - math.log(rank) / math.log(15000))


class _MetadataCache:
    """Per-project metadata (without the README) cached on disk for a day."""

    def __init__(self, index: PackageIndex, cache_dir: Path | None) -> None:
        self.index = index
        slug = re.sub(r"[^A-Za-z0-9]+", "_", index.simple_url).strip("_")[-80:]
        self.folder = cache_dir / "index-metadata" / slug if cache_dir else None

    def get(self, name: str) -> ProjectInfo | None:
        path = self.folder / f"{normalize_name(name)}.json" if self.folder else None
        if path and path.exists() and time.time() - path.stat().st_mtime < METADATA_TTL_S:
            try:
                data = json.loads(path.read_text("utf-8"))
                return ProjectInfo(**data["info"]) if data["info"] else None
            except (OSError, ValueError, KeyError, TypeError):
                pass  # a damaged entry is simply fetched again
        info = self.index.info(name)
        if path:
            slim = None
            if info is not None:
                slim = {**info.to_dict(), "description_content_type": info.description_content_type}
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{id(self)}")
            tmp.write_text(json.dumps({"info": slim}), "utf-8")
            tmp.replace(path)
        return info
