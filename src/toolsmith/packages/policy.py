"""What a model may ask to install: parsing, refusal rules and typosquat detection.

A model names the packages (``pip_install``), so every entry is treated as hostile
input. It must be a bare PEP 508 name with optional extras and an optional version
specifier. Installer flags, URLs, paths, direct references (``name @ url``),
environment markers and anything with shell metacharacters are refused before anything
runs, and so is a name the index does not know (possibly hallucinated) or one that sits
within a typo of a popular package without being popular itself (possibly
typosquatted). ``packages.allow`` in the config overrides the typosquat check.

The popular-name check must be fast on every request, so it never runs an edit-distance
loop over the whole list: the popular names sit in hash tables (by separator-free form,
by "core" without python/py affixes, and by character bigrams for long names). A query
looks up its own one-edit neighbourhood (a few hundred strings, exact for distance 1)
and, when long, the names sharing enough bigrams with it (a complete filter for distance
2 by the q-gram lemma); only those few candidates get a real distance computation.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Protocol

from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement as Pep508

from toolsmith.calls import JSONValue
from toolsmith.errors import InstallError, PackageRefused
from toolsmith.packages.index import normalize_name

MAX_REQUESTS = 20
MAX_LENGTH = 200
LONG_NAME = 10  # separator-free length from which two edits still count as a typo
MIN_TYPO_LENGTH = 4  # shorter names are too dense to judge by one edit
_OPERATOR_CHARS = "<>=!~"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_SPEC = r"(?:~=|==|!=|<=|>=|<|>)\s*[A-Za-z0-9][A-Za-z0-9.*+!_-]*"
_REQUEST = re.compile(
    rf"^(?P<name>{_NAME})\s*(?:\[\s*(?P<extras>{_NAME}(?:\s*,\s*{_NAME})*)?\s*\])?"
    rf"\s*(?P<spec>{_SPEC}(?:\s*,\s*{_SPEC})*)?$"
)
_ALLOWED_CHARS = re.compile(r"^[A-Za-z0-9._\-\[\],<>=!~*+ ]+$")
_PREFIXES = ("python", "py")
_SUFFIXES = ("python", "py")
EXAMPLE = "e.g. 'humanize' or 'pandas==2.2.2'"


@dataclass(frozen=True)
class Request:
    """One accepted install request."""

    name: str
    extras: tuple[str, ...] = ()
    specifier: str = ""

    @property
    def key(self) -> str:
        return normalize_name(self.name)

    def __str__(self) -> str:
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        return f"{self.name}{extras}{self.specifier}"


# --- splitting and parsing -------------------------------------------------------------


def split_requests(pip_install: JSONValue) -> list[str]:
    """Entries of ``pip_install`` (as a model sent it): a list, or one string split on whitespace and commas.

    Commas and spaces inside a specifier (``"requests >= 2, <3"``) or extras stay with
    their requirement. A string is never iterated character by character.
    """
    if pip_install is None:
        return []
    if isinstance(pip_install, str):
        items: Iterable[object] = [pip_install]
    elif isinstance(pip_install, (list, tuple)):
        items = pip_install
    else:
        raise PackageRefused(repr(pip_install)[:80], "pip_install must be a list of package names or one string")
    entries: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise PackageRefused(repr(item)[:80], "each pip_install entry must be a string")
        entries.extend(_split_one(item))
    return entries


def _split_one(text: str) -> list[str]:
    merged: list[str] = []
    for token in re.split(r"[\s,]+", text.strip()):
        if not token:
            continue
        if merged and _continues(merged[-1], token):
            last = merged[-1]
            joiner = "" if last[-1] in _OPERATOR_CHARS or (token[0] in _OPERATOR_CHARS and not _has_spec(last)) else ","
            merged[-1] = last + joiner + token
        else:
            merged.append(token)
    return merged


def _has_spec(text: str) -> bool:
    return any(c in text for c in _OPERATOR_CHARS)


def _continues(previous: str, token: str) -> bool:
    """Whether ``token`` is the rest of ``previous`` (a specifier part or more extras)."""
    if previous.count("[") > previous.count("]"):
        return True
    if previous[-1] in _OPERATOR_CHARS:
        return True
    return token[0] in _OPERATOR_CHARS


def parse_request(text: str) -> Request:
    """One entry as a :class:`Request`, or :class:`PackageRefused` saying what is wrong."""
    entry = text.strip()
    reason = _refusal(entry)
    if reason:
        raise PackageRefused(entry[:MAX_LENGTH], reason)
    match = _REQUEST.match(entry)
    if match is None:
        raise PackageRefused(
            entry,
            f"it is not a valid requirement: give a package name, optionally with extras and a version "
            f"specifier ({EXAMPLE})",
        )
    try:
        parsed = Pep508(entry)
    except InvalidRequirement as exc:
        raise PackageRefused(entry, f"it is not a valid requirement ({exc})") from exc
    return Request(name=parsed.name, extras=tuple(sorted(parsed.extras)), specifier=str(parsed.specifier))


def _refusal(entry: str) -> str | None:
    """The reason to refuse an entry on sight, most specific first."""
    checks: tuple[tuple[bool, str], ...] = (
        (not entry, "it is empty"),
        (len(entry) > MAX_LENGTH, f"it is longer than {MAX_LENGTH} characters"),
        (
            entry.startswith("-"),
            f"installer options are not accepted, only package names with an optional version ({EXAMPLE})",
        ),
        ("@" in entry, "direct references ('name @ url') are not accepted; name a version with =="),
        (
            "://" in entry or entry.lower().startswith(("git+", "hg+", "svn+", "bzr+", "file:")),
            "URLs are not accepted; name the package as it is published on the package index",
        ),
        (";" in entry, "environment markers are not accepted"),
        (
            entry.startswith((".", "/", "~")) or "/" in entry or "\\" in entry,
            "local paths are not accepted; name the package as it is published on the package index",
        ),
        (not _ALLOWED_CHARS.match(entry), "it contains characters that cannot appear in a package requirement"),
    )
    return next((reason for failed, reason in checks if failed), None)


def parse_requests(pip_install: JSONValue) -> list[Request]:
    """Every entry parsed; duplicates collapse. Refuses overlong lists."""
    entries = split_requests(pip_install)
    if len(entries) > MAX_REQUESTS:
        raise PackageRefused(" ".join(entries)[:80], f"at most {MAX_REQUESTS} packages can be requested at once")
    seen: dict[str, Request] = {}
    for entry in entries:
        request = parse_request(entry)
        seen.setdefault(str(request).lower(), request)
    return list(seen.values())


# --- popular names and near misses -----------------------------------------------------


def _strip(key: str) -> str:
    return key.replace("-", "")


def _core(key: str) -> str:
    """The name without separators and without a python/py prefix or suffix."""
    core = _strip(key)
    for prefix in _PREFIXES:
        if core.startswith(prefix) and len(core) > len(prefix) + 2:
            core = core[len(prefix) :]
            break
    for suffix in _SUFFIXES:
        if core.endswith(suffix) and len(core) > len(suffix) + 2:
            core = core[: -len(suffix)]
            break
    return core


_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def _neighbours(text: str) -> set[str]:
    """Every separator-free string one edit (Damerau) away from ``text``: a few hundred."""
    found: set[str] = set()
    for i in range(len(text) + 1):
        head, tail = text[:i], text[i:]
        if tail:
            found.add(head + tail[1:])
            found.update(head + c + tail[1:] for c in _ALPHABET)
        if len(tail) > 1:
            found.add(head + tail[1] + tail[0] + tail[2:])
        found.update(head + c + tail for c in _ALPHABET)
    found.discard(text)
    return found


def _bigrams(text: str) -> Counter[str]:
    return Counter(text[i : i + 2] for i in range(len(text) - 1))


def distance(a: str, b: str, bound: int = 2) -> int:
    """Optimal-string-alignment Damerau-Levenshtein distance, capped at ``bound + 1``."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, previous2[j - 2] + 1)
            current[j] = best
        if min(current) > bound:
            return bound + 1
        previous2, previous = previous, current
    return min(previous[-1], bound + 1)


@dataclass(frozen=True)
class NearMiss:
    """A popular package a requested name looks like, and how."""

    popular: str
    how: str  # "separators", "affix", "edit distance 1", "edit distance 2"


class PopularNames:
    """The most-downloaded package names, indexed for fast near-miss lookups."""

    def __init__(self, ranked: Iterable[str]) -> None:
        self.rank: dict[str, int] = {}
        self.by_stripped: dict[str, str] = {}
        self.by_core: dict[str, str] = {}
        self._long: list[str] = []
        self._bigram_index: dict[str, dict[str, int]] | None = None  # built on first long query
        for position, name in enumerate(ranked):
            key = normalize_name(name)
            if key in self.rank:
                continue
            self.rank[key] = position
            stripped = _strip(key)
            self.by_stripped.setdefault(stripped, key)
            self.by_core.setdefault(_core(key), key)
            if len(stripped) >= LONG_NAME - 2:
                self._long.append(stripped)

    def __contains__(self, name: str) -> bool:
        return normalize_name(name) in self.rank

    def near(self, name: str) -> NearMiss | None:
        """The popular package ``name`` is probably a misspelling of, if any."""
        key = normalize_name(name)
        if key in self.rank:
            return None
        stripped = _strip(key)
        if stripped in self.by_stripped:
            return NearMiss(self.by_stripped[stripped], "separators")
        core = _core(key)
        if core in self.by_core:  # equal cores but different stripped names: an affix differs
            return NearMiss(self.by_core[core], "affix")
        if len(stripped) < MIN_TYPO_LENGTH:
            return None
        bound = 2 if len(stripped) >= LONG_NAME else 1
        found = [(distance(stripped, c, bound), c) for c in self._candidates(stripped, bound)]
        close = [(d, self.rank[self.by_stripped[c]], c) for d, c in found if 0 < d <= bound]
        if not close:
            return None
        d, _, best = min(close)
        return NearMiss(self.by_stripped[best], f"edit distance {d}")

    def _candidates(self, stripped: str, bound: int) -> set[str]:
        found = {variant for variant in _neighbours(stripped) if variant in self.by_stripped}
        if bound >= 2:
            found |= self._bigram_candidates(stripped, bound)
        return found

    def _bigrams(self) -> dict[str, dict[str, int]]:
        if self._bigram_index is None:
            index: dict[str, dict[str, int]] = {}
            for name in self._long:
                for gram, count in _bigrams(name).items():
                    index.setdefault(gram, {})[name] = count
            self._bigram_index = index
        return self._bigram_index

    def _bigram_candidates(self, stripped: str, bound: int) -> set[str]:
        # Each edit (transposition included) destroys at most three bigrams, so a name
        # within ``bound`` edits shares at least len - 1 - 3 * bound of them.
        grams = _bigrams(stripped)
        shared: Counter[str] = Counter()
        index = self._bigrams()
        for gram, count in grams.items():
            for other, other_count in index.get(gram, {}).items():
                shared[other] += min(count, other_count)
        need = len(stripped) - 1 - 3 * bound
        return {
            other
            for other, hits in shared.items()
            if abs(len(other) - len(stripped)) <= bound and hits >= max(need, 1, len(other) - 1 - 3 * bound)
        }


@lru_cache(maxsize=1)
def popular_names() -> PopularNames:
    """The shipped popularity list (``data/popular-packages.tsv``), loaded once."""
    text = resources.files("toolsmith").joinpath("data/popular-packages.tsv").read_text("utf-8")
    names = []
    for line in text.splitlines()[1:]:
        parts = line.split("\t")
        if len(parts) >= 2 and parts[1].strip():
            names.append(parts[1].strip())
    return PopularNames(names)


# --- the whole check -------------------------------------------------------------------


class NameIndex(Protocol):
    def exists(self, name: str) -> bool: ...


def check_name(
    request: Request, *, index: NameIndex, allow: Iterable[str] = (), popular: PopularNames | None = None
) -> None:
    """Refuse a parsed request whose name is unknown to the index or looks typosquatted."""
    popular = popular or popular_names()
    allowed = {normalize_name(a) for a in allow}
    near = None if request.key in allowed else popular.near(request.name)
    try:
        exists = index.exists(request.name)
    except Exception as exc:  # the index client raises transport errors of its own kind
        raise InstallError(f"Could not check {request.name!r} on the package index: {exc}") from exc
    if not exists:
        raise PackageRefused(
            str(request),
            "no package of that name exists on the package index (the name may be misremembered or made up)",
            suggestion=near.popular if near else None,
        )
    if near is not None:
        raise PackageRefused(
            str(request),
            f"it is not a popular package but looks like the popular {near.popular!r} ({near.how}), a common "
            f"typosquatting pattern; if it really is the package you want, a user can add it to packages.allow "
            f"in config.toml",
            suggestion=near.popular,
        )


def check_requests(
    pip_install: JSONValue,
    *,
    index: NameIndex,
    allow: Iterable[str] = (),
    popular: PopularNames | None = None,
) -> list[Request]:
    """Parse and check every entry; the first problem raises :class:`PackageRefused`."""
    requests = parse_requests(pip_install)
    allow = tuple(allow)
    for request in requests:
        check_name(request, index=index, allow=allow, popular=popular)
    return requests
