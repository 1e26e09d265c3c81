"""The agent loop: model turns, tool calls and the guards, for one task at a time.

:class:`Agent` owns the conversation with the model. Before the first model call it can
search the library for the task itself (pre-retrieval), so a reuse task needs only two
model calls: call the tool, then answer. Each turn it offers the toolbox's current
tools, makes the reply usable (:mod:`toolsmith.model.replies`), executes the model's tool calls
in order through the :class:`Toolbox`, and stops at a final answer, a budget, or a model
error. An answer first passes the program's reminders (nudge, language, grounding), each
bounded, and none once the budget is spent. Everything it does is an event; it never
prints.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsmith.agent import prompts
from toolsmith.agent.context import TaskContext, WebAccess
from toolsmith.agent.guards import Draft, Guard, GuardSet, standard_guards
from toolsmith.agent.toolbox import Toolbox
from toolsmith.calls import Origin
from toolsmith.config import Settings
from toolsmith.errors import ModelConfigError, ModelError, ModelResponseError, ModelRetryExhausted, ModelTimeoutError
from toolsmith.events import (
    Event,
    EventSink,
    FinalAnswer,
    ModelUsage,
    StepStarted,
    TaskFinished,
    TaskStarted,
    null_sink,
)
from toolsmith.gate.core import Gate
from toolsmith.library import SearchHit, Status, ToolLibrary, ToolVersion
from toolsmith.model import Model, ModelReply, Usage
from toolsmith.model.replies import normalise_reply, strip_thinking
from toolsmith.records import TaskResult
from toolsmith.redaction import encodable
from toolsmith.sandbox import CodeRunner


def _model_failure(exc: ModelError) -> str:
    """How a task's answer names a model failure: "could not be reached" only when true."""
    if isinstance(exc, ModelRetryExhausted) and not exc.reached:
        return "The model could not be reached"
    if isinstance(exc, ModelTimeoutError):
        return "The model did not answer in time"
    if isinstance(exc, ModelResponseError):
        return "The model endpoint sent an unusable answer"
    return "The model call failed"


def _last_used(tool: ToolVersion) -> str:
    """When a tool was last called or, never called, created (ISO times sort as text)."""
    return max(tool.stats.last_called_at or "", tool.provenance.created_at or "")


def default_web(settings: Settings) -> WebAccess:
    """The real web meta-tools, bound to the settings."""
    from toolsmith.web.read import read_webpage
    from toolsmith.web.search import web_search

    return WebAccess(
        search=lambda query, n: web_search(query, n, settings=settings),
        read=lambda url, **view: read_webpage(url, settings=settings, **view),
    )


@dataclass
class _Loop:
    """Mutable bookkeeping of one task's loop."""

    ctx: TaskContext
    toolbox: Toolbox
    messages: list[dict[str, Any]]
    events: list[Event] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0
    prompt_chars: int = 0
    call_ids: set[str] = field(default_factory=set)  # every tool call id used in this task


class Agent:
    """Runs tasks against a model, a tool library and a sandbox."""

    def __init__(
        self,
        *,
        model: Model,
        library: ToolLibrary,
        sandbox: CodeRunner,
        settings: Settings,
        web: WebAccess | None = None,
        allow_create: bool = True,
        pre_retrieval: bool | None = None,
        on_event: EventSink = null_sink,
        session_id: str | None = None,
        guards: Sequence[Guard[Any]] | None = None,
    ) -> None:
        self.model = model
        self.library = library
        self.sandbox = sandbox
        self.settings = settings
        self.web = web or default_web(settings)
        self.allow_create = allow_create
        self.pre_retrieval = settings.pre_retrieval if pre_retrieval is None else pre_retrieval
        self.on_event = on_event
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self.gate = Gate(runner=sandbox)
        self.guards = GuardSet(standard_guards() if guards is None else guards)
        self.last_result: TaskResult | None = None  # also set when a task ends by raising

    def run(self, tasks: list[str]) -> list[TaskResult]:
        return [self.run_task(task, index=i) for i, task in enumerate(tasks)]

    def run_task(self, task: str, *, index: int = 0) -> TaskResult:
        self.last_result = None
        loop = self._start(encodable(task), index)
        status, answer, error = "error", "", None
        try:
            status, answer = self._turns(loop)
        except ModelConfigError as exc:
            # A wrong key, model or URL: the user must fix it, and retrying tasks is
            # pointless. The task is still finished, so its record can be written.
            self._finish(loop, "error", f"The model endpoint refused the run: {exc}", str(exc))
            raise
        except ModelError as exc:
            error = str(exc)
            answer = f"{_model_failure(exc)}: {exc}"
        return self._finish(loop, status, answer, error)

    # -- phases ------------------------------------------------------------------------

    def _start(self, task: str, index: int) -> _Loop:
        events: list[Event] = []

        def emit(event: Event) -> None:
            events.append(event)
            self.on_event(event)

        ctx = TaskContext(
            task=task,
            index=index,
            session_id=self.session_id,
            model_name=self.model.name,
            settings=self.settings,
            library=self.library,
            sandbox=self.sandbox,
            gate=self.gate,
            web=self.web,
            allow_create=self.allow_create,
            emit=emit,
        )
        loop = _Loop(
            ctx=ctx,
            toolbox=Toolbox(ctx, self.guards),
            events=events,
            messages=[
                {
                    "role": "system",
                    "content": prompts.system_prompt(
                        self.settings.max_calls_per_turn, pre_retrieval=self.pre_retrieval
                    ),
                },
                {"role": "user", "content": task},
            ],
        )
        ctx.send(TaskStarted(task=index, text=task, session_id=self.session_id))
        hits = self._pre_retrieve(loop) if self.pre_retrieval else None
        listed = self._catalogue(loop)
        notes = (
            [prompts.pre_retrieval_note(hits, library_size=len(self.library), listed=bool(listed))]
            if hits is not None
            else []
        )
        loop.messages[1]["content"] = "\n\n".join([task, *notes, *([listed] if listed else [])])
        return loop

    def _catalogue(self, loop: _Loop) -> str:
        """A small library is listed whole in the first request, so the model matches across
        languages and paraphrases itself; of a larger one, its most recently used tools,
        which are the likeliest to serve a task that search missed (another language). The
        listed tools are unlocked. Returns the note ("" when nothing is listed)."""
        limit, size = self.settings.catalogue_max_tools, len(self.library)
        if limit <= 0 or not size:
            return ""
        tools = [t for t in self.library.list_tools() if t.status is Status.ACTIVE]
        head = prompts.CATALOGUE_HEAD
        if size > limit:
            shown = loop.ctx.unlocked  # search hits are in the note already
            tools = sorted((t for t in tools if t.name not in shown), key=_last_used, reverse=True)[:limit]
            head = prompts.recent_head(size)
        if not tools:
            return ""
        for tool in tools:
            loop.ctx.unlock(tool)  # shown by the program, as a search hit would be
        return prompts.catalogue_note(
            [(t.name, t.spec.description) for t in tools], self.settings.catalogue_max_chars, head
        )

    def _pre_retrieve(self, loop: _Loop) -> list[SearchHit]:
        """Search the library for the task before the model speaks; the hits are unlocked."""
        outcome = loop.toolbox.call("pre-retrieval", "search_tools", {"query": loop.ctx.task}, origin=Origin.PROGRAM)
        return list(loop.ctx.last_hits) if outcome.ok else []

    def _turns(self, loop: _Loop) -> tuple[str, str]:
        ctx = loop.ctx
        while True:
            exhausted = self._budget_exhausted(loop)
            if exhausted:
                return "budget", prompts.BUDGET_ANSWER.format(which=exhausted)
            ctx.step += 1
            ctx.send(StepStarted(task=ctx.index, step=ctx.step))
            reply = self._complete(loop)
            loop.messages.append(reply.assistant_message())
            if reply.tool_calls:
                self._run_calls(loop, reply)
                continue
            answer = strip_thinking(reply.content or "")
            # A reminder the model has no call left to act on would only discard its answer.
            spent = self._budget_exhausted(loop) is not None
            reminder = None if spent else self._reminder(loop, answer, reply.finish_reason)
            if reminder is None:
                return ("answered", answer) if answer else ("error", "The model gave no answer.")
            loop.messages.append({"role": "user", "content": reminder})

    def _run_calls(self, loop: _Loop, reply: ModelReply) -> None:
        """Execute one turn's tool calls in order and append their results."""
        outcomes = loop.toolbox.run_turn(
            reply.tool_calls,
            truncated=reply.finish_reason == "length",
            last_call=self.settings.max_steps - loop.model_calls == 1,
        )
        for call, outcome in zip(reply.tool_calls, outcomes, strict=True):
            loop.messages.append({"role": "tool", "tool_call_id": call.id, "content": loop.toolbox.render(outcome)})

    def _complete(self, loop: _Loop) -> ModelReply:
        tools = loop.toolbox.schemas()
        chars = sum(len(str(m.get("content") or "")) for m in loop.messages) + len(str(tools))
        started = time.monotonic()
        reply = self.model.complete(loop.messages, tools)
        offered = [str(t.get("function", {}).get("name")) for t in tools]
        reply = normalise_reply(reply, offered, loop.call_ids)
        if reply.model:  # what the endpoint says answered, which provenance records
            loop.ctx.served_model = reply.model
        loop.model_calls += 1
        loop.prompt_chars += chars
        loop.usage = loop.usage + reply.usage
        u = reply.usage
        loop.ctx.send(
            ModelUsage(
                task=loop.ctx.index,
                step=loop.ctx.step,
                model=reply.model or self.model.name,
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                total_tokens=u.total_tokens,
                cost=u.cost,
                wall_s=round(time.monotonic() - started, 4),
                prompt_chars=chars,
                estimated=u.estimated,
            )
        )
        return reply

    def _reminder(self, loop: _Loop, answer: str, finish_reason: str | None) -> str | None:
        """A guard's reminder instead of accepting this reply as the answer, if one is due."""
        return self.guards.before_answer(loop.ctx, Draft(answer, finish_reason, loop.messages))

    def _budget_exhausted(self, loop: _Loop) -> str | None:
        settings = self.settings
        if loop.model_calls >= settings.max_steps:
            return f"max steps {settings.max_steps}"
        if settings.max_tokens and loop.usage.total_tokens >= settings.max_tokens:
            return f"max tokens {settings.max_tokens}"
        if settings.max_wall_s and time.monotonic() - loop.ctx.started >= settings.max_wall_s:
            return f"max wall time {settings.max_wall_s:g} s"
        return None

    def _finish(self, loop: _Loop, status: str, answer: str, error: str | None) -> TaskResult:
        ctx = loop.ctx
        wall = time.monotonic() - ctx.started
        ctx.send(FinalAnswer(task=ctx.index, text=answer, status=status))
        result = TaskResult(
            index=ctx.index,
            task=ctx.task,
            answer=answer,
            status=status,
            error=error,
            actions=list(ctx.actions),
            events=loop.events,
            messages=loop.messages,
            created=[t.ref for t in ctx.created],
            model_calls=loop.model_calls,
            steps=ctx.step,
            prompt_tokens=loop.usage.prompt_tokens,
            completion_tokens=loop.usage.completion_tokens,
            total_tokens=loop.usage.total_tokens,
            tokens_estimated=loop.usage.estimated,
            cost=loop.usage.cost,
            prompt_chars=loop.prompt_chars,
            wall_s=wall,
            models=list(dict.fromkeys(e.model for e in loop.events if isinstance(e, ModelUsage))),
        )
        self.last_result = result
        ctx.send(
            TaskFinished(
                task=ctx.index,
                status=status,
                steps=ctx.step,
                model_calls=loop.model_calls,
                total_tokens=loop.usage.total_tokens,
                cost=loop.usage.cost,
                wall_s=round(wall, 3),
                outcome=result.outcome,
                tokens_estimated=loop.usage.estimated,
            )
        )
        return result
