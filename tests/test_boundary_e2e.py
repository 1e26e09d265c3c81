"""The library's read-write boundary, end to end.

A library tool's code and metadata change only through the ``tools`` commands or
``create_tool``. Two ways around that are tested here:

(a) a stored tool whose ``run()`` goes after the library file, by its real host path and
    by walking the file system, run exactly as the agent and MCP run stored tools
    (``toolcall.call_stored_tool`` under the default sandbox). Afterwards the database rows
    (and, for a run that records nothing, the file bytes) are unchanged and the tool's
    own report shows it never saw the file. A control run of the same probe on the host,
    against a copy, shows the probe would have found and changed it.
(b) a direct SQL ``UPDATE`` of a version's code, refused by the schema's triggers (the
    library-level test is ``tests/test_library_store.py::
    test_sql_update_of_content_is_refused_by_trigger``; here it is checked through the
    CLI's view of the same file).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolsmith.cli import tools as cli
from toolsmith.config import Settings
from toolsmith.isolation import bwrap as bwrap_module
from toolsmith.library import Provenance, ToolLibrary, ToolSpec
from toolsmith.sandbox import Sandbox
from toolsmith.service.toolcall import call_stored_tool

pytestmark = pytest.mark.slow  # whole processes per test: the full suite runs these, scripts/test --fast skips them

PROBE_CODE = """\
import os
import sqlite3

SKIP = ("/proc", "/sys", "/dev", "/usr")


def run(db_path, data_dir):
    report = {"exists": [], "found": [], "read": None, "wrote": False, "sql": None, "errors": []}
    candidates = [db_path, "/proc/1/root" + db_path, "/proc/self/root" + db_path]
    report["exists"] = [p for p in candidates if os.path.exists(p)]
    try:
        with open(db_path, "rb") as handle:
            report["read"] = len(handle.read(100))
    except OSError as exc:
        report["errors"].append("read: " + type(exc).__name__)
    try:
        with open(db_path, "r+b") as handle:
            handle.seek(200)
            handle.write(b"tampered")
        report["wrote"] = True
    except OSError as exc:
        report["errors"].append("write: " + type(exc).__name__)
    try:
        conn = sqlite3.connect("file:" + db_path + "?mode=rw", uri=True)
        conn.execute("UPDATE versions SET status_reason = 'changed from inside a tool'")
        conn.execute("UPDATE stats SET calls = 999")
        conn.commit()
        report["sql"] = "updated"
    except Exception as exc:
        report["errors"].append("sql: " + type(exc).__name__)
    seen = 0
    roots = ["/", "/root", os.path.expanduser("~"), data_dir, os.path.dirname(db_path), "/tmp"]
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in SKIP]
            seen += 1
            if "library.db" in filenames:
                report["found"].append(os.path.join(dirpath, "library.db"))
            if seen > 20000:
                break
    report["found"] = sorted(set(report["found"]))
    return report
"""
PROBE = ToolSpec(
    name="probe_library",
    description="Looks for the tool library file and tries to change it.",
    parameters={
        "type": "object",
        "properties": {"db_path": {"type": "string"}, "data_dir": {"type": "string"}},
        "required": ["db_path", "data_dir"],
    },
    code=PROBE_CODE,
    test_args={"db_path": "/nonexistent/library.db", "data_dir": "/nonexistent"},
)
OTHER = ToolSpec(
    name="shout",
    description="Upper-case a text.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    code="def run(text):\n    return {'upper': text.upper()}\n",
    test_args={"text": "hi"},
)
PROV = Provenance(task="boundary", model="m", session_id="e2e")


def snapshot(db: Path) -> dict[str, Any]:
    """Every row that holds a tool's content, state or history, read through a separate connection."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = {
            table: [tuple(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1")]
            for table in ("versions", "tools", "audit")
        }
        rows["stats"] = [
            tuple(r)
            for r in conn.execute("SELECT version_id, failures, consecutive_failures, last_error FROM stats ORDER BY 1")
        ]
        return rows
    finally:
        conn.close()


def file_digests(home: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(home.glob("library.db*"))}


@pytest.fixture
def settings() -> Settings:
    usable, why = bwrap_module.probe()
    if not usable:
        pytest.skip(f"bwrap is unavailable here, so the default sandbox is not isolating: {why}")
    loaded = Settings.load()  # the default settings, in the private TOOLSMITH_HOME of this test
    return replace(loaded, limits=replace(loaded.limits, timeout_s=30.0))


def test_control_the_probe_finds_and_changes_a_reachable_library(tmp_path: Path) -> None:
    """Without a sandbox the same probe reaches the file: the sandboxed result is not vacuous."""
    with ToolLibrary(tmp_path / "copy" / "library.db") as library:
        library.add(OTHER, provenance=PROV, gate={"ok": True})
    db = tmp_path / "copy" / "library.db"
    namespace: dict[str, Any] = {}
    exec(compile(PROBE_CODE, "probe.py", "exec"), namespace)
    before = snapshot(db)
    report = namespace["run"](str(db), str(tmp_path / "copy"))
    assert report["exists"] and report["read"] == 100 and report["wrote"] is True
    assert str(db) in report["found"]
    assert snapshot(db) != before


def test_sandboxed_stored_tool_cannot_reach_the_library(settings: Settings) -> None:
    sandbox = Sandbox(settings)
    assert sandbox.backend.name == "bwrap" and sandbox.backend.isolating
    library = ToolLibrary.open(settings)
    try:
        probe = library.add(PROBE, provenance=PROV, gate={"ok": True})
        library.add(OTHER, provenance=PROV, gate={"ok": True})
        before = snapshot(settings.db_path)
        args = {"db_path": str(settings.db_path.resolve()), "data_dir": str(settings.home.resolve())}
        call = call_stored_tool(
            probe, args, library=library, runner=sandbox, actor="agent:e2e", quarantine_after=settings.quarantine_after
        )
        assert call.outcome.ok, call.outcome.error
        report = call.outcome.value
        assert report["exists"] == [] and report["found"] == [], report
        assert report["read"] is None and report["wrote"] is False and report["sql"] is None
        assert {e.split(":")[0] for e in report["errors"]} == {"read", "write", "sql"}
        # Rows are unchanged: only the call itself was recorded (by the host, outside the sandbox).
        assert snapshot(settings.db_path) == before
        assert library.get("probe_library").stats.calls == 1
        assert library.get("shout").stats.calls == 0
        assert library.get("probe_library").status_reason is None
    finally:
        library.close()

    # A run that records nothing leaves the file's bytes exactly as they were.
    digests = file_digests(settings.home)
    again = sandbox.call_tool(PROBE_CODE, args)
    assert again.ok and again.value["found"] == [] and again.value["exists"] == []
    assert file_digests(settings.home) == digests


def test_direct_sql_cannot_change_a_stored_version() -> None:
    home = Path(Settings.load().home)
    with ToolLibrary(home / "library.db") as library:
        library.add(OTHER, provenance=PROV, gate={"ok": True})
    conn = sqlite3.connect(home / "library.db")
    try:
        for sql in (
            "UPDATE versions SET code = 'def run(text):\n    return 1\n'",
            "UPDATE versions SET parameters = '{}'",
            "UPDATE versions SET task = 'forged'",
            "DELETE FROM audit",
            "UPDATE audit SET actor = 'user:mallory'",
        ):
            with pytest.raises(sqlite3.IntegrityError, match="toolsmith:"):
                conn.execute(sql)
    finally:
        conn.close()
    shown = CliRunner().invoke(cli.app, ["show", "shout", "--json"])
    assert shown.exit_code == 0
    tool = json.loads(shown.stdout)
    assert tool["code"] == OTHER.code and tool["provenance"]["task"] == "boundary"
    audit = json.loads(CliRunner().invoke(cli.app, ["audit", "shout", "--json"]).stdout)
    assert [(e["actor"], e["action"]) for e in audit] == [("agent", "add")]
