"""Library errors tell the truth: damage is reported as damage, and a bug as a bug.

Only a stored value that does not decode makes a library "corrupt". A bug raised inside
a library transaction (here a tokenizer that raises ``ValueError``) stays what it is: the
write is rolled back, the exception is not translated, and the CLI exits 70 with its
traceback in a crash file, never exit 2 with "not a usable toolsmith library". Every test
runs on SQLite and on PostgreSQL, which share the store code.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from library_backends import BACKENDS, library_target, returning_spec
from toolsmith import cli
from toolsmith.cli import common
from toolsmith.errors import CorruptLibraryError, ToolsmithError
from toolsmith.library import Provenance, ToolLibrary
from toolsmith.library import search as sqlite_search

PROV = Provenance(task="t")


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with library_target(request.param, tmp_path) as where:
        yield where


def _tokenizer_bug(*_: object) -> list[str]:
    raise ValueError("a bug in the tokenizer")


@pytest.fixture
def broken_query_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both backends cut queries with library.search; PostgreSQL's module holds its own name."""
    from toolsmith.library.postgres import search as pg_search

    monkeypatch.setattr(sqlite_search, "query_terms", _tokenizer_bug)
    monkeypatch.setattr(pg_search, "query_terms", _tokenizer_bug)


@pytest.fixture
def broken_document_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsmith.library.postgres import search as pg_search

    monkeypatch.setattr(sqlite_search, "tokens", _tokenizer_bug)
    monkeypatch.setattr(pg_search, "tokens", _tokenizer_bug)


def _add(library: ToolLibrary, name: str = "days_between") -> None:
    library.add(returning_spec(name, "Days between two dates"), provenance=PROV, gate={})


# --- in the library -----------------------------------------------------------------------


def test_a_bug_in_a_read_is_not_corruption(url: str, broken_query_tokenizer: None) -> None:
    with ToolLibrary(url) as library:
        with pytest.raises(ValueError, match="a bug in the tokenizer") as raised:
            library.search("days between dates")
        assert not isinstance(raised.value, ToolsmithError)
        assert [t.ref for t in library.list_tools()] == []  # the library itself is fine


def test_a_bug_in_a_write_is_not_corruption_and_rolls_back(url: str, broken_document_tokenizer: None) -> None:
    with ToolLibrary(url) as library:
        with pytest.raises(ValueError, match="a bug in the tokenizer") as raised:
            _add(library)  # indexing the new active version tokenises it
        assert not isinstance(raised.value, ToolsmithError)
        assert library.list_tools() == [] and library.audit_log() == []  # nothing half-written


def test_a_bug_in_a_batch_rolls_the_whole_batch_back(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with ToolLibrary(url) as library:
        _add(library, "first_tool")
        from toolsmith.library.postgres import search as pg_search

        monkeypatch.setattr(sqlite_search, "tokens", _tokenizer_bug)
        monkeypatch.setattr(pg_search, "tokens", _tokenizer_bug)
        with pytest.raises(ValueError), library.batch():
            library.retire("first_tool", reason="r", actor="test")
            _add(library, "second_tool")
        monkeypatch.undo()
        assert [t.ref for t in library.list_tools()] == ["first_tool@1"]


def _damage(url: str, column: str, value: str) -> None:
    """Write ``value`` into every version's ``column`` behind the library's back."""
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        conn.execute("DROP TRIGGER versions_immutable")
        conn.execute(f"UPDATE versions SET {column} = ?", (value,))
        conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:
        pg.execute("ALTER TABLE versions DISABLE TRIGGER USER")
        pg.execute(f"UPDATE versions SET {column} = %s", (value,))


@pytest.mark.parametrize(
    ("column", "value", "detail"),
    [
        ("parameters", "{not json", "parameters is not JSON"),
        ("gate", "[1, 2]", "gate holds a JSON list, not an object"),
        ("requirements", '[{"version": "1.0"}]', "lacks a text name"),
        ("keywords", '"just text"', "keywords holds a JSON str, not a list"),
    ],
)
def test_a_stored_value_that_does_not_decode_is_damage(url: str, column: str, value: str, detail: str) -> None:
    with ToolLibrary(url) as library:
        _add(library)
    _damage(url, column, value)
    with ToolLibrary(url) as library:
        with pytest.raises(CorruptLibraryError) as raised:
            library.get("days_between")
        assert raised.value.detail.startswith("a stored record is damaged (days_between@1: ")
        assert detail in raised.value.detail
        assert library.display in str(raised.value)


# --- through the command line ---------------------------------------------------------------


def _toolsmith(args: list[str], url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TOOLSMITH_LIBRARY_URL", url)
    monkeypatch.setattr(sys, "argv", ["toolsmith", *args])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    return int(exited.value.code or 0)


def test_a_bug_inside_a_transaction_exits_70_with_a_crash_file(
    url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    broken_query_tokenizer: None,
) -> None:
    with ToolLibrary(url) as library:
        _add(library)
    code = _toolsmith(["tools", "search", "days between dates"], url, tmp_path, monkeypatch)
    err = capsys.readouterr().err
    assert code == common.EXIT_CRASH, err
    assert err.startswith("error: internal error (ValueError: a bug in the tokenizer)")
    assert "usable toolsmith library" not in err and "damaged" not in err
    crash_file = Path(err.split("the traceback is in ")[1].split(". Please")[0])
    assert crash_file.parent == tmp_path / "home" / "crashes"
    assert "_tokenizer_bug" in crash_file.read_text(encoding="utf-8")


def test_a_damaged_record_exits_2_and_names_the_library(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with ToolLibrary(url) as library:
        _add(library)
        where = library.display
    _damage(url, "parameters", "{not json")
    code = _toolsmith(["tools", "show", "days_between"], url, tmp_path, monkeypatch)
    err = capsys.readouterr().err
    assert code == common.EXIT_CONFIG, err
    assert err.startswith(f"error: {where} is not a usable toolsmith library (a stored record is damaged")
    assert not (tmp_path / "home" / "crashes").exists()
