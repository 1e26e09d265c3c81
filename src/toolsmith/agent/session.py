"""A session: one run of one or more tasks, with everything it needs wired together.

:class:`Session` resolves the model provider, opens the user's library (moving the old
one aside with ``fresh``; see :mod:`toolsmith.library.fresh`), picks the sandbox, runs the agent
over the tasks in order and writes the trajectory file. Its :attr:`Session.report`
holds every task done so far whatever ends the run: when a task ends by raising (a key
refused mid-run, Ctrl-C, a bug), the task is recorded with its status and error, the
stop is recorded in :attr:`SessionReport.stop` and in the trajectory (with the traceback
for a bug), and the exception goes on to the caller. :func:`run_session` is the
one-call form. The CLI's ``run`` and ``demo`` commands are thin layers over it.
"""

from __future__ import annotations

import traceback
import uuid
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from toolsmith.agent.loop import Agent
from toolsmith.agent.trajectory import TrajectoryWriter
from toolsmith.config import Settings
from toolsmith.config.providers import ProviderConfig, resolve_provider
from toolsmith.errors import ConfigError, ModelConfigError, SettingError, ToolsmithError
from toolsmith.events import Event, EventSink, ModelProgress, ModelRetry, StepStarted, TaskStarted, null_sink
from toolsmith.library import ToolLibrary
from toolsmith.library.fresh import library_in_use
from toolsmith.model import Model
from toolsmith.model.client import ChatModel
from toolsmith.model.retry import RetryPolicy
from toolsmith.model.stream import StreamProgress
from toolsmith.records import TaskResult, reuse_held
from toolsmith.redaction import Redactor
from toolsmith.sandbox import Sandbox


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
    not_run: list[str] = field(default_factory=list)  # tasks after the one the run stopped in
    stop: RunStop | None = None  # why the run ended before its last task finished

    @property
    def reuse_held(self) -> bool:
        return reuse_held(self.results)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "model": self.model,
            # What the endpoint said answered, when it differs from the name asked for.
            "served_models": list(dict.fromkeys(m for r in self.results for m in r.models)),
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
            "not_run": self.not_run,
            "stop": self.stop.to_dict() if self.stop else None,
            **self.extra,
        }


@dataclass(frozen=True)
class RunStop:
    """Why a run ended early: ``config`` (the user must change ``setting``), ``error``,
    ``interrupted`` (Ctrl-C) or ``crash`` (a bug; the traceback is in the trajectory)."""

    kind: str
    message: str
    task: int | None  # the task it stopped in; None before the first
    setting: str | None = None

    @classmethod
    def of(cls, exc: BaseException, task: int | None) -> RunStop:
        if isinstance(exc, SettingError):
            return cls("config", str(exc), task, exc.setting)
        if isinstance(exc, (ToolsmithError, OSError)):
            return cls("error", str(exc), task)
        if isinstance(exc, Exception):
            return cls("crash", f"internal error ({type(exc).__name__}: {exc})", task)
        return cls("interrupted", "interrupted" if isinstance(exc, KeyboardInterrupt) else type(exc).__name__, task)

    @property
    def status(self) -> str:
        """The stopped task's status: ``error``, ``interrupted`` or ``crashed``."""
        return {"interrupted": "interrupted", "crash": "crashed"}.get(self.kind, "error")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "task": self.task, "setting": self.setting}


def make_model(config: ProviderConfig, settings: Settings, sink: EventSink, current_task: dict[str, int]) -> Model:
    """The real chat model with the ``[model]`` settings, reporting its retries and its
    streaming progress as events of the task and step being run."""

    def on_retry(attempt: int, delay: float, reason: str) -> None:
        sink(ModelRetry(task=current_task.get("task", 0), attempt=attempt, delay_s=round(delay, 2), reason=reason))

    def on_progress(progress: StreamProgress) -> None:
        sink(ModelProgress.of(progress, task=current_task.get("task", 0), step=current_task.get("step", 0)))

    model = settings.model
    retry = RetryPolicy(
        max_attempts=model.max_attempts, total_s=model.retry_total_s, retry_timeouts=model.retry_timeouts
    )
    return ChatModel(
        config,
        prices=settings.prices,
        timeout=model.timeout_s,
        retry=retry,
        stream=model.stream,
        on_retry=on_retry,
        on_progress=on_progress,
    )


class Session:
    """One run, opened (provider, library, sandbox, trajectory) and then :meth:`run`."""

    def __init__(
        self,
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
        on_wait: Callable[[], None] | None = None,
    ) -> None:
        for task in tasks:  # before anything is opened: a too-long task costs nothing
            settings.check_task(task)
        self.tasks = list(tasks)
        config = provider or (resolve_provider(env, model=model_name) if model is None else None)
        session_id = uuid.uuid4().hex[:12]
        self._hold = ExitStack()  # the library lock and the trajectory file, until close()
        backup = self._hold.enter_context(library_in_use(settings, fresh=fresh, on_wait=on_wait))
        self._current = {"task": 0}
        self._on_event = on_event
        self.library: ToolLibrary | None = None
        try:
            self.writer = TrajectoryWriter(settings.trajectories_dir, session_id, Redactor.from_environment(env))
            self._hold.callback(self.writer.close)
            chat = model if model is not None else make_model(_require(config), settings, self._sink, self._current)
            self.library = ToolLibrary.open(settings)
            sandbox = Sandbox(settings)
            self._hold.callback(sandbox.close)  # its warm tool workers end with the session
            sandbox.prepare()  # a not-isolated warning goes before the trace, not inside it
        except BaseException:
            self.close()
            raise
        self.agent = Agent(
            model=chat, library=self.library, sandbox=sandbox, settings=settings,
            allow_create=allow_create, on_event=self._sink, session_id=session_id,
        )  # fmt: skip
        self.report = SessionReport(
            session_id=session_id,
            model=chat.name,
            provider=config.to_dict() if config else {"provider": "in-process"},
            results=[],
            trajectory_path=self.writer.path,
            backend=sandbox.backend.name,
            fresh_backup=backup,
        )

    def _sink(self, event: Event) -> None:
        if isinstance(event, TaskStarted):
            self._current["task"] = event.task
        elif isinstance(event, StepStarted):
            self._current["step"] = event.step
        if not isinstance(event, ModelProgress):  # a display aid, too many for the record
            self.writer.event(event)
        self._on_event(event)

    def run(self) -> SessionReport:
        """Run the tasks in order. A task that ends by raising is recorded, then re-raised."""
        for index, task in enumerate(self.tasks):
            try:
                result = self.agent.run_task(task, index=index)
            except BaseException as exc:
                self._stopped(index, task, exc)
                if isinstance(exc, ModelConfigError):
                    # Later tasks would fail the same way; say where the record is.
                    raise ModelConfigError(
                        f"{exc} The trajectory so far is in {self.writer.path}.", setting=exc.setting
                    ) from exc
                raise
            self.writer.task(result)
            self.report.results.append(result)
        return self.report

    def _stopped(self, index: int, task: str, exc: BaseException) -> None:
        stop = RunStop.of(exc, index)
        result = self.agent.last_result  # set when the agent finished the task before raising
        if result is None or result.index != index:
            result = TaskResult(index=index, task=task, answer="", status=stop.status, error=stop.message)
        self.writer.task(result)
        self.report.results.append(result)
        self.report.not_run = self.tasks[index + 1 :]
        self.report.stop = stop
        trace = traceback.format_exception(type(exc), exc, exc.__traceback__) if stop.kind == "crash" else None
        self.writer.stop({**stop.to_dict(), "traceback": "".join(trace) if trace else None})

    def close(self) -> None:
        if self.library is not None:
            self.library.close()
            self.library = None
        self._hold.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _require(config: ProviderConfig | None) -> ProviderConfig:
    if config is None:  # only when neither a model nor a provider was given, which resolves one
        raise ConfigError("No model provider was resolved.", setting="LLM_PROVIDER")
    return config


def run_session(tasks: list[str], *, settings: Settings, **options: Any) -> SessionReport:
    """Run ``tasks`` in order against the user's library and record the trajectory.

    ``options`` are :class:`Session`'s (model_name, fresh, allow_create, on_event, env,
    model, provider, on_wait)."""
    with Session(tasks, settings=settings, **options) as session:
        return session.run()
