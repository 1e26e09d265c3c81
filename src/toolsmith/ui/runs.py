"""Runs: the trajectory files in the data directory, read back as tasks and steps.

A trajectory (see :mod:`toolsmith.agent.trajectory`) is JSON lines: one ``event`` line per
agent event as it happened and one ``task`` line per finished task. This module turns a
file into :class:`Run` → :class:`RunTask` → :class:`Step`, pairing each tool call with
its result. It reads what is there and never trusts it: a damaged line is counted and
skipped, a run cut off mid-task shows as unfinished, an oversized file is read up to a
cap, and only plain file names inside the trajectories directory can be opened.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

MAX_BYTES = 32 * 1024 * 1024  # read at most this much of one trajectory
MAX_RUNS = 500  # the runs page lists the newest this many files
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.jsonl$")


@dataclass
class ToolStep:
    """One tool call and (once it returned) its result."""

    call_id: str
    name: str
    arguments: Any
    origin: str = "model"
    library: bool = False
    ok: bool | None = None
    summary: str = ""
    wall_s: float | None = None
    data: Any = None


@dataclass
class Step:
    """One agent step: the model call that opened it and what followed."""

    number: int
    model: dict[str, Any] | None = None
    tools: list[ToolStep] = field(default_factory=list)
    guards: list[dict[str, Any]] = field(default_factory=list)
    retries: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RunTask:
    """One task of a run: its steps, final answer and the recorded summary."""

    index: int
    text: str = ""
    started_at: float | None = None
    steps: dict[int, Step] = field(default_factory=dict)
    answer: str | None = None
    finished: dict[str, Any] | None = None
    record: dict[str, Any] | None = None  # the ``task`` line, written when the task ended

    def step(self, number: int) -> Step:
        return self.steps.setdefault(number, Step(number))

    @property
    def ordered_steps(self) -> list[Step]:
        return [self.steps[n] for n in sorted(self.steps)]

    @property
    def status(self) -> str:
        if self.record is not None:
            return str(self.record.get("status", "?"))
        return str(self.finished.get("status")) if self.finished else "unfinished"

    @property
    def outcome(self) -> str:
        source = self.record or self.finished or {}
        return str(source.get("outcome") or "unfinished")

    @property
    def created(self) -> list[str]:
        return [str(x) for x in (self.record or {}).get("created") or []]

    @property
    def reused(self) -> list[str]:
        reuse = (self.record or {}).get("reuse") or {}
        return [str(x) for x in reuse.get("library_tools_called") or []]

    @property
    def model_calls(self) -> int:
        return sum(1 for s in self.steps.values() if s.model is not None)

    @property
    def tokens(self) -> int:
        return sum(int(s.model.get("total_tokens") or 0) for s in self.steps.values() if s.model)

    @property
    def tokens_estimated(self) -> bool:
        """Whether some call's count was estimated from characters (the endpoint sent none)."""
        return any(bool(s.model.get("estimated")) for s in self.steps.values() if s.model)

    @property
    def cost(self) -> float | None:
        costs = [_float(s.model.get("cost")) for s in self.steps.values() if s.model]
        known = [c for c in costs if c is not None]
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
        index = _int(record.get("index") if kind == "task" else record.get("task"))
        task = tasks.setdefault(index, RunTask(index))
        if kind == "task":
            task.record = record
            task.text = task.text or str(record.get("task") or "")
            task.answer = task.answer if task.answer is not None else record.get("answer")
        elif kind == "event":
            _apply(task, record, run)
    run.tasks = [tasks[i] for i in sorted(tasks)]
    return run


def _records(path: Path, run: Run) -> list[dict[str, Any]]:
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


def _apply(task: RunTask, event: dict[str, Any], run: Run) -> None:
    kind = event.get("type")
    step = _int(event.get("step"))
    if kind == "task_started":
        task.text = str(event.get("text") or "")
        task.started_at = _float(event.get("at"))
        run.session_id = run.session_id or str(event.get("session_id") or "")
    elif kind == "model_usage":
        task.step(step).model = event
    elif kind == "tool_called":
        task.step(step).tools.append(
            ToolStep(
                call_id=str(event.get("call_id") or ""),
                name=str(event.get("name") or "?"),
                arguments=event.get("arguments"),
                origin=str(event.get("origin") or "model"),
                library=bool(event.get("library")),
            )
        )
    elif kind == "tool_result":
        _attach_result(task.step(step), event)
    elif kind == "guard_fired":
        task.step(step).guards.append(event)
    elif kind == "model_retry":
        task.step(max(task.steps, default=0)).retries.append(event)
    elif kind == "final_answer":
        task.answer = str(event.get("text") or "")
    elif kind == "task_finished":
        task.finished = event


def _attach_result(step: Step, event: dict[str, Any]) -> None:
    call_id = str(event.get("call_id") or "")
    match = next((t for t in step.tools if t.call_id == call_id and t.ok is None), None)
    if match is None:  # a result without its call (a damaged file): show it on its own
        match = ToolStep(call_id=call_id, name=str(event.get("name") or "?"), arguments=None)
        step.tools.append(match)
    match.ok = bool(event.get("ok"))
    match.summary = str(event.get("summary") or "")
    match.wall_s = _float(event.get("wall_s"))
    match.data = event.get("data")


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


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
