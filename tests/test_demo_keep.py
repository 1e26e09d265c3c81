"""``toolsmith demo --offline --keep``: a library to browse, review, serve and call, without a key.

The self-test's tools land in the user's own library with their test cases, gate verdict
and provenance, and its run record in the user's trajectories; ``tools list`` shows them,
a call through the one door for stored tools runs them, the web view shows them and the
run, and an MCP client lists and calls them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolsmith import cli
from toolsmith.cli.common import EXIT_CONFIG
from toolsmith.config import Settings
from toolsmith.library import Status, ToolLibrary
from toolsmith.sandbox import Sandbox
from toolsmith.service.toolcall import call_stored_tool

pytestmark = pytest.mark.slow  # the whole offline self-test, in the real sandbox, per test


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("TOOLSMITH_HOME", str(home))
    monkeypatch.delenv("TOOLSMITH_REVIEW", raising=False)
    monkeypatch.delenv("TOOLSMITH_CONFIG", raising=False)
    return home


def _keep() -> dict[str, Any]:
    output = Path(Settings.load().home).parent / "demo.json"
    assert cli.run(["demo", "--offline", "--keep", "--output", str(output)]) == 0
    record: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
    return record


def test_the_kept_demo_is_a_library_to_list_call_and_serve(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = _keep()
    assert "kept days_between@1 in " in capsys.readouterr().out
    assert record["ok"] is True and record["kept"]["tools"] == ["days_between@1"]
    trajectory = Path(record["kept"]["trajectory"])
    assert trajectory.parent == home / "trajectories" and trajectory.is_file()
    lines = [json.loads(line) for line in trajectory.read_text().splitlines()]
    assert [line["index"] for line in lines if line["record"] == "task"] == [0, 1]

    assert cli.run(["tools", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(t["name"], t["status"]) for t in listed] == [("days_between", "active")]

    settings = Settings.load()
    with ToolLibrary.open(settings) as library:
        tool = library.get("days_between")
        assert tool.spec.tests and tool.gate.get("ok") is True  # its test cases and the gate's verdict
        assert tool.provenance.task.startswith("How many days") and tool.provenance.model == "offline-script"
        sandbox = Sandbox(settings)
        try:
            call = call_stored_tool(
                tool, {"start": "2024-01-01", "end": "2024-12-31"}, library=library, runner=sandbox,
                actor="user:test", quarantine_after=settings.quarantine_after,
            )  # fmt: skip
        finally:
            sandbox.close()
        assert call.run.ok and call.run.value == {"start": "2024-01-01", "end": "2024-12-31", "days": 365}
        assert library.get("days_between").stats.calls == 1


def test_the_web_view_shows_the_kept_tool_and_its_run(home: Path) -> None:
    from starlette.testclient import TestClient

    from toolsmith.ui.app import create_app

    _keep()
    headers = {"Authorization": "Bearer a-token-for-tests"}
    with TestClient(create_app(Settings.load(), "a-token-for-tests"), base_url="http://127.0.0.1:8766") as client:
        library = client.get("/", headers=headers)
        assert library.status_code == 200 and "days_between" in library.text
        runs = client.get("/runs", headers=headers)
        assert runs.status_code == 200 and "How many days are there between 2020-01-01 and 2020-03-01?" in runs.text


def test_an_mcp_client_lists_and_calls_the_kept_tool(home: Path) -> None:
    # No capsys here: importing the MCP client binds sys.stderr as it is at that moment.
    pytest.importorskip("mcp")
    from mcp import Client

    from toolsmith.mcp.server import LibraryTools, ListChangeWatcher, build_server

    _keep()
    settings = Settings.load()
    with ToolLibrary.open(settings) as library:
        sandbox = Sandbox(settings)
        tools = LibraryTools(settings, library, sandbox)

        async def main() -> None:
            async with Client(build_server(tools, ListChangeWatcher(tools))) as client:
                listed = [t.name for t in (await client.list_tools()).tools]
                assert listed == ["days_between"]
                result = await client.call_tool("days_between", {"start": "2024-02-01", "end": "2024-03-01"})
                assert result.is_error is False, result.content
                assert (result.structured_content or {})["result"]["days"] == 29

        try:
            anyio.run(main)
        finally:
            sandbox.close()


def test_with_review_required_the_kept_tool_waits_for_review(home: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_text('review = "required"\n', encoding="utf-8")
    _keep()
    with ToolLibrary(home / "library.db") as library:
        assert library.get("days_between").status is Status.PENDING


def test_keep_goes_with_offline(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(["demo", "--keep"]) == EXIT_CONFIG
    assert "--keep goes with --offline" in capsys.readouterr().err
    assert not home.exists()
