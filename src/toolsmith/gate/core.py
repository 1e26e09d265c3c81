"""The save-time validation gate: nothing enters the library without passing it.

A bad tool in the library is worse than no tool, because every later task that reuses
it inherits its errors. The gate therefore checks a proposed :class:`ToolSpec` in order
and stops at the first failure:

1. ``name``: what model APIs accept (``^[a-zA-Z0-9_-]{1,64}$``) and a Python identifier,
   not a meta-tool name;
2. ``syntax``: the code parses, and ``run`` is a module-level function;
3. ``parameters``: the JSON Schema is normalised (a bare properties map or a missing
   ``type: object`` is fixed) and agrees with ``run``'s signature, and ``test_args`` fit;
4. ``anti_mock``: no mock, fake, dummy or sample data and no hard-coded results
   (judged on the AST, see :mod:`toolsmith.gate.antimock`);
5. ``generality``: no ``test_args`` value is baked into the code. Syntax gives the evidence
   (:mod:`toolsmith.gate.generality`); where it is not conclusive, the tool's own tests
   decide: a parameter they vary, with different results, is a parameter. Thin evidence
   gets a request for one more test case, never an order to delete a literal;
6. ``test_run``: ``run(**test_args)`` really runs in the sandbox and returns JSON, and
   every further test case gives what it expects.

Every verdict is a :class:`GateReport`; a refusal says which check failed and why in a
sentence a model can act on. The gate itself never writes anything.
"""

from __future__ import annotations

import ast
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from toolsmith.calls import META_TOOL_NAMES
from toolsmith.gate.antimock import find_mock_data
from toolsmith.gate.generality import Finding, find_hardcoded_test_values
from toolsmith.isolation.result import Blame, FailureKind
from toolsmith.library import testcases as tooltests
from toolsmith.library.models import ToolSpec, tool_name_problem
from toolsmith.library.schema import argument_problems, normalize_parameters
from toolsmith.sandbox import ToolRunner
from toolsmith.service.toolcall import execute, trial_run


@dataclass(frozen=True)
class GateCheck:
    """One check's verdict."""

    name: str
    ok: bool
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "message": self.message}


@dataclass(frozen=True)
class GateReport:
    """The gate's verdict on one tool.

    ``parameters`` is the normalised schema (use it when storing the tool), ``result``
    the value ``run(**test_args)`` returned in the test run.
    """

    ok: bool
    checks: tuple[GateCheck, ...]
    parameters: dict[str, Any] | None = None
    result: Any = None
    wall_s: float = 0.0
    checked_at: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))

    @property
    def failed(self) -> str | None:
        return next((c.name for c in self.checks if not c.ok), None)

    @property
    def reason(self) -> str | None:
        return next((c.message for c in self.checks if not c.ok), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "failed": self.failed,
            "reason": self.reason,
            "checks": [c.to_dict() for c in self.checks],
            "wall_s": round(self.wall_s, 3),
            "checked_at": self.checked_at,
        }


class Gate:
    """Validates tools before they are stored. ``runner`` executes the test run."""

    def __init__(self, runner: ToolRunner, *, reserved_names: Iterable[str] = META_TOOL_NAMES) -> None:
        self.runner = runner
        self.reserved = frozenset(reserved_names)

    def check(self, spec: ToolSpec) -> GateReport:
        """Run every check in order; stop at the first failure."""
        started = time.monotonic()
        checks: list[GateCheck] = []
        name_check = self._check_name(spec.name)
        checks.append(name_check)
        if not name_check.ok:
            return self._report(checks, started)
        tree, syntax_check = _check_syntax(spec.code)
        checks.append(syntax_check)
        if tree is None or not syntax_check.ok:
            return self._report(checks, started)
        parameters, param_check = _check_parameters(spec, _find_run(tree))
        checks.append(param_check)
        if parameters is None or not param_check.ok:
            return self._report(checks, started)
        spec = replace(spec, parameters=parameters)
        finding = find_hardcoded_test_values(tree, spec.test_args, parameters)
        for check in (_check_anti_mock(tree), _generality_before_runs(finding, spec)):
            if check is not None:
                checks.append(check)
                if not check.ok:
                    return self._report(checks, started, parameters)
        run_check, value = self._check_test_run(spec)
        checks.append(run_check)
        runs = [(spec.test_args, value)] if run_check.ok else []
        if run_check.ok and spec.tests:
            case_check, case_runs = self._check_cases(spec)
            checks.append(case_check)
            runs += case_runs
        if finding is not None and all(c.ok for c in checks):
            checks.append(_generality_from_runs(finding, runs))  # the tests' evidence decides
        return self._report(checks, started, parameters, value)

    def _check_cases(self, spec: ToolSpec) -> tuple[GateCheck, list[tuple[dict[str, Any], Any]]]:
        """Every further test case runs and gives what it expects (the first failure is named);
        with the (args, value) of each passing run."""
        runs: list[tuple[dict[str, Any], Any]] = []
        for number, case in enumerate(spec.tests, 1):
            problems = argument_problems(spec.parameters, case["args"], strict=True)
            if problems:
                message = f"test case {number}: args do not fit the schema: {'; '.join(problems)}."
                return GateCheck("tests", False, message), runs
            outcome = execute(self.runner, spec, case["args"])
            if not outcome.ok:
                why = outcome.error if outcome.blame is not Blame.MACHINE else f"the sandbox failed: {outcome.error}"
                return GateCheck("tests", False, f"test case {number} ({_args(case)}) failed: {why}."), runs
            wrong = tooltests.problem(case, outcome.value)
            if wrong:
                return GateCheck("tests", False, f"test case {number} ({_args(case)}): {wrong}."), runs
            runs.append((case["args"], outcome.value))
        return GateCheck("tests", True, f"{len(spec.tests)} further test case(s) passed"), runs

    # -- individual checks -------------------------------------------------------------

    def _check_name(self, name: str) -> GateCheck:
        problem = tool_name_problem(name)
        if problem is not None:
            return GateCheck("name", False, problem + ".")
        if name.startswith("_"):
            return GateCheck("name", False, f"{name!r} starts with '_'; tool names must be public.")
        if name in self.reserved:
            return GateCheck("name", False, f"{name!r} is a meta-tool name; choose another name.")
        return GateCheck("name", True)

    def _check_test_run(self, spec: ToolSpec) -> tuple[GateCheck, Any]:
        result = trial_run(self.runner, spec)
        if result.ok:
            return GateCheck("test_run", True, "run(**test_args) returned JSON-serialisable data"), result.value
        if result.blame is Blame.MACHINE:
            # Nothing the model could change in the code would help: say so, or it rewrites working code.
            message = (
                f"The sandbox could not run the test on this machine: {result.error}. This is not a "
                "fault of the code; do not rewrite it for this. Try create_tool again once, and if it "
                "fails the same way, tell the user the tool could not be checked here."
            )
        elif result.error_type is FailureKind.EMPTY:
            message = (
                f"run(**test_args) returned {result.value!r}, so the test run verified nothing. "
                "Return the data the tool produced, and pick test_args that yield real data."
            )
        else:
            detail = f" Traceback tail: {_tail(result.traceback)}" if result.traceback else ""
            message = (
                f"run(**test_args) failed in the sandbox: {result.error}.{detail} "
                "Fix the code (or test_args) and try again."
            )
        return GateCheck("test_run", False, message), None

    @staticmethod
    def _report(
        checks: list[GateCheck], started: float, parameters: dict[str, Any] | None = None, value: Any = None
    ) -> GateReport:
        ok = all(c.ok for c in checks)
        return GateReport(
            ok=ok,
            checks=tuple(checks),
            parameters=parameters,
            result=value,
            wall_s=time.monotonic() - started,
        )


# -- static checks -----------------------------------------------------------------------


def _check_syntax(code: str) -> tuple[ast.Module | None, GateCheck]:
    if not isinstance(code, str) or not code.strip():
        return None, GateCheck("syntax", False, "The code is empty; it must define def run(**kwargs).")
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return None, GateCheck("syntax", False, f"The code does not parse: line {exc.lineno}: {exc.msg}.")
    if _find_run(tree) is None:
        return tree, GateCheck(
            "syntax",
            False,
            "The code defines no module-level function run(); define def run(...) that returns JSON-serialisable data.",
        )
    return tree, GateCheck("syntax", True)


def _find_run(tree: ast.Module) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "run":
            return node
    return None


def _check_parameters(spec: ToolSpec, run: ast.FunctionDef | None) -> tuple[dict[str, Any] | None, GateCheck]:
    try:
        schema = normalize_parameters(spec.parameters)
    except ValueError as exc:
        return None, GateCheck("parameters", False, f"The parameter schema is invalid: {exc}.")
    if run is not None:
        problem = _signature_problem(run, schema)
        if problem:
            return None, GateCheck("parameters", False, problem)
    test_args: object = spec.test_args  # imports and models can send anything here
    if not isinstance(test_args, dict):
        return None, GateCheck("parameters", False, "test_args must be an object of argument values.")
    problem = _test_args_problem(schema, test_args)
    if problem:
        return None, GateCheck("parameters", False, problem)
    return schema, GateCheck("parameters", True)


def _signature_problem(run: ast.FunctionDef, schema: dict[str, Any]) -> str | None:
    args = run.args
    if args.posonlyargs:
        return "run() must not use positional-only parameters; it is called as run(**kwargs)."
    names = [a.arg for a in args.args + args.kwonlyargs]
    accepts_any = args.kwarg is not None
    properties: dict[str, Any] = schema["properties"]
    for param in schema["required"]:
        if param not in names and not accepts_any:
            return f"Required parameter {param!r} is not accepted by run{_sig(names)}; add it to run()."
    positional_defaults = len(args.defaults)
    without_default = names[: len(args.args) - positional_defaults] + [
        a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None
    ]
    for param in without_default:
        if param not in properties:
            return (
                f"run() requires {param!r}, which the parameter schema does not declare; "
                "declare it in parameters.properties or give it a default."
            )
    return None


def _sig(names: list[str]) -> str:
    return "(" + ", ".join(names) + ")"


def _test_args_problem(schema: dict[str, Any], test_args: dict[str, Any]) -> str | None:
    problems = argument_problems(schema, test_args, strict=True)
    return f"test_args do not fit the parameter schema: {'; '.join(problems)}." if problems else None


def _check_anti_mock(tree: ast.Module) -> GateCheck:
    finding = find_mock_data(tree)
    if finding:
        return GateCheck(
            "anti_mock",
            False,
            f"The code looks like it uses mock or hard-coded data ({finding}). Tools must fetch or "
            "compute real results at run time with the library you verified.",
        )
    return GateCheck("anti_mock", True)


def _generality_before_runs(finding: Finding | None, spec: ToolSpec) -> GateCheck | None:
    """The verdict the code alone allows; ``None`` when the tests' runs must decide."""
    if finding is None:
        return GateCheck("generality", True)
    where = f"line {finding.line}"
    if finding.answer:
        return GateCheck(
            "generality",
            False,
            f"The code holds the answer for the test value {finding.value!r} ({where}): a table entry or a "
            f"special case that returns literal data for it, so the tool only knows the cases written into "
            "it. Compute the result with the library at run time for any input.",
        )
    if not _varied(spec, finding.parameter):
        return GateCheck(
            "generality",
            False,
            f"The test value {finding.value!r} of parameter {finding.parameter!r} appears in the code as data "
            f"({where}), and no test case uses another value of {finding.parameter!r}, so the gate cannot tell "
            f"a parameter from a baked-in answer. Keep the code if {finding.parameter!r} is a real input, and "
            f"add a case to tests with another value of {finding.parameter!r} (with what it returns): a tool "
            "whose tests vary a parameter and get different results is general.",
        )
    return None


def _varied(spec: ToolSpec, parameter: str) -> bool:
    """Whether a test case gives ``parameter`` another value than the test run does."""
    tested = _canonical(spec.test_args.get(parameter))
    return any(parameter in c["args"] and _canonical(c["args"][parameter]) != tested for c in spec.tests)


def _generality_from_runs(finding: Finding, runs: list[tuple[dict[str, Any], Any]]) -> GateCheck:
    """A flagged parameter is one when runs with different values of it got different results.

    Only runs that give the parameter a value count: one that leaves it out gets its default,
    which may well be the test value, echoed back as it should be."""
    name = finding.parameter
    given = [(args, value) for args, value in runs if name in args]
    results: dict[str, set[str]] = {}
    for args, value in given:
        results.setdefault(_canonical(args[name]), set()).add(_canonical(value))
    distinct = {frozenset(r) for r in results.values()}
    tested = _canonical(finding.value)
    leaked = any(
        _canonical(args[name]) != _canonical(finding.argument) and tested in map(_canonical, _leaves(value))
        for args, value in given
    )
    if leaked:
        return GateCheck(
            "generality",
            False,
            f"The tool returns the test value {finding.value!r} (written in the code at line {finding.line}) for "
            f"other values of {name!r} too, so it answers from the code. Make the result come from {name!r}, "
            "computed with the library at run time.",
        )
    if len(results) >= 2 and len(distinct) >= 2:
        shown = ", ".join(sorted(results))
        return GateCheck(
            "generality",
            True,
            f"{finding.value!r} appears in the code as data (line {finding.line}), but the tests give {name!r} "
            f"{len(results)} values ({shown}) with different results: it is a parameter",
        )
    return GateCheck(
        "generality",
        False,
        f"The tests give {name!r} other values, but every run returned the same result, so the tool ignores "
        f"{name!r} or answers from the code (the test value {finding.value!r} is used as data at line "
        f"{finding.line}). Make the result depend on {name!r}, computed with the library at run time.",
    )


def _leaves(value: Any) -> Iterator[Any]:
    """The plain values of a JSON result, at any depth."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _args(case: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in case["args"].items())
    return text if len(text) <= 120 else text[:117] + "..."


def _tail(text: str | None, lines: int = 3) -> str:
    # Caret lines (^^^^) only point at columns; they carry nothing once joined on one line.
    kept = [line.strip() for line in (text or "").splitlines() if line.strip().strip("^~")]
    return " | ".join(kept[-lines:])
