"""Trajectories: the record of a run and the reuse verdict.

Every run writes a JSON-lines file: one line per event as it happens (so a crash still
leaves the trajectory so far) and one ``task`` line per finished task with the whole
message transcript and usage. Every string passes through
:class:`~toolsmith.redaction.Redactor` first, so
an API key can never reach the file, whatever the model or a web page echoed (and so no
string that cannot be encoded, such as a lone surrogate, can break a write).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsmith.context import Action
from toolsmith.events import Event
from toolsmith.redaction import Redactor


@dataclass
class TaskResult:
    """Everything about one finished task."""

    index: int
    task: str
    answer: str
    status: str  # answered | budget | error
    error: str | None = None
    actions: list[Action] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    model_calls: int = 0
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None
    prompt_chars: int = 0
    wall_s: float = 0.0

    def tool_calls(self, name: str) -> list[Action]:
        return [a for a in self.actions if a.name == name]

    def reuse_verdict(self) -> dict[str, Any]:
        """Did this task reuse a stored tool? search_tools, a library tool, no building."""
        library = sorted({a.name for a in self.actions if a.library and a.ok and a.name not in self.created_names})
        verdict = {
            "search_tools_called": bool(self.tool_calls("search_tools")),
            "library_tools_called": library,
            "web_search_called": bool(self.tool_calls("web_search")),
            "create_tool_called": bool(self.tool_calls("create_tool")),
        }
        verdict["reused"] = bool(
            verdict["search_tools_called"]
            and library
            and not verdict["web_search_called"]
            and not verdict["create_tool_called"]
        )
        return verdict

    @property
    def created_names(self) -> set[str]:
        return {ref.split("@", 1)[0] for ref in self.created}

    @property
    def outcome(self) -> str:
        if self.status != "answered":
            return "failed"
        if self.created:
            return "evolved"
        if self.reuse_verdict()["reused"]:
            return "reused"
        if any(a.library and a.ok for a in self.actions):
            return "used-tool"  # a stored tool answered, but the task also searched or built
        return "answered-without-tool"

    def summary(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "task": self.task,
            "status": self.status,
            "outcome": self.outcome,
            "answer": self.answer,
            "error": self.error,
            "created": self.created,
            "steps": self.steps,
            "model_calls": self.model_calls,
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens, "total": self.total_tokens},
            "cost": self.cost,
            "prompt_chars": self.prompt_chars,
            "wall_s": round(self.wall_s, 3),
            "reuse": self.reuse_verdict(),
        }

    def to_dict(self) -> dict[str, Any]:
        """The summary plus the action list. The events are not repeated here: the
        trajectory file already holds each as its own line, written as it happened."""
        data = self.summary()
        data["actions"] = [a.to_dict() for a in self.actions]
        return data


def reuse_held(results: list[TaskResult]) -> bool:
    """With two or more tasks: every task after the first reused a stored tool."""
    return len(results) >= 2 and all(r.reuse_verdict()["reused"] for r in results[1:])


class TrajectoryWriter:
    """Appends redacted JSON lines to one trajectory file per run."""

    def __init__(self, directory: Path, session_id: str, redactor: Redactor) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.path = directory / f"{stamp}-{session_id}.jsonl"
        self.redactor = redactor
        self._fh = self.path.open("a", encoding="utf-8", errors="backslashreplace")

    def _write(self, record: dict[str, Any]) -> None:
        self._fh.write(json.dumps(self.redactor.data(record), ensure_ascii=False, default=str) + "\n")
        self._fh.flush()

    def event(self, event: Event) -> None:
        self._write({"record": "event", **event.to_dict()})

    def task(self, result: TaskResult) -> None:
        self._write({"record": "task", **result.to_dict(), "messages": result.messages})

    def stop(self, details: dict[str, Any]) -> None:
        """Why the run ended early (with the traceback when it was a bug)."""
        self._write({"record": "stop", **details})

    def close(self) -> None:
        self._fh.close()
