"""Running one version's own tests: its ``test_args`` and every stored test case, in the sandbox.

Two decisions rest on such a run: a rollback (:mod:`toolsmith.service.rollback`: does the
broken version really fail its own tests, does its parent still pass?) and the evidence an
approval records (:mod:`toolsmith.service.evidence`). Each case is one call through the
one door (:func:`~toolsmith.service.toolcall.call_stored_tool`), so it is checked,
sandboxed and recorded like any other call, but it never quarantines: what a run means is
its caller's decision.

A case passes as the gate required when the tool was stored: ``test_args`` must return a
value that is not empty, and a further case must return what it expects (``expect``,
``contains``), if it says. A failure that is the machine's (no sandbox, packages not
installable here) says nothing about the tool: :attr:`TestRun.conclusive` is then False.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolsmith.calls import Blame, FailureKind
from toolsmith.library import ToolLibrary, ToolVersion
from toolsmith.library import testcases as tooltests
from toolsmith.sandbox import ToolRunner
from toolsmith.service.toolcall import call_stored_tool

TEST_ARGS = "test_args"


@dataclass(frozen=True)
class CaseRun:
    """One case of a version's own tests, as it ran."""

    label: str  # "test_args", or "case N" for the N-th stored test case
    args: dict[str, Any]
    ok: bool
    error: str | None = None
    error_type: FailureKind | None = None
    checked: bool = False  # the case says what it must return (expect or contains)

    @property
    def blame(self) -> Blame | None:
        return None if self.ok else (self.error_type or FailureKind.EXCEPTION).blame

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.label,
            "args": self.args,
            "ok": self.ok,
            "checked": self.checked,
            "error": self.error,
            "error_type": self.error_type.value if self.error_type else None,
        }


@dataclass(frozen=True)
class TestRun:
    """Every case of one version's own tests (stopped at the machine's first failure)."""

    __test__ = False  # not a pytest test class, whatever its name

    tool: ToolVersion
    cases: tuple[CaseRun, ...]

    @property
    def passed(self) -> bool:
        return bool(self.cases) and all(c.ok for c in self.cases)

    @property
    def conclusive(self) -> bool:
        """False when the machine could not run a case: then the run says nothing about the tool."""
        return all(c.blame is not Blame.MACHINE for c in self.cases)

    @property
    def failed(self) -> bool:
        """The tool itself failed one of its cases (not the machine)."""
        return self.conclusive and not self.passed

    def first_failure(self) -> CaseRun | None:
        return next((c for c in self.cases if not c.ok), None)

    def summary(self) -> str:
        """One line: ``3 of 3 cases passed`` or the first failing case and why."""
        bad = self.first_failure()
        if bad is None:
            return f"{len(self.cases)} of {len(self.cases)} case(s) passed"
        done = sum(c.ok for c in self.cases)
        return f"{done} of {len(self.cases)} case(s) passed; {bad.label} failed: {bad.error}"


def run_own_tests(tool: ToolVersion, *, library: ToolLibrary, runner: ToolRunner, actor: str) -> TestRun:
    """Run ``tool``'s ``test_args`` and each stored case; every call is recorded, none quarantines."""
    cases: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [(TEST_ARGS, dict(tool.spec.test_args), None)]
    cases += [(f"case {n}", dict(case["args"]), case) for n, case in enumerate(tool.spec.tests, 1)]
    done: list[CaseRun] = []
    for label, args, case in cases:
        call = call_stored_tool(
            tool, args, library=library, runner=runner, actor=actor, quarantine_after=None, require_data=case is None
        )
        run = call.run
        checked = case is not None and ("expect" in case or "contains" in case)
        if not run.ok:
            done.append(CaseRun(label, args, False, run.error or "the tool failed", run.error_type, checked))
            if run.blame is Blame.MACHINE:
                break  # the next case would meet the same machine
            continue
        wrong = tooltests.problem(case, run.value) if case is not None else None
        if wrong:
            done.append(CaseRun(label, args, False, wrong, FailureKind.WRONG_VALUE, checked))
        else:
            done.append(CaseRun(label, args, True, checked=checked))
    return TestRun(tool=tool, cases=tuple(done))
