"""Package-index search ranking: name and summary relevance blended with popularity.

A local fake index serves the listing and metadata; the shipped popular-packages list
gives ranks and summaries, so no network is needed for the ranking.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers_http import LocalServer
from toolsmith.config import Settings
from toolsmith.web import package_search as ps
from toolsmith.web.search import web_search

PROJECTS: dict[str, str] = {
    # real projects with their real one-line summaries; the first seven are on the shipped list
    "pint": "Physical quantities module",
    "quantities": "Support for physical quantities with units, based on numpy",
    "schwifty": "IBAN parsing and validation",
    "python-stdnum": "Python module to handle standardized numbers and codes",
    "pyparsing": "pyparsing - Classes and methods to define and execute parsing grammars",
    "pycparser": "C parser in Python",
    "parso": "A Python Parser",
    # little-used projects whose names share letters or words with the queries
    "aibanking": "The official Python library for a banking API",
    "kibana-dashboards": "Dashboards for Kibana",
    "allunitconvert": "A lightweight Python unit conversion library with SI support.",
    "corva-unit-converter": "Unit converter for O&G and other units",
}


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


@pytest.fixture
def settings(server: LocalServer, tmp_path: Path) -> Settings:
    names = [*PROJECTS, *(f"filler{i}-pkg" for i in range(5000))]
    links = "".join(f'<a href="/simple/{n}/">{n}</a>\n' for n in names)
    server.route("/simple/", body=f"<html><body>\n{links}</body></html>", content_type="text/html")
    for name, summary in PROJECTS.items():
        info = {"name": name, "version": "1.0", "summary": summary, "description": "", "keywords": ""}
        server.route(f"/pypi/{name}/json", body={"info": info})
    ps._LISTINGS.clear()
    return Settings(home=tmp_path, index_url=server.url("/simple/"))


def found(query: str, settings: Settings, n: int = 5) -> list[str]:
    result = web_search(query, n, settings=settings, backends=["pypi"])
    assert result["ok"], result
    return [r["package"] for r in result["results"]]


@pytest.mark.parametrize("query", ["IBAN library", "python library to validate IBAN numbers"])
def test_an_iban_query_finds_schwifty_not_famous_parsers(query: str, settings: Settings) -> None:
    names = found(query, settings)
    assert names[0] == "schwifty", names
    assert not {"pyparsing", "pycparser", "parso"} & set(names[:3]), names


def test_a_query_that_says_parse_still_puts_the_iban_library_first(settings: Settings) -> None:
    names = found("parse an IBAN", settings)
    assert names[0] == "schwifty", names  # a parser that also fits "parse" may follow


def test_physical_unit_conversion_finds_pint_by_its_summary(settings: Settings) -> None:
    names = found("physical unit conversion", settings)
    assert "pint" in names[:3], names
    assert set(names[:4]) <= {"pint", "quantities", "allunitconvert", "corva-unit-converter"}, names


def test_a_project_that_fits_outranks_a_famous_one_sharing_a_word() -> None:
    terms, _ = ps._match(ps.query_terms("parse IBAN numbers"), sorted(PROJECTS))
    famous = ps._blend(terms, "pyparsing", PROJECTS["pyparsing"], 99)
    fitting = ps._blend(terms, "schwifty", PROJECTS["schwifty"], 4245)
    assert fitting > famous
    assert ps._blend(terms, "numpy", "Fundamental package for array computing", 10) == 0.0  # matches nothing


def test_shipped_list_has_ranks_and_summaries() -> None:
    popular = ps.popular_packages()
    assert len(popular) > 10_000
    assert popular["pint"].summary == "Physical quantities module" and popular["pint"].rank > 0
    assert ps.popular_ranks()["pint"] == popular["pint"].rank


def test_without_the_listing_the_shipped_summaries_still_find_pint(server: LocalServer, settings: Settings) -> None:
    server.route("/simple/", status=500, body="listing broken")
    ps._LISTINGS.clear()
    backend = ps.PackageIndexBackend(settings)
    names = [r.package for r in backend.search("physical unit conversion", 3)]
    assert names[0] in ("pint", "quantities") and "pint" in names, names
