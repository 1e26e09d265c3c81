"""The ``tools`` CLI sub-app, invoked directly with a library in a temporary home."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli_helpers import as_json, assert_error, invoke
from toolsmith.cli import tools as cli
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec

DAYS_CODE = (
    "from datetime import date\n\n\n"
    "def run(start, end):\n"
    "    return {'days': (date.fromisoformat(end) - date.fromisoformat(start)).days}\n"
)
DAYS = ToolSpec(
    name="days_between",
    description="Count the days between two ISO dates.",
    parameters={
        "type": "object",
        "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
        "required": ["start", "end"],
    },
    code=DAYS_CODE,
    test_args={"start": "2020-01-01", "end": "2020-03-01"},
    keywords=("date", "日期"),
)
PRICE = ToolSpec(
    name="get_stock_price",
    description="Latest stock price for a ticker symbol.",
    parameters={"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]},
    code="def run(ticker):\n    return {'ticker': ticker.upper()}\n",
    test_args={"ticker": "aapl"},
)
PROV = Provenance(task="How many days?", model="test-model", sources=("https://docs.python.org/3/",))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    monkeypatch.setenv("TOOLSMITH_HOME", str(home))
    monkeypatch.delenv("TOOLSMITH_CONFIG", raising=False)
    monkeypatch.delenv("TOOLSMITH_REVIEW", raising=False)
    with ToolLibrary(home / "library.db") as library:
        library.add(DAYS, provenance=PROV, gate={"ok": True})
        library.add(PRICE, provenance=PROV, gate={"ok": True})
    yield home


# --- reading -----------------------------------------------------------------------------


def test_list(home: Path) -> None:
    text = invoke("list")
    assert text.exit_code == 0
    assert "days_between" in text.stdout and "get_stock_price" in text.stdout
    data = as_json(invoke("list", "--json"))
    assert [(t["name"], t["version"], t["status"]) for t in data] == [
        ("days_between", 1, "active"),
        ("get_stock_price", 1, "active"),
    ]
    assert "code" not in data[0]


def test_list_empty_and_all(home: Path) -> None:
    invoke("rm", "days_between")
    assert [t["name"] for t in as_json(invoke("list", "--json"))] == ["get_stock_price"]
    assert [t["name"] for t in as_json(invoke("list", "--all", "--json"))] == ["days_between", "get_stock_price"]
    invoke("rm", "get_stock_price", "--purge")
    assert "empty" in invoke("list").stdout


def test_show(home: Path) -> None:
    text = invoke("show", "days_between")
    assert text.exit_code == 0
    for expected in ("days_between@1", "How many days?", "test-model", "date.fromisoformat"):
        assert expected in text.stdout
    assert "fromisoformat" not in invoke("show", "days_between", "--no-code").stdout
    data = as_json(invoke("show", "days_between@1", "--json"))
    assert data["code"] == DAYS_CODE
    assert data["provenance"]["sources"] == ["https://docs.python.org/3/"]


def test_show_errors(home: Path) -> None:
    assert_error(invoke("show", "nope"), 1, "No tool named 'nope'")
    assert_error(invoke("show", "days_between@7"), 1, "days_between@7")
    assert_error(invoke("show", "days_between@x"), 2, "whole number")
    assert_error(invoke("show", "@1"), 2, "NAME")
    missing = invoke("show", "nope", "--json")
    assert json.loads(missing.stdout) == {
        "ok": False,
        "error": "No tool named 'nope' in the library.",
        "error_type": "failed",
        "exit_code": 1,
    }


def test_search(home: Path) -> None:
    hits = as_json(invoke("search", "how many days between 2021-01-01 and 2021-12-31", "--json"))
    assert hits[0]["name"] == "days_between" and hits[0]["score"] > 0
    assert [h["name"] for h in as_json(invoke("search", "两个日期相差几天", "--json"))] == ["days_between"]
    assert len(as_json(invoke("search", "days stock", "--limit", "1", "--json"))) == 1
    assert as_json(invoke("search", "translate klingon", "--json")) == []
    text = invoke("search", "stock price")
    assert "get_stock_price@1" in text.stdout
    assert "No active tool" in invoke("search", "translate klingon").stdout


@pytest.mark.parametrize("bad", ["0", "-3", "abc", "1.5"])
def test_search_bad_limit(home: Path, bad: str) -> None:
    assert_error(invoke("search", "days", "--limit", bad), 2, "--limit must be a whole number >= 1")


def test_history_and_audit(home: Path) -> None:
    with ToolLibrary(home / "library.db") as library:
        library.add(replace(DAYS, description="Days from start to end."), provenance=PROV, gate={})
    versions = as_json(invoke("history", "days_between", "--json"))
    assert [(v["version"], v["status"], v["status_reason"]) for v in versions] == [
        (1, "retired", "superseded by v2"),
        (2, "active", None),
    ]
    assert "superseded" in invoke("history", "days_between").stdout
    assert_error(invoke("history", "nope"), 1, "nope")
    entries = as_json(invoke("audit", "days_between", "--json"))
    assert [e["action"] for e in entries] == ["add", "add", "status"]
    assert "superseded" in invoke("audit").stdout
    assert len(as_json(invoke("audit", "--limit", "1", "--json"))) == 1


# --- changing ----------------------------------------------------------------------------


def test_rm_retires_and_purge_deletes(home: Path) -> None:
    out = as_json(invoke("rm", "days_between", "--reason", "gives wrong answers", "--json"))
    assert out == {"ok": True, "name": "days_between", "action": "retired"}
    versions = as_json(invoke("history", "days_between", "--json"))
    assert [(v["status"], v["status_reason"]) for v in versions] == [("retired", "gives wrong answers")]
    assert as_json(invoke("search", "days between dates", "--json")) == []
    entry = as_json(invoke("audit", "days_between", "--json"))[-1]
    assert entry["action"] == "retire" and entry["actor"].startswith("user:")

    assert invoke("rm", "days_between", "--purge").exit_code == 0
    assert_error(invoke("show", "days_between"), 1, "No tool named")
    assert as_json(invoke("audit", "days_between", "--json"))[-1]["action"] == "purge"
    assert_error(invoke("rm", "days_between"), 1, "No tool named")


class _Verdict:
    def __init__(self, ok: bool, reason: str | None = None) -> None:
        self.ok, self.reason, self.parameters = ok, reason, None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "reason": self.reason}


def test_export_then_import_into_another_home(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = tmp_path / "bundle"
    out = as_json(invoke("export", str(bundle), "days_between", "--json"))
    assert out["tools"] == ["days_between"]
    assert (bundle / "days_between" / "tool.py").read_text(encoding="utf-8") == DAYS_CODE
    assert "Exported 2 tool(s)" in invoke("export", str(bundle)).stdout
    assert_error(invoke("export", str(tmp_path / "x"), "nope"), 1, "nope")

    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path / "other"))
    monkeypatch.setattr(
        cli,
        "_gate_validator",
        lambda settings: lambda spec: _Verdict(spec.name != "get_stock_price", "refused in test"),
    )
    result = invoke("import", str(bundle), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert [(t["name"], t["outcome"]) for t in report["tools"]] == [
        ("days_between", "imported"),
        ("get_stock_price", "refused"),
    ]
    assert report["tools"][1]["reason"] == "gate: refused in test"
    assert [t["name"] for t in as_json(invoke("list", "--json"))] == ["days_between"]
    shown = as_json(invoke("show", "days_between", "--json"))
    assert shown["provenance"]["task"] == "How many days?" and shown["provenance"]["origin"] == "import"


def test_import_with_review_required_is_pending(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    invoke("export", str(tmp_path / "bundle"))
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path / "other"))
    monkeypatch.setenv("TOOLSMITH_REVIEW", "required")
    monkeypatch.setattr(cli, "_gate_validator", lambda settings: lambda spec: _Verdict(True))
    assert invoke("import", str(tmp_path / "bundle")).exit_code == 0
    assert {t["status"] for t in as_json(invoke("list", "--json"))} == {Status.PENDING.value}


def test_import_runs_the_real_gate(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    crashing = ToolSpec(
        name="always_crashes",
        description="A tool whose test run raises.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        code="def run(text):\n    raise RuntimeError('broken: ' + text)\n",
        test_args={"text": "hello"},
    )
    with ToolLibrary(home / "library.db") as library:
        library.add(crashing, provenance=PROV, gate={})
    invoke("export", str(tmp_path / "bundle"), "days_between", "always_crashes")
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path / "other"))
    result = invoke("import", str(tmp_path / "bundle"), "--json")
    assert result.exit_code == 1, result.output
    outcomes = {t["name"]: t for t in json.loads(result.stdout)["tools"]}
    assert outcomes["days_between"]["outcome"] == "imported"
    assert outcomes["always_crashes"]["outcome"] == "refused"
    assert [t["name"] for t in as_json(invoke("list", "--json"))] == ["days_between"]
    assert as_json(invoke("show", "days_between", "--json"))["gate"]["ok"] is True


def test_import_malformed_bundle(home: Path, tmp_path: Path) -> None:
    (tmp_path / "bad" / "some_tool").mkdir(parents=True)
    (tmp_path / "bad" / "some_tool" / "tool.json").write_text("{broken", encoding="utf-8")
    assert_error(invoke("import", str(tmp_path / "bad")), 1, "not valid JSON")
    # a folder that is not there is the user's to fix: exit 2, as a bad argument
    assert_error(invoke("import", str(tmp_path / "missing")), 2, f"{tmp_path / 'missing'} does not exist")
    (tmp_path / "a-file").write_text("")
    missing = invoke("import", str(tmp_path / "a-file"), "--json")
    assert missing.exit_code == 2 and json.loads(missing.stdout)["ok"] is False and "is not a folder" in missing.stderr


# --- a library that cannot be used -------------------------------------------------------


def test_corrupt_library_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "library.db").write_bytes(b"this is not sqlite at all" * 100)
    monkeypatch.setenv("TOOLSMITH_HOME", str(home))
    before = (home / "library.db").read_bytes()
    for args in (["list"], ["search", "days"], ["show", "x"], ["rm", "x"], ["list", "--json"]):
        assert_error(invoke(*args), 2, "library.db")
    assert (home / "library.db").read_bytes() == before


def test_bad_config_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path))
    monkeypatch.setenv("TOOLSMITH_REVIEW", "sometimes")
    assert_error(invoke("list"), 2, "review")


def test_help_and_no_args() -> None:
    result = CliRunner().invoke(cli.app, ["--help"])
    assert result.exit_code == 0
    for command in ("list", "show", "search", "history", "rm", "export", "import", "audit"):
        assert command in result.stdout
