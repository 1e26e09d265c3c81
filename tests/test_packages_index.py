"""The package index client against a local fake index (and, marked, the real one)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from helpers_http import LocalServer, Reply, Request
from toolsmith.errors import PackageError
from toolsmith.packages.index import (
    SIMPLE_JSON,
    PackageIndex,
    normalize_name,
    pip_configured_index,
    pip_default_index,
    resolve_index_url,
)


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


@pytest.fixture
def index(server: LocalServer, tmp_path: Path) -> Iterator[PackageIndex]:
    idx = PackageIndex(server.url("/simple/"), cache_dir=tmp_path, timeout_s=5)
    yield idx
    idx.close()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("Foo_Bar", "foo-bar"), ("zope.interface", "zope-interface"), ("a-._-b", "a-b"), ("X", "x")],
)
def test_normalize_name(raw: str, expected: str) -> None:
    assert normalize_name(raw) == expected


# -- which index ---------------------------------------------------------------------------


def test_configured_index_wins_and_gets_a_slash() -> None:
    assert resolve_index_url("http://mirror.invalid/simple") == "http://mirror.invalid/simple/"


def isolated_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "HOME": str(tmp_path),
        "XDG_CONFIG_DIRS": str(tmp_path / "xdg"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        **extra,
    }


def test_pip_environment_variable_is_honoured(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, PIP_INDEX_URL="http://env.invalid/simple")
    assert resolve_index_url(None, env) == "http://env.invalid/simple/"


def test_pip_config_file_is_honoured(tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = http://conf.invalid/simple/\n", "utf-8")
    env = isolated_env(tmp_path, PIP_CONFIG_FILE=str(conf))
    assert pip_configured_index(env) == "http://conf.invalid/simple/"


def test_default_comes_from_pip_itself(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, PIP_CONFIG_FILE=os.devnull)
    if pip_configured_index(env) is not None:
        pytest.skip("this machine's own pip config names an index")
    assert resolve_index_url(None, env) == pip_default_index().rstrip("/") + "/"


def test_urls_next_to_the_simple_api(server: LocalServer) -> None:
    idx = PackageIndex(server.url("/mirror/simple"))
    assert idx.simple_url == server.url("/mirror/simple/")
    assert idx.base_url == server.url("/mirror")
    assert idx.json_api_url == server.url("/mirror/pypi/")
    assert idx.project_page_url("Foo_Bar") == server.url("/mirror/project/foo-bar/")
    assert idx.project_page_url("foo", "1.0") == server.url("/mirror/project/foo/1.0/")
    assert PackageIndex.base_url_of(server.url("/simple/")) == server.url("")
    idx.close()


# -- the simple API --------------------------------------------------------------------------


def test_project_from_pep691_json(server: LocalServer, index: PackageIndex) -> None:
    files = [
        {"filename": "demo_pkg-1.0-py3-none-any.whl", "url": "f1", "hashes": {"sha256": "aa"}},
        {"filename": "demo-pkg-1.1.tar.gz", "url": "f2", "hashes": {"sha256": "bb"}},
    ]
    body = {"name": "demo-pkg", "files": files, "versions": ["1.0", "1.1"]}
    server.route("/simple/demo-pkg/", body=body, content_type=SIMPLE_JSON)
    project = index.project("Demo_Pkg")
    assert project is not None
    assert project.versions == ("1.0", "1.1")
    assert [f["url"] for f in project.files_for("1.0")] == ["f1"]
    assert index.exists("demo.pkg")
    assert len(server.requests) == 1  # the second look-up was served from memory
    assert SIMPLE_JSON in server.requests[0].headers["Accept"]


def test_project_from_pep503_html(server: LocalServer, index: PackageIndex) -> None:
    html = (
        '<a href="../../f/demo-2.0.tar.gz#sha256=cc">demo-2.0.tar.gz</a>\n'
        '<a href="../../f/demo-2.1-py3-none-any.whl">demo-2.1-py3-none-any.whl</a>\n'
    )
    server.route("/simple/demo/", body=html, content_type="text/html")
    project = index.project("demo")
    assert project is not None
    assert project.versions == ("2.0", "2.1")
    assert project.files_for("2.0")[0]["hashes"] == {"sha256": "cc"}


def test_missing_project_is_none(index: PackageIndex) -> None:
    assert index.project("nope") is None
    assert not index.exists("nope")


def test_server_errors_raise(server: LocalServer, index: PackageIndex) -> None:
    server.route("/simple/broken/", status=500, body="down")
    with pytest.raises(httpx.HTTPStatusError):
        index.project("broken")


# -- JSON metadata ---------------------------------------------------------------------------


def meta(**info: object) -> dict[str, object]:
    return {"info": {"name": "demo", "version": "3.0", "summary": "A demo", **info}}


def test_info_fields(server: LocalServer, index: PackageIndex) -> None:
    server.route(
        "/pypi/demo/json",
        body=meta(
            description="# README",
            description_content_type="text/markdown",
            home_page="https://home.invalid",
            project_urls={"Docs": "https://docs.invalid"},
            requires_python=">=3.9",
            keywords="one, two",
        ),
    )
    info = index.info("Demo")
    assert info is not None
    assert (info.name, info.version, info.summary) == ("demo", "3.0", "A demo")
    assert info.description == "# README"
    assert info.description_content_type == "text/markdown"
    assert info.project_urls == {"Docs": "https://docs.invalid"}
    assert info.keywords == "one, two"
    assert info.to_dict()["requires_python"] == ">=3.9"
    assert info.to_dict()["keywords"] == "one, two"


def test_info_tolerates_nulls_and_keyword_lists(server: LocalServer, index: PackageIndex) -> None:
    server.route("/pypi/demo/json", body=meta(summary=None, project_urls=None, keywords=["a", "b"]))
    info = index.info("demo")
    assert info is not None
    assert info.summary == "" and info.project_urls == {} and info.keywords == "a, b"


def test_info_drops_placeholder_links(server: LocalServer, index: PackageIndex) -> None:
    urls = {"Homepage": "UNKNOWN", "Download": "", "Source": "https://src.invalid"}
    server.route("/pypi/demo/json", body=meta(home_page="UNKNOWN", project_urls=urls))
    info = index.info("demo")
    assert info is not None
    assert info.home_page == "" and info.project_urls == {"Source": "https://src.invalid"}


def test_info_for_a_version(server: LocalServer, index: PackageIndex) -> None:
    server.route("/pypi/demo/2.0/json", body=meta(version="2.0"))
    info = index.info("demo", "2.0")
    assert info is not None and info.version == "2.0"
    assert index.info("demo", "9.9") is None


def test_info_missing_project_is_none(index: PackageIndex) -> None:
    assert index.info("nothing-here") is None


@pytest.mark.parametrize("reply", [Reply(body="<html>oops</html>"), Reply(body={"no": "info"})])
def test_malformed_metadata_is_a_package_error(server: LocalServer, index: PackageIndex, reply: Reply) -> None:
    server.route("/pypi/demo/json", handler=lambda _request: reply)
    with pytest.raises(PackageError):
        index.info("demo")


# -- the full listing ------------------------------------------------------------------------


def test_listing_from_html_is_cached_on_disk(server: LocalServer, index: PackageIndex, tmp_path: Path) -> None:
    html = '<a href="/simple/foo-bar/">Foo_Bar</a>\n<a href="/simple/baz/">baz</a>\n'
    server.route("/simple/", body=html, content_type="text/html")
    assert index.project_names() == ["Foo_Bar", "baz"]
    cached = list(tmp_path.glob("index-listing-*.json"))
    assert len(cached) == 1
    assert json.loads(cached[0].read_text("utf-8"))["names"] == ["Foo_Bar", "baz"]
    fresh = PackageIndex(index.simple_url, cache_dir=tmp_path)
    assert fresh.project_names() == ["Foo_Bar", "baz"]
    assert len(server.requests) == 1  # the second client read the disk cache
    assert fresh.project_names(max_age_s=0) == ["Foo_Bar", "baz"]
    assert len(server.requests) == 2  # too old: fetched again


def test_listing_from_json(server: LocalServer, index: PackageIndex) -> None:
    body = {"meta": {"api-version": "1.0"}, "projects": [{"name": "a"}, {"name": "B"}]}
    server.route("/simple/", body=body, content_type=SIMPLE_JSON)
    assert index.project_names() == ["a", "B"]


def test_damaged_listing_cache_is_refetched(server: LocalServer, index: PackageIndex, tmp_path: Path) -> None:
    server.route("/simple/", body='<a href="/simple/x/">x</a>', content_type="text/html")
    index.project_names()
    cache = next(tmp_path.glob("index-listing-*.json"))
    cache.write_text("{not json", "utf-8")
    assert PackageIndex(index.simple_url, cache_dir=tmp_path).project_names() == ["x"]
    assert len(server.requests) == 2


def test_close_leaves_a_given_client_open(server: LocalServer) -> None:
    with httpx.Client() as client:
        PackageIndex(server.url("/simple/"), client=client).close()
        assert not client.is_closed
    own = PackageIndex(server.url("/simple/"))
    own.close()
    assert own._client.is_closed


def test_requests_reach_the_configured_index(server: LocalServer, index: PackageIndex) -> None:
    seen: list[Request] = []

    def record(request: Request) -> Reply:
        seen.append(request)
        return Reply(body=meta())

    server.route("/pypi/some-name/json", handler=record)
    assert index.info("Some.Name") is not None
    assert seen and seen[0].path == "/pypi/some-name/json"


# -- the real index --------------------------------------------------------------------------


@pytest.mark.network
def test_real_index_knows_a_popular_project() -> None:
    idx = PackageIndex(timeout_s=20)
    try:
        project = idx.project("humanize")
        assert project is not None and project.versions
        info = idx.info("humanize")
        assert info is not None
        assert info.summary and info.version and info.description
        assert idx.info("no-such-project-" + "q" * 20) is None
    finally:
        idx.close()
