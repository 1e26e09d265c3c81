"""Moving a library between backends: ``toolsmith library migrate --to URL`` and
``toolsmith tools export/import`` across backends."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from library_backends import BACKENDS, library_target, returning_spec
from toolsmith.cli import app
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec


def _spec(name: str, description: str) -> ToolSpec:
    return returning_spec(name, description, keywords=("moving",))


def toolsmith(*args: str, url: str | None = None) -> Result:
    env = {"COLUMNS": "200", **({"TOOLSMITH_LIBRARY_URL": url} if url else {})}
    result = CliRunner().invoke(app, list(args), env=env)
    assert "Traceback (most recent call last)" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def _fill(library: ToolLibrary) -> None:
    library.add(_spec("days_between", "one"), provenance=Provenance(task="t"), gate={"ok": True})
    library.add(_spec("days_between", "two"), provenance=Provenance(), gate={}, status=Status.PENDING)
    library.add(_spec("qr_encoder", "Encode text as a QR code"), provenance=Provenance(), gate={})
    library.record_call("qr_encoder", 1, ok=False, latency_ms=2.5, error="bad input")
    library.record_call("qr_encoder", 1, ok=True, latency_ms=1.5)
    library.set_status("days_between", 2, Status.ACTIVE, reason="fine", actor="user:lead", action="approve")
    library.add(_spec("gone_tool", "soon gone"), provenance=Provenance(), gate={})
    library.retire("gone_tool", reason="obsolete", actor="user:lead")


def _snapshot(library: ToolLibrary) -> tuple[object, ...]:
    versions = [(v.ref, v.hash, v.status, v.status_reason, v.stats) for t in library.list_tools(include_retired=True)
                for v in library.history(t.name)]  # fmt: skip
    audit = [(e.at, e.actor, e.action, e.name, e.version, e.reason, e.details) for e in library.audit_log()]
    hits = [(h.tool.ref) for h in library.search("encode qr code moving")]
    return versions, audit, hits


@pytest.mark.parametrize("kind", BACKENDS)
def test_migrate_copies_everything_and_verifies_hashes(kind: str, tmp_path: Path) -> None:
    source_url = f"sqlite:///{tmp_path / 'source.db'}"
    with ToolLibrary(source_url) as source:
        _fill(source)
        before = _snapshot(source)
    with library_target(kind, tmp_path / "target") as target_url:
        result = toolsmith("library", "migrate", "--to", target_url, "--json", url=source_url)
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert (report["tools"], report["versions"], report["verified_hashes"]) == (3, 4, 4)
        assert ":***@" in report["target"] or kind == "sqlite"
        with ToolLibrary(target_url) as target:
            assert _snapshot(target) == before
            # the copy is a working library: new versions continue the numbering
            assert target.add(_spec("days_between", "three"), provenance=Provenance(), gate={}).version == 3
        again = toolsmith("library", "migrate", "--to", target_url, url=source_url)
        assert again.exit_code == 2 and "not empty" in again.stderr  # the user must name another target


def test_migrate_refuses_a_tampered_source_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    with ToolLibrary(source) as library:
        _fill(library)
    conn = sqlite3.connect(source, isolation_level=None)
    conn.execute("DROP TRIGGER versions_immutable")  # someone edits the file behind our back
    conn.execute("UPDATE versions SET code = 'print(1)' WHERE name = 'qr_encoder'")
    conn.close()
    target = tmp_path / "target.db"
    result = toolsmith("library", "migrate", "--to", f"sqlite:///{target}", url=f"sqlite:///{source}")
    assert result.exit_code == 2 and "does not match its hash" in result.stderr
    with ToolLibrary(target) as copy:
        assert len(copy) == 0 and copy.audit_log() == []


def test_migrate_refuses_to_copy_onto_itself(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'library.db'}"
    result = toolsmith("library", "migrate", "--to", url, url=url)
    assert result.exit_code == 2 and "itself" in result.stderr


@pytest.mark.postgres
def test_export_from_sqlite_import_into_postgres(tmp_path: Path) -> None:
    source_url = f"sqlite:///{tmp_path / 'source.db'}"
    counter = ToolSpec(
        name="count_words",
        description="Count the words in a text.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        code="def run(text: str) -> dict:\n    return {'words': len(text.split())}\n",
        test_args={"text": "three small words"},
    )
    with ToolLibrary(source_url) as source:
        source.add(counter, provenance=Provenance(), gate={})
        expected = source.get("count_words").hash
    assert toolsmith("tools", "export", str(tmp_path / "bundle"), url=source_url).exit_code == 0
    with library_target("postgresql", tmp_path) as target_url:
        result = toolsmith("tools", "import", str(tmp_path / "bundle"), "--json", url=target_url)
        assert result.exit_code == 0, result.output
        with ToolLibrary(target_url) as target:
            assert target.get("count_words").hash == expected
        where = toolsmith("library", "where", url=target_url)
        assert "***" in where.stdout and "1 tool(s)" in where.stdout
