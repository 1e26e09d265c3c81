"""The warm worker pool's life cycle: lazy start, reuse, idle reaping, the bound, retirement, teardown."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from toolsmith.config import Settings
from toolsmith.isolation import bwrap
from toolsmith.isolation.process import ProcessBackend
from toolsmith.isolation.warm import code_key, env_stamp
from toolsmith.isolation.warm_pool import WorkerPool
from toolsmith.sandbox import Sandbox

pytestmark = pytest.mark.bwrap

ONE = "def run(x):\n    return x + 1\n"
TWO = "def run(x):\n    return x * 2\n"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def pooled(settings: Settings, clock: Clock) -> Any:
    if not bwrap.probe()[0]:
        pytest.skip("bwrap unavailable")
    sandbox = Sandbox(replace(settings, warm_workers=2, warm_idle_s=60), backend=bwrap.BwrapBackend())
    # One worker per tool: these tests follow single workers through their life.
    sandbox.isolation._warm = WorkerPool(2, 60, per_tool=1, clock=clock)
    yield sandbox
    sandbox.close()


def backend_of(sandbox: Sandbox, code: str, x: int = 1) -> str:
    out = sandbox.call_tool(code, {"x": x}, warm=True)
    assert out.ok, out
    assert out.exec is not None
    return out.exec.backend


def dead(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return status == "Z"


def test_workers_start_lazily_and_are_reused(pooled: Sandbox) -> None:
    assert len(pooled.isolation.warm) == 0
    assert [backend_of(pooled, ONE, x) for x in range(3)] == ["bwrap-warm"] * 3
    assert pooled.isolation.warm.started == 1 and pooled.isolation.warm.workers()[0].calls == 3


def test_idle_workers_are_reaped(pooled: Sandbox, clock: Clock) -> None:
    backend_of(pooled, ONE)
    worker = pooled.isolation.warm.workers()[0]
    clock.now += 30
    assert pooled.isolation.warm.reap() == 0
    clock.now += 31
    assert pooled.isolation.warm.reap() == 1 and len(pooled.isolation.warm) == 0
    assert dead(worker.proc.pid)


def test_the_pool_is_bounded_and_evicts_the_least_recently_used(pooled: Sandbox, clock: Clock) -> None:
    backend_of(pooled, ONE)
    clock.now += 1
    backend_of(pooled, TWO)
    first = {w.key.code: w for w in pooled.isolation.warm.workers()}
    clock.now += 1
    backend_of(pooled, ONE)  # ONE is now the most recent
    backend_of(pooled, "def run(x):\n    return -x\n")
    assert len(pooled.isolation.warm) == 2 and pooled.isolation.warm.started == 3
    evicted = [w for w in first.values() if w.retired]
    assert len(evicted) == 1 and evicted[0].key.code == code_key(TWO) and dead(evicted[0].proc.pid)


def test_retire_keeps_only_served_code_and_close_stops_all(pooled: Sandbox) -> None:
    backend_of(pooled, ONE)
    backend_of(pooled, TWO)
    assert pooled.retire_warm([ONE]) == 1 and len(pooled.isolation.warm) == 1
    survivor = pooled.isolation.warm.workers()[0]
    pooled.close()
    assert len(pooled.isolation.warm) == 0 and dead(survivor.proc.pid)
    assert not survivor.job.workdir.exists()


def test_the_environment_stamp_moves_with_every_install(tmp_path: Path) -> None:
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    before = env_stamp(tmp_path / "env")
    time.sleep(0.01)
    (site / "newpkg-1.0.dist-info").mkdir()
    assert env_stamp(tmp_path / "env") != before and env_stamp(None) == ""


def test_a_call_waits_for_a_busy_worker_then_runs_cold(pooled: Sandbox) -> None:
    backend_of(pooled, ONE)
    pool = pooled.isolation.warm
    pool.queue_s = 0.05
    worker = pool.workers()[0]
    worker.busy = True  # as if another call held it, and the tool may have no second worker
    assert backend_of(pooled, ONE) == "bwrap" and pool.waited == 1
    worker.busy = False
    assert backend_of(pooled, ONE) == "bwrap-warm" and pool.started == 1


def test_a_tool_that_fails_to_import_is_reported_as_cold_calls_report_it(pooled: Sandbox) -> None:
    out = pooled.call_tool("import no_such_module_here\ndef run(x):\n    return x\n", {"x": 1}, warm=True)
    assert not out.ok and out.error_type == "import" and out.exec is not None and out.exec.backend == "bwrap"
    assert len(pooled.isolation.warm) == 0


def test_warm_is_off_for_the_process_backend_and_with_no_pool(settings: Settings) -> None:
    plain = Sandbox(settings, backend=ProcessBackend())
    assert backend_of(plain, ONE) == "process" and len(plain.isolation.warm) == 0
    if bwrap.probe()[0]:
        off = Sandbox(replace(settings, warm_workers=0), backend=bwrap.BwrapBackend())
        assert backend_of(off, ONE) == "bwrap"


def test_concurrent_callers_of_one_tool_stay_warm(settings: Settings) -> None:
    """Eight threads calling one tool at once are served by its two workers, none cold (issue #22 §3)."""
    if not bwrap.probe()[0]:
        pytest.skip("bwrap unavailable")
    sandbox = Sandbox(replace(settings, warm_workers=4, warm_per_tool=2), backend=bwrap.BwrapBackend())
    # A generous wait: on a loaded machine a call may queue behind several others.
    pool = sandbox.isolation._warm = WorkerPool(4, 60, per_tool=2, queue_s=30)
    seen: list[tuple[int, Any, str]] = []
    lock = threading.Lock()

    def caller(first: int) -> None:
        for x in range(first, first + 10):
            out = sandbox.call_tool(ONE, {"x": x}, warm=True)
            with lock:
                seen.append((x, out.value if out.ok else out.error, out.exec.backend if out.exec else ""))

    try:
        threads = [threading.Thread(target=caller, args=(100 * i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(seen) == 80
        assert all(backend == "bwrap-warm" for _, _, backend in seen), [s for s in seen if s[2] != "bwrap-warm"]
        assert all(value == x + 1 for x, value, _ in seen)
        assert pool.started <= 2 and len(pool.workers()) <= 2 and pool.waited > 0
    finally:
        sandbox.close()


def test_a_worker_started_from_a_short_lived_thread_outlives_it(pooled: Sandbox) -> None:
    """bwrap's --die-with-parent follows the starting thread: a worker must not die with it."""
    starter = threading.Thread(target=backend_of, args=(pooled, ONE))
    starter.start()
    starter.join()
    worker = pooled.isolation.warm.workers()[0]
    assert backend_of(pooled, ONE) == "bwrap-warm"
    assert worker.alive and worker.calls == 2 and pooled.isolation.warm.started == 1
