"""Several processes at once, and processes killed in the middle of a write."""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import os
import signal
import sqlite3
from pathlib import Path

import pytest

from library_backends import returning_spec
from toolsmith.library import Provenance, Status, ToolLibrary
from toolsmith.library.migrations import SQLITE

pytestmark = pytest.mark.slow  # whole processes per test: the full suite runs these, scripts/test --fast skips them

WORKERS = 8
ROUNDS = 6


def _worker(path: str, worker: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    barrier.wait(timeout=60)  # every process opens the brand-new file at the same moment
    with ToolLibrary(Path(path)) as library:
        counter = library.add(returning_spec("counter_tool", "shared counter"), provenance=Provenance(), gate={})
        for i in range(ROUNDS):
            library.add(
                returning_spec(f"w{worker}_tool_{i}", f"worker {worker} tool {i}"), provenance=Provenance(), gate={}
            )
            library.add(
                returning_spec("shared_tool", f"shared by {worker} round {i}"), provenance=Provenance(), gate={}
            )
            library.record_call("counter_tool", counter.version, ok=True, latency_ms=1.0)
            hits = library.search(f"worker {worker} tool shared", limit=5)
            assert hits, "search found nothing"
            assert len(hits) <= 5


def test_many_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(WORKERS)
    procs = [ctx.Process(target=_worker, args=(str(path), w, barrier)) for w in range(WORKERS)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * WORKERS

    with ToolLibrary(path) as library:
        for w in range(WORKERS):
            for i in range(ROUNDS):
                tool = library.get(f"w{w}_tool_{i}")
                assert (tool.version, tool.status) == (1, Status.ACTIVE)
        shared = library.history("shared_tool")
        total = WORKERS * ROUNDS
        assert [v.version for v in shared] == list(range(1, total + 1))
        assert len({v.spec.description for v in shared}) == total
        assert [v.status for v in shared] == [Status.RETIRED] * (total - 1) + [Status.ACTIVE]
        assert all(v.status_reason == f"superseded by v{v.version + 1}" for v in shared[:-1])
        assert len(library.history("counter_tool")) == 1
        assert library.get("counter_tool").stats.calls == total  # no lost updates
        assert len(library) == total + 2
        adds = [e for e in library.audit_log("shared_tool") if e.action == "add"]
        assert len(adds) == total
    conn = sqlite3.connect(str(path))
    assert conn.execute("SELECT COUNT(*) FROM tools_fts WHERE rowid > 0").fetchone()[0] == total + 2
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(SQLITE)
    conn.close()


# --- crash safety ------------------------------------------------------------------------


def _die(*_args: object, **_kwargs: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _crashing_writer(path: str, point: str) -> None:
    from toolsmith.library import search, store, writes

    library = ToolLibrary(Path(path))
    if point == "after-version-row":
        store.insert_stats = _die  # type: ignore[assignment]
    elif point == "while-indexing":
        search.index = _die  # type: ignore[assignment]
    elif point == "while-auditing-supersede":
        writes.change_status = _die  # type: ignore[assignment]
    elif point == "while-quarantining":
        search.unindex = _die  # type: ignore[assignment]
        library.set_status("days_between", 1, Status.QUARANTINED, reason="x", actor="t")
    library.add(returning_spec("days_between", "version two"), provenance=Provenance(), gate={})
    os._exit(3)  # not reached when the hook fired


@pytest.mark.parametrize(
    "point", ["after-version-row", "while-indexing", "while-auditing-supersede", "while-quarantining"]
)
def test_killed_writer_leaves_old_state(tmp_path: Path, point: str) -> None:
    path = tmp_path / "library.db"
    with ToolLibrary(path) as library:
        v1 = library.add(returning_spec("days_between", "version one"), provenance=Provenance(), gate={})
        library.record_call("days_between", 1, ok=True, latency_ms=5)

    proc = multiprocessing.get_context("spawn").Process(target=_crashing_writer, args=(str(path), point))
    proc.start()
    proc.join(timeout=60)
    assert proc.exitcode == -signal.SIGKILL

    with ToolLibrary(path) as library:
        history = library.history("days_between")
        assert [(v.version, v.status, v.hash) for v in history] == [(1, Status.ACTIVE, v1.hash)]
        assert library.get("days_between").stats.calls == 1
        assert [h.tool.ref for h in library.search("version one")] == ["days_between@1"]
        assert [e.action for e in library.audit_log("days_between")] == ["add"]
        assert library.add(returning_spec("days_between", "version two"), provenance=Provenance(), gate={}).version == 2
    conn = sqlite3.connect(str(path))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT COUNT(*) FROM versions").fetchone()[0] == 2
    assert conn.execute("SELECT COUNT(*) FROM stats").fetchone()[0] == 2
    assert conn.execute("SELECT COUNT(*) FROM tools_fts WHERE rowid > 0").fetchone()[0] == 1
    conn.close()


def _open_only(path: str, barrier: multiprocessing.synchronize.Barrier, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    barrier.wait(timeout=60)
    try:
        with ToolLibrary(Path(path)) as library:
            results.put(("ok", len(library)))
    except Exception as exc:  # reported to the parent, which fails the test with it
        results.put(("error", f"{type(exc).__name__}: {exc}"))


@pytest.mark.parametrize("round_", range(5))
def test_racing_first_opens_never_see_a_half_made_library(tmp_path: Path, round_: int) -> None:
    """Many processes creating the same new library at once all succeed. A stress test: the
    window it guards (header and schema read in separate snapshots, so a library still being
    migrated by another process looked foreign) is narrow and was seen only occasionally."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(12)
    results = ctx.Queue()
    path = str(tmp_path / "library.db")
    procs = [ctx.Process(target=_open_only, args=(path, barrier, results)) for _ in range(12)]
    for proc in procs:
        proc.start()
    outcomes = [results.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    assert outcomes == [("ok", 0)] * 12
    with ToolLibrary(Path(path)) as library, library._read() as tx:
        rows = tx.execute("SELECT number FROM schema_migrations ORDER BY number").fetchall()
        assert [r[0] for r in rows] == [m.number for m in SQLITE]
