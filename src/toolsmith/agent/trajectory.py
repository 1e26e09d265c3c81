"""Trajectories: the file a run is recorded in.

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
from pathlib import Path

from toolsmith.calls import JSONObject, message_json
from toolsmith.events import Event
from toolsmith.records import TaskResult
from toolsmith.redaction import Redactor


class TrajectoryWriter:
    """Appends redacted JSON lines to one trajectory file per run."""

    def __init__(self, directory: Path, session_id: str, redactor: Redactor) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.path = directory / f"{stamp}-{session_id}.jsonl"
        self.redactor = redactor
        self._fh = self.path.open("a", encoding="utf-8", errors="backslashreplace")

    def _write(self, record: JSONObject) -> None:
        self._fh.write(json.dumps(self.redactor.data(record), ensure_ascii=False, default=str) + "\n")
        self._fh.flush()

    def event(self, event: Event) -> None:
        self._write({"record": "event", **event.to_dict()})

    def task(self, result: TaskResult) -> None:
        self._write({"record": "task", **result.to_dict(), "messages": [message_json(m) for m in result.messages]})

    def stop(self, details: JSONObject) -> None:
        """Why the run ended early (with the traceback when it was a bug)."""
        self._write({"record": "stop", **details})

    def close(self) -> None:
        self._fh.close()
