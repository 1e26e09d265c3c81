"""Search: pre-processing (names, CJK bigrams, stop words) and BM25 ranking over served tools."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from library_backends import BACKENDS, library_target
from toolsmith.errors import LibraryError
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec
from toolsmith.library.search import match_expression, query_terms, tokens

TOOLS = [
    ("days_between", "Count the days between two ISO dates.", ("date", "calendar")),
    ("get_stock_price", "Latest stock price and daily change for a ticker symbol.", ("finance", "股票")),
    ("convert_currency", "Convert an amount between currencies with current exchange rates.", ("forex",)),
    ("parse_rss_feed", "Parse an RSS or Atom feed and list its entries.", ("news", "xml")),
    ("date_diff_zh", "计算两个日期之间相差的天数", ()),
    ("get_weather_forecast", "Weather forecast for a city for the next days.", ("天气", "weather")),
    ("qrCodeEncoder", "Encode text as a QR code image.", ("barcode",)),
]


def spec(name: str, description: str, keywords: tuple[str, ...] = ()) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters={"type": "object", "properties": {}},
        code=f"def run():\n    return {name!r}\n",
        keywords=keywords,
    )


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh library URL on each backend: the ranking contract holds on both."""
    with library_target(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def lib(backend: str) -> Iterator[ToolLibrary]:
    library = ToolLibrary(backend)
    for name, description, keywords in TOOLS:
        library.add(spec(name, description, keywords), provenance=Provenance(), gate={})
    yield library
    library.close()


def names(lib: ToolLibrary, query: str, limit: int = 5) -> list[str]:
    return [h.tool.name for h in lib.search(query, limit=limit)]


# --- pre-processing ------------------------------------------------------------------


def test_tokens_split_names_and_camel_case() -> None:
    assert tokens("get_stock_price") == ["get", "stock", "price"]
    assert tokens("qrCodeEncoder HTTPServer sha256") == ["qr", "code", "encoder", "http", "server", "sha256"]


def test_cjk_runs_become_bigrams() -> None:
    assert tokens("计算天数") == ["计算", "算天", "天数"]
    assert tokens("天 days") == ["天", "days"]
    assert tokens("日付の差") == ["日付", "付の", "の差"]
    assert tokens("ＡＢＣ１２３") == ["abc123"]  # full-width folded


def test_query_drops_stop_words_numbers_and_dates() -> None:
    assert query_terms("How many days between 2020-01-01 and 2020-03-01?") == ["days", "between"]
    assert query_terms("what is the price of the stock") == ["price", "stock"]
    assert "的" not in query_terms("日期的天数")
    assert "多少" not in query_terms("两个日期之间有多少天")
    assert "日期" in query_terms("两个日期之间有多少天")
    assert query_terms("the of 2021 12 31 的 是") == []
    assert match_expression("the a of") is None
    assert match_expression('stock "price" OR NEAR(') == '"stock" OR "price" OR "near"'


# --- search behaviour --------------------------------------------------------------------


def test_results_are_bounded_and_scored(lib: ToolLibrary) -> None:
    hits = lib.search("days dates weather stock price currency feed", limit=3, floor=0)
    assert len(hits) == 3
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)
    assert len(lib.search("days dates weather stock price currency feed", floor=0)) == 5  # default k
    assert hits[0].to_dict()["name"] == hits[0].tool.name


def test_ranking_prefers_name_matches(lib: ToolLibrary) -> None:
    assert names(lib, "What is the latest stock price of NVDA?")[0] == "get_stock_price"
    assert names(lib, "convert 100 USD to EUR currency")[0] == "convert_currency"
    assert names(lib, "parse this rss feed")[0] == "parse_rss_feed"
    assert names(lib, "encode a qr code")[0] == "qrCodeEncoder"


def test_task_with_dates_matches_on_words_not_digits(lib: ToolLibrary) -> None:
    assert names(lib, "days between 2020-01-01 and 2020-03-01")[0] == "days_between"
    assert names(lib, "2020-01-01 2020-03-01") == []


def test_names_split_on_underscore(lib: ToolLibrary) -> None:
    assert names(lib, "days_between")[0] == "days_between"
    assert names(lib, "weather forecast")[0] == "get_weather_forecast"


def test_chinese_query_against_chinese_description(lib: ToolLibrary) -> None:
    assert names(lib, "两个日期之间有多少天")[0] == "date_diff_zh"


def test_cross_language_through_keywords(lib: ToolLibrary) -> None:
    assert names(lib, "北京明天的天气")[0] == "get_weather_forecast"
    assert names(lib, "苹果公司的股票")[0] == "get_stock_price"


def test_no_match_returns_empty(lib: ToolLibrary) -> None:
    assert lib.search("translate a sentence into klingon") == []
    assert lib.search("") == []
    assert lib.search("the what is of") == []


def test_only_served_active_versions_are_found(lib: ToolLibrary) -> None:
    lib.set_status("parse_rss_feed", 1, Status.QUARANTINED, reason="broken", actor="t")
    lib.retire("convert_currency", reason="gone", actor="t")
    lib.add(spec("pending_feed_reader", "Read a feed"), provenance=Provenance(), gate={}, status=Status.PENDING)
    assert "parse_rss_feed" not in names(lib, "rss feed")
    assert "pending_feed_reader" not in names(lib, "rss feed")
    assert names(lib, "convert currency") == []
    lib.set_status("parse_rss_feed", 1, Status.ACTIVE, reason="fixed", actor="t")
    assert names(lib, "rss feed")[0] == "parse_rss_feed"


def test_supersede_serves_and_indexes_only_the_new_version(lib: ToolLibrary) -> None:
    lib.add(spec("days_between", "Number of calendar days from one date to another."), provenance=Provenance(), gate={})
    hits = lib.search("calendar days")
    assert [(h.tool.name, h.tool.version) for h in hits if h.tool.name == "days_between"] == [("days_between", 2)]
    # v1's wording ("ISO") no longer finds the tool
    assert "days_between" not in names(lib, "ISO")


def test_bad_limit_is_refused(lib: ToolLibrary) -> None:
    for bad in (0, -1, True):
        with pytest.raises(LibraryError, match="limit"):
            lib.search("days", limit=bad)


def test_search_never_returns_the_whole_library(backend: str) -> None:
    with ToolLibrary(backend) as library, library.batch():
        for i in range(300):
            library.add(spec(f"get_price_{i}", "Get the price of something."), provenance=Provenance(), gate={})
    with ToolLibrary(backend) as library:
        assert len(library.search("price", limit=1000)) == 100
        assert len(library.search("price")) == 5
