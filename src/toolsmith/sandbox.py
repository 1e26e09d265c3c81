"""Where model-written code runs: the sandbox's isolation plus the library's packages.

Everything that executes model-written code goes through :class:`Sandbox`:
``code_interpreter`` (:meth:`Sandbox.run_code`), the gate's ``test_args`` run and every
later call of a library tool (:meth:`Sandbox.call_tool`). It composes the two
subsystems below it, which know nothing of each other's callers: packages are
installed (checked and pinned) into the library's :class:`PackageEnv` *before* a run,
never during it, and a tool's recorded requirements are synced into it before the tool
is called; the run itself is :class:`toolsmith.isolation.Isolation`'s, with that
environment mounted read only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from toolsmith.calls import JSONObject, JSONValue
from toolsmith.errors import PackageError
from toolsmith.isolation import ExecResult, FailureKind, Isolation, Priority, ToolCallResult, describe
from toolsmith.isolation.backend import Backend
from toolsmith.isolation.warm import env_stamp
from toolsmith.packages.env import PackageEnv, SyncReport
from toolsmith.packages.pins import Environment
from toolsmith.packages.requirement import Requirement

if TYPE_CHECKING:
    from toolsmith.config import Settings
    from toolsmith.packages.index import PackageIndex


class ToolRunner(Protocol):
    """The seam for calling a tool's code: what the gate, the one door for stored tools and
    the MCP server need. :class:`Sandbox` is the real one; a test double implements it
    whole, warm calls included."""

    def call_tool(
        self,
        code: str,
        args: JSONObject,
        *,
        requirements: Sequence[Requirement] = (),
        network: bool | None = None,
        timeout_s: float | None = None,
        warm: bool = False,
        priority: Priority = Priority.NORMAL,
    ) -> ToolCallResult: ...


class CodeRunner(ToolRunner, Protocol):
    """What one agent task needs of the sandbox: tool calls, scripts with package installs
    first (``code_interpreter``), and the package environment the pins are read from."""

    @property
    def packages(self) -> Environment | None: ...

    def run_code(
        self,
        code: str,
        *,
        pip_install: JSONValue = None,
        network: bool | None = None,
        timeout_s: float | None = None,
    ) -> CodeRun: ...


@dataclass(frozen=True)
class CodeRun:
    """A ``code_interpreter`` run: the process result plus what was installed first."""

    exec: ExecResult
    installed: tuple[Requirement, ...] = ()

    def to_dict(self) -> JSONObject:
        return {**self.exec.to_dict(), "installed": [r.to_dict() for r in self.installed]}


class Sandbox:
    """Runs code in isolation, inside the library's one package environment."""

    def __init__(
        self,
        settings: Settings,
        *,
        backend: Backend | None = None,
        env: PackageEnv | None = None,
        index: PackageIndex | None = None,
    ) -> None:
        self.settings = settings
        self.env = env or PackageEnv(settings, index=index)
        self.isolation = Isolation(settings, backend=backend, env=self.env)
        self._synced: set[tuple[tuple[str, ...], str]] = set()

    @property
    def packages(self) -> Environment:
        """The library's package environment, where a tool's pins are read from."""
        return self.env

    @property
    def backend(self) -> Backend:
        """The backend, chosen (and the not-isolated warning printed) on first use."""
        return self.isolation.backend

    def prepare(self) -> None:
        """Choose the backend now, so a not-isolated warning comes before a run's trace."""
        self.isolation.prepare()

    def run_code(
        self,
        code: str,
        *,
        pip_install: JSONValue = None,
        network: bool | None = None,
        timeout_s: float | None = None,
    ) -> CodeRun:
        """Run a Python script; packages are installed (checked and pinned) beforehand.

        Raises :class:`~toolsmith.errors.PackageRefused` or
        :class:`~toolsmith.errors.InstallError` before anything runs when an install is
        refused or fails, and :class:`~toolsmith.errors.SandboxError` (``code="setup"``)
        when the sandbox itself could not be built (a machine problem, not the code's).
        """
        self.backend  # noqa: B018 - choose the backend (and warn) before a slow install
        installed = self.env.install(pip_install) if pip_install else ()
        result = self.isolation.run_code(code, network=network, timeout_s=timeout_s)
        return CodeRun(exec=result, installed=installed)

    def call_tool(
        self,
        code: str,
        args: JSONObject,
        *,
        requirements: Sequence[Requirement] = (),
        network: bool | None = None,
        timeout_s: float | None = None,
        warm: bool = False,
        priority: Priority = Priority.NORMAL,
    ) -> ToolCallResult:
        """Call ``run(**args)`` of a tool's code and decode what it returned.

        Missing ``requirements`` are synced into the environment first; a sync that is
        refused or fails comes back as a failed result with ``FailureKind.INSTALL``, a
        sandbox that cannot be built as one with ``FailureKind.SANDBOX``. ``warm`` asks
        for a warm worker and ``priority`` sets the run's share of the CPU (see
        :meth:`toolsmith.isolation.Isolation.call_tool`).
        """
        self.backend  # noqa: B018 - choose the backend (and warn) before a slow sync
        synced: tuple[JSONObject, ...] = ()
        if requirements:
            try:
                synced = self._sync_once(requirements)
            except PackageError as exc:
                return ToolCallResult(
                    ok=False, error=f"the tool's packages could not be installed: {exc}", error_type=FailureKind.INSTALL
                )
        outcome = self.isolation.call_tool(
            code, args, network=network, timeout_s=timeout_s, warm=warm, priority=priority
        )
        return replace(outcome, installed=synced) if synced else outcome

    def _sync_once(self, requirements: Sequence[Requirement]) -> tuple[JSONObject, ...]:
        """Sync ``requirements``, unless they were complete in this very state of the environment.

        Reading every distribution's metadata costs more than a warm call; an install or a
        removal moves the environment's stamp, and the check runs again.
        """
        pins = tuple(sorted(f"{r.pin} {r.sha256 or ''}" for r in requirements))
        if (pins, env_stamp(self.env.path)) in self._synced:
            return ()
        report = self.env.sync(requirements)
        self._synced.add((pins, env_stamp(self.env.path)))
        return tuple(r.to_dict() for r in report.installed)

    def retire_warm(self, keep_codes: Iterable[str]) -> int:
        """Stop warm workers whose code is not among ``keep_codes``."""
        return self.isolation.retire_warm(keep_codes)

    def reap_warm(self) -> int:
        """Stop warm workers idle for longer than ``sandbox.warm_idle_s``."""
        return self.isolation.reap_warm()

    def close(self) -> None:
        """Stop every warm worker (also done at exit)."""
        self.isolation.close()

    def sync(self, requirements: Sequence[Requirement]) -> SyncReport:
        """Install recorded pins that are missing (what ``toolsmith tools sync`` runs)."""
        return self.env.sync(requirements)

    def describe(self) -> dict[str, Any]:
        """The sandbox report for ``toolsmith doctor``: backend, why, cgroups, packages."""
        # cli/sandbox.py reads this report by key (typed there after isolation's describe()).
        report = describe(self.settings)
        report["packages"] = {
            "env": str(self.env.path),
            "exists": self.env.exists(),
            "installer": self.env.tool,
            "only_binary": self.settings.only_binary,
            "allow": list(self.settings.allow_packages),
        }
        return report
