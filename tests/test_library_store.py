"""The tool library's storage rules: migrations, immutability, versions, status, audit.

The ``lib`` tests are the contract every backend keeps: they run on SQLite and on
PostgreSQL (marked ``postgres``). Tests that open the SQLite file behind the library's
back use ``sqlite_lib``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from library_backends import BACKENDS, library_target
from toolsmith.config import Settings
from toolsmith.errors import CorruptLibraryError, ImmutableVersionError, LibraryError, ToolNotFoundError
from toolsmith.library import Provenance, Requirement, Status, ToolLibrary, ToolSpec
from toolsmith.library.db import APPLICATION_ID
from toolsmith.library.migrations import SQLITE, SqliteSchema, migrate

CODE = "def run(a):\n    return {'a': a}\n"


def spec(name: str = "days_between", description: str = "Days between two dates", **kw: object) -> ToolSpec:
    fields: dict[str, object] = {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
        "code": CODE,
        "test_args": {"a": "x"},
    }
    fields.update(kw)
    return ToolSpec(**fields)  # type: ignore[arg-type]


PROV = Provenance(task="how many days", model="test-model", sources=("https://example.org/docs",), session_id="s1")


@pytest.fixture(params=BACKENDS)
def lib(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ToolLibrary]:
    with library_target(request.param, tmp_path) as url, ToolLibrary(url) as library:
        yield library


@pytest.fixture
def sqlite_lib(tmp_path: Path) -> Iterator[ToolLibrary]:
    with ToolLibrary(tmp_path / "library.db") as library:
        yield library


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), isolation_level=None)


# --- opening and migrations ------------------------------------------------------------


def test_new_library_records_migrations_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    ToolLibrary(path).close()
    conn = raw(path)
    rows = conn.execute("SELECT number, name, applied_at FROM schema_migrations ORDER BY number").fetchall()
    assert [(n, name) for n, name, _ in rows] == [(m.number, m.name) for m in SQLITE]
    assert all(applied_at for _, _, applied_at in rows)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(SQLITE)
    conn.close()


def test_reopen_is_idempotent_and_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    with ToolLibrary(path) as library:
        library.add(spec(), provenance=PROV, gate={"ok": True})
    for _ in range(3):
        with ToolLibrary(path) as library:
            assert [t.ref for t in library.list_tools()] == ["days_between@1"]
    conn = raw(path)
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(SQLITE)
    conn.close()


def test_open_from_settings_creates_home(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "new" / "home")
    with ToolLibrary.open(settings) as library:
        assert library.path == settings.db_path
        assert len(library) == 0
    assert settings.db_path.is_file()


def test_a_zero_byte_file_is_damaged_and_left_untouched(tmp_path: Path) -> None:
    """A new library is linked into place whole, so a 0-byte library.db is never ours half-made."""
    path = tmp_path / "library.db"
    path.touch()
    with pytest.raises(CorruptLibraryError) as info:
        ToolLibrary(path)
    assert "0 bytes" in str(info.value) and str(path) in str(info.value)
    assert path.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["library.db"]


def test_a_new_library_leaves_no_temporary_files(tmp_path: Path) -> None:
    with ToolLibrary(tmp_path / "library.db") as library:
        library.add(spec(), provenance=PROV, gate={})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["library.db"]


# --- versions: immutable, content-hashed, history kept ------------------------------


def test_add_stores_everything_and_fills_creation_time(lib: ToolLibrary) -> None:
    s = spec(requirements=(Requirement("python-dateutil", "2.9.0", "ab" * 32),), keywords=("date", "日期"))
    v = lib.add(s, provenance=PROV, gate={"ok": True, "checks": []})
    assert (v.ref, v.status, v.hash) == ("days_between@1", Status.ACTIVE, s.content_hash())
    got = lib.get("days_between", 1)
    assert got.spec == s
    assert got.provenance.task == "how many days"
    assert got.provenance.sources == ("https://example.org/docs",)
    assert got.provenance.created_at.endswith("Z")
    assert got.gate == {"ok": True, "checks": []}
    assert got.stats.calls == 0


def test_same_content_is_idempotent(lib: ToolLibrary) -> None:
    first = lib.add(spec(), provenance=PROV, gate={})
    again = lib.add(spec(), provenance=Provenance(task="other"), gate={"x": 1})
    assert again.version == first.version == 1
    assert again.provenance.task == "how many days"
    assert len(lib.history("days_between")) == 1
    assert [e.action for e in lib.audit_log("days_between")] == ["add"]


def test_recreating_adds_a_version_and_supersedes(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    v2 = lib.add(spec(description="Days between two ISO dates"), provenance=PROV, gate={}, parent_version=1)
    history = lib.history("days_between")
    assert [(v.version, v.status) for v in history] == [(1, Status.RETIRED), (2, Status.ACTIVE)]
    assert history[0].status_reason == "superseded by v2"
    assert v2.parent_version == 1
    assert lib.get("days_between").version == 2
    assert lib.served("days_between") is not None
    assert history[0].spec.description == "Days between two dates"  # old content intact
    actions = [(e.action, e.version, e.reason) for e in lib.audit_log("days_between")]
    assert ("status", 1, "superseded by v2") in actions


def test_hash_is_stable_and_content_addressed() -> None:
    a = spec(keywords=("x",), test_args={"b": 1, "a": 2})
    b = spec(keywords=("x",), test_args={"a": 2, "b": 1})
    assert a.content_hash() == b.content_hash()
    assert a.content_hash() != spec(code=CODE + "\n").content_hash()
    assert len(a.content_hash()) == 64


def test_sql_update_of_content_is_refused_by_trigger(sqlite_lib: ToolLibrary) -> None:
    lib = sqlite_lib
    lib.add(spec(), provenance=PROV, gate={})
    lib.close()
    conn = raw(lib.path)
    for column, value in [("code", "def run(a): return 1"), ("hash", "0" * 64), ("description", "x")]:
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            conn.execute(f"UPDATE versions SET {column} = ? WHERE name = 'days_between'", (value,))
    with pytest.raises(sqlite3.IntegrityError, match="purge"):
        conn.execute("DELETE FROM versions")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE audit SET actor = 'mallory'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM audit")
    conn.execute("UPDATE versions SET status_reason = 'note' WHERE name = 'days_between'")  # allowed
    assert conn.execute("SELECT code FROM versions").fetchone()[0] == CODE
    conn.close()


def test_trigger_errors_surface_as_immutable_version_error(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    with pytest.raises(ImmutableVersionError), lib._write() as conn:
        conn.execute("UPDATE versions SET code = 'x'")
    assert lib.get("days_between").spec.code == CODE


def test_database_enforces_one_active_version(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    lib.add(spec(description="second"), provenance=PROV, gate={})
    with pytest.raises(LibraryError), lib._write() as conn:
        conn.execute("UPDATE versions SET status = 'active' WHERE version = 1")
    assert [v.status for v in lib.history("days_between")] == [Status.RETIRED, Status.ACTIVE]


def test_invalid_names_and_unserialisable_content_are_refused(lib: ToolLibrary) -> None:
    with pytest.raises(LibraryError, match="not a tool name"):
        lib.add(spec(name="../evil"), provenance=PROV, gate={})
    for name in ("日期", "a" * 65, "x" * 10_000):  # what model APIs refuse is never stored
        with pytest.raises(LibraryError) as refused:
            lib.add(spec(name=name), provenance=PROV, gate={})
        assert len(str(refused.value)) < 250
    with pytest.raises(LibraryError, match="JSON"):
        lib.add(spec(), provenance=PROV, gate={"bad": object()})
    with pytest.raises(LibraryError, match="no version 5"):
        lib.add(spec(), provenance=PROV, gate={}, parent_version=5)
    assert len(lib) == 0
    assert "days_between" not in lib


# --- status rules ------------------------------------------------------------------------


def test_pending_version_keeps_old_one_served(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    pending = lib.add(spec(description="new"), provenance=PROV, gate={}, status=Status.PENDING)
    assert pending.status is Status.PENDING
    served = lib.served("days_between")
    assert served is not None and served.version == 1
    assert lib.get("days_between").version == 1

    approved = lib.set_status("days_between", 2, Status.ACTIVE, reason="reviewed", actor="user:alice")
    assert approved.status is Status.ACTIVE
    assert lib.get("days_between", 1).status is Status.RETIRED
    assert lib.get("days_between", 1).status_reason == "superseded by v2"
    entries = lib.audit_log("days_between")
    assert (entries[-2].action, entries[-2].version, entries[-2].actor) == ("status", 1, "user:alice")
    assert (entries[-1].action, entries[-1].version, entries[-1].reason) == ("status", 2, "reviewed")
    assert entries[-1].details == {"from": "pending", "to": "active"}


def test_quarantine_stops_serving(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    q = lib.set_status("days_between", 1, Status.QUARANTINED, reason="3 failures", actor="agent:s1")
    assert q.status is Status.QUARANTINED and q.status_reason == "3 failures"
    assert lib.served("days_between") is None
    assert lib.get("days_between").version == 1  # still inspectable
    assert [t.name for t in lib.list_tools()] == ["days_between"]
    with pytest.raises(ToolNotFoundError):
        lib.set_status("days_between", 9, Status.ACTIVE, reason="x", actor="a")


def test_get_and_list_rules(lib: ToolLibrary) -> None:
    lib.add(spec("a_tool"), provenance=PROV, gate={}, status=Status.PENDING)
    lib.add(spec("b_tool"), provenance=PROV, gate={})
    lib.add(spec("b_tool", description="v2"), provenance=PROV, gate={}, status=Status.PENDING)
    assert lib.get("a_tool").version == 1  # nothing served: newest
    assert lib.get("b_tool").version == 1  # served wins over newer pending
    assert [t.ref for t in lib.list_tools()] == ["a_tool@1", "b_tool@1"]
    with pytest.raises(ToolNotFoundError):
        lib.get("missing")
    with pytest.raises(ToolNotFoundError):
        lib.get("a_tool", 2)
    with pytest.raises(ToolNotFoundError):
        lib.history("missing")


def test_retire_keeps_history_and_hides_tool(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    lib.add(spec(description="v2"), provenance=PROV, gate={}, status=Status.PENDING)
    lib.add(spec("other"), provenance=PROV, gate={})
    lib.retire("days_between", reason="wrong results", actor="user:bob")
    assert len(lib) == 1
    assert [t.name for t in lib.list_tools()] == ["other"]
    assert [t.name for t in lib.list_tools(include_retired=True)] == ["days_between", "other"]
    history = lib.history("days_between")
    assert [v.status for v in history] == [Status.RETIRED, Status.RETIRED]
    assert {v.status_reason for v in history} == {"wrong results"}
    assert lib.served("days_between") is None
    retire_rows = [e for e in lib.audit_log("days_between") if e.action == "retire"]
    assert [(e.version, e.actor) for e in retire_rows] == [(1, "user:bob"), (2, "user:bob")]
    with pytest.raises(ToolNotFoundError):
        lib.retire("missing", reason="x", actor="a")


def test_purge_deletes_everything_but_the_audit_trail(lib: ToolLibrary) -> None:
    first = lib.add(spec(), provenance=PROV, gate={})
    lib.add(spec(description="v2"), provenance=PROV, gate={})
    lib.record_call("days_between", 2, ok=True, latency_ms=3)
    lib.purge("days_between", actor="user:carol", reason="leaked data")
    assert "days_between" not in lib
    with pytest.raises(ToolNotFoundError):
        lib.history("days_between")
    assert lib.search("days between dates") == []
    last = lib.audit_log("days_between")[-1]
    assert (last.action, last.actor, last.reason) == ("purge", "user:carol", "leaked data")
    assert last.details["versions"]["1"] == first.hash
    with lib._read() as tx:
        for table in ("versions", "stats", "tools", "purge_allow"):
            assert tx.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table
    # the name can be used again, starting a fresh history
    assert lib.add(spec(), provenance=PROV, gate={}).version == 1


def test_record_call_tracks_usage(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    lib.record_call("days_between", 1, ok=True, latency_ms=10)
    lib.record_call("days_between", 1, ok=False, latency_ms=30, error="boom")
    stats = lib.record_call("days_between", 1, ok=False, latency_ms=20, error="boom again")
    assert (stats.calls, stats.failures, stats.consecutive_failures) == (3, 2, 2)
    assert stats.last_error == "boom again"
    assert stats.mean_latency_ms == 20.0
    assert stats.last_called_at is not None
    assert lib.record_call("days_between", 1, ok=True, latency_ms=0).consecutive_failures == 0
    assert lib.get("days_between").stats.calls == 4
    with pytest.raises(ToolNotFoundError):
        lib.record_call("days_between", 2, ok=True, latency_ms=1)


def test_an_undelivered_success_becomes_a_failure_without_a_second_call(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    lib.record_call("days_between", 1, ok=True, latency_ms=10)
    stats = lib.record_undelivered("days_between", 1, error="the result was not delivered")
    assert (stats.calls, stats.failures, stats.consecutive_failures) == (1, 1, 1)
    assert stats.last_error == "the result was not delivered" and stats.mean_latency_ms == 10.0
    lib.record_call("days_between", 1, ok=True, latency_ms=10)
    stats = lib.record_undelivered("days_between", 1, error="x" * 10_000, streak_before=1)
    assert (stats.calls, stats.failures, stats.consecutive_failures) == (2, 2, 2)  # the streak goes on
    assert stats.last_error is not None and len(stats.last_error) < 10_000
    with pytest.raises(ToolNotFoundError):
        lib.record_undelivered("days_between", 2, error="gone")


def test_record_call_and_quarantine_is_one_step(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    record = lib.record_call_and_quarantine
    stats, quarantined = record("days_between", 1, ok=False, latency_ms=5, error="e1", quarantine_after=2, actor="a")
    assert (stats.consecutive_failures, quarantined) == (1, False)
    stats, quarantined = record("days_between", 1, ok=False, latency_ms=5, error="e2", quarantine_after=2, actor="a")
    assert (stats.consecutive_failures, quarantined) == (2, True)
    tool = lib.get("days_between", 1)
    assert tool.status is Status.QUARANTINED and tool.status_reason == "2 consecutive failures; last: e2"
    entry = lib.audit_log("days_between")[-1]
    assert (entry.action, entry.actor, entry.details) == ("quarantine", "a", {"from": "active", "to": "quarantined"})
    # no longer active: counted, never quarantined twice
    stats, quarantined = record("days_between", 1, ok=False, latency_ms=5, error="e3", quarantine_after=1, actor="a")
    assert (stats.failures, quarantined) == (3, False)
    assert len([e for e in lib.audit_log("days_between") if e.action == "quarantine"]) == 1


def test_record_call_and_quarantine_policy_and_reason(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    for _ in range(3):  # None: this caller never quarantines
        _, quarantined = lib.record_call_and_quarantine(
            "days_between", 1, ok=False, latency_ms=1, error="x", quarantine_after=None, actor="a"
        )
        assert not quarantined
    _, quarantined = lib.record_call_and_quarantine(
        "days_between", 1, ok=True, latency_ms=1, quarantine_after=1, actor="a"
    )
    assert not quarantined and lib.get("days_between").stats.consecutive_failures == 0
    _, quarantined = lib.record_call_and_quarantine(
        "days_between",
        1,
        ok=False,
        latency_ms=1,
        error="y",
        quarantine_after=1,
        actor="a",
        reason="checked: " + "z" * 900,
    )
    reason = lib.get("days_between", 1).status_reason or ""
    assert quarantined and reason.startswith("checked: zz") and len(reason) == 500 and reason.endswith("…")
    with pytest.raises(ToolNotFoundError):
        lib.record_call_and_quarantine("nope", 1, ok=False, latency_ms=1, quarantine_after=1, actor="a")


def test_batch_is_all_or_nothing(lib: ToolLibrary) -> None:
    with lib.batch():
        for i in range(5):
            lib.add(spec(f"tool_{i}"), provenance=PROV, gate={})
    assert len(lib) == 5
    with pytest.raises(ToolNotFoundError), lib.batch():
        lib.add(spec("tool_x"), provenance=PROV, gate={})
        lib.set_status("nope", 1, Status.ACTIVE, reason="x", actor="a")
    assert "tool_x" not in lib
    assert len(lib) == 5


def test_audit_log_order_limit_and_actor(lib: ToolLibrary) -> None:
    lib.add(spec("a_tool"), provenance=PROV, gate={}, actor="agent:s1")
    lib.add(spec("b_tool"), provenance=PROV, gate={}, actor="agent:s2")
    lib.retire("a_tool", reason="r", actor="user:dan")
    entries = lib.audit_log()
    assert [(e.action, e.name, e.actor) for e in entries] == [
        ("add", "a_tool", "agent:s1"),
        ("add", "b_tool", "agent:s2"),
        ("retire", "a_tool", "user:dan"),
    ]
    assert [e.id for e in lib.audit_log(limit=2)] == [entries[1].id, entries[2].id]
    assert all(e.at.endswith("Z") for e in entries)
    assert entries[0].details["hash"] == lib.get("a_tool").hash


def test_find_by_code_hash_returns_served_tools(lib: ToolLibrary) -> None:
    s = lib.add(spec("a_tool"), provenance=PROV, gate={})
    lib.add(spec("b_tool", code="def run():\n    return 2\n"), provenance=PROV, gate={}, status=Status.PENDING)
    assert [t.ref for t in lib.find_by_code_hash(s.spec.code_hash())] == ["a_tool@1"]
    assert lib.find_by_code_hash(spec(code="def run():\n    return 2\n").code_hash()) == []


def test_openai_schema_and_to_dict(lib: ToolLibrary) -> None:
    v = lib.add(spec(), provenance=PROV, gate={})
    assert v.openai_schema()["function"]["name"] == "days_between"
    assert "code" not in v.to_dict(include_code=False)
    assert v.to_dict()["provenance"]["model"] == "test-model"


def test_damaged_record_is_reported_as_corrupt(sqlite_lib: ToolLibrary) -> None:
    lib = sqlite_lib
    lib.add(spec(), provenance=PROV, gate={})
    lib.close()
    conn = raw(lib.path)
    conn.execute("DROP TRIGGER versions_immutable")  # someone edits the file behind our back
    conn.execute("UPDATE versions SET parameters = '{not json'")
    conn.close()
    with ToolLibrary(lib.path) as reopened, pytest.raises(CorruptLibraryError, match="damaged"):
        reopened.get("days_between")


def test_search_index_can_be_rebuilt(lib: ToolLibrary) -> None:
    lib.add(spec(), provenance=PROV, gate={})
    lib.add(spec("other_tool", "Another thing"), provenance=PROV, gate={}, status=Status.PENDING)
    assert lib.rebuild_search_index() == 1
    assert [h.tool.name for h in lib.search("days between")] == ["days_between"]
    assert lib.search("another thing") == []


def test_older_schema_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    conn = raw(path)
    conn.execute("PRAGMA journal_mode = WAL")
    assert migrate(SqliteSchema(conn, path), SQLITE[:-1]) == [m.number for m in SQLITE[:-1]]  # an older toolsmith
    conn.close()
    with ToolLibrary(path) as library:
        library.add(spec(), provenance=PROV, gate={})
        assert library.search("days between dates")[0].score > 1
    conn = raw(path)
    assert [r[0] for r in conn.execute("SELECT number FROM schema_migrations ORDER BY number")] == [
        m.number for m in SQLITE
    ]
    conn.close()
