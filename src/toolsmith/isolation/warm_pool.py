"""The warm worker pool: a few workers per tool, shared by concurrent callers, bounded in all.

A :class:`~toolsmith.isolation.warm.WarmWorker` serves one call at a time, because the
calls it serves share one sandbox whose writable places are emptied between them. So
that concurrent callers of one tool stay warm, a tool gets up to ``per_tool`` workers
(``sandbox.warm_per_tool``), all under the same confinement; a caller that finds every
worker of its tool busy waits for one to come free (a worker is free again within
milliseconds of a fast call) rather than paying for a cold start. It waits at most about
as long as that cold start would take (the time the worker's own start took, at least
:data:`QUEUE_MIN_S`), and never longer than the call's timeout; after that it runs cold.

A worker resets after each call (kills what the call left, empties its directories,
forks the next child). Back-to-back calls would wait for that reset, so when a tool's
only idle worker is still resetting and the tool has room for another, one more worker
is started in the background for the calls that follow; this call takes the resetting
worker, which is ready a moment later.

The pool holds at most ``size`` workers in all (``sandbox.warm_workers``): the least
recently used idle worker makes room. Workers idle for ``idle_s`` are reaped; those whose
code is no longer served are retired; all are stopped on :meth:`WorkerPool.close` and
at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator

from toolsmith.errors import SandboxError
from toolsmith.isolation.warm import WarmWorker, WorkerGone, WorkerKey

QUEUE_MIN_S = 1.0
Starter = Callable[[], WarmWorker]


class WorkerPool:
    """At most ``size`` warm workers, ``per_tool`` of one tool, reaped after ``idle_s``; thread-safe."""

    def __init__(
        self,
        size: int,
        idle_s: float,
        *,
        per_tool: int = 4,
        queue_s: float = QUEUE_MIN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.size = size
        self.per_tool = max(per_tool, 1)
        self.queue_s = queue_s
        self.idle_s = idle_s
        self.clock = clock
        self.started = 0
        self.waited = 0  # calls that waited for a busy worker of their tool
        self._workers: dict[WorkerKey, list[WarmWorker]] = {}
        self._starting: dict[WorkerKey, int] = {}
        self._doomed: set[WarmWorker] = set()  # out of the pool, stopped when their call ends
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)  # guards everything above
        # Callers waiting for a worker, by tool: a worker coming free wakes one caller of its
        # own tool, not every waiting thread (which would all contend for the lock and the GIL).
        self._queues: dict[WorkerKey, tuple[threading.Condition, list[int]]] = {}
        self._closed = False
        _live_pools.add(self)

    def __len__(self) -> int:
        with self._cond:
            return sum(len(ws) for ws in self._workers.values())

    def workers(self, key: WorkerKey | None = None) -> list[WarmWorker]:
        with self._cond:
            groups = [self._workers.get(key, [])] if key is not None else list(self._workers.values())
            return [w for ws in groups for w in ws]

    @contextlib.contextmanager
    def checkout(self, key: WorkerKey, start: Starter, *, patience_s: float) -> Iterator[WarmWorker | None]:
        """A free worker for ``key`` (started if there is room), held for one call; None: run cold.

        ``patience_s`` bounds the wait for a busy worker (the call's timeout).
        """
        self.reap()
        worker = self._acquire(key, start, patience_s)
        if worker is None:
            yield None
            return
        try:
            yield worker
        finally:
            self._release(worker)

    def _acquire(self, key: WorkerKey, start: Starter, patience_s: float) -> WarmWorker | None:
        deadline: float | None = None
        victims: list[WarmWorker] = []
        with self._cond:
            while True:
                worker, resetting = self._idle(key, victims)
                if worker is not None:
                    worker.busy = True
                    if resetting and self._room_for(key, victims, evict=False):
                        self._start_later(key, start)
                    break
                if self._room_for(key, victims):
                    self._starting[key] = self._starting.get(key, 0) + 1
                    break
                if not self._workers.get(key) and not self._starting.get(key):
                    return None  # the pool is full of other tools' busy workers: nothing to wait for
                if deadline is None:
                    self.waited += 1
                    deadline = time.monotonic() + self._patience(key, patience_s)
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._wait(key, left)
        _close_all_of(victims)
        return worker if worker is not None else self._start_now(key, start)

    def _wait(self, key: WorkerKey, timeout: float) -> None:
        """Wait (lock held) until :meth:`_wake` says something changed for ``key``, or ``timeout``."""
        cond, count = self._queues.setdefault(key, (threading.Condition(self._lock), [0]))
        count[0] += 1
        try:
            cond.wait(timeout)
        finally:
            count[0] -= 1
            if not count[0]:
                del self._queues[key]

    def _wake(self, key: WorkerKey | None = None) -> None:
        """Wake the waiting callers a change may serve (lock held).

        A worker of ``key`` coming free, started, or failing to start serves one caller of
        that tool; when none waits, or for a change of the whole pool (``None``), every
        waiting caller looks again, since room for one tool is room for any.
        """
        queue = self._queues.get(key) if key is not None else None
        if queue is not None:
            queue[0].notify()
            return
        for cond, _ in self._queues.values():
            cond.notify_all()

    def _idle(self, key: WorkerKey, victims: list[WarmWorker]) -> tuple[WarmWorker | None, bool]:
        """A free worker of ``key``, ready ones first, and whether it is still resetting (lock held).

        Free workers found dead (or retired by what they said) leave the pool here.
        """
        workers = self._workers.get(key, [])
        free = [w for w in workers if not w.busy]
        ready = next((w for w in free if w.alive and w.ready_now()), None)
        for gone in [w for w in free if not w.alive]:
            workers.remove(gone)
            victims.append(gone)
        if ready is not None:
            return ready, False
        live = [w for w in free if w.alive]
        return (live[0], True) if live else (None, False)

    def _room_for(self, key: WorkerKey, victims: list[WarmWorker], *, evict: bool = True) -> bool:
        """Whether one more worker of ``key`` may start, evicting an idle one if the pool is full."""
        if self._closed or len(self._workers.get(key, [])) + self._starting.get(key, 0) >= self.per_tool:
            return False
        total = sum(len(ws) for ws in self._workers.values()) + sum(self._starting.values())
        if total < self.size:
            return True
        idle = [w for ws in self._workers.values() for w in ws if not w.busy] if evict else []
        if not idle:
            return False
        victim = min(idle, key=lambda w: w.last_used)
        self._workers[victim.key].remove(victim)
        victims.append(victim)
        return True

    def _patience(self, key: WorkerKey, patience_s: float) -> float:
        """How long to wait for a busy worker: about a cold start's cost; for one starting, its start."""
        started = self._workers.get(key, [])
        if not started:
            return patience_s  # the first worker is starting: it is ready sooner than a cold run
        return min(patience_s, max(self.queue_s, max(w.start_s for w in started)))

    def _start_now(self, key: WorkerKey, start: Starter) -> WarmWorker:
        """Start a worker for this call (a slot is reserved); it comes back held."""
        try:
            worker = start()  # outside the lock: an import can take a while
        except BaseException:
            self._unreserve(key)
            raise
        worker.busy = True
        self._adopt(key, worker)
        return worker

    def _start_later(self, key: WorkerKey, start: Starter) -> None:
        """Start one more worker of ``key`` in the background (lock held: the slot is reserved now)."""
        self._starting[key] = self._starting.get(key, 0) + 1

        def run() -> None:
            try:
                worker = start()
            except (WorkerGone, OSError, SandboxError):
                self._unreserve(key)  # the calls that follow find out the usual way
                return
            self._adopt(key, worker)

        threading.Thread(target=run, name="toolsmith-warm-start", daemon=True).start()

    def _adopt(self, key: WorkerKey, worker: WarmWorker) -> None:
        with self._cond:
            self._starting[key] -= 1
            self.started += 1
            if self._closed:
                closing = True
            else:
                closing = False
                worker.last_used = self.clock()
                self._workers.setdefault(key, []).append(worker)
            self._wake(key)
        if closing:
            worker.close()

    def _unreserve(self, key: WorkerKey) -> None:
        with self._cond:
            self._starting[key] -= 1
            self._wake(key)

    def _release(self, worker: WarmWorker) -> None:
        with self._cond:
            worker.busy = False
            worker.last_used = self.clock()
            doomed = worker in self._doomed
            self._doomed.discard(worker)
            self._wake(worker.key)
        if doomed:
            worker.close()
        elif not worker.alive:
            self._stop(lambda w: w is worker)

    def reap(self) -> int:
        """Stop workers idle for longer than ``idle_s`` (or dead); how many were stopped."""
        now = self.clock()
        return self._stop(lambda w: not w.busy and (not w.alive or now - w.last_used > self.idle_s))

    def retire(self, keep_codes: Iterable[str]) -> int:
        """Stop workers whose code is not in ``keep_codes`` (sha256 hex digests)."""
        keep = set(keep_codes)
        return self._stop(lambda w: w.key.code not in keep)

    def close(self) -> None:
        with self._cond:
            self._closed = True
        self._stop(lambda w: True)

    def _stop(self, doomed: Callable[[WarmWorker], bool]) -> int:
        """Take the doomed workers out of the pool; stop the idle ones now, busy ones after their call.

        A busy worker's socket is in use by its call: closing it under that call could let
        the call's thread read a descriptor number the system has given to another call.
        """
        with self._cond:
            stopping = [w for ws in self._workers.values() for w in ws if doomed(w)]
            for worker in stopping:
                self._workers[worker.key].remove(worker)
                if worker.busy:
                    self._doomed.add(worker)
            for key in [k for k, ws in self._workers.items() if not ws]:
                del self._workers[key]
            self._wake()
        _close_all_of([w for w in stopping if w not in self._doomed])
        return len(stopping)


def _close_all_of(workers: list[WarmWorker]) -> None:
    for worker in workers:
        worker.close()


_live_pools: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for pool in list(_live_pools):
        pool.close()
