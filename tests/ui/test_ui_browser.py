"""The web UI in a real browser: log in, read every page, approve through the form.

The library comes from the scripted agent (see ``ui_library``); the server is the real
``toolsmith ui`` command; the browser is the system Chromium driven by Playwright.
Screenshots of the main pages land in ``test-artifacts/ui/`` (gitignored).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator

import pytest

if os.environ.get("TOOLSMITH_REQUIRE_BROWSER") != "1":  # CI must have it; elsewhere an old dev extra may not
    pytest.importorskip("playwright", reason="playwright is in the dev extra: pip install -e '.[dev]'")

from browser import ARGS, ARTIFACTS, Server, chromium_path, ui_server
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright
from ui_library import TOKEN

from cli_helpers import run_toolsmith
from toolsmith.config import Settings
from toolsmith.library import user_actor

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(built: Settings) -> Iterator[Server]:
    with ui_server(built.home, TOKEN) as running:
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


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_every_page_renders(page: Page, server: Server) -> None:
    page.goto(server.url + "/")
    expect(page.locator("table.tools")).to_contain_text("days_between")
    expect(page.locator(".notice")).to_contain_text("2 versions waiting for review")
    _shot(page, "library")
    page.click("text=days_between")
    expect(page.locator("h1")).to_contain_text("days_between")
    expect(page.locator("#code")).to_contain_text("date.fromisoformat")
    page.goto(server.url + "/tools/days_between/2")
    expect(page.locator(".diff")).to_contain_text('"weeks": days // 7')
    expect(page.locator("#audit")).to_contain_text("add")
    _shot(page, "tool")
    page.goto(server.url + "/runs")
    expect(page.locator("table.runs tbody tr")).to_have_count(4)
    _shot(page, "runs")
    page.locator("table.runs tbody tr", has_text="word_count@1").locator("a").first.click()
    expect(page.locator(".guard")).to_contain_text("verify_before_create")
    expect(page.locator(".answer")).to_have_text("Stored for review.")
    _shot(page, "run")
    page.goto(server.url + "/overview")
    expect(page.locator("svg.chart")).to_have_count(3)
    _shot(page, "overview")


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
    _shot(page, "review")
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
