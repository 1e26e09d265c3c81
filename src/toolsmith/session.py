"""A session: one run of one or more tasks, with everything it needs wired together.

:func:`run_session` resolves the model provider, opens the user's library (moving the
old one aside with ``fresh``), picks the sandbox, runs the agent over the tasks in
order and writes the trajectory file. The CLI's ``run`` and ``demo`` commands are thin
layers over it, and so is anything else that wants the whole agent in one call.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsmith.agent import Agent
from toolsmith.config import Settings
from toolsmith.errors import ModelConfigError
from toolsmith.events import Event, EventSink, ModelRetry, TaskStarted, null_sink
from toolsmith.library import ToolLibrary
from toolsmith.model import Model
from toolsmith.model.client import ChatModel
from toolsmith.providers import ProviderConfig, resolve_provider
from toolsmith.redaction import Redactor
from toolsmith.sandbox import Sandbox
from toolsmith.trajectory import TaskResult, TrajectoryWriter, reuse_held


@dataclass
class SessionReport:
    """What a session did: per-task results, the reuse verdict and where it was recorded."""

    session_id: str
    model: str
    provider: dict[str, Any]
    results: list[TaskResult]
    trajectory_path: Path | None
    backend: str
    fresh_backup: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def reuse_held(self) -> bool:
        return reuse_held(self.results)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "model": self.model,
            "provider": self.provider,
            "sandbox_backend": self.backend,
            "tasks": [r.task for r in self.results],
            "answers": [r.answer for r in self.results],
            "results": [r.summary() for r in self.results],
            "trajectories": [[a.to_dict() for a in r.actions] for r in self.results],
            "reuse": {
                "held": self.reuse_held,
                "per_task": [r.reuse_verdict() for r in self.results],
            },
            "trajectory_file": str(self.trajectory_path) if self.trajectory_path else None,
            **self.extra,
        }


def fresh_library(settings: Settings) -> Path | None:
    """Move the existing library aside (never delete it) so evolution starts from zero."""
    db = settings.db_path
    if not db.exists():
        return None
    backup = db.with_name(f"library.{time.strftime('%Y%m%dT%H%M%S')}.bak.db")
    for suffix in ("-wal", "-shm"):
        side = db.with_name(db.name + suffix)
        if side.exists():
            side.rename(backup.with_name(backup.name + suffix))
    db.rename(backup)
    return backup


def make_model(config: ProviderConfig, settings: Settings, sink: EventSink, current_task: dict[str, int]) -> Model:
    """The real chat model, reporting its retries as events of the task being run."""

    def on_retry(attempt: int, delay: float, reason: str) -> None:
        sink(ModelRetry(task=current_task.get("task", 0), attempt=attempt, delay_s=round(delay, 2), reason=reason))

    return ChatModel(config, prices=settings.prices, on_retry=on_retry)


def run_session(
    tasks: list[str],
    *,
    settings: Settings,
    model_name: str | None = None,
    fresh: bool = False,
    allow_create: bool = True,
    on_event: EventSink = null_sink,
    env: Mapping[str, str] | None = None,
    model: Model | None = None,
    provider: ProviderConfig | None = None,
) -> SessionReport:
    """Run ``tasks`` in order against the user's library and record the trajectory."""
    config = provider or (resolve_provider(env, model=model_name) if model is None else None)
    session_id = uuid.uuid4().hex[:12]
    redactor = Redactor.from_environment(env)
    backup = fresh_library(settings) if fresh else None
    writer = TrajectoryWriter(settings.trajectories_dir, session_id, redactor)
    current_task = {"task": 0}

    def sink(event: Event) -> None:
        if isinstance(event, TaskStarted):
            current_task["task"] = event.task
        writer.event(event)
        on_event(event)

    if model is not None:
        chat = model
    else:
        assert config is not None
        chat = make_model(config, settings, sink, current_task)
    library = ToolLibrary.open(settings)
    try:
        sandbox = Sandbox(settings)
        sandbox.prepare()  # a not-isolated warning goes before the trace, not inside it
        agent = Agent(
            model=chat,
            library=library,
            sandbox=sandbox,
            settings=settings,
            allow_create=allow_create,
            on_event=sink,
            session_id=session_id,
        )
        results: list[TaskResult] = []
        for index, task in enumerate(tasks):
            try:
                result = agent.run_task(task, index=index)
            except ModelConfigError as exc:
                # Later tasks would fail the same way; keep the record of this one and say where.
                if agent.last_result is not None:
                    writer.task(agent.last_result)
                raise ModelConfigError(
                    f"{exc} The trajectory so far is in {writer.path}.", setting=exc.setting or "LLM_API_KEY"
                ) from exc
            writer.task(result)
            results.append(result)
    finally:
        library.close()
        writer.close()
    return SessionReport(
        session_id=session_id,
        model=chat.name,
        provider=config.to_dict() if config else {"provider": "in-process"},
        results=results,
        trajectory_path=writer.path,
        backend=sandbox.backend.name,
        fresh_backup=backup,
    )


def write_output(path: Path, data: dict[str, Any], redactor: Redactor | None = None) -> None:
    """Write the ``--output`` JSON atomically, with secrets redacted."""
    redactor = redactor or Redactor.from_environment()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(redactor.data(data), ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    tmp.replace(path)
