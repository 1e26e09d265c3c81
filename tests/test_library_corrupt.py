"""Files that are not a usable library are refused by name and never modified."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from toolsmith.errors import CorruptLibraryError, LibraryPermissionError
from toolsmith.library import Provenance, ToolLibrary, ToolSpec


def _fill(path: Path, count: int = 40) -> None:
    with ToolLibrary(path) as library, library.batch():
        for i in range(count):
            library.add(
                ToolSpec(
                    name=f"tool_{i}",
                    description=f"Tool number {i} " + "padding " * 50,
                    parameters={"type": "object", "properties": {}},
                    code=f"def run():\n    return {i}\n" + "# filler\n" * 40,
                ),
                provenance=Provenance(task="t"),
                gate={},
            )


def _assert_refused(path: Path, detail: str) -> None:
    before = path.read_bytes()
    with pytest.raises(CorruptLibraryError) as info:
        ToolLibrary(path)
    assert info.value.path == path
    assert str(path) in str(info.value)
    assert detail in info.value.detail
    assert path.read_bytes() == before, "the refused file was modified"


def test_random_bytes(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    path.write_bytes(os.urandom(8192))
    _assert_refused(path, "not an SQLite database")


def test_short_text_file(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    path.write_text("hello")
    _assert_refused(path, "not an SQLite database")


def test_truncated_library(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    _fill(path)
    data = path.read_bytes()
    assert len(data) > 8 * 4096
    path.write_bytes(data[: len(data) // 2])
    _assert_refused(path, "truncated")


def test_damaged_pages_are_reported_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    _fill(path)
    data = bytearray(path.read_bytes())
    data[4096:] = os.urandom(len(data) - 4096)  # keep the header page, scramble the rest
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    with pytest.raises(CorruptLibraryError) as info:
        ToolLibrary(path)
    assert info.value.path == path
    assert path.read_bytes() == before


def test_foreign_sqlite_database(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    conn = sqlite3.connect(str(path))
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)")
    conn.execute("INSERT INTO users (email) VALUES ('a@example.org')")
    conn.commit()
    conn.close()
    _assert_refused(path, "foreign SQLite database with tables users")


def test_wrong_application_id(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    conn = sqlite3.connect(str(path))
    conn.execute("PRAGMA application_id = 1234")
    conn.execute("CREATE TABLE tools (name TEXT)")
    conn.commit()
    conn.close()
    _assert_refused(path, "application_id 0x4d2")


def test_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    _fill(path, count=2)
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("INSERT INTO schema_migrations VALUES (99, 'from the future', '2030-01-01')")
    conn.close()
    _assert_refused(path, "newer")


def test_empty_sqlite_database_is_initialised(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    sqlite3.connect(str(path)).execute("PRAGMA user_version = 0").connection.close()
    with ToolLibrary(path) as library:
        assert len(library) == 0


def test_directory_in_place_of_file(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    path.mkdir()
    with pytest.raises(CorruptLibraryError, match="directory"):
        ToolLibrary(path)


_WRITE_AS_NON_ROOT = """
import sys
from pathlib import Path
from toolsmith.errors import LibraryPermissionError
from toolsmith.library import Provenance, ToolLibrary, ToolSpec
spec = ToolSpec(name="x", description="d", parameters={"type": "object", "properties": {}},
                code="def run():\\n    return 1\\n")
try:
    with ToolLibrary(Path(sys.argv[1])) as library:
        library.add(spec, provenance=Provenance(), gate={})
except LibraryPermissionError as exc:
    print(exc)
"""


def _without_root(args: list[str]) -> list[str]:
    """Run as the same user without root's power to write any file: a user namespace."""
    bwrap = shutil.which("bwrap")
    if bwrap is None or os.geteuid() != 0:
        pytest.skip("needs root and bwrap to take away root's file override")
    probe = subprocess.run([bwrap, "--unshare-user", "--uid", "1000", "--dev-bind", "/", "/", "true"], check=False)
    if probe.returncode != 0:
        pytest.skip("user namespaces are not available here")
    return [bwrap, "--unshare-user", "--uid", "1000", "--dev-bind", "/", "/", *args]


def test_a_read_only_shm_file_is_named_in_the_error(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    _fill(path, count=1)
    shm = path.with_name("library.db-shm")
    shm.write_bytes(b"\0" * 32768)  # left behind by another user's crashed run
    shm.chmod(0o444)
    proc = subprocess.run(
        _without_root([sys.executable, "-c", _WRITE_AS_NON_ROOT, str(path)]),
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"{shm} is not writable" in proc.stdout and "remove it" in proc.stdout


def test_a_file_we_may_not_read_is_a_permission_problem_not_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "library.db"
    _fill(path, count=1)
    real_open = Path.open

    def refused(self: Path, *args: object, **kwargs: object) -> object:
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", refused)  # root reads every file: deny it by hand
    with pytest.raises(LibraryPermissionError) as info:
        ToolLibrary(path)
    assert not isinstance(info.value, CorruptLibraryError)
    assert info.value.path == path and "cannot read it (Permission denied)" in str(info.value)
