"""``create_tool``: wrap verified code as a stored, parameterised library tool.

The order of events matters. The ``verify_before_create`` guard
(:mod:`toolsmith.agent.guards.verify`) has already refused any call before a real
``code_interpreter`` run in this task. Then deduplication: identical
code is refused outright, a close match to an active tool is reported back once so the
model can reuse it or deliberately make a new version. Only then does the gate run
``run(**test_args)`` in the sandbox, and only a passing tool is written, carrying the
pins its own imports need and the sources that belong to them (:mod:`pins`).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from typing import Any

from toolsmith.agent.context import TaskContext
from toolsmith.agent.metatools.task_values import task_values_match
from toolsmith.calls import Note, NoteKind, Outcome
from toolsmith.errors import ToolNotFoundError
from toolsmith.library import Status, ToolVersion
from toolsmith.library import testcases as tooltests
from toolsmith.library.models import Provenance, ToolSpec
from toolsmith.model.replies import usable_code
from toolsmith.packages import pins
from toolsmith.packages.index import normalize_name
from toolsmith.redaction import Redactor

SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "create_tool",
        "description": (
            "Save verified code as a reusable, general tool in the persistent library. The code "
            "must define def run(**params) that calls the library at run time and returns "
            "JSON-serialisable data; never hard-code results or test values. Name it generally "
            "(get_stock_price(ticker), not get_nvidia_price). The tool is test-run with test_args "
            "before it is stored."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "snake_case tool name."},
                "description": {"type": "string", "description": "What the tool does and returns."},
                "parameters": {"type": "object", "description": "JSON Schema of run()'s parameters."},
                "code": {"type": "string", "description": "Python source defining run(...)."},
                "test_args": {"type": "object", "description": "Real arguments for the test run."},
                "tests": {
                    "type": "array",
                    "description": (
                        "More test cases, each {args, expect?, contains?}: other real arguments and, "
                        "where your verified code_interpreter output shows it, the whole result "
                        "(expect) or part of it (contains: an object of keys and values, or a text). "
                        "Vary the parameters the code branches on. The gate runs them all; later "
                        "versions of the tool must pass them too."
                    ),
                    "items": {
                        "type": "object",
                        "properties": {
                            "args": {"type": "object"},
                            "expect": {"description": "The exact result."},
                            "contains": {
                                "description": "Keys and values the result must have, or a text it must include."
                            },
                        },
                        "required": ["args"],
                    },
                },
                "parent_tests_skip_reason": {
                    "type": "string",
                    "description": (
                        "Only for a new version of an existing tool whose behaviour changes on purpose: "
                        "why it need not pass the previous version's tests."
                    ),
                },
                "keywords": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Short search terms, in English and in the task's language.",
                },
            },
            "required": ["name", "description", "parameters", "code", "test_args"],
        },
    },
}

_WORD = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_STOP = frozenset(
    {"a", "an", "the", "of", "for", "to", "and", "or", "in", "on", "by", "with", "get", "return", "returns"}
)


def handle(ctx: TaskContext, args: dict[str, Any]) -> Outcome:
    try:
        spec, understood = _spec(ctx, args)
    except ValueError as exc:
        return _refused(f"create_tool refused: {exc}")
    outcome = _create(ctx, spec, args)
    if understood:  # say how near-miss test formats were read, so no call is spent on a format
        outcome = outcome.noted(Note(NoteKind.NOTE, "Tests understood: " + "; ".join(understood) + "."))
    return outcome


def _create(ctx: TaskContext, spec: ToolSpec, args: dict[str, Any]) -> Outcome:
    """Deduplicate, gate and store ``spec``."""
    if Redactor.from_environment().contains_secret(json.dumps(spec.canonical(), ensure_ascii=False)):
        # Tool records are shared and exported; a key written into one would leak with it.
        return _refused(
            "The tool contains a secret (an API key or token). Tools must not "
            "embed credentials; use a key-free library or service."
        )
    stop = _duplicate_stop(ctx, spec)
    if stop is not None:
        return stop
    spec, inherited = _with_parent_tests(ctx, spec, args.get("parent_tests_skip_reason"))
    report = ctx.gate.check(spec)
    if not report.ok:
        hint = (
            " A failing case may be the previous version's test: fix the code, or say why this version "
            "need not pass it in parent_tests_skip_reason."
            if inherited and report.failed == "tests"
            else ""
        )
        return _refused(f"The gate refused the tool ({report.failed}): {report.reason}{hint}", check=report.failed)
    gate = report.to_dict()
    skip = str(args.get("parent_tests_skip_reason") or "").strip()
    if skip:
        gate["parent_tests_skipped"] = skip[:500]
    stored = _store(ctx, replace(spec, parameters=report.parameters or spec.parameters), gate)
    ctx.unlock(stored)
    ctx.created.append(stored)
    data = {
        "name": stored.name,
        "version": stored.version,
        "status": stored.status.value,
        "hash": stored.hash,
        "requirements": [r.pin for r in stored.spec.requirements],
        "test_result": report.result,
    }
    return Outcome.success(data, summary=f"stored {stored.ref}", note=_stored_note(ctx, stored))


def _refused(error: str, **data: Any) -> Outcome:
    """A tool that was not stored, and why."""
    return Outcome.failed(error, data={**{k: v for k, v in data.items() if v is not None}, "stored": False})


def _stored_note(ctx: TaskContext, stored: ToolVersion) -> str:
    """What to do next, in words that are true whatever the test arguments were: answer from
    the test run when the task states every test value; otherwise let the model judge."""
    args = json.dumps(stored.spec.test_args, ensure_ascii=False, default=str)
    if task_values_match(ctx.task, stored.spec.test_args):
        return (
            f"{stored.ref} passed the gate and is stored. Its test run used this task's own arguments "
            f"({args}), so test_result is the tool's real output for the task: answer from it (no need "
            "to call the tool again)."
        )
    return (
        f"{stored.ref} passed the gate and is stored. Its test run used {args}. If those are this task's "
        "own arguments, test_result is the tool's real output for the task: answer from it. If not, call "
        f"{stored.name} with the task's arguments."
    )


def _spec(ctx: TaskContext, args: dict[str, Any]) -> tuple[ToolSpec, list[str]]:
    parameters, test_args = args.get("parameters"), args.get("test_args")
    keywords = args.get("keywords") or []
    if isinstance(keywords, str):
        keywords = [k.strip() for k in re.split(r"[,;]", keywords) if k.strip()]
    tests, understood = tooltests.read_cases(args.get("tests"), parameters if isinstance(parameters, dict) else None)
    spec = ToolSpec(
        name=str(args["name"]).strip(),
        description=str(args["description"]).strip(),
        parameters=parameters if isinstance(parameters, dict) else {},
        code=usable_code(str(args["code"])),
        test_args=test_args if isinstance(test_args, dict) else {},
        requirements=pins.tool_requirements(usable_code(str(args["code"])), ctx.installed, ctx.sandbox.packages),
        keywords=tuple(str(k)[:60] for k in keywords[:20]),
        tests=tests,
    )
    return spec, understood


def _with_parent_tests(ctx: TaskContext, spec: ToolSpec, skip_reason: Any) -> tuple[ToolSpec, int]:
    """``spec`` carrying its parent's test cases too (its test_args as one), unless the model
    said why this version need not pass them; and how many cases were inherited."""
    parent = _parent(ctx, spec.name)
    if parent is None or (isinstance(skip_reason, str) and skip_reason.strip()):
        return spec, 0
    inherited = ({"args": dict(parent.spec.test_args)}, *parent.spec.tests)
    merged = tooltests.merge(spec.tests, tuple(c for c in inherited if c["args"] != spec.test_args))
    return replace(spec, tests=merged), len(merged) - len(spec.tests)


def _sources(ctx: TaskContext, spec: ToolSpec) -> tuple[str, ...]:
    used = {normalize_name(r.name) for r in spec.requirements}
    unused = {normalize_name(name) for name in ctx.installed} - used
    return pins.tool_sources(ctx.sources, used, unused)


def _parent(ctx: TaskContext, name: str) -> ToolVersion | None:
    """The version a new one replaces: the one used in this task (a repair), else the newest."""
    if name in ctx.unlocked:
        return ctx.unlocked[name]
    try:
        return ctx.library.get(name)
    except ToolNotFoundError:
        return None


def _store(ctx: TaskContext, spec: ToolSpec, gate: dict[str, Any]) -> ToolVersion:
    previous = _parent(ctx, spec.name)
    status = Status.PENDING if ctx.settings.review == "required" else Status.ACTIVE
    provenance = Provenance(
        task=ctx.task,
        model=ctx.served_model or ctx.model_name,  # the served model, which a local server may choose
        sources=_sources(ctx, spec),
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        session_id=ctx.session_id,
        origin="agent",
    )
    return ctx.library.add(
        spec,
        provenance=provenance,
        gate=gate,
        status=status,
        parent_version=previous.version if previous else None,
        actor=f"agent:{ctx.session_id}",
    )


# -- deduplication -----------------------------------------------------------------------


def _duplicate_stop(ctx: TaskContext, spec: ToolSpec) -> Outcome | None:
    """Refuse identical code; report a close match once so the model can choose."""
    for tool in ctx.library.find_by_code_hash(spec.code_hash()):
        ctx.unlock(tool)
        return _refused(
            f"Identical code is already stored as {tool.ref}. Reuse it instead (it is now callable).",
            duplicate=tool.ref,
        )
    if spec.name in ctx.failed_library_tools or spec.name in ctx.dedup_warned:
        # Repairing a tool that failed in this task, or the model was told about the
        # match and asked again: a new version (or a separate tool) is its choice.
        return None
    match = _closest(spec, _candidates(ctx, spec), ctx.settings.dedup_threshold)
    if match is None:
        return None
    ctx.dedup_warned.add(spec.name)
    tool, score = match
    ctx.unlock(tool)
    same = tool.name == spec.name
    advice = (
        f"A tool named {tool.name!r} already exists ({tool.ref}) and has not failed in this task."
        if same
        else f"The active tool {tool.ref} looks like the same capability (similarity {score:.2f})."
    )
    then = "a new version of it." if same else "a separate tool."
    return _refused(
        f"{advice} Reuse it (it is now callable), or call create_tool again to store this as {then}",
        similar=tool.ref,
        similarity=round(score, 2),
        existing={"name": tool.name, "description": tool.spec.description, "parameters": tool.spec.parameters},
    )


def _candidates(ctx: TaskContext, spec: ToolSpec) -> list[ToolVersion]:
    """Active tools that could be the same capability: same name, or found by search."""
    found = {h.tool.name: h.tool for h in ctx.library.search(f"{spec.name} {spec.description}", limit=10, floor=0.0)}
    same = ctx.library.served(spec.name)
    if same is not None and same.status == Status.ACTIVE:
        found[same.name] = same
    return list(found.values())


def _closest(spec: ToolSpec, tools: list[ToolVersion], threshold: float) -> tuple[ToolVersion, float] | None:
    words = _words(spec)
    best: tuple[ToolVersion, float] | None = None
    for tool in tools:
        score = 1.0 if tool.name == spec.name else _jaccard(words, _words(tool.spec))
        if score >= threshold and (best is None or score > best[1]):
            best = (tool, score)
    return best


def _words(spec: ToolSpec) -> set[str]:
    text = " ".join([spec.name.replace("_", " "), spec.description]).lower()
    return {w for w in _WORD.findall(text) if w not in _STOP}


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0
