"""The records of a run: one tool call (:class:`Action`) and one finished task (:class:`TaskResult`).

Plain data with no services attached, so the trajectory writer, the CLI and the
benchmarks can read and write them without importing the gate, the library or the
sandbox. The reuse verdict, which the demo's exit code rests on, is computed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsmith.events import Event


@dataclass(frozen=True)
class Action:
    """One tool call in a task's trajectory."""

    name: str
    arguments: Any
    ok: bool
    origin: str = "model"  # model | program
    library: bool = False
    version: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Action:
        version = data.get("version")
        return cls(
            name=str(data.get("tool") or "?"),
            arguments=data.get("arguments"),
            ok=bool(data.get("ok")),
            origin=str(data.get("origin") or "model"),
            library=bool(data.get("library")),
            version=version if isinstance(version, int) else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.name,
            "arguments": self.arguments,
            "ok": self.ok,
            "origin": self.origin,
            "library": self.library,
            "version": self.version,
        }


@dataclass
class TaskResult:
    """Everything about one finished task."""

    index: int
    task: str
    answer: str
    status: str  # answered | budget | error
    error: str | None = None
    actions: list[Action] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    model_calls: int = 0
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    tokens_estimated: bool = False  # an endpoint reported no usage for some call
    cost: float | None = None
    prompt_chars: int = 0
    wall_s: float = 0.0
    # The model names the endpoint's replies reported (the served model, which a local
    # server may pick whatever the request named), in order of first use.
    models: list[str] = field(default_factory=list)

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
            "tokens": {
                "prompt": self.prompt_tokens,
                "completion": self.completion_tokens,
                "total": self.total_tokens,
                "estimated": self.tokens_estimated,
            },
            "cost": self.cost,
            "models": self.models,
            "prompt_chars": self.prompt_chars,
            "wall_s": round(self.wall_s, 3),
            "reuse": self.reuse_verdict(),
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> TaskResult:
        """The task a trajectory's ``task`` line records (its summary and actions; the events
        are lines of their own). Raises ``ValueError`` for a line that is not one."""
        raw_tokens = data.get("tokens")
        tokens: Mapping[str, Any] = raw_tokens if isinstance(raw_tokens, Mapping) else {}
        actions = [Action.from_dict(a) for a in data.get("actions") or [] if isinstance(a, Mapping)]
        messages = [m for m in data.get("messages") or [] if isinstance(m, dict)]
        try:
            return cls(
                index=int(data["index"]),
                task=str(data.get("task") or ""),
                answer=str(data.get("answer") or ""),
                status=str(data.get("status") or "error"),
                error=None if data.get("error") is None else str(data["error"]),
                actions=actions,
                messages=messages,
                created=[str(ref) for ref in data.get("created") or []],
                model_calls=int(data.get("model_calls") or 0),
                steps=int(data.get("steps") or 0),
                prompt_tokens=int(tokens.get("prompt") or 0),
                completion_tokens=int(tokens.get("completion") or 0),
                total_tokens=int(tokens.get("total") or 0),
                tokens_estimated=bool(tokens.get("estimated")),
                cost=None if data.get("cost") is None else float(data["cost"]),
                prompt_chars=int(data.get("prompt_chars") or 0),
                wall_s=float(data.get("wall_s") or 0.0),
                models=[str(m) for m in data.get("models") or []],
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a task record: {exc}") from exc

    def to_dict(self) -> dict[str, Any]:
        """The summary plus the action list. The events are not repeated here: the
        trajectory file already holds each as its own line, written as it happened."""
        data = self.summary()
        data["actions"] = [a.to_dict() for a in self.actions]
        return data


def reuse_held(results: list[TaskResult]) -> bool:
    """With two or more tasks: every task after the first reused a stored tool."""
    return len(results) >= 2 and all(r.reuse_verdict()["reused"] for r in results[1:])
