"""The isolation facade: run model-written code and tool calls through one backend.

:class:`Isolation` runs a script, or ``run(**args)`` of a tool's code, in a fresh work
directory that is deleted afterwards; only the result file is read back on purpose.
The Python environment a run sees (read only) is handed in as an :class:`Environment`;
filling that environment is the packages subsystem's work, which sits above this one
(see :mod:`toolsmith.sandbox`). The backend is chosen on first use (see
:mod:`toolsmith.isolation.selection`).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolsmith.errors import SandboxError, SandboxUnavailableError
from toolsmith.isolation.backend import Backend, Job, base_python
from toolsmith.isolation.bwrap import BwrapBackend
from toolsmith.isolation.harness import OUTPUTS, SCRIPT, prepare_call, read_call_result
from toolsmith.isolation.result import ExecResult, FailureKind, ToolCallResult
from toolsmith.isolation.selection import select_backend
from toolsmith.isolation.warm import (
    WORKER_SCRIPT,
    WarmWorker,
    WorkerGone,
    WorkerKey,
    code_key,
    env_stamp,
    worker_job,
)
from toolsmith.isolation.warm_pool import WorkerPool
from toolsmith.limits import Priority

if TYPE_CHECKING:
    from toolsmith.config import Settings

CODE_FILE = "main.py"


class Environment(Protocol):
    """A Python environment a run uses, mounted read only: its prefix and interpreter."""

    @property
    def path(self) -> Path: ...

    @property
    def python(self) -> Path: ...

    def exists(self) -> bool: ...


class Isolation:
    """Runs code through one backend, inside one (optional) Python environment."""

    def __init__(self, settings: Settings, *, backend: Backend | None = None, env: Environment | None = None) -> None:
        self.settings = settings
        self._backend = backend
        self.env = env
        self._warm: WorkerPool | None = None

    @property
    def backend(self) -> Backend:
        """The backend, chosen (and the not-isolated warning printed) on first use."""
        if self._backend is None:
            self._backend = select_backend(self.settings)
        return self._backend

    def prepare(self) -> None:
        """Choose the backend now, so a not-isolated warning comes before a run's trace.

        A backend that cannot be had (``sandbox.backend = "bwrap"`` where it does not
        work) is left to fail at first use, where the caller reports it as a run error.
        """
        with contextlib.suppress(SandboxUnavailableError):
            _ = self.backend

    def run_code(self, code: str, *, network: bool | None = None, timeout_s: float | None = None) -> ExecResult:
        """Run a Python script.

        Raises :class:`~toolsmith.errors.SandboxError` (``code="setup"``) when the
        sandbox itself could not be built (a machine problem, not the code's).
        """
        backend = self.backend
        with _WorkDir() as workdir:
            (workdir / CODE_FILE).write_text(code, encoding="utf-8")
            return backend.execute(self._job(workdir, CODE_FILE, network, timeout_s))

    def call_tool(
        self,
        code: str,
        args: dict[str, Any],
        *,
        network: bool | None = None,
        timeout_s: float | None = None,
        warm: bool = False,
        priority: Priority = Priority.NORMAL,
    ) -> ToolCallResult:
        """Call ``run(**args)`` of a tool's code and decode what it returned.

        A sandbox that cannot be built comes back as a failed result with
        ``FailureKind.SANDBOX``. ``warm`` serves the call from a warm worker
        (:mod:`toolsmith.isolation.warm_pool`) where the backend is bwrap and the pool has
        room, waiting a moment for a busy one of the same tool; otherwise, or when no worker
        can be had, it runs cold. ``priority``: see :class:`~toolsmith.limits.Priority`.
        """
        backend = self.backend
        outcome = self._warm_call(code, args, network, timeout_s, priority) if warm else None
        if outcome is not None:
            return outcome
        with _WorkDir() as workdir:
            prepare_call(workdir, code, args)
            job = self._job(workdir, SCRIPT, network, timeout_s, outputs=OUTPUTS, priority=priority)
            try:
                result = backend.execute(job)
            except SandboxError as exc:
                return ToolCallResult(ok=False, error=str(exc), error_type=FailureKind.SANDBOX)
            return read_call_result(workdir, result, job.limits)

    @property
    def warm(self) -> WorkerPool:
        """The warm worker pool (created on first use)."""
        if self._warm is None:
            settings = self.settings
            self._warm = WorkerPool(settings.warm_workers, settings.warm_idle_s, per_tool=settings.warm_per_tool)
        return self._warm

    def retire_warm(self, keep_codes: Iterable[str]) -> int:
        """Stop warm workers whose code is not among ``keep_codes`` (a quarantine, a new version)."""
        return self.warm.retire(code_key(code) for code in keep_codes) if self._warm is not None else 0

    def reap_warm(self) -> int:
        """Stop warm workers idle for longer than ``sandbox.warm_idle_s``."""
        return self._warm.reap() if self._warm is not None else 0

    def close(self) -> None:
        """Stop every warm worker (also done at exit)."""
        if self._warm is not None:
            self._warm.close()

    def _warm_call(
        self, code: str, args: dict[str, Any], network: bool | None, timeout_s: float | None, priority: Priority
    ) -> ToolCallResult | None:
        """The call in a warm worker, or None when it has to run cold."""
        backend = self.backend
        if not isinstance(backend, BwrapBackend) or self.settings.warm_workers <= 0:
            return None
        job = self._job(Path("."), WORKER_SCRIPT, network, None)
        key = WorkerKey(code_key(code), env_stamp(job.env_prefix), job.network, str(job.python))

        def start() -> WarmWorker:
            workdir = Path(tempfile.mkdtemp(prefix="toolsmith-worker-"))
            spec = worker_job(workdir, job.python, job.env_prefix, job.limits, job.network)
            return WarmWorker.start(backend, spec, key, code, startup_s=job.limits.timeout_s)

        limits = self.settings.limits.with_timeout(timeout_s).at(priority)
        try:
            with self.warm.checkout(key, start, patience_s=limits.timeout_s) as worker:
                if worker is None:
                    return None
                return worker.call(args, limits)
        except (WorkerGone, OSError, SandboxError):
            return None  # nothing ran: the cold path reports what is wrong, the same way as ever

    def _job(
        self,
        workdir: Path,
        script: str,
        network: bool | None,
        timeout_s: float | None,
        *,
        outputs: tuple[str, ...] = (),
        priority: Priority = Priority.NORMAL,
    ) -> Job:
        env = self.env if self.env is not None and self.env.exists() else None
        return Job(
            workdir=workdir,
            script=script,
            python=env.python if env else base_python(),
            env_prefix=env.path if env else None,
            limits=self.settings.limits.with_timeout(timeout_s).at(priority),
            network=self.settings.network if network is None else network,
            outputs=outputs,
        )


class _WorkDir:
    """A private, throw-away work directory for one run."""

    def __enter__(self) -> Path:
        self.path = Path(tempfile.mkdtemp(prefix="toolsmith-run-"))
        return self.path

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
