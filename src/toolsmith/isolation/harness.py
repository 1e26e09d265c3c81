"""The files a sandboxed tool call starts from, and how its answer is read back.

A tool call writes three files into a fresh work directory: the tool's code as
``tool.py``, its arguments as ``_args.json`` and the harness below as ``_call.py``. The
harness imports the tool, calls ``run(**args)`` and writes ``{"ok": ..., "value": ...}``
to ``_result.json``. The result file, not stdout, carries the answer, so whatever the
tool prints cannot be mistaken for its return value. It is the only file of a call that
is read back (:data:`OUTPUTS`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolsmith.isolation.result import ExecResult, FailureKind, Limit, ToolCallResult
from toolsmith.limits import Limits

SCRIPT = "_call.py"
ARGS_FILE = "_args.json"
RESULT_FILE = "_result.json"
TOOL_FILE = "tool.py"
OUTPUTS = (RESULT_FILE,)
MAX_RESULT_BYTES = 8 * 1024 * 1024
# Deeper values are refused: the tool writes the file, and a deep enough nesting would
# raise RecursionError in whatever walks the value next on the host (json, the library).
MAX_RESULT_DEPTH = 100

HARNESS_SOURCE = r"""
import importlib.util, json, os, sys, traceback

def _write(payload):
    # Written in place: under bwrap this file is a bind mount, which cannot be renamed over.
    with open("_result.json", "w", encoding="utf-8") as fh:
        fh.write(payload)

def _fail(kind, message, **facts):
    tb = traceback.format_exc(limit=-12)
    _write(json.dumps({"ok": False, "error_type": kind, "error": message,
                       "traceback": tb if tb.strip() != "NoneType: None" else None, **facts}))

def _raised(exc):
    # A MemoryError here is the memory rlimit refusing an allocation: say so as a fact the
    # host words with the limit's size and setting. Freeing what the frames still hold
    # (the bomb's own data) leaves room to write the answer.
    if isinstance(exc, MemoryError):
        traceback.clear_frames(exc.__traceback__)
    text = str(exc)
    _fail("exception", "run() raised %s%s" % (type(exc).__name__, ": " + text if text else ""),
          **({"limit": "memory"} if isinstance(exc, MemoryError) else {}))

def _main():
    sys.path.insert(0, os.getcwd())
    with open("_args.json", encoding="utf-8") as fh:
        args = json.load(fh)
    try:
        spec = importlib.util.spec_from_file_location("tool", "tool.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["tool"] = module
        spec.loader.exec_module(module)
    except BaseException as exc:
        return _fail("import", "importing the tool failed: %s: %s" % (type(exc).__name__, exc))
    run = getattr(module, "run", None)
    if not callable(run):
        return _fail("no_run", "the tool module defines no callable run()")
    try:
        value = run(**args)
    except BaseException as exc:
        return _raised(exc)
    try:
        payload = json.dumps({"ok": True, "value": value}, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return _fail("not_json", "run() returned %s, which is not JSON-serialisable (%s); "
                     "return dicts, lists, strings, numbers, booleans or None"
                     % (type(value).__name__, exc))
    _write(payload)

_main()
"""


def prepare_call(workdir: Path, code: str, args: dict[str, Any]) -> None:
    """Write the tool, its arguments and the harness into ``workdir``."""
    (workdir / TOOL_FILE).write_text(code, encoding="utf-8")
    (workdir / ARGS_FILE).write_text(json.dumps(args, ensure_ascii=False), encoding="utf-8")
    (workdir / SCRIPT).write_text(HARNESS_SOURCE, encoding="utf-8")


def read_call_result(workdir: Path, run: ExecResult, limits: Limits) -> ToolCallResult:
    """Turn the harness's result file (or its absence) into a :class:`ToolCallResult`.

    ``limits`` are the run's, for naming one in the message when it was reached.
    """
    if run.timed_out:
        return no_result(run, limits)
    path = workdir / RESULT_FILE
    # An isolating backend pre-creates the file (empty) to bind it writable: empty = absent.
    if not path.is_file() or path.is_symlink() or path.stat().st_size == 0:
        return no_result(run, limits)
    if path.stat().st_size > MAX_RESULT_BYTES:
        return too_large(run)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return _failure(run, FailureKind.NOT_JSON, f"the tool's result could not be decoded: {exc}")
    return decode_result(text, run, limits)


def decode_result(text: str, run: ExecResult, limits: Limits) -> ToolCallResult:
    """Decode the harness's JSON envelope (from the result file, or a warm worker's reply)."""
    if not text:
        return no_result(run, limits)
    try:
        data = json.loads(text)
    except ValueError as exc:
        return _failure(run, FailureKind.NOT_JSON, f"the tool's result could not be decoded: {exc}")
    except RecursionError:
        return _too_deep(run)
    if _depth(data) > MAX_RESULT_DEPTH + 1:  # the envelope adds one level
        return _too_deep(run)
    if not isinstance(data, dict) or "ok" not in data:
        return _failure(run, FailureKind.NOT_JSON, "the tool's result file was overwritten with something else")
    if data["ok"] is True:
        return ToolCallResult(ok=True, value=data.get("value"), exec=run)
    # The harness says which limit refused it (a MemoryError is the memory rlimit's refusal).
    reported = (Limit.MEMORY,) if data.get("limit") == Limit.MEMORY.value else ()
    error = str(data.get("error") or "run() failed")
    return ToolCallResult(
        ok=False,
        error=error + _reached(run, limits, reported),
        error_type=FailureKind.parse(data.get("error_type")),
        traceback=data.get("traceback"),
        exec=run,
    )


def no_result(run: ExecResult, limits: Limits) -> ToolCallResult:
    """The failure of a call whose process ended (or was stopped) without writing a result."""
    reached = _reached(run, limits)
    if run.timed_out:
        message = f"run() did not return within {run.wall_s:.1f} s and was killed{reached}"
        return _failure(run, FailureKind.TIMEOUT, message)
    reason = f"killed by {run.killed_by}" if run.killed_by else f"exit code {run.exit_code}"
    tail = run.stderr.strip().splitlines()[-3:]
    detail = f"; stderr ends with: {' | '.join(tail)}" if tail else ""
    return _failure(run, FailureKind.KILLED, f"the tool process ended without a result ({reason}){reached}{detail}")


def _reached(run: ExecResult, limits: Limits, reported: tuple[Limit, ...] = ()) -> str:
    """``; the sandbox's ... limit (...) was reached`` for each limit the run was seen to reach."""
    seen = dict.fromkeys((*run.limits_reached, *reported))
    return "".join(f"; {limit.reached(limits)}" for limit in seen)


def too_large(run: ExecResult) -> ToolCallResult:
    return _failure(run, FailureKind.TOO_LARGE, f"run() returned more than {MAX_RESULT_BYTES} bytes of JSON")


def _depth(value: Any) -> int:
    """How deeply lists and dicts nest in ``value`` (iteratively: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            if deepest > MAX_RESULT_DEPTH + 1:
                break
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _too_deep(run: ExecResult) -> ToolCallResult:
    return _failure(
        run,
        FailureKind.NOT_JSON,
        f"run() returned a value nested deeper than {MAX_RESULT_DEPTH} levels; return a flatter structure",
    )


def _failure(run: ExecResult, kind: FailureKind, message: str) -> ToolCallResult:
    return ToolCallResult(ok=False, error=message, error_type=kind, exec=run)
