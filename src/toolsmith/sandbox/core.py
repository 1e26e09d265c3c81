"""The sandbox facade: run model-written code and tool calls through one backend.

Everything that executes model-written code goes through :class:`Sandbox`:
``code_interpreter`` (:meth:`Sandbox.run_code`), the gate's ``test_args`` run and every
later call of a library tool (:meth:`Sandbox.call_tool`). Each run gets a fresh work
directory that is deleted afterwards; only the result file is read back on purpose.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolsmith.library.models import Requirement
from toolsmith.sandbox.backend import Backend, Job
from toolsmith.sandbox.harness import SCRIPT, prepare_call, read_call_result
from toolsmith.sandbox.process import ProcessBackend
from toolsmith.sandbox.result import ExecResult, ToolCallResult

if TYPE_CHECKING:
    from toolsmith.config import Settings

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


class Sandbox:
    """Runs code through one backend and one package environment."""

    def __init__(self, settings: Settings, *, backend: Backend | None = None) -> None:
        self.settings = settings
        self.backend: Backend = backend or ProcessBackend()

    # -- public API --------------------------------------------------------------------

    def run_code(
        self,
        code: str,
        *,
        pip_install: Sequence[str] | str | None = None,
        network: bool | None = None,
        timeout_s: float | None = None,
    ) -> CodeRun:
        """Run a Python script; packages are installed (checked and pinned) beforehand."""
        installed = self._install(pip_install)
        with self._workdir() as workdir:
            (workdir / CODE_FILE).write_text(code, encoding="utf-8")
            result = self.backend.execute(self._job(workdir, CODE_FILE, network, timeout_s))
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
        """Call ``run(**args)`` of a tool's code and decode what it returned."""
        with self._workdir() as workdir:
            prepare_call(workdir, code, args)
            result = self.backend.execute(self._job(workdir, SCRIPT, network, timeout_s))
            return read_call_result(workdir, result)

    # -- internals ---------------------------------------------------------------------

    def _install(self, pip_install: Sequence[str] | str | None) -> tuple[Requirement, ...]:
        if pip_install:
            raise NotImplementedError("package installs arrive with the package environment")
        return ()

    def _job(self, workdir: Path, script: str, network: bool | None, timeout_s: float | None) -> Job:
        return Job(
            workdir=workdir,
            script=script,
            python=Path(sys.executable),
            env_prefix=None,
            limits=self.settings.limits.with_timeout(timeout_s),
            network=self.settings.network if network is None else network,
        )

    def _workdir(self) -> _WorkDir:
        return _WorkDir()


class _WorkDir:
    """A private, throw-away work directory for one run."""

    def __enter__(self) -> Path:
        self.path = Path(tempfile.mkdtemp(prefix="toolsmith-run-"))
        return self.path

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
