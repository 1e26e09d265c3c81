"""`toolsmith ui` as a process, without a browser: the generated token appears once, at start."""

from __future__ import annotations

import httpx
import pytest
from browser import ui_server

from toolsmith.config import Settings

pytestmark = pytest.mark.slow


def test_a_generated_token_is_printed_once_and_never_logged(built: Settings) -> None:
    with ui_server(built.home, token=None) as server:
        start = next(line for line in server.output if line.startswith("toolsmith ui: "))
        token = start.split("?token=")[1].strip()
        assert len(token) >= 40  # 32 random bytes, URL-safe
        with httpx.Client(base_url=server.url, trust_env=False, follow_redirects=False) as client:
            assert client.get("/").status_code == 401
            assert client.get(f"/tools/days_between?token={token}x").status_code == 401
            link = client.get(f"/tools/days_between?token={token}")
            assert link.status_code == 303 and link.headers["location"] == "/tools/days_between"
            page = client.get("/tools/days_between")  # the cookie from the link
            assert page.status_code == 200 and token not in page.text
            assert client.get("/runs/nope.jsonl", headers={"authorization": f"Bearer {token}"}).status_code == 404
        output = server.stop()
    assert output.count(token) == 1, output
