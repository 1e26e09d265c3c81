"""The web UI on each library backend: SQLite, and PostgreSQL when a server is available."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import ui_library
from starlette.testclient import TestClient

from library_backends import BACKENDS, library_target
from toolsmith.library import Status, ToolLibrary, user_actor
from toolsmith.ui import create_app

PAGES = ["/", "/?q=days+between+dates", "/?status=pending", "/tools/days_between/2", "/review", "/runs", "/overview"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", BACKENDS)
def test_pages_and_an_approval_on_each_backend(kind: str, tmp_path: Path) -> None:
    with library_target(kind, tmp_path) as url:
        settings = ui_library.build(tmp_path / "home", library_url=url)
        app = create_app(settings, ui_library.TOKEN)
        with TestClient(app, base_url=ui_library.BASE, follow_redirects=False) as client:
            assert client.get(f"/?token={ui_library.TOKEN}").status_code == 303
            for path in PAGES:
                response = client.get(path)
                assert response.status_code == 200, path
            assert "days_between" in client.get("/?q=days+between+dates").text
            csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', client.get("/review").text)
            assert csrf is not None
            data = {"action": "approve", "reason": "read the diff", "csrf": csrf.group(1)}
            assert client.post("/review/days_between/2", data=data).status_code == 303
        with ToolLibrary.open(settings) as library:
            assert library.get("days_between", 2).status is Status.ACTIVE
            assert library.get("days_between", 1).status is Status.RETIRED
            entry = [e for e in library.audit_log("days_between") if e.action == "approve"][-1]
            assert (entry.actor, entry.reason, entry.version) == (user_actor(), "read the diff", 2)
