"""Runs: the trajectory files in the data directory, read back as tasks and steps.

A trajectory (see :mod:`toolsmith.agent.trajectory`) is JSON lines: one ``event`` line per
agent event as it happened and one ``task`` line per finished task. This module turns a
file into :class:`Run` → :class:`RunTask` → :class:`Step`, pairing each tool call with
its result. Each line is read back as the typed event or task record it stands for
(:func:`toolsmith.events.read_event`, :meth:`toolsmith.records.TaskResult.from_record`).
It reads what is there and never trusts it: a damaged line is counted and skipped, a
run cut off mid-task shows as unfinished, an oversized file is read up to a cap, and only
plain file names inside the trajectories directory can be opened.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from toolsmith.calls import Call, JSONObject, Outcome
from toolsmith.events import (
    Event,
    FinalAnswer,
    GuardFired,
    ModelRetry,
    ModelUsage,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolResult,
    read_event,
)
from toolsmith.records import TaskResult

MAX_BYTES = 32 * 1024 * 1024  # read at most this much of one trajectory
MAX_RUNS = 500  # the runs page lists the newest this many files
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.jsonl$")


@dataclass
class ToolStep:
    """One tool call and (once it returned) its outcome."""

    call: Call
    library: bool = False
    outcome: Outcome | None = None
    wall_s: float | None = None

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def ok(self) -> bool | None:
        return None if self.outcome is None else self.outcome.ok

    @property
    def summary(self) -> str:
        return "" if self.outcome is None else self.outcome.line

    @property
    def message(self) -> JSONObject | None:
        """The outcome as the model read it."""
        return None if self.outcome is None else self.outcome.to_message()


@dataclass
class Step:
    """One agent step: the model call that opened it and what followed."""

    number: int
    model: ModelUsage | None = None
    tools: list[ToolStep] = field(default_factory=list)
    guards: list[GuardFired] = field(default_factory=list)
    retries: list[ModelRetry] = field(default_factory=list)


@dataclass
class RunTask:
    """One task of a run: its steps, final answer and the recorded summary."""

    index: int
    text: str = ""
    started_at: float | None = None
    steps: dict[int, Step] = field(default_factory=dict)
    answer: str | None = None
    finished: TaskFinished | None = None
    record: TaskResult | None = None  # the ``task`` line, written when the task ended

    def step(self, number: int) -> Step:
        return self.steps.setdefault(number, Step(number))

    @property
    def ordered_steps(self) -> list[Step]:
        return [self.steps[n] for n in sorted(self.steps)]

    @property
    def status(self) -> str:
        if self.record is not None:
            return self.record.status
        return self.finished.status if self.finished else "unfinished"

    @property
    def outcome(self) -> str:
        if self.record is not None:
            return self.record.outcome
        return self.finished.outcome if self.finished else "unfinished"

    @property
    def error(self) -> str | None:
        return self.record.error if self.record is not None else None

    @property
    def created(self) -> list[str]:
        return list(self.record.created) if self.record is not None else []

    @property
    def reused(self) -> list[str]:
        return list(self.record.reuse_verdict()["library_tools_called"]) if self.record is not None else []

    @property
    def model_calls(self) -> int:
        return sum(1 for s in self.steps.values() if s.model is not None)

    @property
    def tokens(self) -> int:
        return sum(s.model.total_tokens for s in self.steps.values() if s.model)

    @property
    def tokens_estimated(self) -> bool:
        """Whether some call's count was estimated from characters (the endpoint sent none)."""
        return any(s.model.estimated for s in self.steps.values() if s.model)

    @property
    def cost(self) -> float | None:
        known = [s.model.cost for s in self.steps.values() if s.model and s.model.cost is not None]
        return sum(known) if known else None

    @property
    def guards_fired(self) -> int:
        return sum(len(s.guards) for s in self.steps.values())


@dataclass
class Run:
    """One trajectory file."""

    id: str
    path: Path
    session_id: str = ""
    tasks: list[RunTask] = field(default_factory=list)
    damaged_lines: int = 0
    truncated: bool = False

    @property
    def started_at(self) -> datetime | None:
        stamps = [t.started_at for t in self.tasks if t.started_at is not None]
        if stamps:
            return datetime.fromtimestamp(min(stamps), tz=timezone.utc)
        return None

    @property
    def tokens(self) -> int:
        return sum(t.tokens for t in self.tasks)

    @property
    def model_calls(self) -> int:
        return sum(t.model_calls for t in self.tasks)


def run_files(directory: Path) -> list[Path]:
    """The trajectory files, newest first (at most :data:`MAX_RUNS`)."""
    try:
        files = [p for p in directory.iterdir() if _RUN_ID.match(p.name) and p.is_file() and not p.is_symlink()]
    except OSError:
        return []
    files.sort(key=lambda p: p.name, reverse=True)  # names start with a UTC timestamp
    return files[:MAX_RUNS]


def run_path(directory: Path, run_id: str) -> Path | None:
    """The file for ``run_id``, or None for a name that is not a run in ``directory``."""
    if not _RUN_ID.match(run_id):
        return None
    path = directory / run_id
    if path.is_symlink() or not path.is_file():
        return None
    return path


def read_run(path: Path) -> Run:
    """Parse one trajectory file (see the module docstring for what it tolerates)."""
    run = Run(id=path.name, path=path)
    tasks: dict[int, RunTask] = {}
    for record in _records(path, run):
        kind = record.get("record")
        try:
            if kind == "task":
                result = TaskResult.from_record(record)
                task = tasks.setdefault(result.index, RunTask(result.index))
                task.record = result
                task.text = task.text or result.task
                task.answer = task.answer if task.answer is not None else result.answer
            elif kind == "event":
                event = read_event(record)
                _apply(tasks.setdefault(event.task, RunTask(event.task)), event, run)
        except ValueError:  # a line that is not what it says (EventDecodeError included)
            run.damaged_lines += 1
    run.tasks = [tasks[i] for i in sorted(tasks)]
    return run


def _records(path: Path, run: Run) -> list[JSONObject]:
    try:
        with path.open("rb") as fh:
            blob = fh.read(MAX_BYTES + 1)
    except OSError:
        run.damaged_lines += 1
        return []
    if len(blob) > MAX_BYTES:
        run.truncated = True
        blob = blob[: blob.rfind(b"\n", 0, MAX_BYTES) + 1]
    found = []
    for line in blob.decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            run.damaged_lines += 1
            continue
        if isinstance(record, dict):
            found.append(record)
        else:
            run.damaged_lines += 1
    return found


def _apply(task: RunTask, event: Event, run: Run) -> None:
    if isinstance(event, TaskStarted):
        task.text = event.text
        task.started_at = event.at
        run.session_id = run.session_id or event.session_id
    elif isinstance(event, ModelUsage):
        task.step(event.step).model = event
    elif isinstance(event, ToolCalled):
        task.step(event.step).tools.append(ToolStep(call=event.call, library=event.library))
    elif isinstance(event, ToolResult):
        _attach_result(task.step(event.step), event)
    elif isinstance(event, GuardFired):
        task.step(event.step).guards.append(event)
    elif isinstance(event, ModelRetry):
        task.step(max(task.steps, default=0)).retries.append(event)
    elif isinstance(event, FinalAnswer):
        task.answer = event.text
    elif isinstance(event, TaskFinished):
        task.finished = event


def _attach_result(step: Step, event: ToolResult) -> None:
    match = next((t for t in step.tools if t.call.id == event.call_id and t.outcome is None), None)
    if match is None:  # a result without its call (a damaged file): show it on its own
        match = ToolStep(call=Call(event.name, "", id=event.call_id))
        step.tools.append(match)
    match.outcome = event.outcome
    match.wall_s = event.wall_s


class RunStore:
    """The runs of one trajectories directory, each file parsed once until it changes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache: dict[Path, tuple[tuple[int, int], Run]] = {}
        self._lock = threading.Lock()

    def all(self) -> list[Run]:
        """Every run (newest first, at most :data:`MAX_RUNS`)."""
        files = run_files(self.directory)
        runs = [run for run in (self._load(path) for path in files) if run is not None]
        with self._lock:  # forget files that went away
            for gone in set(self._cache) - set(files):
                del self._cache[gone]
        # File names carry the start to the second only; the first event's time is finer.
        return sorted(runs, key=lambda r: (r.started_at is not None, r.started_at, r.id), reverse=True)

    def get(self, run_id: str) -> Run | None:
        path = run_path(self.directory, run_id)
        return self._load(path) if path is not None else None

    def _load(self, path: Path) -> Run | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        key = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            cached = self._cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        run = read_run(path)
        with self._lock:
            self._cache[path] = (key, run)
        return run
