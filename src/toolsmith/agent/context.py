"""Per-task state shared by the meta-tools and the guards.

One :class:`TaskContext` lives for one task. It holds the services a meta-tool needs
(library, sandbox, gate, web access) and the facts the guards decide on: whether real
output was verified, which packages were installed and pinned, which library tools
were unlocked, created or called, and which URLs were read, plus a state slot for each
guard.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from toolsmith.calls import JSONObject, JSONValue
from toolsmith.config import Settings
from toolsmith.events import Event, EventSink, null_sink
from toolsmith.gate.core import Gate
from toolsmith.library import SearchHit, ToolLibrary, ToolVersion
from toolsmith.packages.requirement import Requirement
from toolsmith.records import Action
from toolsmith.sandbox import CodeRunner

# What the web layer answers is JSON for the model (its keys differ by outcome and backend).
SearchFn = Callable[[str, JSONValue], JSONObject]  # (query, num_results)
ReadFn = Callable[..., JSONObject]  # (url, *, section=None, offset=None): only the options the model gave


@dataclass
class WebAccess:
    """How the web meta-tools reach the outside world (swappable in tests)."""

    search: SearchFn
    read: ReadFn


@dataclass
class TaskContext:
    """Everything one task knows about itself while it runs."""

    task: str
    index: int
    session_id: str
    model_name: str  # the model the request names
    settings: Settings
    library: ToolLibrary
    sandbox: CodeRunner
    gate: Gate
    web: WebAccess
    allow_create: bool = True
    emit: EventSink = null_sink
    step: int = 0
    served_model: str = ""  # the model the endpoint's latest reply says answered (may differ)
    started: float = field(default_factory=time.monotonic)
    verified_outputs: list[str] = field(default_factory=list)
    # The data lines of runs that printed them and then failed: no verification alone,
    # but a new tool whose tests expect a value printed there is tied to real output.
    failed_run_data: list[str] = field(default_factory=list)
    installed: dict[str, Requirement] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    unlocked: dict[str, ToolVersion] = field(default_factory=dict)
    created: list[ToolVersion] = field(default_factory=list)
    failed_library_tools: set[str] = field(default_factory=set)
    search_hits: set[str] = field(default_factory=set)  # every tool search_tools returned in this task
    last_hits: list[SearchHit] = field(default_factory=list)  # the latest search_tools answer
    dedup_warned: set[str] = field(default_factory=set)
    actions: list[Action] = field(default_factory=list)
    # Each guard's own state, under its name, and how often each guard stepped in
    # (see toolsmith.agent.guards); the guards alone read and write these.
    guard_state: dict[str, object] = field(default_factory=dict)
    guard_fired: Counter[str] = field(default_factory=Counter)

    @property
    def verified(self) -> bool:
        """A code_interpreter run in this task printed real output."""
        return bool(self.verified_outputs)

    @property
    def searched(self) -> bool:
        return any(a.name == "search_tools" for a in self.actions)

    @property
    def library_calls(self) -> list[Action]:
        return [a for a in self.actions if a.library]

    @property
    def used_library_tool(self) -> bool:
        return any(a.ok for a in self.library_calls)

    def called(self, name: str) -> bool:
        return any(a.name == name for a in self.actions)

    def unlock(self, tool: ToolVersion) -> None:
        self.unlocked[tool.name] = tool

    def add_source(self, url: str) -> None:
        if url and url not in self.sources:
            self.sources.append(url)

    def send(self, event: Event) -> None:
        self.emit(event)
