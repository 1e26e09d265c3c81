"""The web UI in a real browser: log in, read every page, approve through the form.

The library comes from the scripted agent (see ``ui_library``), and a second one of 250
tools from ``big_library``; the servers are the real ``toolsmith ui`` command; the
browser is the system Chromium driven by Playwright. Every page is photographed at
1400 px and 420 px wide into ``test-artifacts/ui/NAME-WIDTH.png`` (gitignored), and at
each width no page may be wider than the window.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator

import pytest

if os.environ.get("TOOLSMITH_REQUIRE_BROWSER") != "1":  # CI must have it; elsewhere an old dev extra may not
    pytest.importorskip("playwright", reason="playwright is in the dev extra: pip install -e '.[dev]'")

import big_library
from browser import ARGS, ARTIFACTS, Server, chromium_path, ui_server
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright
from ui_library import TOKEN

from cli_helpers import run_toolsmith
from toolsmith.config import Settings
from toolsmith.library import user_actor

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WIDTHS = (1400, 420)
HEIGHT = 900


@pytest.fixture(scope="module")
def server(built: Settings) -> Iterator[Server]:
    with ui_server(built.home, TOKEN) as running:
        yield running


@pytest.fixture(scope="module")
def big_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A library of 250 tools, as a team's would be."""
    settings = big_library.build(tmp_path_factory.mktemp("big-ui-home"))
    with ui_server(settings.home, TOKEN) as running:
        yield running


@pytest.fixture(scope="module")
def browser_context() -> Iterator[BrowserContext]:
    executable = chromium_path()
    with sync_playwright() as playwright, tempfile.TemporaryDirectory(prefix="toolsmith-chromium-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=executable,
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(30_000)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="module")
def page(browser_context: BrowserContext, server: Server) -> Page:
    """A page logged in through the login form."""
    page = browser_context.new_page()
    response = page.goto(server.url + "/review")
    assert response is not None and response.status == 401
    page.fill("input[name=token]", TOKEN)
    page.click("button[type=submit]")
    expect(page).to_have_url(server.url + "/review")
    return page


def _overflow(page: Page) -> str:
    """What sticks out sideways ("" when the page is no wider than the window)."""
    found: str = page.evaluate(
        """() => {
            const root = document.documentElement;
            if (root.scrollWidth <= root.clientWidth) return "";
            const wide = [...document.querySelectorAll("body *")]
                .filter(e => e.getBoundingClientRect().right > root.clientWidth + 0.5)
                .slice(0, 5).map(e => e.tagName.toLowerCase() + (e.className ? "." + e.className : ""));
            return `scrollWidth ${root.scrollWidth} > clientWidth ${root.clientWidth}: ${wide.join(", ")}`;
        }"""
    )
    return found


def _photograph(page: Page, name: str, url: str) -> list[str]:
    """Open ``url`` at each width, save ``NAME-WIDTH.png``, and say which widths overflow."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    problems = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        response = page.goto(url)
        assert response is not None and response.status < 500, (url, response and response.status)
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
        overflow = _overflow(page)
        if overflow:
            problems.append(f"{name} at {width} px: {overflow}")
    page.set_viewport_size({"width": 1280, "height": HEIGHT})
    return problems


def test_every_page_renders(page: Page, server: Server) -> None:
    page.goto(server.url + "/")
    expect(page.locator("table.tools")).to_contain_text("days_between")
    expect(page.locator(".notice")).to_contain_text("2 versions waiting for review")
    page.click("text=days_between")
    expect(page.locator("h1")).to_contain_text("days_between")
    expect(page.locator("#code")).to_contain_text("date.fromisoformat")
    page.goto(server.url + "/tools/days_between/2")
    expect(page.locator(".diff")).to_contain_text('"weeks": days // 7')
    expect(page.locator("#audit")).to_contain_text("add")
    lines = "c => { const r = document.createRange(); r.selectNodeContents(c); return r.getClientRects().length; }"
    assert page.locator("#audit td.when").first.evaluate(lines) == 1  # the time on one line
    numbers = page.locator("#code td.linenos").evaluate("c => c.getBoundingClientRect().width")
    assert numbers < 60, numbers  # the line numbers' column hugs them: no gap before the code
    page.goto(server.url + "/runs")
    expect(page.locator("table.runs tbody tr")).to_have_count(4)
    page.locator("table.runs tbody tr", has_text="word_count@1").locator("a").first.click()
    expect(page.locator(".guard")).to_contain_text("verify_before_create")
    expect(page.locator(".answer")).to_have_text("Stored for review.")
    page.goto(server.url + "/overview")
    expect(page.locator("svg.chart")).to_have_count(4)


def test_every_page_at_1400_and_420_px_fits_the_window(page: Page, server: Server, big_server: Server) -> None:
    """Screenshots of every page at both widths; none is wider than its window."""
    page.goto(server.url + "/runs")
    run = page.locator("table.runs tbody tr", has_text="word_count@1").locator("a").first.get_attribute("href")
    assert run is not None and run.startswith("/runs/")
    pages = {
        "overview": "/overview",
        "library": "/",
        "tool": "/tools/days_between/2",  # code, a diff, gate checks, health charts and the audit trail
        "tool-used": "/tools/days_between/1",  # the runs that called it
        "review": "/review",
        "runs": "/runs",
        "run": run,
        "not-found": "/tools/no_such_tool",
        "login": "/login",
    }
    problems = [p for name, path in pages.items() for p in _photograph(page, name, server.url + path)]
    page.goto(f"{big_server.url}/?token={TOKEN}")  # the same token: log in to the second server too
    problems += _photograph(page, "library-250", big_server.url + "/?sort=-calls")
    problems += _photograph(page, "library-250-page-3", big_server.url + "/?page=3")
    assert problems == []
    shots = sorted(p.name for p in ARTIFACTS.glob("*.png"))
    assert {f"{name}-{w}.png" for name in [*pages, "library-250"] for w in WIDTHS} <= set(shots)


def test_the_login_page_is_styled_before_logging_in(browser_context: BrowserContext, server: Server) -> None:
    fresh = browser_context.new_page()
    try:
        browser_context.clear_cookies()
        response = fresh.goto(server.url + "/overview")
        assert response is not None and response.status == 401
        font = fresh.evaluate("getComputedStyle(document.body).fontFamily")
        assert "system-ui" in font  # the stylesheet loaded without the token, not the browser's serif default
        icon = fresh.request.get(server.url + "/static/favicon.svg")
        assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    finally:
        fresh.goto(f"{server.url}/?token={TOKEN}")  # log the shared context back in for the tests after this
        fresh.close()


def test_a_long_library_is_one_line_per_tool_and_pages(page: Page, big_server: Server) -> None:
    page.goto(f"{big_server.url}/?token={TOKEN}")
    rows = page.locator("table.tools tbody tr")
    expect(rows).to_have_count(100)
    heights = rows.evaluate_all("rows => rows.map(r => r.getBoundingClientRect().height)")
    assert max(heights) < 1.6 * min(heights), heights  # one line each: no row wraps taller than the rest
    page.goto(f"{big_server.url}/?page=3")
    cell = page.locator(f"tr:has(a[href='/tools/{big_library.LONG_NAME}/1']) td.desc-col")
    assert cell.evaluate("c => c.scrollWidth > c.clientWidth")  # cut: the ellipsis shows
    page.click("th a.sort:has-text('calls')")
    expect(page.locator("p.count")).to_contain_text("by calls (most first)")
    page.click("a[rel=next]")
    expect(page.locator("p.count")).to_contain_text("101–200 of 250 tools")


def test_a_script_in_a_description_does_not_run(page: Page, server: Server) -> None:
    page.goto(server.url + "/tools/word_count")
    expect(page.locator("#description")).to_contain_text("<script>window.__pwned = 1;")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.title() != "pwned"
    assert page.locator("#description script, #description img").count() == 0


def test_approve_through_the_form_is_audited_and_tools_list_agrees(page: Page, server: Server, built: Settings) -> None:
    page.goto(server.url + "/review")
    card = page.locator("#pending-word_count-1")
    expect(card).to_contain_text("word_count@1")
    card.locator("input[name=reason]").fill("counts words correctly")
    card.locator("button[value=approve]").click()
    expect(page.locator("#done")).to_have_text("Approved word_count@1.")
    expect(page.locator("#pending-word_count-1")).to_have_count(0)
    page.goto(server.url + "/tools/word_count")
    audit = page.locator("#audit tbody tr").first
    expect(audit).to_contain_text("approve")
    expect(audit).to_contain_text(user_actor())
    expect(audit).to_contain_text("counts words correctly")
    page.click("text=Run its test now")
    expect(page.locator("#check")).to_contain_text("Its test passed just now")
    listed = run_toolsmith(["tools", "list", "--json"], built.home)
    assert listed.returncode == 0, listed.stderr
    tools = {t["name"]: t for t in json.loads(listed.stdout)}
    assert tools["word_count"]["status"] == "active" and tools["word_count"]["version"] == 1


def test_the_token_never_reaches_the_server_output(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/overview?token={TOKEN}")  # the link form, on purpose
    expect(page).to_have_url(server.url + "/overview")
    output = server.stop()
    assert "toolsmith ui: http://127.0.0.1:" in output
    assert TOKEN not in output
