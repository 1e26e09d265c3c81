"""web_search: backend fallback, SearXNG's JSON API, and the package-index backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from helpers_http import LocalServer, Reply, Request
from toolsmith.agent.metatools.web_search import SCHEMA as WEB_SEARCH_SCHEMA
from toolsmith.config import Settings
from toolsmith.packages.index import PackageIndex
from toolsmith.web import package_search as ps
from toolsmith.web import search as ws
from toolsmith.web.read import read_webpage
from toolsmith.web.search import (
    PackageIndexBackend,
    SearchBackendError,
    SearchResult,
    clamp_results,
    web_search,
)

# -- fake backends -----------------------------------------------------------------------


class Fake:
    def __init__(self, name: str, behaviour: Any) -> None:
        self.name = name
        self.behaviour = behaviour
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, n: int) -> list[SearchResult]:
        self.calls.append((query, n))
        outcome = self.behaviour(len(self.calls)) if callable(self.behaviour) else self.behaviour
        if isinstance(outcome, BaseException):
            raise outcome
        return list(outcome)


def http_error(status: int) -> httpx.HTTPStatusError:
    request = httpx.Request("GET", "http://search.invalid/")
    response = httpx.Response(status, request=request)
    return httpx.HTTPStatusError(f"HTTP {status}", request=request, response=response)


HITS = [SearchResult(f"hit {i}", f"http://docs.invalid/{i}", f"snippet {i}") for i in range(30)]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path)


def test_first_backend_that_answers_wins_and_failures_are_recorded(settings: Settings) -> None:
    raising = Fake("raising", RuntimeError("engine exploded"))
    limited = Fake("limited", http_error(429))
    accepted = Fake("accepted", http_error(202))
    empty = Fake("empty", [])
    good = Fake("good", HITS)
    never = Fake("never", HITS)
    slept: list[float] = []
    result = web_search(
        "humanize numbers",
        3,
        settings=settings,
        backends=[raising, limited, accepted, empty, good, never],
        sleep=slept.append,
    )
    assert result["ok"] is True
    assert result["backend"] == "good"
    assert result["query"] == "humanize numbers"
    assert [r["url"] for r in result["results"]] == [h.url for h in HITS[:3]]
    assert [t["backend"] for t in result["tried"]] == ["raising", "limited", "accepted", "empty"]
    errors = [t["error"] for t in result["tried"]]
    assert "engine exploded" in errors[0]
    assert errors[1].startswith("rate limited") and errors[2].startswith("rate limited")
    assert errors[3] == "no results"
    assert len(raising.calls) == 1  # plain failures are not retried
    assert len(limited.calls) == len(accepted.calls) == 1 + ws.RATE_LIMIT_RETRIES
    assert len(slept) == 2 * ws.RATE_LIMIT_RETRIES  # rate limits pause; plain failures do not
    assert never.calls == []
    assert result["untrusted"] is True


def test_rate_limit_is_retried_with_backoff_then_succeeds(settings: Settings) -> None:
    flaky = Fake("flaky", lambda call: http_error(429) if call < 3 else HITS)
    slept: list[float] = []
    result = web_search("slugify", settings=settings, backends=[flaky], backoff_s=0.05, sleep=slept.append)
    assert slept == [0.05, 0.1]  # one pause before each new try, doubling
    assert result["ok"] is True and result["backend"] == "flaky"
    assert result["tried"] == []
    assert len(flaky.calls) == 3


def test_backoff_is_capped(settings: Settings) -> None:
    limited = Fake("limited", http_error(429))
    slept: list[float] = []
    web_search("q", settings=settings, backends=[limited], retries=4, backoff_s=0.5, sleep=slept.append)
    assert slept == [0.5, 1.0, ws.MAX_BACKOFF_S, ws.MAX_BACKOFF_S]
    assert len(limited.calls) == 5  # no pause after the last try: the next backend is asked at once


def test_retry_after_is_honoured_but_bounded(settings: Settings) -> None:
    error = SearchBackendError("slow down", rate_limited=True, retry_after_s=3600)
    soon = SearchBackendError("slow down", rate_limited=True, retry_after_s=0.25)
    slow = Fake("slow", lambda call: error if call == 1 else soon if call == 2 else HITS)
    slept: list[float] = []
    result = web_search("q", settings=settings, backends=[slow], retries=2, sleep=slept.append)
    assert slept == [ws.MAX_BACKOFF_S, 0.25]  # an hour is cut to the cap; a short wait is kept
    assert result["ok"] is True


def test_all_backends_failing_is_a_result_not_an_exception(settings: Settings) -> None:
    result = web_search(
        "anything",
        settings=settings,
        backends=[Fake("a", ValueError("bad")), Fake("b", []), "searxng", "nonsense"],
    )
    assert result["ok"] is False
    assert [t["backend"] for t in result["tried"]] == ["a", "b", "searxng", "nonsense"]
    assert result["tried"][2] == {
        "backend": "searxng",
        "error": result["tried"][2]["error"],
        "skipped": True,
    }
    assert "not configured" in result["tried"][2]["error"]
    assert "unknown backend" in result["tried"][3]["error"]
    assert "a: ValueError: bad" in result["error"]


def test_settings_order_is_used_by_default(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, search_backends=("searxng",))
    result = web_search("x", settings=settings)
    assert result["ok"] is False
    assert [t["backend"] for t in result["tried"]] == ["searxng"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 6),
        ("abc", 6),
        ("", 6),
        ("3.7", 3),
        ("4", 4),
        (" 5 ", 5),
        (2.9, 2),
        (-3, 6),
        (0, 6),
        ("-1", 6),
        (10**9, 20),
        ("1e9", 20),
        (float("inf"), 20),
        (float("nan"), 6),
        (True, 6),
        ([3], 6),
        ({}, 6),
        (12, 12),
    ],
)
def test_num_results_garbage_falls_back(value: Any, expected: int, settings: Settings) -> None:
    assert clamp_results(value) == expected
    backend = Fake("f", HITS)
    result = web_search("q", value, settings=settings, backends=[backend])
    assert backend.calls == [("q", expected)]
    assert len(result["results"]) == expected


@pytest.mark.parametrize("query", [None, "", "   ", 42])
def test_bad_query_is_an_error_result(query: Any, settings: Settings) -> None:
    result = web_search(query, settings=settings, backends=[Fake("f", HITS)])
    assert result["ok"] is False
    assert "query" in result["error"]


def test_schema_is_an_openai_function() -> None:
    fn = WEB_SEARCH_SCHEMA["function"]
    assert WEB_SEARCH_SCHEMA["type"] == "function"
    assert fn["name"] == "web_search"
    assert fn["parameters"]["required"] == ["query"]
    assert set(fn["parameters"]["properties"]) == {"query", "num_results"}
    assert "price" not in fn["description"].lower()


# -- ddgs --------------------------------------------------------------------------------


class FakeDDGS:
    made: ClassVar[list[dict[str, Any]]] = []
    rows: ClassVar[Any] = []

    def __init__(self, **kwargs: Any) -> None:
        FakeDDGS.made.append(kwargs)

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        FakeDDGS.made.append({"query": query, **kwargs})
        if isinstance(FakeDDGS.rows, BaseException):
            raise FakeDDGS.rows
        return list(FakeDDGS.rows)


@pytest.fixture
def fake_ddgs(monkeypatch: pytest.MonkeyPatch) -> type[FakeDDGS]:
    import ddgs

    FakeDDGS.made = []
    monkeypatch.setattr(ddgs, "DDGS", FakeDDGS)
    return FakeDDGS


def test_ddgs_rows_become_results_with_a_bounded_timeout(fake_ddgs: type[FakeDDGS], settings: Settings) -> None:
    fake_ddgs.rows = [
        {"title": "humanize", "href": "https://docs.invalid/humanize", "body": "Human numbers"},
        {"title": "no link", "body": "dropped"},
    ]
    result = web_search("humanize", 4, settings=settings, backends=["ddgs"])
    assert result["ok"] is True and result["backend"] == "ddgs"
    assert result["results"] == [
        {"title": "humanize", "url": "https://docs.invalid/humanize", "snippet": "Human numbers"}
    ]
    assert fake_ddgs.made[0] == {"timeout": 5}
    assert fake_ddgs.made[1]["max_results"] == 4
    assert fake_ddgs.made[1]["backend"].startswith("duckduckgo")


def test_ddgs_rate_limit_is_retried_then_falls_through(fake_ddgs: type[FakeDDGS], settings: Settings) -> None:
    from ddgs.exceptions import RatelimitException

    fake_ddgs.rows = RatelimitException("202 Ratelimit")
    slept: list[float] = []
    result = web_search("humanize", settings=settings, backends=["ddgs", Fake("next", HITS)], sleep=slept.append)
    assert result["backend"] == "next"
    assert result["tried"][0] == {"backend": "ddgs", "error": "rate limited: DDGS: 202 Ratelimit"}
    assert slept == [ws.BACKOFF_S, 2 * ws.BACKOFF_S]
    searches = [m for m in fake_ddgs.made if "query" in m]
    assert len(searches) == 1 + ws.RATE_LIMIT_RETRIES


@pytest.mark.network
def test_real_ddgs_answers_or_falls_through(settings: Settings) -> None:
    slept: list[float] = []
    result = web_search(
        "python library humanize file sizes",
        settings=settings,
        backends=["ddgs", Fake("next", HITS)],
        backoff_s=0.1,
        sleep=slept.append,
    )
    assert result["ok"] is True
    if result["backend"] != "ddgs":  # no web search engine reachable (as on the dev machines)
        assert result["tried"][0]["backend"] == "ddgs"
        # No pause for a plain failure; for rate limits, the backoff schedule and nothing more.
        assert slept == [0.1, 0.2][: len(slept)]


# -- SearXNG -----------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


def searxng_answer(request: Request) -> Reply:
    if request.query.get("format") != "json":
        return Reply(status=403, body="forbidden")
    q = request.query.get("q", "")
    rows = [{"url": f"https://docs.invalid/{i}", "title": f"{q} {i}", "content": f"about {q}"} for i in range(10)]
    return Reply(body={"query": q, "number_of_results": 10, "results": [*rows, {"title": "x"}]})


def test_searxng_json_api(server: LocalServer, tmp_path: Path) -> None:
    server.route("/search", handler=searxng_answer)
    settings = Settings(home=tmp_path, searxng_url=server.url("/"))
    result = web_search("slugify text", 3, settings=settings, backends=["searxng"])
    assert result["ok"] is True and result["backend"] == "searxng"
    assert result["results"] == [
        {"title": f"slugify text {i}", "url": f"https://docs.invalid/{i}", "snippet": "about slugify text"}
        for i in range(3)
    ]
    assert server.requests[0].query == {"q": "slugify text", "format": "json"}


@pytest.mark.parametrize("status", [429, 202])
def test_searxng_rate_limit_falls_through(server: LocalServer, tmp_path: Path, status: int) -> None:
    server.route("/search", status=status, body="slow down")
    settings = Settings(home=tmp_path, searxng_url=server.url())
    slept: list[float] = []
    result = web_search("q", settings=settings, backends=["searxng", Fake("next", HITS)], sleep=slept.append)
    assert slept == [ws.BACKOFF_S, 2 * ws.BACKOFF_S]
    assert result["backend"] == "next"
    assert result["tried"][0]["backend"] == "searxng"
    assert f"HTTP {status}" in result["tried"][0]["error"]
    assert len(server.requests) == 1 + ws.RATE_LIMIT_RETRIES


def test_searxng_without_json_format_explains(server: LocalServer, tmp_path: Path) -> None:
    server.route("/search", status=403, body="forbidden")
    settings = Settings(home=tmp_path, searxng_url=server.url())
    result = web_search("q", settings=settings, backends=["searxng"])
    assert result["ok"] is False
    assert "format=json" in result["tried"][0]["error"]


def test_searxng_unreachable_fails_fast(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, searxng_url="http://127.0.0.1:9")
    slept: list[float] = []
    result = web_search("q", settings=settings, backends=["searxng", Fake("next", HITS)], sleep=slept.append)
    assert slept == []  # a refused connection is not a rate limit: no backoff before the next backend
    assert result["backend"] == "next"
    assert "ConnectError" in result["tried"][0]["error"]


# -- the package-index backend against a local fake index --------------------------------

FAKE_PROJECTS: dict[str, tuple[str, str]] = {
    # name: (summary, keywords)
    "humanize": ("Python humanize utilities", "humanize time size"),
    "humanize-number": ("A package to humanize numbers into readable formats", ""),
    "hurry.filesize": ("A simple library for human readable file sizes", ""),
    "python-slugify": ("A Python slugify application that also handles Unicode", ""),
    "types-python-slugify": ("Typing stubs for python-slugify", ""),
    "django-slugify-field": ("A Django model field that slugifies", ""),
    "slugify-junk": ("", ""),
    "pytz": ("World timezone definitions, modern and historical", "timezone, tzinfo"),
    "python-dateutil": ("Extensions to the standard Python datetime module", ""),
    "requests": ("Python HTTP for Humans.", ""),
    "numpy": ("Fundamental package for array computing in Python", ""),
    "zzz-unrelated": ("Nothing to see", ""),
}


def fake_index(server: LocalServer) -> None:
    # Filler names make word rarity (and so the ranking) behave as on a real index.
    names = [*FAKE_PROJECTS, *(f"filler{i}-pkg" for i in range(20000))]
    links = "".join(f'<a href="/simple/{n.replace(".", "-")}/">{n}</a>\n' for n in names)
    server.route("/simple/", body=f"<html><body>\n{links}</body></html>", content_type="text/html")
    for name, (summary, keywords) in FAKE_PROJECTS.items():
        info = {
            "name": name,
            "version": "1.2.3",
            "summary": summary,
            "description": f"README of {name}",
            "description_content_type": "text/markdown",
            "keywords": keywords,
            "project_urls": {"Source": f"https://code.invalid/{name}"},
        }
        key = name.replace(".", "-")
        server.route(f"/pypi/{key}/json", body={"info": info})


@pytest.fixture
def index_settings(server: LocalServer, tmp_path: Path) -> Settings:
    fake_index(server)
    return Settings(home=tmp_path, index_url=server.url("/simple/"))


def test_pypi_backend_finds_humanize(server: LocalServer, index_settings: Settings) -> None:
    result = web_search("python library humanize numbers file sizes", 3, settings=index_settings, backends=["pypi"])
    assert result["ok"] is True and result["backend"] == "pypi"
    names = [r["package"] for r in result["results"]]
    assert "humanize" in names[:2], names
    first = result["results"][names.index("humanize")]
    assert first["version"] == "1.2.3"
    assert first["summary"] == "Python humanize utilities"
    assert first["project_urls"] == {"Source": "https://code.invalid/humanize"}
    assert first["url"] == server.url("/project/humanize/")
    assert isinstance(first["popularity_rank"], int)
    assert "zzz-unrelated" not in names and "requests" not in names


def test_pypi_backend_prefers_real_packages_over_stubs_and_plugins(
    index_settings: Settings,
) -> None:
    result = web_search("slugify text", 6, settings=index_settings, backends=["pypi"])
    names = [r["package"] for r in result["results"]]
    assert names[0] == "python-slugify"
    assert "types-python-slugify" not in names
    if "slugify-junk" in names:  # no summary: ranked below, when it makes the list at all
        assert names.index("slugify-junk") > names.index("python-slugify")
    if "django-slugify-field" in names:
        assert names.index("django-slugify-field") > names.index("python-slugify")


def test_pypi_backend_knows_common_abbreviations(index_settings: Settings) -> None:
    result = web_search("parse timezone names", 3, settings=index_settings, backends=["pypi"])
    assert result["results"][0]["package"] == "pytz"
    result = web_search("days between two dates", 3, settings=index_settings, backends=["pypi"])
    assert result["results"][0]["package"] == "python-dateutil"


def test_pypi_result_url_is_readable(server: LocalServer, index_settings: Settings) -> None:
    found = web_search("humanize", 1, settings=index_settings, backends=["pypi"])
    page = read_webpage(found["results"][0]["url"], settings=index_settings)
    assert page["ok"] is True
    assert "README of humanize" in page["text"]


def test_pypi_backend_caches_listing_and_metadata(server: LocalServer, index_settings: Settings) -> None:
    web_search("humanize numbers", settings=index_settings, backends=["pypi"])
    first = len(server.requests)
    assert [r.path for r in server.requests].count("/simple/") == 1
    again = web_search("humanize numbers", settings=index_settings, backends=["pypi"])
    assert again["ok"] is True
    assert len(server.requests) == first  # listing in memory, metadata on disk
    assert list((index_settings.cache_dir / "index-metadata").rglob("humanize.json"))


def test_pypi_backend_falls_back_to_popular_list(server: LocalServer, tmp_path: Path) -> None:
    fake_index(server)
    server.route("/simple/", status=500, body="listing broken")
    settings = Settings(home=tmp_path, index_url=server.url("/simple/"))
    backend = PackageIndexBackend(settings)
    results = backend.search("humanize numbers", 3)
    assert results[0].package == "humanize"
    assert backend.listing_error is not None and "500" in backend.listing_error


def test_pypi_backend_metadata_down_is_a_failure(server: LocalServer, tmp_path: Path) -> None:
    server.route("/simple/", body='<a href="/simple/humanize/">humanize</a>', content_type="text/html")
    settings = Settings(home=tmp_path, index_url=server.url("/simple/"))
    server.route("/pypi/humanize/json", status=503, body="down")
    result = web_search("humanize", settings=settings, backends=["pypi", Fake("next", HITS)])
    assert result["backend"] == "next"
    assert "metadata unavailable" in result["tried"][0]["error"]


def test_pypi_backend_needs_content_words(index_settings: Settings) -> None:
    result = web_search("the best python library", settings=index_settings, backends=["pypi"])
    assert result["ok"] is False
    assert "content words" in result["tried"][0]["error"]


def test_query_terms_drop_stop_words_and_plurals() -> None:
    terms = ps.query_terms("Python library to get the sizes of files, humanized")
    assert [t.word for t in terms if not t.joined] == ["sizes", "files", "humanized"]
    assert "size" in terms[0].forms and terms[0].stem == "size"
    assert "tz" in ps.query_terms("timezone")[0].forms
    assert any(t.word == "qrcode" for t in ps.query_terms("qr code"))


# -- the real index ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def real_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    # One home per session: the ~40 MB listing is fetched at most once.
    return Settings(home=tmp_path_factory.mktemp("real-index"))


@pytest.mark.network
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("python library humanize numbers file sizes", "humanize"),
        ("slugify text", "python-slugify"),
        ("parse timezone names", "pytz"),
        ("days between two dates python", "python-dateutil"),
    ],
)
def test_real_index_finds_known_packages(real_settings: Settings, query: str, expected: str) -> None:
    result = web_search(query, 6, settings=real_settings, backends=["pypi"])
    assert result["ok"] is True, result
    names = [r["package"].lower() for r in result["results"]]
    assert expected in names[:3], names
    hit = result["results"][names.index(expected)]
    assert hit["version"] and hit["summary"]
    assert hit["url"] == PackageIndex(real_settings.index_url).project_page_url(expected)


def test_the_model_is_not_shown_the_backends_that_failed_before_one_answered() -> None:
    """Issue 18: a list of DNS errors beside good results read like a failed search."""
    from types import SimpleNamespace

    from toolsmith.agent.metatools import web_search as meta

    found = {
        "ok": True,
        "backend": "pypi",
        "results": [{"name": "holidays"}],
        "tried": [{"backend": "ddgs", "error": "dns"}],
    }
    ctx: Any = SimpleNamespace(web=SimpleNamespace(search=lambda query, n: found))
    outcome = meta.handle(ctx, {"query": "holidays"})
    assert outcome.ok and "tried" not in outcome.to_message() and outcome.data["backend"] == "pypi"
    failed = {"ok": False, "error": "No search backend found anything", "tried": [{"backend": "ddgs", "error": "dns"}]}
    ctx = SimpleNamespace(web=SimpleNamespace(search=lambda query, n: failed))
    assert meta.handle(ctx, {"query": "x"}).to_message()["tried"] == failed["tried"]  # a failure keeps them
