"""The web UI without a browser: the token, CSRF, escaping and what each page shows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner
from ui_library import BASE, TOKEN

from toolsmith.cli import app as cli_app
from toolsmith.config import Settings
from toolsmith.errors import ConfigError, CorruptLibraryError
from toolsmith.library import Provenance, Requirement, Status, ToolLibrary, ToolSpec, ToolVersion, user_actor
from toolsmith.ui import check_host, create_app
from toolsmith.ui.auth import COOKIE, is_loopback
from toolsmith.ui.views import PRETTY_LIMIT, pretty

PAGES = ["/", "/tools/days_between", "/tools/days_between/2", "/review", "/runs", "/overview"]


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert found, "the page has no CSRF field"
    return found.group(1)


# --- the token -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", [*PAGES, "/static/pygments.css", "/static/style.css/x", "/static/", "/runs/x.jsonl", "/nope"]
)
def test_every_request_without_the_token_gets_401(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "days_between" not in response.text


@pytest.mark.parametrize(
    ("path", "kind"),
    [("/static/style.css", "text/css"), ("/static/favicon.svg", "image/svg+xml"), ("/favicon.ico", "image/svg+xml")],
)
def test_the_stylesheet_and_icon_need_no_token(client: TestClient, path: str, kind: str) -> None:
    """The login page must look like the rest, so its stylesheet and icon are served to anyone."""
    response = client.get(path)
    assert response.status_code == 200 and response.headers["content-type"].startswith(kind)
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert client.post(path).status_code == 401  # only reading is open
    assert client.get(path, headers={"host": "evil.example"}).status_code == 400  # the Host check still applies


def test_the_login_page_uses_the_stylesheet_and_the_icon(client: TestClient) -> None:
    page = client.get("/login", headers={"accept": "text/html"})
    assert page.status_code == 200
    links = re.findall(r'<link rel="(stylesheet|icon)" href="([^"]+)"', page.text)
    assert ("stylesheet", "/static/style.css") in links and ("icon", "/static/favicon.svg") in links
    for _, href in links:
        assert client.get(href).status_code == 200, href  # reachable before logging in


def test_a_browser_gets_a_login_form_with_401_and_a_wrong_token_is_refused(client: TestClient) -> None:
    page = client.get("/review", headers={"accept": "text/html"})
    assert page.status_code == 401 and '<form method="post" action="/login">' in page.text
    assert client.get("/", headers={"authorization": "Bearer wrong-token-123"}).status_code == 401
    assert client.get("/?token=wrong-token-123").status_code == 401
    client.cookies.set(COOKIE, TOKEN)
    assert client.get("/").status_code == 401  # the cookie holds a value derived from the token, not the token
    client.cookies.clear()
    wrong = client.post("/login", data={"token": "nope-nope-nope", "next": "/review"})
    assert wrong.status_code == 401 and "not right" in wrong.text


def test_bearer_header_works_and_sets_no_cookie(client: TestClient) -> None:
    response = client.get("/", headers={"authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200 and COOKIE not in response.headers.get("set-cookie", "")


def test_token_link_sets_a_strict_httponly_cookie_and_drops_the_token_from_the_url(client: TestClient) -> None:
    response = client.get(f"/runs?token={TOKEN}&x=1")
    assert response.status_code == 303 and response.headers["location"] == "/runs?x=1"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and TOKEN.lower() not in cookie
    assert client.get("/runs").status_code == 200


def test_login_form_sets_the_cookie_and_only_redirects_to_local_paths(client: TestClient) -> None:
    response = client.post("/login", data={"token": TOKEN, "next": "//evil.example/x"})
    assert response.status_code == 303 and response.headers["location"] == "/"
    assert client.get("/overview").status_code == 200
    assert client.post("/login", data={"token": TOKEN, "next": "/review"}).headers["location"] == "/review"


def test_the_token_appears_in_no_page(authed: TestClient) -> None:
    for path in PAGES:
        response = authed.get(path)
        assert response.status_code == 200, path
        assert TOKEN not in response.text


def test_security_headers_on_every_answer(client: TestClient, authed: TestClient) -> None:
    for response in (client.get("/"), authed.get("/")):
        policy = response.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy
        assert response.headers["x-frame-options"] == "DENY" and response.headers["cache-control"] == "no-store"


def test_a_foreign_host_header_is_refused_on_loopback(authed: TestClient) -> None:
    # A page on another site that rebinds its DNS name to 127.0.0.1 sends its own Host.
    assert authed.get("/", headers={"host": "evil.example"}).status_code == 400
    assert authed.get("/", headers={"host": "evil.example:8765"}).status_code == 400
    assert authed.get("/", headers={"host": "localhost:8765"}).status_code == 200


def test_ipv6_loopback_is_served(built: Settings) -> None:
    with TestClient(create_app(built, TOKEN), base_url="http://[::1]:8766") as client:
        assert client.get("/", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200


# --- hosts -----------------------------------------------------------------------------


def test_non_loopback_host_needs_a_chosen_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    with pytest.raises(ConfigError, match="not loopback"):
        check_host("0.0.0.0", None)
    check_host("0.0.0.0", "a-token-i-chose")
    with pytest.raises(ConfigError, match="at least 8"):
        check_host("127.0.0.1", "short")


def test_cli_refuses_a_non_loopback_host_without_a_token() -> None:
    result = CliRunner().invoke(cli_app, ["ui", "--host", "0.0.0.0", "--port", "0"], env={"TOOLSMITH_UI_TOKEN": ""})
    assert result.exit_code == 2
    assert "not loopback" in result.output and "--token" in result.output


# --- pages -----------------------------------------------------------------------------


def test_tool_page_shows_code_pins_and_hashes(built: Settings, authed: TestClient) -> None:
    digest = "ab" * 32
    with ToolLibrary.open(built) as library:
        spec = ToolSpec(
            name="parse_date",
            description="Parse a date with python-dateutil.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
            code="from dateutil import parser\n\n\ndef run(text: str) -> dict:\n    return {'iso': parser.parse(text).isoformat()}\n",
            test_args={"text": "1 March 2020"},
            requirements=(Requirement("python-dateutil", "2.9.0.post0", digest), Requirement("six", "1.16.0")),
        )
        library.add(spec, provenance=Provenance(task="parse a date", origin="import"), gate={"ok": True})
    page = authed.get("/tools/parse_date")
    assert page.status_code == 200
    text = page.text
    assert "parser" in text and "isoformat" in text and 'class="hl"' in text  # the code, highlighted
    assert "python-dateutil" in text and "==2.9.0.post0" in text and digest in text
    assert "six" in text and "(no hash recorded)" in text


def test_tool_page_shows_versions_diff_tests_provenance_and_audit(authed: TestClient) -> None:
    text = authed.get("/tools/days_between/2").text
    assert 'href="/tools/days_between/1"' in text and "pending" in text
    assert "Changes against days_between@1" in text and "weeks" in text
    assert "test_run" in text and "2020-03-01" in text  # gate checks and test arguments
    assert "Days and weeks between" in text and "scripted-ui" in text  # provenance: task, model
    assert "<svg" in text and text.count('class="bar ok"') >= 1  # health chart
    assert re.search(r"agent:[0-9a-f]+", text)  # audit trail rows
    used = authed.get("/tools/days_between/1").text.split('id="used"')[1].split("</section>")[0]
    assert used.count('href="/runs/') == 2 and "How many days are there between 2021-01-01" in used


def test_a_script_in_a_description_is_escaped(authed: TestClient) -> None:
    for path in ("/tools/word_count", "/review", "/"):
        text = authed.get(path).text
        assert "&lt;script&gt;window.__pwned" in text, path
        assert "<script" not in text and "<img src=x" not in text, path


def test_library_search_and_status_filters(authed: TestClient) -> None:
    found = authed.get("/", params={"q": "days between two dates"}).text
    assert "/tools/days_between/1" in found and "word_count" not in found
    pending = authed.get("/", params={"status": "pending"}).text
    assert "/tools/days_between/2" in pending and "/tools/word_count/1" in pending
    # days_between serves v1 while v2 waits: the filter counts versions, as the notice does.
    listed = authed.get("/").text
    assert "2 versions waiting for review" in listed and ">pending (2)</option>" in listed
    assert "v2 waits" in listed.split('href="/tools/days_between/1"')[1].split("</tr>")[0]
    active = authed.get("/", params={"status": "active"}).text
    assert "/tools/days_between/1" in active and "/tools/word_count/1" not in active


def test_runs_show_steps_guards_and_created_tools(authed: TestClient) -> None:
    listing = authed.get("/runs").text
    runs = re.findall(r'href="/runs/([^"]+\.jsonl)"', listing)
    assert len(runs) == 4
    pages = [authed.get(f"/runs/{run}").text for run in runs]
    words = next(p for p in pages if "word_count@1" in p)
    assert "verify_before_create" in words and "code_interpreter" in words and "Stored for review." in words
    assert "&lt;script&gt;" in words and "<script" not in words
    reuse = next(p for p in pages if "2021-12-31" in p)
    assert "Reused from the library: <a" in reuse and "364" in reuse


def test_a_run_page_marks_estimated_token_counts(built: Settings, authed: TestClient) -> None:
    events = [
        {"record": "event", "type": "task_started", "task": 0, "text": "quiet endpoint", "session_id": "q"},
        {"record": "event", "type": "model_usage", "task": 0, "step": 1, "model": "m", "prompt_tokens": 12,
         "completion_tokens": 3, "total_tokens": 15, "cost": None, "wall_s": 0.5, "prompt_chars": 48,
         "estimated": True},
    ]  # fmt: skip
    path = built.trajectories_dir / "20200101T000000Z-quiet.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    try:
        page = authed.get(f"/runs/{path.name}").text
    finally:
        path.unlink()
    assert "~15 tokens (estimated: the endpoint reported none)" in page and "~12 in / 3 out tokens" in page


@pytest.mark.parametrize("run_id", ["..%2Flibrary.db", "library.db", "x.jsonl", ".hidden.jsonl"])
def test_only_trajectory_files_open_as_runs(authed: TestClient, run_id: str) -> None:
    assert authed.get(f"/runs/{run_id}").status_code == 404


def test_overview_plots_reuse_calls_tokens_and_creation(authed: TestClient) -> None:
    text = authed.get("/overview").text
    assert text.count("<svg") == 4 and "Tasks by outcome" in text
    assert "Model calls per task" in text and "Tokens per task" in text and "Tools created per day" in text
    # The two rates have different names and each says what it counts: 1 of the 4 answered
    # tasks reused a tool alone; no task used one next to other work.
    reuse = text.split('id="reuse-rate"')[1].split("</div>\n  <div")[0]
    called = text.split('id="tool-rate"')[1].split("</div>\n</div>")[0]
    assert "Reuse rate" in reuse and "1 of 4 answered tasks" in reuse and "alone" in reuse
    assert "Stored tool called at all" in called and "1 of 4 answered tasks" in called and "used-tool" in called
    chart = text.split('aria-label="Model calls per task"')[1].split("</svg>")[0]
    labels = re.findall(r'text-anchor="middle">([^<]+)</text>', chart)
    assert len(labels) == 4 and len(set(labels)) == 4  # four tasks within seconds: numbered, not repeated


def test_timestamps_show_whole_seconds(authed: TestClient) -> None:
    for path in ("/", "/tools/days_between/1", "/tools/days_between/2", "/runs", "/review"):
        text = authed.get(path).text
        assert re.search(r"\d{2}:\d{2}:\d{2}\.\d", text) is None, path
    audit = authed.get("/tools/days_between/1").text.split('id="audit"')[1]
    assert re.search(r'<td class="when[^"]*">\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC</td>', audit)


# --- the review action -----------------------------------------------------------------


def test_review_needs_csrf_same_origin_and_a_reason(built: Settings, authed: TestClient) -> None:
    csrf = _csrf(authed.get("/review").text)
    url = "/review/word_count/1"
    assert authed.post(url, data={"action": "approve", "reason": "ok"}).status_code == 403
    assert authed.post(url, data={"action": "approve", "reason": "ok", "csrf": "0" * 64}).status_code == 403
    foreign = {"origin": "http://evil.example"}
    assert (
        authed.post(url, data={"action": "approve", "reason": "ok", "csrf": csrf}, headers=foreign).status_code == 403
    )
    assert authed.post(url, data={"action": "approve", "reason": "  ", "csrf": csrf}).status_code == 400
    assert authed.post(url, data={"action": "explode", "reason": "x", "csrf": csrf}).status_code == 400
    assert authed.get(url).status_code == 405  # a GET changes nothing
    with ToolLibrary.open(built) as library:
        assert library.get("word_count", 1).status is Status.PENDING


def test_review_form_decides_as_the_user_and_is_audited(built: Settings, authed: TestClient) -> None:
    csrf = _csrf(authed.get("/review").text)
    data = {"action": "reject", "reason": "adds nothing  over v1", "csrf": csrf, "next": "/review"}
    response = authed.post("/review/days_between/2", data=data, headers={"origin": BASE})
    assert response.status_code == 303 and response.headers["location"] == "/review?done=reject+days_between%402"
    assert "Rejected days_between@2." in authed.get(response.headers["location"]).text
    assert 'id="done"' not in authed.get("/review?done=approve+call+555-0100+now").text  # only the known shape
    with ToolLibrary.open(built) as library:
        assert library.get("days_between", 2).status is Status.RETIRED
        entry = library.audit_log("days_between")[-1]
    assert (entry.action, entry.actor, entry.reason) == ("reject", user_actor(), "adds nothing over v1")
    assert "/tools/days_between/2" not in authed.get("/review").text
    again = authed.post("/review/days_between/2", data=data)
    assert again.status_code == 409 and "only a pending version can be rejected" in again.text
    assert authed.post("/review/nope/1", data=data).status_code == 404


def test_quarantine_from_the_tool_page(built: Settings, authed: TestClient) -> None:
    page = authed.get("/tools/days_between/1").text
    assert 'value="quarantine"' in page
    data = {"action": "quarantine", "reason": "wrong on leap years", "csrf": _csrf(page)}
    assert authed.post("/review/days_between/1", data=data).status_code == 303
    text = authed.get("/tools/days_between/1").text
    assert "quarantined" in text and "wrong on leap years" in text and user_actor() in text
    with ToolLibrary.open(built) as library:
        assert library.get("days_between", 1).status is Status.QUARANTINED


def test_logout_needs_csrf_and_clears_the_cookie(built: Settings) -> None:
    with TestClient(create_app(built, TOKEN), base_url=BASE, follow_redirects=False) as fresh:
        fresh.get(f"/?token={TOKEN}")
        assert fresh.post("/logout").status_code == 403
        csrf = _csrf(fresh.get("/").text)
        assert fresh.post("/logout", data={"csrf": csrf}).status_code == 303
        assert fresh.get("/").status_code == 401


def test_long_values_are_cut_on_the_page() -> None:
    text = pretty({"text": "x" * (PRETTY_LIMIT * 2)})
    assert len(text) < PRETTY_LIMIT + 100 and "more characters in the trajectory file" in text
    assert pretty({"a": 1}) == '{\n  "a": 1\n}'


def test_run_its_test_from_the_tool_page(built: Settings, authed: TestClient) -> None:
    page = authed.get("/tools/word_count/1").text
    assert 'action="/tools/word_count/1/test"' in page
    assert "Further test cases (2)" in page and "a result including" in page  # the cases the agent stored
    assert authed.post("/tools/word_count/1/test").status_code == 403  # no CSRF field
    with ToolLibrary.open(built) as library:
        before = library.get("word_count", 1).stats.calls
    response = authed.post("/tools/word_count/1/test", data={"csrf": _csrf(page)})
    assert response.status_code == 200
    assert "Its test passed just now (the test arguments and 2 further case(s))" in response.text
    with ToolLibrary.open(built) as library:
        after = library.get("word_count", 1)
    assert after.stats.calls == before + 3 and after.status is Status.PENDING  # three runs; no status change


def test_a_failing_test_case_is_named_on_the_page(built: Settings, authed: TestClient) -> None:
    with ToolLibrary.open(built) as library:
        library.add(
            ToolSpec(
                name="off_by_one",
                description="Adds two numbers, wrongly.",
                parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
                code="def run(a: int, b: int) -> dict:\n    return {'sum': a + b + 1}\n",
                test_args={"a": 1, "b": 2},
                tests=({"args": {"a": 2, "b": 2}, "expect": {"sum": 4}},),
            ),
            provenance=Provenance(task="add", origin="import"),
            gate={"ok": True},
        )
    page = authed.get("/tools/off_by_one").text
    response = authed.post("/tools/off_by_one/1/test", data={"csrf": _csrf(page)})
    assert response.status_code == 200
    assert "Its test failed just now: test case 1" in response.text and "expected" in response.text
    with ToolLibrary.open(built) as library:
        assert library.get("off_by_one", 1).status is Status.ACTIVE  # a wrong value never quarantines


def test_quarantined_versions_are_listed_for_re_admission(built: Settings, authed: TestClient) -> None:
    with ToolLibrary.open(built) as library:
        library.add(
            ToolSpec(
                name="flaky",
                description="Often fails.",
                parameters={},
                code="def run() -> dict:\n    return {'x': 1}\n",
            ),
            provenance=Provenance(task="t"),
            gate={"ok": True},
        )
        library.set_status(
            "flaky", 1, Status.QUARANTINED, reason="3 failures in a row", actor="agent:x", action="quarantine"
        )
    page = authed.get("/review").text
    assert 'id="quarantined"' in page and "3 failures in a row" in page
    data = {"action": "approve", "reason": "upstream fixed", "csrf": _csrf(page), "next": "/review"}
    assert authed.post("/review/flaky/1", data=data).headers["location"] == "/review?done=approve+flaky%401"
    with ToolLibrary.open(built) as library:
        assert library.get("flaky", 1).status is Status.ACTIVE
    assert "flaky@1" not in authed.get("/review").text


def test_a_damaged_library_is_a_clear_error_at_start_and_mid_request(tmp_path: Path, built: Settings) -> None:
    home = tmp_path / "bad"
    home.mkdir()
    (home / "library.db").write_text("garbage")
    result = CliRunner().invoke(cli_app, ["ui", "--port", "0"], env={"TOOLSMITH_HOME": str(home)})
    assert result.exit_code == 2 and "not a usable toolsmith library" in result.output

    class Broken(ToolLibrary):
        def list_tools(self, *, include_retired: bool = False) -> list[ToolVersion]:
            raise CorruptLibraryError(home / "library.db", "a stored record is damaged")

    library = Broken.open(built)
    with TestClient(create_app(built, TOKEN, library=library), base_url=BASE) as client:
        response = client.get("/", headers={"authorization": f"Bearer {TOKEN}"})
    library.close()
    assert response.status_code == 503 and "a stored record is damaged" in response.text
