"""The library page's list: which tools it shows, in what order, and one page of them.

A filter (the library's own search, a status) picks the rows; a sort column from the
query string orders them on the server (there is no script); and a page of
:data:`PAGE_SIZE` rows is cut from the result, so a library of hundreds of tools stays
readable. The status counts next to the filter count versions, as the status filter and
the review notice do, so the three always agree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from toolsmith.library import Status, ToolLibrary, ToolVersion

STATUSES = tuple(s.value for s in Status)
PAGE_SIZE = 100
_SEARCH_LIMIT = 50
_SEARCH_NOTE = "Search ranks the served (active) tools, best match first, as the agent's search_tools does."


def failure_rate(tool: ToolVersion) -> float | None:
    return tool.stats.failures / tool.stats.calls if tool.stats.calls else None


# What each sortable column sorts by; None (never called) always goes last.
_KEYS: dict[str, Callable[[ToolVersion], Any]] = {
    "name": lambda t: (t.name.casefold(), t.version),
    "calls": lambda t: t.stats.calls,
    "failures": failure_rate,
    "last": lambda t: t.stats.last_called_at or None,
}
# The direction a first click on a column sorts in: names A to Z, numbers and dates biggest first.
_FIRST_DESCENDING = {"name": False, "calls": True, "failures": True, "last": True}
_DIRECTION_WORDS = {
    "name": {False: "A to Z", True: "Z to A"},
    "calls": {False: "fewest first", True: "most first"},
    "failures": {False: "lowest first", True: "highest first"},
    "last": {False: "oldest first", True: "newest first"},
}
COLUMNS = (("name", "tool"), ("calls", "calls"), ("failures", "failure rate"), ("last", "last use (UTC)"))


@dataclass(frozen=True)
class Sort:
    """A sort column and direction, as the ``sort`` query parameter spells it (``-calls``)."""

    key: str = ""  # "" keeps the filter's own order: by name, or best match for a search
    descending: bool = False

    @classmethod
    def parse(cls, text: str) -> Sort:
        key = text.strip().lstrip("-")
        return cls(key, text.strip().startswith("-")) if key in _KEYS else cls()

    @property
    def param(self) -> str:
        return f"{'-' if self.descending else ''}{self.key}" if self.key else ""

    def clicked(self, key: str) -> Sort:
        """The sort a click on column ``key``'s heading asks for: the other way round if it is this one."""
        if key == self.key:
            return Sort(key, not self.descending)
        return Sort(key, _FIRST_DESCENDING[key])

    def apply(self, tools: list[ToolVersion]) -> list[ToolVersion]:
        if not self.key:
            return tools
        key = _KEYS[self.key]
        known = [t for t in tools if key(t) is not None]
        unknown = [t for t in tools if key(t) is None]
        by_name = sorted(known, key=_KEYS["name"])  # ties keep name order (sorting is stable)
        return sorted(by_name, key=key, reverse=self.descending) + sorted(unknown, key=_KEYS["name"])


@dataclass(frozen=True)
class Heading:
    """One sortable column heading: its link and whether the list is sorted by it."""

    label: str
    href: str
    aria_sort: str  # "ascending", "descending" or "none"

    @property
    def arrow(self) -> str:
        return {"ascending": "▲", "descending": "▼"}.get(self.aria_sort, "")


@dataclass(frozen=True)
class PageLink:
    label: str
    href: str | None  # None: the current page, or a gap ("…")
    current: bool = False


@dataclass
class LibraryView:
    """One page of the library's list and everything the page shows around it."""

    tools: list[ToolVersion]
    query: str
    status: str
    sort: Sort
    page: int
    pages: int
    total: int
    headings: dict[str, Heading]
    page_links: list[PageLink]
    note: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    waiting: dict[str, list[int]] = field(default_factory=dict)  # name -> pending versions not shown

    @property
    def first(self) -> int:
        return (self.page - 1) * PAGE_SIZE + 1 if self.total else 0

    @property
    def last(self) -> int:
        return min(self.page * PAGE_SIZE, self.total)

    @property
    def summary(self) -> str:
        """What the table holds, e.g. ``101-200 of 250 tools, by calls (most first)``."""
        noun = "version" if self.status in STATUSES else "tool"
        shown = f"{self.first}–{self.last} of {self.total}" if self.pages > 1 else str(self.total)
        text = f"{shown} {noun}{'s' if self.total != 1 else ''}"
        if self.status in STATUSES:
            text += f" {self.status}"
        if self.sort.key:
            label = dict(COLUMNS)[self.sort.key]
            text += f", by {label} ({_DIRECTION_WORDS[self.sort.key][self.sort.descending]})"
        return text


def library_view(library: ToolLibrary, params: Mapping[str, str]) -> LibraryView:
    """The page of the tool list that ``params`` (``q``, ``status``, ``sort``, ``page``) asks for."""
    query = params.get("q", "").strip()
    status = params.get("status", "")
    status = status if status in (*STATUSES, "all") else ""
    sort = Sort.parse(params.get("sort", ""))
    versions = library.with_status(*Status)
    counts = dict(Counter(v.status.value for v in versions))
    tools, note = _rows(library, query, status)
    tools = sort.apply(tools)
    pages = max(1, -(-len(tools) // PAGE_SIZE))
    page = min(max(_int(params.get("page", "")), 1), pages)
    state = {"q": query, "status": status, "sort": sort.param}
    shown = {(t.name, t.version) for t in tools}
    waiting: dict[str, list[int]] = {}
    for v in versions:
        if v.status is Status.PENDING and (v.name, v.version) not in shown:
            waiting.setdefault(v.name, []).append(v.version)
    return LibraryView(
        tools=tools[(page - 1) * PAGE_SIZE : page * PAGE_SIZE],
        query=query,
        status=status,
        sort=sort,
        page=page,
        pages=pages,
        total=len(tools),
        headings={key: _heading(label, key, sort, state) for key, label in COLUMNS},
        page_links=_page_links(page, pages, state),
        note=note,
        counts=counts,
        waiting=waiting,
    )


def _rows(library: ToolLibrary, query: str, status: str) -> tuple[list[ToolVersion], str]:
    """The rows the filter picks (before sorting), and a note on what they are."""
    if query:
        tools = [hit.tool for hit in library.search(query, limit=_SEARCH_LIMIT)]
        if status and status != "all":
            tools = [t for t in tools if t.status.value == status]
        return tools, _SEARCH_NOTE
    if status in ("", "all"):
        tools = library.list_tools(include_retired=status == "all")
        return tools, ""
    # One status: every version in it (a tool can serve v1 while v2 waits for review).
    return library.with_status(Status(status)), ""


def href(state: Mapping[str, str | int]) -> str:
    """The library page's address for ``state``, leaving out empty and default parts."""
    kept = [(k, str(v)) for k, v in state.items() if v not in ("", None, 1)]
    return "/" + (f"?{urlencode(kept)}" if kept else "")


def _heading(label: str, key: str, sort: Sort, state: Mapping[str, str]) -> Heading:
    aria = "none" if sort.key != key else ("descending" if sort.descending else "ascending")
    return Heading(label, href({**state, "sort": sort.clicked(key).param}), aria)


def _page_links(page: int, pages: int, state: Mapping[str, str]) -> list[PageLink]:
    """Numbered links: the first, the last and two either side of this page, with gaps between."""
    if pages <= 1:
        return []
    wanted = sorted({1, pages, *range(max(1, page - 2), min(pages, page + 2) + 1)})
    links: list[PageLink] = []
    for number in wanted:
        if links and number > int(links[-1].label) + 1:
            links.append(PageLink("…", None))
        links.append(PageLink(str(number), None if number == page else href({**state, "page": number}), number == page))
    return links


def page_href(view: LibraryView, number: int) -> str:
    """The address of page ``number`` of ``view``'s list."""
    return href({"q": view.query, "status": view.status, "sort": view.sort.param, "page": number})


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 1
