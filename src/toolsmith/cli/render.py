"""Rendering agent events for people and scripts.

Three renderers share one interface (``__call__(event)`` plus ``close()``):

* :class:`RichRenderer` for a terminal: styled step lines and a spinner while the model
  thinks, which counts a streamed answer as it arrives (counts that stop growing mean a
  stall, not a slow answer);
* :class:`PlainRenderer` when output is piped: the same lines, no colour, no spinner
  (streaming progress only with ``--verbose``);
* :class:`JsonRenderer` for ``--json``: one JSON object per event and line.

They only read events; the agent never knows which one is listening.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.status import Status

from toolsmith.calls import Origin
from toolsmith.cli.common import visible
from toolsmith.events import (
    Event,
    FinalAnswer,
    GuardFired,
    ModelProgress,
    ModelRetry,
    ModelUsage,
    StepStarted,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolResult,
)
from toolsmith.redaction import Redactor


def short(value: Any, limit: int = 70) -> str:
    """A one-line, bounded rendering of tool arguments."""
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, default=str)
            text = " ".join(str(text).split())
            parts.append(f"{key}={text[:40] + '…' if len(text) > 40 else text}")
        value = ", ".join(parts)
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PlainRenderer:
    """Plain text lines, suitable for pipes and logs."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        verbose: bool = False,
        quiet: bool = False,
        redactor: Redactor | None = None,
    ) -> None:
        self.stream = stream or sys.stdout
        self.verbose = verbose
        self.quiet = quiet
        self.redactor = redactor or Redactor.from_environment()
        self.tokens = 0  # running total for the current task

    def line(self, event: Event) -> str | None:
        if isinstance(event, TaskStarted):
            self.tokens = 0
            return f"\n== task {event.task + 1}: {event.text}"
        if isinstance(event, StepStarted):
            return f"  step {event.step}" if self.verbose else None
        if isinstance(event, ModelUsage):
            self.tokens += event.total_tokens
            return (
                f"    model {event.model}: {_about(event.estimated)}{event.total_tokens} tokens, {event.wall_s:.2f}s"
                if self.verbose
                else None
            )
        if isinstance(event, ModelProgress):
            return f"    model answering: {progress_text(event)}" if self.verbose else None
        if isinstance(event, ModelRetry):
            return f"    model retry {event.attempt} in {event.delay_s:.1f}s: {event.reason}"
        if isinstance(event, ToolCalled):
            call = event.call
            tags = (" [program]" if call.origin is Origin.PROGRAM else "") + (
                " [library tool]" if event.library else ""
            )
            return f"  → {call.name}({short(call.arguments)}){tags}"
        if isinstance(event, ToolResult):
            mark = "ok" if event.ok else "FAILED"
            return f"    ← {mark} in {event.wall_s:.2f}s, {self.tokens:,} tokens so far: {event.summary}"
        if isinstance(event, GuardFired):
            return f"  ! guard {event.guard} {event.hook.verb}: {short(event.message, 160)}"
        if isinstance(event, FinalAnswer):
            return f"  = answer ({event.status}): {event.text}"
        if isinstance(event, TaskFinished):
            return (
                f"  summary: {event.outcome}, {event.model_calls} model calls, {event.steps} steps, "
                f"{_about(event.tokens_estimated)}{event.total_tokens:,} tokens{_cost(event.cost)}, {event.wall_s:.2f}s"
            )
        return None

    def __call__(self, event: Event) -> None:
        if self.quiet and not isinstance(event, (FinalAnswer, TaskFinished)):
            return
        text = self.line(event)
        if text is not None:
            # A task, an answer or a tool's output may hold escape sequences: shown, never obeyed.
            print(visible(self.redactor.text(text)), file=self.stream, flush=True)

    def close(self) -> None:
        """Nothing to release for plain output."""


class RichRenderer(PlainRenderer):
    """Styled lines for a terminal, with a spinner while waiting on the model or a tool."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        verbose: bool = False,
        quiet: bool = False,
        redactor: Redactor | None = None,
    ) -> None:
        super().__init__(verbose=verbose, quiet=quiet, redactor=redactor)
        self.console = console or Console(highlight=False)
        self._status: Status | None = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, ModelProgress):
            if self._status is not None:
                self._status.update(_Ticking(f"model is answering… {progress_text(event)}"))
            return
        self._stop_spinner()
        if self.quiet and not isinstance(event, (FinalAnswer, TaskFinished)):
            return
        text = self.line(event)
        if text is not None:
            self.console.print(self._style(event, escape(visible(self.redactor.text(text)))))
        if isinstance(event, (StepStarted, ToolResult)):
            self._spin("model is thinking…")
        elif isinstance(event, ToolCalled):
            self._spin(f"running {event.call.name}…")

    @staticmethod
    def _style(event: Event, text: str) -> str:
        if isinstance(event, TaskStarted):
            return f"[bold cyan]{text}[/]"
        if isinstance(event, ToolResult):
            return f"[green]{text}[/]" if event.ok else f"[red]{text}[/]"
        if isinstance(event, GuardFired):
            return f"[yellow]{text}[/]"
        if isinstance(event, FinalAnswer):
            return f"[bold]{text}[/]"
        if isinstance(event, TaskFinished):
            return f"[dim]{text}[/]"
        return text

    def _spin(self, message: str) -> None:
        if self.console.is_terminal and not self.quiet:
            self._status = self.console.status(_Ticking(message))
            self._status.start()

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def close(self) -> None:
        self._stop_spinner()


class _Ticking:
    """Spinner text with the seconds since it was set, redrawn by rich's own refresh: a wait
    shows time passing even while no event arrives (counts that stop growing = a stall)."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.since = time.monotonic()

    def __rich__(self) -> str:
        return f"{escape(self.message)} [dim]{time.monotonic() - self.since:.0f}s[/]"

    def __str__(self) -> str:
        return self.message


class JsonRenderer:
    """One JSON object per event and line, for scripts."""

    def __init__(self, stream: TextIO | None = None, *, redactor: Redactor | None = None) -> None:
        self.stream = stream or sys.stdout
        self.redactor = redactor or Redactor.from_environment()
        self.tokens = 0  # running total for the current task

    def __call__(self, event: Event) -> None:
        record = self.redactor.data(event.to_dict())
        print(json.dumps(record, ensure_ascii=False, default=str), file=self.stream, flush=True)

    def close(self) -> None:
        """Nothing to release for JSON output."""


def make_renderer(*, json_mode: bool, verbose: bool, quiet: bool) -> PlainRenderer | JsonRenderer:
    if json_mode:
        return JsonRenderer()
    console = Console(highlight=False, soft_wrap=True)
    if console.is_terminal:
        return RichRenderer(console, verbose=verbose, quiet=quiet)
    return PlainRenderer(verbose=verbose, quiet=quiet)


def progress_text(event: ModelProgress) -> str:
    """``1,234 chars (+56 reasoning), 2 tool calls, 80 chunks in 12.3s``."""
    text = f"{event.chars:,} chars"
    if event.reasoning_chars:
        text += f" (+{event.reasoning_chars:,} reasoning)"
    if event.tool_calls:
        text += f", {event.tool_calls} tool call{'s' if event.tool_calls != 1 else ''}"
    return f"{text}, {event.chunks:,} chunks in {event.elapsed_s:.1f}s"


def _about(estimated: bool) -> str:
    """'~' before a token count estimated from characters (the endpoint reported none)."""
    return "~" if estimated else ""


def _cost(cost: float | None) -> str:
    return f", cost {cost:.4f}" if cost is not None else ""
