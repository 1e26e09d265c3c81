"""Which package a documentation URL belongs to, for a docs site this machine cannot reach.

Many machines reach the package index and little else (a mirror behind a proxy, a CI
runner, this project's own development machines). A model that knows a library reads its
docs site first; when that host does not connect, the package's page on the index holds
the same README. This module guesses the package from the URL's words
(``rhodesmill.org/pyephem/...`` -> ``pyephem``, ``ephem``) and accepts a guess only when the
package's own metadata links to that site, so a wrong guess never stands in for the docs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from urllib.parse import urlsplit

MAX_GUESSES = 6
# Host labels that name a kind of site, not a project.
_GENERIC_LABELS = frozenset({"www", "docs", "doc", "api", "wiki", "blog", "en", "dev"})
# Path segments that name a part of a docs site, not a project.
_NOT_NAMES = frozenset(
    {"en", "stable", "latest", "docs", "doc", "master", "main", "blob", "tree", "project", "projects"}
)
_PREFIXES = ("python-", "python", "py-", "py")
_SUFFIXES = ("-python", "-py", "py")


def guesses(url: str) -> list[str]:
    """Package names the URL's host and first path segments suggest, most specific first."""
    parts = urlsplit(url)
    labels = (parts.hostname or "").lower().split(".")
    words: list[str] = []
    if len(labels) >= 3 and labels[0] not in _GENERIC_LABELS:
        words.append(labels[0])  # pint.readthedocs.io, ranaroussi.github.io
    words += [s.lower() for s in parts.path.split("/") if s][:2]
    words = [w for w in words if "." not in w and w not in _NOT_NAMES]
    found: list[str] = []
    # The words as they are and without an affix first; then with "python-", the name many
    # projects publish under (dateutil.readthedocs.io is python-dateutil's).
    for name in [*_variants(words), *(f"python-{w}" for w in words if not w.startswith("py"))]:
        if name not in found:
            found.append(name)
    return found[:MAX_GUESSES]


def _variants(words: Iterable[str]) -> Iterator[str]:
    for word in words:
        yield word
        # The longest affix only: "python-pinyin" is "pinyin", not also "thon-pinyin".
        prefix = next((p for p in _PREFIXES if word.startswith(p) and len(word) - len(p) >= 3), "")
        if prefix:
            yield word[len(prefix) :]
        suffix = next((s for s in _SUFFIXES if word.endswith(s) and len(word) - len(s) >= 3), "")
        if suffix:
            yield word[: -len(suffix)]


def links_to(project_url: str, url: str) -> bool:
    """Whether a package's ``project_url`` points at the site ``url`` is on: the same host,
    and on a shared host (github.com, a personal domain) the same leading path, up to two
    segments (``github.com/owner/repo``, ``rhodesmill.org/pyephem``)."""
    ours, theirs = urlsplit(project_url), urlsplit(url)
    host = (ours.hostname or "").lower()
    if not host or host != (theirs.hostname or "").lower():
        return False
    labels = host.split(".")
    if len(labels) >= 3 and labels[0] not in _GENERIC_LABELS:
        return True  # a project's own subdomain: pint.readthedocs.io
    lead = [s for s in ours.path.split("/") if s][:2]
    return [s for s in theirs.path.split("/") if s][: len(lead)] == lead
