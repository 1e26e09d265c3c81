"""The evidence an approval is given: the version's own tests, run now, in a named sandbox.

Before a person's approval makes a version served, :func:`gather` runs its ``test_args``
and every stored test case in the sandbox (:mod:`toolsmith.service.testrun`) and notes
where they ran: the sandbox backend and its version (bubblewrap's own, or the Python a
plain process runs), and toolsmith's version. :func:`refusal` says why an approval
cannot rest on it (a case failed, or the sandbox could not run them here). The library
stores it with the approval, in the same transaction, bound to the version's content
hash (:meth:`~toolsmith.library.ToolLibrary.add_evidence`); ``tools show`` and the web UI
show it with the version (:func:`describe`).

An approval without a test run (``--no-tests``) is recorded too, as evidence of nothing,
so the trail never suggests more than was checked.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from typing import Any

from toolsmith import __version__
from toolsmith.isolation.bwrap_binary import BwrapBinary
from toolsmith.library import EvidenceEntry, ToolLibrary, ToolVersion
from toolsmith.sandbox import Sandbox, ToolRunner
from toolsmith.service.testrun import TestRun, run_own_tests

NOT_RUN = "approved without a test run (--no-tests)"


@dataclass(frozen=True)
class SandboxInfo:
    """Where the tests ran: the backend, whether it isolates, and its version."""

    backend: str
    isolating: bool
    version: str

    @classmethod
    def of(cls, runner: ToolRunner) -> SandboxInfo:
        if not isinstance(runner, Sandbox):
            return cls(backend=type(runner).__name__, isolating=False, version="unknown")
        backend = runner.backend
        if backend.name == "bwrap":
            binary = getattr(backend, "bwrap", "")
            version = BwrapBinary(binary, "").version() if binary else None
            return cls(backend="bwrap", isolating=True, version=version or "unknown")
        return cls(backend=backend.name, isolating=backend.isolating, version=f"python {platform.python_version()}")

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "isolating": self.isolating, "version": self.version}


@dataclass(frozen=True)
class Evidence:
    """What an approval of one version is given (``run`` None: no test was run)."""

    tool: ToolVersion
    run: TestRun | None
    sandbox: SandboxInfo | None

    def details(self) -> dict[str, Any]:
        data: dict[str, Any] = {"toolsmith": __version__}
        if self.run is None or self.sandbox is None:
            return {**data, "cases": [], "passed": 0, "failed": 0, "not_run": NOT_RUN}
        cases = [c.to_dict() for c in self.run.cases]
        passed = sum(c.ok for c in self.run.cases)
        return {
            **data,
            "cases": cases,
            "passed": passed,
            "failed": len(cases) - passed,
            "sandbox": self.sandbox.to_dict(),
        }


def gather(tool: ToolVersion, *, library: ToolLibrary, runner: ToolRunner, actor: str) -> Evidence:
    """Run ``tool``'s own tests now (each recorded as a call) and note where they ran."""
    run = run_own_tests(tool, library=library, runner=runner, actor=actor)
    return Evidence(tool=tool, run=run, sandbox=SandboxInfo.of(runner))


def none_given(tool: ToolVersion) -> Evidence:
    """An approval that ran no test (``--no-tests``): recorded as such."""
    return Evidence(tool=tool, run=None, sandbox=None)


def refusal(evidence: Evidence) -> str | None:
    """Why an approval cannot rest on ``evidence``, or None when it can."""
    run = evidence.run
    if run is None or run.passed:
        return None
    bad = run.first_failure()
    assert bad is not None  # a run that did not pass has a failing case
    if not run.conclusive:
        return (
            f"its tests could not run here ({bad.label}: {bad.error}); fix the sandbox (`toolsmith doctor`) "
            "or approve with --no-tests"
        )
    return f"it fails its own tests ({run.summary()}); fix it or approve with --no-tests"


def describe(entry: EvidenceEntry) -> str:
    """One line for ``tools show`` and the web UI."""
    at = entry.at[:19].replace("T", " ")
    details = entry.details
    bound = "bound to its hash" if entry.bound else f"NOT this version's hash ({entry.hash[:12]})"
    if details.get("not_run"):
        return f"{at} UTC by {entry.actor}: {details['not_run']}; {bound}"
    sandbox = details.get("sandbox") or {}
    where = f"{sandbox.get('backend', '?')} ({sandbox.get('version', '?')})"
    cases = details.get("cases") or []
    passed = details.get("passed", 0)
    return (
        f"{at} UTC by {entry.actor}: {passed} of {len(cases)} test case(s) passed in {where}, "
        f"toolsmith {details.get('toolsmith', '?')}; {bound}"
    )
