"""`toolsmith doctor`: every check reports, against a local endpoint and the real sandbox."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import run_toolsmith
from toolsmith.testing import ScriptedModel, ScriptedServer

pytestmark = pytest.mark.slow  # whole processes per test: the full suite runs these, scripts/test --fast skips them


def _doctor(home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_toolsmith(["doctor", "--json"], home, timeout=120, TOOLSMITH_SEARCH_BACKENDS="searxng,pypi", **env)


def test_doctor_reports_each_part(tmp_path: Path) -> None:
    with ScriptedServer(ScriptedModel(name="scripted")) as server:
        proc = _doctor(
            tmp_path,
            LLM_PROVIDER="custom",
            LLM_BASE_URL=server.base_url,
            LLM_MODEL="scripted",
            LLM_API_KEY="sk-doctor-secret-0123456789",
        )
    rows = {row["check"]: row for row in json.loads(proc.stdout)}
    problems = [name for name, row in rows.items() if row["ok"] is False]
    assert proc.returncode == (1 if problems else 0), (problems, proc.stderr)
    assert rows["model provider"]["ok"] is True and "custom" in rows["model provider"]["detail"]
    assert rows["model endpoint /models"]["ok"] is True and "HTTP 200" in rows["model endpoint /models"]["detail"]
    assert rows["sandbox"]["detail"].startswith("backend ")
    assert rows["uv"]["ok"] is True
    assert rows["tool library"]["ok"] is True and str(tmp_path) in rows["tool library"]["detail"]
    assert rows["search: searxng"]["ok"] is None  # not configured
    assert "search: package index" in rows
    assert "sk-doctor-secret" not in proc.stdout


def test_doctor_names_the_missing_key(tmp_path: Path) -> None:
    proc = _doctor(tmp_path, LLM_PROVIDER="moonshot")
    assert proc.returncode == 1, "a reported problem must make doctor exit non-zero"
    rows = {row["check"]: row for row in json.loads(proc.stdout)}
    assert rows["model provider"]["ok"] is False and "MOONSHOT_API_KEY" in rows["model provider"]["detail"]


def test_doctor_reports_a_corrupt_library_without_touching_it(tmp_path: Path) -> None:
    db = tmp_path / "library.db"
    db.write_bytes(b"not a database at all" * 10)
    before = db.read_bytes()
    proc = _doctor(tmp_path)
    assert proc.returncode == 1
    rows = {row["check"]: row for row in json.loads(proc.stdout)}
    assert rows["tool library"]["ok"] is False and str(db) in rows["tool library"]["detail"]
    assert db.read_bytes() == before
