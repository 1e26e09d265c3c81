"""The toolbox: what one task can call, and the single door every call goes through.

The toolbox offers the five meta-tools (four under ``--no-create``) plus the library
tools unlocked in this task, and turns every :class:`~toolsmith.calls.Call` into an
:class:`~toolsmith.calls.Outcome`. Whatever the model sends (malformed JSON, an unknown or
locked tool, wrong types, missing arguments), the outcome is an error it can act on;
nothing here raises into the loop. The model reads each outcome as JSON
(:meth:`Toolbox.render`). Library tools are called through :mod:`toolsmith.service.toolcall`
(strict arguments, the sandbox run, health, quarantine), like every other caller of a
stored tool.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from toolsmith.agent import prompts
from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards import GuardSet
from toolsmith.agent.metatools import code_interpreter, create_tool, read_webpage, search_tools, web_search
from toolsmith.calls import META_TOOL_NAMES, Blame, Call, FailureKind, Note, NoteKind, Origin, Outcome
from toolsmith.errors import SandboxError, ToolsmithError
from toolsmith.events import ToolCalled, ToolResult
from toolsmith.library import ToolVersion
from toolsmith.library.schema import argument_problems, coerce_arguments
from toolsmith.model import ToolCallRequest
from toolsmith.model.replies import parse_arguments
from toolsmith.records import Action
from toolsmith.redaction import encodable
from toolsmith.service import rollback
from toolsmith.service.toolcall import call_stored_tool

Handler = Callable[[TaskContext, dict[str, Any]], Outcome]
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
        self.turn: dict[str, tuple[str, Outcome]] = {}  # this turn's calls, by content

    def meta_names(self) -> list[str]:
        return [n for n in META_TOOLS if n != "create_tool" or self.ctx.allow_create]

    def schemas(self) -> list[dict[str, Any]]:
        """Function definitions offered to the model right now."""
        meta = [META_TOOLS[name][0] for name in self.meta_names()]
        return meta + [tool.openai_schema() for tool in self.ctx.unlocked.values()]

    def run_turn(self, requests: Sequence[ToolCallRequest], *, truncated: bool, last_call: bool) -> list[Outcome]:
        """Run one model reply's tool calls in order. Identical calls in one reply run once;
        ``last_call`` adds the budget note to the last outcome before anyone sees it."""
        self.turn = {}
        outcomes = []
        for number, request in enumerate(requests, 1):
            extra = (Note(NoteKind.BUDGET, prompts.LAST_CALL_NOTE),) if last_call and number == len(requests) else ()
            outcomes.append(self.call(request.id, request.name, request.arguments, truncated=truncated, extra=extra))
        return outcomes

    def call(
        self,
        call_id: str,
        name: str,
        raw_arguments: Any,
        *,
        origin: Origin = Origin.MODEL,
        truncated: bool = False,
        extra: tuple[Note, ...] = (),
    ) -> Outcome:
        """Run one tool call and return its outcome (never raises for the model's mistakes)."""
        ctx = self.ctx
        args, parse_error = parse_arguments(raw_arguments)
        call = Call(name, args if parse_error is None else str(raw_arguments), id=call_id, origin=origin)
        is_library = name in ctx.unlocked and name not in META_TOOLS
        ctx.send(ToolCalled(task=ctx.index, step=ctx.step, call=call, library=is_library))
        started = time.monotonic()
        if parse_error is not None:
            hint = (Note(NoteKind.HINT, TRUNCATED_HINT),) if truncated else ()
            outcome = Outcome.failed(
                f"The arguments for {name} are not valid JSON ({parse_error}). "
                "Send one JSON object that matches the tool's parameters.",
                FailureKind.BAD_ARGUMENTS,
                notes=hint,
            )
        else:
            outcome = self._once_per_turn(call)
        outcome = self.guards.after_result(ctx, call, outcome).noted(*extra)
        reported = outcome.data.get("version")
        version = reported if is_library and isinstance(reported, int) else None
        ctx.actions.append(
            Action(
                name=name, arguments=call.arguments, ok=outcome.ok, origin=origin, library=is_library, version=version
            )
        )
        wall = round(time.monotonic() - started, 4)
        ctx.send(ToolResult(task=ctx.index, step=ctx.step, call_id=call_id, name=name, outcome=outcome, wall_s=wall))
        return outcome

    @staticmethod
    def render(outcome: Outcome) -> str:
        """The tool message content the model sees: JSON, capped head and tail."""
        return encodable(cap_middle(json.dumps(outcome.to_message(), ensure_ascii=False, default=str)))

    def _once_per_turn(self, call: Call) -> Outcome:
        """Dispatch, unless this turn already made the very same call (a model stutter)."""
        key = call.key
        if key in self.turn:
            first_id, first = self.turn[key]
            note = Note(NoteKind.NOTE, f"Same call as {first_id} in this turn: it ran once, and this is its result.")
            return Outcome(
                ok=first.ok,
                data={**first.data, "duplicate_of": first_id},
                error=first.error,
                failure=first.failure,
                refusal=first.refusal,
                notes=(*(n for n in first.notes if n.kind is not NoteKind.NOTE), note),
                summary=first.summary,
            )
        outcome = self._dispatch(call)
        self.turn[key] = (call.id, outcome)
        return outcome

    # -- dispatch ----------------------------------------------------------------------

    def _dispatch(self, call: Call) -> Outcome:
        ctx, name, args = self.ctx, call.name, call.args
        refusal = self.guards.before_call(ctx, call)
        if refusal is not None:
            return Outcome.refused(refusal)
        if name in self.meta_names():
            schema, handler = META_TOOLS[name]
            parameters = schema["function"]["parameters"]
            coerced = coerce_arguments(parameters, args)
            problems = argument_problems(parameters, coerced)
            if problems:
                return Outcome.failed(f"Bad arguments for {name}: {'; '.join(problems)}.", FailureKind.BAD_ARGUMENTS)
            return self._contained(name, lambda: handler(ctx, coerced))
        if name in ctx.unlocked:
            tool = ctx.unlocked[name]
            return self._contained(name, lambda: self._call_library(tool, args))
        return self._unknown(name)

    @staticmethod
    def _contained(name: str, run: Callable[[], Outcome]) -> Outcome:
        """Run a tool path; whatever goes wrong becomes an outcome, unless the user must act."""
        try:
            return run()
        except SandboxError:
            raise  # the sandbox itself cannot run: the user must fix the machine or the setting
        except ToolsmithError as exc:
            return Outcome.failed(f"{name} failed: {exc}")
        except Exception as exc:  # a bug in a tool path must not end the task
            return Outcome.failed(f"{name} failed unexpectedly: {type(exc).__name__}: {exc}")

    def _unknown(self, name: str) -> Outcome:
        ctx = self.ctx
        if name == "create_tool":
            return Outcome.failed("create_tool is disabled in this run (--no-create).", FailureKind.UNKNOWN_TOOL)
        offered = self.meta_names() + list(ctx.unlocked)
        available = ", ".join(offered)
        if not name.strip():
            error = f"The tool call has no function name. Available tools: {available}."
            return Outcome.failed(error, FailureKind.UNKNOWN_TOOL)
        close = difflib.get_close_matches(name, offered, n=1, cutoff=0.6)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        error = f"There is no tool named {name!r}.{hint} Available tools: {available}."
        return Outcome.failed(error, FailureKind.UNKNOWN_TOOL)

    # -- library tools -----------------------------------------------------------------

    def _call_library(self, tool: ToolVersion, args: dict[str, Any]) -> Outcome:
        ctx = self.ctx
        call = call_stored_tool(
            tool,
            args,
            library=ctx.library,
            runner=ctx.sandbox,
            actor=f"agent:{ctx.session_id}",
            quarantine_after=ctx.settings.quarantine_after,
            warm=True,  # a stored tool is called again and again
            on_quarantine=rollback.hook(
                ctx.settings, library=ctx.library, runner=ctx.sandbox, actor=f"agent:{ctx.session_id}"
            ),
        )
        outcome = call.result()
        if call.run.blame is Blame.TOOL:
            ctx.failed_library_tools.add(tool.name)
            if ctx.allow_create:
                outcome = outcome.noted(
                    Note(
                        NoteKind.REPAIR,
                        f"You may repair it: verify a fix with code_interpreter, then create_tool with the "
                        f"same name {tool.name!r} to store a new version.",
                    )
                )
        return outcome
