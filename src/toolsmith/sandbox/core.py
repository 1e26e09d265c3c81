"""The sandbox facade: run model-written code and tool calls through one backend.

Everything that executes model-written code goes through :class:`Sandbox`:
``code_interpreter`` (:meth:`Sandbox.run_code`), the gate's ``test_args`` run and every
later call of a library tool (:meth:`Sandbox.call_tool`). Each run gets a fresh work
directory that is deleted afterwards; only the result file is read back on purpose.

Packages are installed (checked and pinned) into the library's :class:`PackageEnv`
*before* a run, never during it, and a tool's recorded requirements are synced into it
before the tool is called. The backend is chosen on first use (see
:mod:`toolsmith.sandbox.selection`).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolsmith.errors import PackageError, SandboxError, SandboxUnavailableError
from toolsmith.library.models import Requirement
from toolsmith.sandbox.backend import Backend, Job, base_python
from toolsmith.sandbox.env import PackageEnv, SyncReport
from toolsmith.sandbox.harness import OUTPUTS, SCRIPT, prepare_call, read_call_result
from toolsmith.sandbox.result import ExecResult, FailureKind, ToolCallResult
from toolsmith.sandbox.selection import describe, select_backend

if TYPE_CHECKING:
    from toolsmith.config import Settings
    from toolsmith.index import PackageIndex

CODE_FILE = "main.py"


class ToolRunner(Protocol):
    """What the gate and the agent need to call a tool: the small executor interface."""

    def call_tool(
        self,
        code: str,
        args: dict[str, Any],
        *,
        requirements: Sequence[Requirement] = (),
        network: bool | None = None,
        timeout_s: float | None = None,
    ) -> ToolCallResult: ...


@dataclass(frozen=True)
class CodeRun:
    """A ``code_interpreter`` run: the process result plus what was installed first."""

    exec: ExecResult
    installed: tuple[Requirement, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**self.exec.to_dict(), "installed": [r.to_dict() for r in self.installed]}


class Sandbox:
    """Runs code through one backend and one package environment."""

    def __init__(
        self,
        settings: Settings,
        *,
        backend: Backend | None = None,
        env: PackageEnv | None = None,
        index: PackageIndex | None = None,
    ) -> None:
        self.settings = settings
        self._backend = backend
        self.env = env or PackageEnv(settings, index=index)

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

    # -- public API --------------------------------------------------------------------

    def run_code(
        self,
        code: str,
        *,
        pip_install: Sequence[str] | str | None = None,
        network: bool | None = None,
        timeout_s: float | None = None,
    ) -> CodeRun:
        """Run a Python script; packages are installed (checked and pinned) beforehand.

        Raises :class:`~toolsmith.errors.PackageRefused` or
        :class:`~toolsmith.errors.InstallError` before anything runs when an install is
        refused or fails, and :class:`~toolsmith.errors.SandboxError` (``code="setup"``)
        when the sandbox itself could not be built (a machine problem, not the code's).
        """
        backend = self.backend
        installed = self.env.install(pip_install) if pip_install else ()
        with _WorkDir() as workdir:
            (workdir / CODE_FILE).write_text(code, encoding="utf-8")
            result = backend.execute(self._job(workdir, CODE_FILE, network, timeout_s))
        return CodeRun(exec=result, installed=installed)

    def call_tool(
        self,
        code: str,
        args: dict[str, Any],
        *,
        requirements: Sequence[Requirement] = (),
        network: bool | None = None,
        timeout_s: float | None = None,
    ) -> ToolCallResult:
        """Call ``run(**args)`` of a tool's code and decode what it returned.

        Missing ``requirements`` are synced into the environment first; a sync that is
        refused or fails comes back as a failed result with ``FailureKind.INSTALL``, a
        sandbox that cannot be built as one with ``FailureKind.SANDBOX``.
        """
        backend = self.backend
        synced: tuple[dict[str, Any], ...] = ()
        if requirements:
            try:
                report = self.env.sync(requirements)
            except PackageError as exc:
                return ToolCallResult(
                    ok=False, error=f"the tool's packages could not be installed: {exc}", error_type=FailureKind.INSTALL
                )
            synced = tuple(r.to_dict() for r in report.installed)
        with _WorkDir() as workdir:
            prepare_call(workdir, code, args)
            try:
                result = backend.execute(self._job(workdir, SCRIPT, network, timeout_s, outputs=OUTPUTS))
            except SandboxError as exc:
                return ToolCallResult(ok=False, error=str(exc), error_type=FailureKind.SANDBOX)
            outcome = read_call_result(workdir, result)
        return replace(outcome, installed=synced) if synced else outcome

    def sync(self, requirements: Sequence[Requirement]) -> SyncReport:
        """Install recorded pins that are missing (what ``toolsmith tools sync`` runs)."""
        return self.env.sync(requirements)

    def describe(self) -> dict[str, Any]:
        """The sandbox report for ``toolsmith doctor``: backend, why, cgroups, packages."""
        report = describe(self.settings)
        report["packages"] = {
            "env": str(self.env.path),
            "exists": self.env.exists(),
            "installer": self.env.tool,
            "only_binary": self.settings.only_binary,
            "allow": list(self.settings.allow_packages),
        }
        return report

    # -- internals ---------------------------------------------------------------------

    def _job(
        self,
        workdir: Path,
        script: str,
        network: bool | None,
        timeout_s: float | None,
        *,
        outputs: tuple[str, ...] = (),
    ) -> Job:
        has_env = self.env.exists()
        return Job(
            workdir=workdir,
            script=script,
            python=self.env.python if has_env else base_python(),
            env_prefix=self.env.path if has_env else None,
            limits=self.settings.limits.with_timeout(timeout_s),
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
