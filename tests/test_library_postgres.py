"""What only the PostgreSQL backend has to get right: foreign databases, an unreachable
or refusing server, a dropped connection, the database's own guards, racing migrations
and change notices."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from library_backends import admin_url, postgres_schema
from toolsmith.errors import CorruptLibraryError, ImmutableVersionError, LibraryUnavailableError
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec
from toolsmith.library.location import redact
from toolsmith.library.migrations import POSTGRESQL

pytestmark = pytest.mark.postgres


def _spec(name: str = "days_between", description: str = "Days between two dates") -> ToolSpec:
    return ToolSpec(
        name=name, description=description, parameters={"type": "object"}, code="def run():\n    return 1\n"
    )


@pytest.fixture
def url() -> Iterator[str]:
    with postgres_schema() as found:
        yield found


def _password(url: str) -> str:
    password = urlsplit(url).password
    assert password, "the test server must use a password for these tests to mean anything"
    return password


def _with_netloc(url: str, netloc: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def test_a_foreign_schema_is_refused_and_left_alone(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE customers (id int)")
    with pytest.raises(CorruptLibraryError, match="belongs to something else") as caught:
        ToolLibrary(url)
    assert _password(url) not in str(caught.value)
    assert "***" in str(caught.value)
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
    assert tables == [("customers",)]


def test_unreachable_server_names_the_url_without_password(url: str) -> None:
    parts = urlsplit(url)
    with socket_closed() as port:
        dead = _with_netloc(url, f"{parts.username}:{parts.password}@127.0.0.1:{port}")
        with pytest.raises(LibraryUnavailableError) as caught:
            ToolLibrary(dead)
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message and "***" in message
    assert _password(url) not in message


def test_wrong_credentials_are_a_clear_error(url: str) -> None:
    parts = urlsplit(url)
    wrong = _with_netloc(url, f"{parts.username}:not-the-password@{parts.hostname}:{parts.port}")
    with pytest.raises(LibraryUnavailableError, match="authentication failed") as caught:
        ToolLibrary(wrong)
    assert "not-the-password" not in str(caught.value)
    assert redact(wrong) in str(caught.value)


class socket_closed:
    """A loopback port nobody listens on."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def _drop_connection(library: ToolLibrary) -> None:
    """What a server restart does to the library's session (and only to it: other tests
    and benchmarks may share the server)."""
    pid = library._backend._conn.info.backend_pid  # type: ignore[attr-defined]
    with psycopg.connect(admin_url(), autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_a_dropped_connection_loses_no_committed_work_and_writes_nothing_half(url: str) -> None:
    with ToolLibrary(url) as library:
        library.add(_spec(), provenance=Provenance(), gate={})
        with pytest.raises(LibraryUnavailableError), library.batch():
            library.add(_spec("half_done"), provenance=Provenance(), gate={})
            _drop_connection(library)
            library.add(_spec("half_done_2"), provenance=Provenance(), gate={})
        # the next operation reconnects; the interrupted batch left nothing behind
        assert [t.name for t in library.list_tools()] == ["days_between"]
        assert "half_done" not in library
        assert [e.name for e in library.audit_log()] == ["days_between"]


def test_the_database_itself_refuses_to_rewrite_history(url: str) -> None:
    with ToolLibrary(url) as library:
        library.add(_spec(), provenance=Provenance(), gate={})
        with pytest.raises(ImmutableVersionError, match="immutable"), library._write() as tx:
            tx.execute("UPDATE versions SET code = 'x'")
    with psycopg.connect(url, autocommit=True) as conn:
        for statement, why in [
            ("UPDATE versions SET hash = 'x'", "immutable"),
            ("DELETE FROM versions", "purge"),
            ("DELETE FROM stats", "purge"),
            ("DELETE FROM tools", "purge"),
            ("UPDATE audit SET actor = 'mallory'", "append-only"),
            ("DELETE FROM audit", "append-only"),
            ("TRUNCATE audit", "append-only"),
        ]:
            with pytest.raises(psycopg.errors.RaiseException, match=why):
                conn.execute(statement)
        conn.execute("UPDATE versions SET status_reason = 'note'")  # allowed: not content


def _open(url: str, barrier: multiprocessing.synchronize.Barrier, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    barrier.wait(timeout=60)
    try:
        with ToolLibrary(url) as library:
            results.put(("ok", len(library)))
    except Exception as exc:  # reported to the parent, which fails the test with it
        results.put(("error", f"{type(exc).__name__}: {exc}"))


def test_machines_starting_at_once_migrate_exactly_once(url: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(8)
    results = ctx.Queue()
    procs = [ctx.Process(target=_open, args=(url, barrier, results)) for _ in range(8)]
    for proc in procs:
        proc.start()
    outcomes = [results.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    assert outcomes == [("ok", 0)] * 8
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT number FROM schema_migrations ORDER BY number").fetchall()
    assert [r[0] for r in rows] == [m.number for m in POSTGRESQL]


def test_a_change_on_another_connection_is_announced(url: str) -> None:
    with ToolLibrary(url) as watcher, ToolLibrary(url) as approver:
        assert watcher.wait_for_change(0) is True  # listening starts: "look now"
        approver.add(_spec(), provenance=Provenance(), gate={}, status=Status.PENDING)
        assert watcher.wait_for_change(5) is True
        assert watcher.wait_for_change(0) is False  # nothing since
        heard: list[bool] = []
        thread = threading.Thread(target=lambda: heard.append(watcher.wait_for_change(60)))
        thread.start()
        approver.set_status("days_between", 1, Status.ACTIVE, reason="ok", actor="user:a", action="approve")
        thread.join(timeout=60)
        assert heard == [True]


def test_libraries_in_other_schemas_do_not_wake_each_other(url: str) -> None:
    with postgres_schema() as other_url, ToolLibrary(url) as watcher, ToolLibrary(other_url) as other:
        assert watcher.wait_for_change(0) is True  # listening starts
        other.add(_spec(), provenance=Provenance(), gate={})
        assert watcher.wait_for_change(0.5) is False


def test_an_idle_connection_dropped_by_a_restart_is_replaced_before_use(url: str) -> None:
    with ToolLibrary(url) as library:
        library.add(_spec(), provenance=Provenance(), gate={})
        before = library._backend._conn.info.backend_pid  # type: ignore[attr-defined]
        _drop_connection(library)
        with psycopg.connect(admin_url(), autocommit=True) as conn:  # wait until the server let it go
            while conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (before,)).fetchone():
                conn.execute("SELECT pg_sleep(0.05)")
        assert [t.name for t in library.list_tools()] == ["days_between"]
        assert library._backend._conn.info.backend_pid != before  # type: ignore[attr-defined]


def _postings_mismatch(url: str) -> list[tuple[object, ...]]:
    """Postings that differ from the lexemes of search_index's documents, either way."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            "(SELECT u.lexeme, i.version_id FROM search_index i, unnest(i.document) u "
            " EXCEPT ALL SELECT lexeme, version_id FROM search_postings) "
            "UNION ALL (SELECT lexeme, version_id FROM search_postings "
            " EXCEPT ALL SELECT u.lexeme, i.version_id FROM search_index i, unnest(i.document) u)"
        ).fetchall()


def test_search_postings_follow_the_index_through_every_change(url: str) -> None:
    lib = ToolLibrary(url)
    lib.add(_spec(), provenance=Provenance(), gate={})
    lib.add(_spec("fetch_weather", "Weather forecast for a city"), provenance=Provenance(), gate={})
    lib.add(_spec(description="Calendar days from one date to another"), provenance=Provenance(), gate={})
    assert _postings_mismatch(url) == []
    assert [hit.tool.spec.name for hit in lib.search("calendar days", limit=5)] == ["days_between"]
    lib.retire("fetch_weather", reason="gone", actor="t")
    assert _postings_mismatch(url) == []
    assert lib.search("weather forecast", limit=5) == []
    lib.purge("fetch_weather", actor="t")
    assert lib.rebuild_search_index() == 1
    assert _postings_mismatch(url) == []
    with psycopg.connect(url) as conn:
        count = conn.execute("SELECT COUNT(*) FROM search_postings").fetchone()
    assert count is not None and count[0] > 0
