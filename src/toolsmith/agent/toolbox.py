"""The toolbox: what one task can call, and the single door every call goes through.

The toolbox offers the five meta-tools (four under ``--no-create``) plus the library
tools unlocked in this task, and turns every call into a JSON result. Whatever the
model sends (malformed JSON, an unknown or locked tool, wrong types, missing
arguments), the answer is an error result it can act on; nothing here raises into the
loop. Library tools are called through :mod:`toolsmith.service.toolcall` (strict arguments, the
sandbox run, health, quarantine), like every other caller of a stored tool.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable
from typing import Any

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards import Call, GuardSet
from toolsmith.agent.metatools import code_interpreter, create_tool, read_webpage, search_tools, web_search
from toolsmith.calls import META_TOOL_NAMES
from toolsmith.errors import SandboxError, ToolsmithError
from toolsmith.events import ToolCalled, ToolResult
from toolsmith.isolation import Blame
from toolsmith.library import ToolVersion
from toolsmith.library.schema import argument_problems, coerce_arguments
from toolsmith.model.replies import parse_arguments
from toolsmith.records import Action
from toolsmith.redaction import encodable
from toolsmith.service.toolcall import call_stored_tool

Handler = Callable[[TaskContext, dict[str, Any]], dict[str, Any]]
RESULT_CHARS = 16_000  # read_webpage cuts text at 12k; leave room for its metadata
TRUNCATED_HINT = (
    "Your reply was cut off at the model's output limit (finish_reason=length), which cut "
    "these arguments short: send shorter code or arguments."
)


_HANDLERS: dict[str, tuple[dict[str, Any], Handler]] = {
    schema["function"]["name"]: (schema, handler)
    for schema, handler in (
        (web_search.SCHEMA, web_search.handle),
        (read_webpage.SCHEMA, read_webpage.handle),
        (code_interpreter.SCHEMA, code_interpreter.handle),
        (create_tool.SCHEMA, create_tool.handle),
        (search_tools.SCHEMA, search_tools.handle),
    )
}
META_TOOLS = {name: _HANDLERS[name] for name in META_TOOL_NAMES}  # offered in that order


def cap_middle(text: str, limit: int = RESULT_CHARS) -> str:
    """Keep the head and tail of ``text`` within ``limit`` characters, saying what was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters cut to fit the context ...]\n{text[-half:]}"


class Toolbox:
    """Dispatches one task's tool calls, emitting events and recording actions."""

    def __init__(self, ctx: TaskContext, guards: GuardSet) -> None:
        self.ctx = ctx
        self.guards = guards
        self.turn: dict[str, tuple[str, dict[str, Any]]] = {}  # this turn's calls, by content

    def begin_turn(self) -> None:
        """A new model turn: identical calls are only answered once within one turn."""
        self.turn = {}

    def meta_names(self) -> list[str]:
        return [n for n in META_TOOLS if n != "create_tool" or self.ctx.allow_create]

    def schemas(self) -> list[dict[str, Any]]:
        """Function definitions offered to the model right now."""
        meta = [META_TOOLS[name][0] for name in self.meta_names()]
        return meta + [tool.openai_schema() for tool in self.ctx.unlocked.values()]

    def call(
        self, call_id: str, name: str, raw_arguments: Any, *, origin: str = "model", truncated: bool = False
    ) -> dict[str, Any]:
        """Run one tool call and return its JSON-able result (never raises for model errors)."""
        ctx = self.ctx
        args, parse_error = parse_arguments(raw_arguments)
        is_library = name in ctx.unlocked and name not in META_TOOLS
        ctx.send(
            ToolCalled(
                task=ctx.index,
                step=ctx.step,
                call_id=call_id,
                name=name,
                arguments=args if parse_error is None else raw_arguments,
                origin=origin,
                library=is_library,
            )
        )
        started = time.monotonic()
        if parse_error is not None:
            result: dict[str, Any] = {
                "ok": False,
                "error": f"The arguments for {name} are not valid JSON ({parse_error}). "
                "Send one JSON object that matches the tool's parameters.",
            }
            if truncated:
                result["hint"] = TRUNCATED_HINT
        else:
            result = self._once_per_turn(call_id, Call(name, args, origin))
        self.guards.after_result(ctx, Call(name, args if parse_error is None else raw_arguments, origin), result)
        ok = bool(result.get("ok"))
        reported = result.get("version")
        version = reported if is_library and isinstance(reported, int) else None
        ctx.actions.append(
            Action(
                name=name,
                arguments=args if parse_error is None else raw_arguments,
                ok=ok,
                origin=origin,
                library=is_library,
                version=version,
            )
        )
        ctx.send(
            ToolResult(
                task=ctx.index,
                step=ctx.step,
                call_id=call_id,
                name=name,
                ok=ok,
                summary=summarize(result),
                wall_s=round(time.monotonic() - started, 4),
                data=result,
            )
        )
        return result

    def render(self, result: dict[str, Any]) -> str:
        """The tool message content the model sees: JSON, capped head and tail."""
        return encodable(cap_middle(json.dumps(result, ensure_ascii=False, default=str)))

    def _once_per_turn(self, call_id: str, call: Call) -> dict[str, Any]:
        """Dispatch, unless this turn already made the very same call (a model stutter)."""
        key = call.key
        if key in self.turn:
            first_id, first = self.turn[key]
            return {
                **first,
                "duplicate_of": first_id,
                "note": f"Same call as {first_id} in this turn: it ran once, and this is its result.",
            }
        result = self._dispatch(call)
        self.turn[key] = (call_id, result)
        return result

    # -- dispatch ----------------------------------------------------------------------

    def _dispatch(self, call: Call) -> dict[str, Any]:
        ctx, name, args = self.ctx, call.name, call.arguments
        refusal = self.guards.before_call(ctx, call)
        if refusal is not None:
            return refusal
        if name in self.meta_names():
            schema, handler = META_TOOLS[name]
            parameters = schema["function"]["parameters"]
            coerced = coerce_arguments(parameters, args)
            problems = argument_problems(parameters, coerced)
            if problems:
                return {"ok": False, "error": f"Bad arguments for {name}: {'; '.join(problems)}."}
            return self._contained(name, lambda: handler(ctx, coerced))
        if name in ctx.unlocked:
            tool = ctx.unlocked[name]
            return self._contained(name, lambda: self._call_library(tool, args))
        return self._unknown(name)

    @staticmethod
    def _contained(name: str, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Run a tool path; whatever goes wrong becomes a result, unless the user must act."""
        try:
            return run()
        except SandboxError:
            raise  # the sandbox itself cannot run: the user must fix the machine or the setting
        except ToolsmithError as exc:
            return {"ok": False, "error": f"{name} failed: {exc}"}
        except Exception as exc:  # a bug in a tool path must not end the task
            return {"ok": False, "error": f"{name} failed unexpectedly: {type(exc).__name__}: {exc}"}

    def _unknown(self, name: str) -> dict[str, Any]:
        ctx = self.ctx
        if name == "create_tool":
            return {"ok": False, "error": "create_tool is disabled in this run (--no-create)."}
        offered = self.meta_names() + list(ctx.unlocked)
        available = ", ".join(offered)
        if not name.strip():
            return {"ok": False, "error": f"The tool call has no function name. Available tools: {available}."}
        close = difflib.get_close_matches(name, offered, n=1, cutoff=0.6)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        return {"ok": False, "error": f"There is no tool named {name!r}.{hint} Available tools: {available}."}

    # -- library tools -----------------------------------------------------------------

    def _call_library(self, tool: ToolVersion, args: dict[str, Any]) -> dict[str, Any]:
        ctx = self.ctx
        call = call_stored_tool(
            tool,
            args,
            library=ctx.library,
            runner=ctx.sandbox,
            actor=f"agent:{ctx.session_id}",
            quarantine_after=ctx.settings.quarantine_after,
            warm=True,  # a stored tool is called again and again
        )
        payload = call.payload()
        if call.outcome.blame is Blame.TOOL:
            ctx.failed_library_tools.add(tool.name)
            if ctx.allow_create:
                payload["repair"] = (
                    f"You may repair it: verify a fix with code_interpreter, then create_tool with the "
                    f"same name {tool.name!r} to store a new version."
                )
        return payload


def summarize(result: dict[str, Any], limit: int = 160) -> str:
    """A one-line summary of a tool result for progress displays."""
    if not result.get("ok"):
        text = str(result.get("error") or "failed")
    elif "result" in result:
        text = json.dumps(result["result"], ensure_ascii=False, default=str)
    elif "stdout" in result:
        text = str(result.get("stdout") or result.get("note") or "").strip() or "(no output)"
    elif "results" in result:
        names = [str(r.get("name") or r.get("title") or r.get("url")) for r in result["results"][:4]]
        text = f"{len(result['results'])} result(s): " + ", ".join(names) if names else "no results"
    elif "text" in result:
        text = str(result.get("title") or result.get("final_url") or "") + f" ({len(str(result['text']))} chars)"
    else:
        text = str(result.get("note") or "ok")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
