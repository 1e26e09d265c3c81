"""read_webpage against local servers standing in for web pages and a package index."""

from __future__ import annotations

import json
import platform
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from helpers_http import LocalServer
from toolsmith.agent.metatools.read_webpage import SCHEMA as READ_WEBPAGE_SCHEMA
from toolsmith.config import Settings
from toolsmith.packages.index import PackageIndex
from toolsmith.web import docs_fallback
from toolsmith.web import read as rw
from toolsmith.web.read import UNTRUSTED_NOTE, read_webpage

DOC_PAGE = """<!doctype html><html><head><title>Widget &amp; Co docs</title>
<script>window.secret = "SCRIPT-CONTENT";</script><style>.x{color:red}</style></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<main><h1>Widget 2.0</h1>
<p>Widget is a library that turns numbers into words. It has no dependencies and runs on
every supported Python version, which keeps installs small and predictable.</p>
<h2>Install</h2><pre><code>pip install widget
import widget
print(widget.words(42))</code></pre>
<p>Call widget.words(n) to convert any integer; negative numbers get a leading minus word.</p>
</main><footer>Copyright 2024</footer></body></html>"""

WIDGET_META = {
    "info": {
        "name": "widget",
        "version": "2.0.1",
        "summary": "Turn numbers into words",
        "description": "# Widget\n\nREADME-BODY: call `widget.words(42)` to get forty-two.",
        "description_content_type": "text/markdown",
        "home_page": "",
        "project_urls": {"Source": "https://example.invalid/widget"},
        "requires_python": ">=3.9",
        "keywords": "numbers, words",
    }
}


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


@pytest.fixture
def settings(tmp_path: Path, server: LocalServer) -> Settings:
    return Settings(home=tmp_path, index_url=server.url("/simple/"))


@pytest.mark.slow
def test_html_main_text_is_extracted_and_marked_untrusted(server: LocalServer, settings: Settings) -> None:
    server.route("/docs", body=DOC_PAGE, content_type="text/html; charset=utf-8")
    result = read_webpage(server.url("/docs"), settings=settings)
    assert result["ok"] is True
    assert result["title"] == "Widget & Co docs"
    assert result["extractor"] == "trafilatura"
    assert "turns numbers into words" in result["text"]
    assert "pip install widget" in result["text"]
    assert "SCRIPT-CONTENT" not in result["text"]
    assert "color:red" not in result["text"]
    assert result["untrusted"] is True
    assert result["note"].startswith(UNTRUSTED_NOTE)
    assert result["truncated"] is False
    assert result["content_type"].startswith("text/html")
    assert result["final_url"] == server.url("/docs")


def test_html_falls_back_to_tag_strip_when_extraction_finds_nothing(
    server: LocalServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trafilatura

    monkeypatch.setattr(trafilatura, "extract", lambda *a, **k: None)
    server.route("/docs", body=DOC_PAGE, content_type="text/html")
    result = read_webpage(server.url("/docs"), settings=settings)
    assert result["ok"] is True
    assert result["extractor"] == "tag-strip"
    assert "turns numbers into words" in result["text"]
    assert "SCRIPT-CONTENT" not in result["text"]
    assert "<p>" not in result["text"]


def test_strip_tags_keeps_text_and_block_breaks() -> None:
    text = rw.strip_tags("<div>one</div><p>two &amp; <b>three</b></p><!-- hidden --><br>four")
    assert [line for line in text.splitlines() if line] == ["one", "two & three", "four"]


def test_json_passes_through(server: LocalServer, settings: Settings) -> None:
    server.route("/data.json", body={"answer": 42, "items": [1, 2]})
    result = read_webpage(server.url("/data.json"), settings=settings)
    assert result["ok"] is True
    assert json.loads(result["text"]) == {"answer": 42, "items": [1, 2]}
    assert result["extractor"] == "passthrough"


@pytest.mark.parametrize("content_type", ["text/plain", "text/markdown", "text/x-rst"])
def test_text_and_markdown_pass_through(server: LocalServer, settings: Settings, content_type: str) -> None:
    body = "# Title\n\nSome *markdown* <b>kept as is</b>.\n"
    server.route("/README", body=body, content_type=content_type)
    result = read_webpage(server.url("/README"), settings=settings)
    assert result["ok"] is True
    assert result["text"] == body.strip()  # trailing blank space is trimmed


def test_unlabelled_text_is_sniffed(server: LocalServer, settings: Settings) -> None:
    server.route("/raw", body=b"plain words, no content type", content_type="")
    result = read_webpage(server.url("/raw"), settings=settings)
    assert result["ok"] is True
    assert result["text"] == "plain words, no content type"


def test_charset_from_header_is_honoured(server: LocalServer, settings: Settings) -> None:
    server.route("/latin", body="café crème".encode("latin-1"), content_type="text/plain; charset=latin-1")
    result = read_webpage(server.url("/latin"), settings=settings)
    assert result["text"] == "café crème"


@pytest.mark.parametrize("content_type", ["application/pdf", "application/octet-stream"])
def test_pdf_is_named_not_decoded(server: LocalServer, settings: Settings, content_type: str) -> None:
    server.route("/paper", body=b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", content_type=content_type)
    result = read_webpage(server.url("/paper"), settings=settings)
    assert result["ok"] is False
    assert "PDF" in result["error"]
    assert "not supported" in result["error"]


def test_binary_is_named_not_decoded(server: LocalServer, settings: Settings) -> None:
    server.route("/logo.png", body=b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", content_type="image/png")
    result = read_webpage(server.url("/logo.png"), settings=settings)
    assert result["ok"] is False
    assert "binary" in result["error"]
    assert "image/png" in result["error"]


def test_body_is_capped_while_streaming(server: LocalServer, settings: Settings) -> None:
    # A terabyte: read whole, it would never end, so an answer at all shows the cap cut the stream.
    server.route("/huge", body_size=10**12, content_type="text/plain")
    result = read_webpage(server.url("/huge"), settings=settings, max_bytes=100_000, max_chars=200_000)
    assert result["ok"] is True
    assert result["truncated"] is True
    assert len(result["text"]) == 100_000
    assert "size cap" in result["note"]


def test_long_text_is_cut_and_says_so(server: LocalServer, settings: Settings) -> None:
    body = "".join(f"line {i:05d}\n" for i in range(5000))  # 55,000 characters
    server.route("/long.txt", body=body, content_type="text/plain")
    result = read_webpage(server.url("/long.txt"), settings=settings, max_chars=1000)
    assert result["ok"] is True
    assert result["truncated"] is True
    assert result["text"] == body[:1000]
    assert f"first 1000 of {len(body.strip())} characters; read on with offset=1000" in result["note"]
    more = read_webpage(server.url("/long.txt"), settings=settings, max_chars=1000, offset=1000)
    assert more["text"] == body[1000:2000] and "offset=2000" in more["note"]
    assert result["note"].startswith(UNTRUSTED_NOTE)


@pytest.mark.parametrize("garbage", [None, "lots", -5, True])
def test_garbage_max_chars_uses_the_default(server: LocalServer, settings: Settings, garbage: object) -> None:
    body = "y" * 20_000
    server.route("/y", body=body, content_type="text/plain")
    result = read_webpage(server.url("/y"), settings=settings, max_chars=garbage)
    expected = rw.MIN_CHARS if garbage == -5 else rw.DEFAULT_MAX_CHARS
    assert len(result["text"]) == expected


def test_redirects_are_followed(server: LocalServer, settings: Settings) -> None:
    server.route("/old", status=301, headers={"Location": "/middle"})
    server.route("/middle", status=302, headers={"Location": server.url("/new")})
    server.route("/new", body="arrived", content_type="text/plain")
    result = read_webpage(server.url("/old"), settings=settings)
    assert result["ok"] is True
    assert result["text"] == "arrived"
    assert result["url"] == server.url("/old")
    assert result["final_url"] == server.url("/new")


def test_redirect_loops_are_bounded(server: LocalServer, settings: Settings) -> None:
    server.route("/a", status=302, headers={"Location": "/b"})
    server.route("/b", status=302, headers={"Location": "/a"})
    result = read_webpage(server.url("/a"), settings=settings)
    assert result["ok"] is False
    assert "Too many redirects" in result["error"]
    assert len(server.requests) == 6  # the first request and five redirects


def test_redirect_to_another_scheme_is_refused(server: LocalServer, settings: Settings) -> None:
    server.route("/sneaky", status=302, headers={"Location": "file:///etc/passwd"})
    result = read_webpage(server.url("/sneaky"), settings=settings)
    assert result["ok"] is False
    assert "only http:// and https://" in result["error"]


def test_http_errors_come_back_as_results(server: LocalServer, settings: Settings) -> None:
    result = read_webpage(server.url("/missing"), settings=settings)
    assert result == {
        "ok": False,
        "url": server.url("/missing"),
        "error": result["error"],
    }
    assert "HTTP 404" in result["error"]
    server.route("/boom", status=500, body="oops")
    assert "HTTP 500" in read_webpage(server.url("/boom"), settings=settings)["error"]


def test_slow_server_times_out(server: LocalServer, settings: Settings) -> None:
    server.route("/slow", body="late", delay_s=3.0)
    result = read_webpage(server.url("/slow"), settings=settings, timeout_s=0.5)
    # Waited out, the server would have answered "late": the error shows the timeout ended it.
    assert result["ok"] is False
    assert f"Timed out after 0.5 s reading {server.url('/slow')}." == result["error"]


class SteppingClock:
    """A clock that every look moves on by ``step`` seconds, whatever the wall clock does."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0
        self.looks = 0

    def __call__(self) -> float:
        self.looks += 1
        self.now += self.step
        return self.now


def test_dripping_body_hits_the_overall_deadline(server: LocalServer, settings: Settings) -> None:
    # Chunks arrive far within the per-read timeout, and the whole body would take 100 s:
    # only the overall deadline, read from the clock, can end this read early.
    server.route("/drip", body_size=100_000, chunk_size=10, chunk_delay_s=0.01, content_type="text/plain")
    clock = SteppingClock(0.3)
    result = read_webpage(server.url("/drip"), settings=settings, timeout_s=1.0, clock=clock)
    assert result["ok"] is False
    assert result["error"].endswith("(body too slow).")
    deadline = clock.step + 1.0  # the first look starts the 1.0 s
    assert clock.looks >= 3  # the start, the request's timeout, then one look per chunk
    assert clock.now - clock.step <= deadline < clock.now  # it stopped at the first look past the deadline


def test_unreachable_host_is_an_error_result(settings: Settings) -> None:
    result = read_webpage("http://no-such-host.invalid/docs", settings=settings, timeout_s=5)
    assert result["ok"] is False
    assert "Could not connect" in result["error"]


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://example.invalid/x", "javascript:alert(1)", "data:text/plain,hi"],
)
def test_non_http_schemes_are_refused(server: LocalServer, settings: Settings, url: str) -> None:
    result = read_webpage(url, settings=settings)
    assert result["ok"] is False
    assert "only http:// and https://" in result["error"]
    assert server.requests == []


@pytest.mark.parametrize("url", [None, 42, "", "   "])
def test_bad_url_values_are_error_results(settings: Settings, url: object) -> None:
    result = read_webpage(url, settings=settings)
    assert result["ok"] is False
    assert "url" in result["error"]


def test_a_bare_host_name_gets_https(settings: Settings) -> None:
    result = read_webpage("no-such-host.invalid/docs", settings=settings, timeout_s=5)
    assert result["url"] == "https://no-such-host.invalid/docs"
    assert result["ok"] is False


def test_a_given_client_is_used_and_left_open(server: LocalServer, settings: Settings) -> None:
    server.route("/t", body="hello", content_type="text/plain")
    with httpx.Client() as client:
        assert read_webpage(server.url("/t"), settings=settings, client=client)["text"] == "hello"
        assert not client.is_closed


# -- package pages -----------------------------------------------------------------------


def test_package_page_is_read_through_json_metadata(server: LocalServer, settings: Settings) -> None:
    server.route("/pypi/widget/json", body=WIDGET_META)
    # No route for /project/widget/: the HTML page is unavailable, as on this machine.
    result = read_webpage(server.url("/project/widget/"), settings=settings)
    assert result["ok"] is True
    assert result["source"] == "package index JSON metadata"
    assert result["title"] == "widget 2.0.1"
    assert result["final_url"] == server.url("/pypi/widget/json")
    assert result["package"]["summary"] == "Turn numbers into words"
    assert result["package"]["project_urls"] == {"Source": "https://example.invalid/widget"}
    assert "README-BODY" in result["text"]
    assert "Summary: Turn numbers into words" in result["text"]
    assert "pip install widget==2.0.1" in result["text"]
    assert result["untrusted"] is True
    assert [r.path for r in server.requests] == ["/pypi/widget/json"]


def test_a_section_no_title_matches_is_said_first_not_among_the_notes(server: LocalServer, settings: Settings) -> None:
    meta = {
        "info": {**WIDGET_META["info"], "description": "# Widget\n\n## Install\n\npip it\n\n## Usage\n\nwords(42)\n"}
    }
    server.route("/pypi/widget/json", body=meta)
    result = read_webpage(server.url("/project/widget/"), section="Quick Start", settings=settings)
    assert result["ok"] is True and "words(42)" in result["text"]
    # Real models read past it at the end of the note: it comes before the text, on its own.
    keys = list(result)
    assert keys.index("section_missing") < keys.index("text")
    assert "'Quick Start'" in result["section_missing"] and "Quick Start" not in result["note"]
    found = read_webpage(server.url("/project/widget/"), section="usage", settings=settings)
    assert "section_missing" not in found and found["text"].startswith("## Usage")


def test_package_version_page_falls_back_to_the_latest(server: LocalServer, settings: Settings) -> None:
    server.route("/pypi/widget/json", body=WIDGET_META)
    result = read_webpage(server.url("/project/Widget/1.0/"), settings=settings)
    assert result["ok"] is True
    assert "No metadata for version 1.0" in result["note"]
    assert [r.path for r in server.requests] == ["/pypi/widget/1.0/json", "/pypi/widget/json"]


def test_package_version_page_uses_version_metadata(server: LocalServer, settings: Settings) -> None:
    old = json.loads(json.dumps(WIDGET_META))
    old["info"]["version"] = "1.0"
    server.route("/pypi/widget/1.0/json", body=old)
    result = read_webpage(server.url("/project/widget/1.0/"), settings=settings)
    assert result["title"] == "widget 1.0"


def test_package_metadata_redirects_are_followed(server: LocalServer, settings: Settings) -> None:
    server.route("/pypi/widget/json", status=301, headers={"Location": "/moved/widget.json"})
    server.route("/moved/widget.json", body=WIDGET_META)
    result = read_webpage(server.url("/project/widget/"), settings=settings)
    assert result["ok"] is True
    assert "README-BODY" in result["text"]


def test_unknown_package_is_an_actionable_error(server: LocalServer, settings: Settings) -> None:
    result = read_webpage(server.url("/project/no-such-thing/"), settings=settings)
    assert result["ok"] is False
    assert "no project named 'no-such-thing'" in result["error"]


def test_package_page_falls_back_to_html_when_metadata_fails(server: LocalServer, settings: Settings) -> None:
    server.route("/pypi/widget/json", status=503, body="down")
    server.route("/project/widget/", body=DOC_PAGE, content_type="text/html")
    result = read_webpage(server.url("/project/widget/"), settings=settings)
    assert result["ok"] is True
    assert "turns numbers into words" in result["text"]


def test_project_paths_on_other_hosts_are_ordinary_pages(settings: Settings) -> None:
    with LocalServer() as other:
        other.route("/project/widget/", body="an ordinary page", content_type="text/plain")
        result = read_webpage(other.url("/project/widget/"), settings=settings)
    assert result["ok"] is True
    assert result["text"] == "an ordinary page"


def test_index_under_a_path_prefix(tmp_path: Path, server: LocalServer) -> None:
    settings = Settings(home=tmp_path, index_url=server.url("/mirror/simple/"))
    server.route("/mirror/pypi/widget/json", body=WIDGET_META)
    result = read_webpage(server.url("/mirror/project/widget/"), settings=settings)
    assert result["ok"] is True
    assert "README-BODY" in result["text"]


def test_schema_is_an_openai_function() -> None:
    fn = READ_WEBPAGE_SCHEMA["function"]
    assert READ_WEBPAGE_SCHEMA["type"] == "function"
    assert fn["name"] == "read_webpage"
    assert "never for scraping a final answer" in fn["description"]
    assert fn["parameters"]["required"] == ["url"]
    assert fn["parameters"]["properties"]["url"]["type"] == "string"


@pytest.mark.network
def test_real_package_page_returns_the_readme(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    url = PackageIndex(settings.index_url).project_page_url("humanize")
    result = read_webpage(url, settings=settings, max_chars=50_000)
    assert result["ok"] is True, result
    assert result["package"]["name"].lower() == "humanize"
    assert "naturalsize" in result["text"]  # from the README's examples
    assert result["untrusted"] is True


def test_a_release_the_sandbox_python_cannot_install_is_said(server: LocalServer, settings: Settings) -> None:
    """A real model read Pint 0.26's page (Python >= 3.12) and the sandbox, on 3.11, quietly got
    0.25: the page says so, and says nothing when the release fits."""
    newer = {"info": {**WIDGET_META["info"], "requires_python": ">=99"}}
    server.route("/pypi/widget/json", body=newer)
    result = read_webpage(server.url("/project/widget/"), settings=settings)
    assert "needs Python >=99" in result["note"] and platform.python_version() in result["note"]
    server.route("/pypi/widget/json", body=WIDGET_META)  # >=3.9
    fits = read_webpage(server.url("/project/widget/"), settings=settings)
    assert "needs Python" not in fits["note"]


def test_an_unreachable_docs_site_is_read_from_its_package_page(server: LocalServer, settings: Settings) -> None:
    """Three of four real-model players went to a library's docs site first, which this kind
    of machine cannot reach, and spent a call on the index page after it: read it at once."""
    meta = {"info": {**WIDGET_META["info"], "home_page": "https://widget-docs.invalid/pywidget/"}}
    server.route("/pypi/widget/json", body=meta)  # /pypi/pywidget/json, the first guess, is a 404
    result = read_webpage("https://widget-docs.invalid/pywidget/quick.html", settings=settings, timeout_s=5)
    assert result["ok"] is True and "README-BODY" in result["text"]
    assert list(result)[:3] == ["ok", "url", "read_instead"]
    assert "Could not connect to widget-docs.invalid" in result["read_instead"] and "widget" in result["read_instead"]
    assert result["url"] == "https://widget-docs.invalid/pywidget/quick.html"
    assert [r.path for r in server.requests] == ["/pypi/pywidget/json", "/pypi/widget/json"]  # each asked once


def test_of_two_packages_linking_to_the_site_the_one_with_the_docs_is_read(
    server: LocalServer, settings: Settings
) -> None:
    site = "https://widget-docs.invalid/pywidget/"
    stub = {
        "info": {**WIDGET_META["info"], "name": "pywidget", "description": "A stub: install widget.", "home_page": site}
    }
    server.route("/pypi/pywidget/json", body=stub)  # the old name, kept as a stub (as pyephem is for ephem)
    server.route("/pypi/widget/json", body={"info": {**WIDGET_META["info"], "home_page": site}})
    result = read_webpage(site + "quick.html", settings=settings, timeout_s=5)
    assert result["ok"] is True and result["title"] == "widget 2.0.1" and "README-BODY" in result["text"]


def test_a_package_that_does_not_link_to_the_site_does_not_stand_in_for_it(
    server: LocalServer, settings: Settings
) -> None:
    server.route("/pypi/widget/json", body=WIDGET_META)  # links to example.invalid/widget only
    result = read_webpage("https://other-docs.invalid/widget/intro.html", settings=settings, timeout_s=5)
    assert result["ok"] is False and "Could not connect to other-docs.invalid" in result["error"]
    assert "read_instead" not in result


@pytest.mark.parametrize(
    ("url", "names"),
    [
        ("https://rhodesmill.org/pyephem/quick.html", ["pyephem", "ephem"]),
        ("https://pint.readthedocs.io/en/stable/", ["pint", "python-pint"]),
        ("https://dateutil.readthedocs.io/en/stable/easter.html", ["dateutil", "python-dateutil"]),
        (
            "https://github.com/mozillazg/python-pinyin/blob/master/README.md",
            ["mozillazg", "python-pinyin", "pinyin", "python-mozillazg"],
        ),
        ("https://docs.example.org/index.html", []),
    ],
)
def test_package_guesses_come_from_the_sites_words(url: str, names: list[str]) -> None:
    assert docs_fallback.guesses(url) == names


@pytest.mark.parametrize(
    ("link", "url", "linked"),
    [
        ("http://rhodesmill.org/pyephem/", "https://rhodesmill.org/pyephem/quick.html", True),
        ("https://pint.readthedocs.io/", "https://pint.readthedocs.io/en/stable/", True),
        ("https://github.com/hgrecco/pint", "https://github.com/hgrecco/pint/tree/master/docs", True),
        ("https://github.com/hgrecco/pint", "https://github.com/someone/pint", False),  # a shared host
        ("https://rhodesmill.org/skyfield/", "https://rhodesmill.org/pyephem/", False),
        ("https://pint.readthedocs.io/", "https://pandas.readthedocs.io/", False),
    ],
)
def test_a_guess_counts_only_when_its_package_links_to_the_site(link: str, url: str, linked: bool) -> None:
    assert docs_fallback.links_to(link, url) is linked
