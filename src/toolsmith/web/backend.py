"""What a web-search backend returns, and the one method every backend has."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from toolsmith.calls import JSONObject


@dataclass(frozen=True)
class SearchResult:
    """One hit. Package-index hits also carry the package's own metadata."""

    title: str
    url: str
    snippet: str = ""
    package: str | None = None
    version: str | None = None
    summary: str | None = None
    project_urls: dict[str, str] | None = None
    popularity_rank: int | None = None

    def to_dict(self) -> JSONObject:
        data: JSONObject = {"title": self.title, "url": self.url, "snippet": self.snippet}
        extras = {
            "package": self.package,
            "version": self.version,
            "summary": self.summary,
            "project_urls": self.project_urls,
            "popularity_rank": self.popularity_rank,
        }
        data.update({k: v for k, v in extras.items() if v is not None})
        return data


@runtime_checkable
class SearchBackend(Protocol):
    name: str

    def search(self, query: str, n: int) -> list[SearchResult]: ...
