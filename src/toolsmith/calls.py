"""The protocol of one tool call, shared by everything that makes, judges or shows one.

A :class:`Call` goes in and an :class:`Outcome` comes out, whoever calls: the agent's
toolbox, a guard that refuses (:class:`Refusal`), the MCP server, ``toolsmith tools
test``. An outcome carries its data, its error and :class:`FailureKind`, and typed
:class:`Note` objects for what the program adds around a result (a guard's
intervention, a hint, the budget, what to do next). Components exchange these objects;
JSON is only their form at the edges: the tool message a model reads
(:meth:`Outcome.to_message`, read back by :meth:`Outcome.from_message`), the trajectory
file and the MCP payload.

:data:`META_TOOL_NAMES` is the one list of the meta-tools' names, in the order they are
offered; no stored tool may take one of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

META_TOOL_NAMES: tuple[str, ...] = ("web_search", "read_webpage", "code_interpreter", "create_tool", "search_tools")


class Blame(Enum):
    """Whose fault a failed call is."""

    TOOL = "tool"
    CALLER = "caller"
    MACHINE = "machine"


class FailureKind(str, Enum):
    """Why a tool call failed. The values are the ``error_type`` strings of payloads.

    A ``str`` subclass, so payloads and JSON carry the plain value. Each kind says whose
    fault it is (:attr:`blame`): only the tool's own failures count against its health.
    """

    # the tool's code
    EXCEPTION = "exception"  # run() raised
    IMPORT = "import"  # importing the tool module failed
    NO_RUN = "no_run"  # the module defines no callable run()
    NOT_JSON = "not_json"  # the value is not JSON, too deep, or the result file was tampered with
    TOO_LARGE = "too_large"  # the JSON result is over the size cap
    TIMEOUT = "timeout"  # run() did not return in time
    KILLED = "killed"  # the process ended without a result (a limit, a signal, exit())
    EMPTY = "empty"  # a test run returned None or an empty value: it verified nothing
    WRONG_VALUE = "wrong_value"  # one of the tool's own test cases got another result than it expects
    UNDELIVERED = "undelivered"  # the tool answered, but its result never reached the caller
    # the caller
    BAD_ARGUMENTS = "bad_arguments"  # the arguments do not fit the tool's parameters
    UNKNOWN_TOOL = "unknown_tool"  # no tool of that name
    NOT_ACTIVE = "not_active"  # the tool exists but is pending, quarantined or retired
    REFUSED = "refused"  # a guard refused the call before it ran
    BUSY = "busy"  # the tool is failing and a call of it is already running: this one did not run
    # the machine
    SANDBOX = "sandbox"  # the sandbox could not be set up for this run
    SANDBOX_UNAVAILABLE = "sandbox_unavailable"  # no sandbox backend works on this machine
    INSTALL = "install"  # the tool's pinned packages could not be installed here
    LIBRARY = "library_error"  # the tool library could not be read or written
    AGENT = "agent_error"  # an agent run (the MCP solve_task tool) failed as a whole

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def blame(self) -> Blame:
        if self in _CALLER:
            return Blame.CALLER
        if self in _MACHINE:
            return Blame.MACHINE
        return Blame.TOOL

    @classmethod
    def parse(cls, value: object) -> FailureKind:
        """A kind from text someone else wrote; anything unknown counts as ``exception``."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.EXCEPTION


_CALLER = frozenset(
    {FailureKind.BAD_ARGUMENTS, FailureKind.UNKNOWN_TOOL, FailureKind.NOT_ACTIVE, FailureKind.REFUSED, FailureKind.BUSY}
)
_MACHINE = frozenset(
    {
        FailureKind.SANDBOX,
        FailureKind.SANDBOX_UNAVAILABLE,
        FailureKind.INSTALL,
        FailureKind.LIBRARY,
        FailureKind.AGENT,
    }
)


class Origin(str, Enum):
    """Who made a call: the model, or the program itself (pre-retrieval)."""

    MODEL = "model"
    PROGRAM = "program"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Call:
    """One tool call. ``arguments`` is the raw text when the model's JSON did not parse."""

    name: str
    arguments: Mapping[str, Any] | str
    id: str = ""
    origin: Origin = Origin.MODEL

    @property
    def parsed(self) -> bool:
        return not isinstance(self.arguments, str)

    @property
    def args(self) -> dict[str, Any]:
        """The parsed arguments (empty when they did not parse)."""
        return dict(self.arguments) if not isinstance(self.arguments, str) else {}

    @property
    def key(self) -> str:
        """One string per distinct call: the same tool with the same arguments, in any key order."""
        return call_key(self.name, self.arguments)


def call_key(name: str, arguments: object) -> str:
    try:
        canonical = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        canonical = repr(arguments)
    return f"{name}:{canonical}"


class NoteKind(str, Enum):
    """What the program says around a result. The values are the keys a model reads."""

    NOTE = "note"  # the tool's own guidance: what the result means, what to do next
    HINT = "hint"  # how to fix what went wrong (arguments cut off at the output limit)
    REPAIR = "repair"  # a stored tool failed: how to store a repaired version
    INTERVENTION = "intervention"  # a guard's word after the call ran
    BUDGET = "budget"  # the model has one call left


@dataclass(frozen=True)
class Note:
    kind: NoteKind
    text: str
    source: str = ""  # the guard or tool that wrote it


@dataclass(frozen=True)
class Refusal:
    """A guard refused the call: it did not run."""

    guard: str
    reason: str


# Keys of a tool message that belong to the envelope, not to the tool's data.
_ENVELOPE = frozenset({"ok", "error", "error_type", "guard"} | {k.value for k in NoteKind})


@dataclass(frozen=True)
class Outcome:
    """What one call came to.

    ``data`` holds the tool's own fields (a meta-tool's results, a stored tool's
    ``result`` and ``source``), ``summary`` one line for progress displays.
    """

    ok: bool
    data: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None
    failure: FailureKind | None = None
    refusal: Refusal | None = None
    notes: tuple[Note, ...] = ()
    summary: str = ""

    @classmethod
    def success(cls, data: Mapping[str, Any], *, summary: str = "", note: str | None = None) -> Outcome:
        notes = (Note(NoteKind.NOTE, note),) if note else ()
        return cls(ok=True, data=data, summary=summary, notes=notes)

    @classmethod
    def failed(
        cls,
        error: str,
        failure: FailureKind | None = None,
        *,
        data: Mapping[str, Any] | None = None,
        notes: Sequence[Note] = (),
    ) -> Outcome:
        return cls(ok=False, data=dict(data or {}), error=error, failure=failure, notes=tuple(notes))

    @classmethod
    def refused(cls, refusal: Refusal) -> Outcome:
        return cls(ok=False, error=refusal.reason, failure=FailureKind.REFUSED, refusal=refusal)

    @property
    def blame(self) -> Blame | None:
        """Whose fault the failure is; ``None`` for a success."""
        if self.ok:
            return None
        return (self.failure or FailureKind.EXCEPTION).blame

    def noted(self, *notes: Note) -> Outcome:
        """This outcome with more notes (outcomes never change once made)."""
        return replace(self, notes=self.notes + notes) if notes else self

    def note(self, kind: NoteKind) -> str | None:
        """The text of every note of ``kind``, joined, or ``None``."""
        texts = [n.text for n in self.notes if n.kind is kind]
        return " ".join(texts) if texts else None

    @property
    def line(self) -> str:
        """One line for progress displays."""
        text = self.summary if self.ok else (self.error or "failed")
        return text or self.note(NoteKind.NOTE) or "ok"

    def to_message(self) -> dict[str, Any]:
        """The JSON object a model (or a log) reads: ``ok``, the data, the error, the notes."""
        message: dict[str, Any] = {"ok": self.ok}
        if self.refusal is not None:
            message["guard"] = self.refusal.guard
        message.update((k, v) for k, v in self.data.items() if k not in _ENVELOPE)
        if self.error is not None:
            message["error"] = self.error
        if self.failure is not None and self.refusal is None:
            message["error_type"] = self.failure.value
        for kind in NoteKind:
            text = self.note(kind)
            if text is not None:
                message[kind.value] = text
        return message

    @classmethod
    def from_message(cls, message: Mapping[str, Any], *, summary: str = "") -> Outcome:
        """The outcome a tool message (or a recorded one) stands for: the inverse of :meth:`to_message`."""
        error = message.get("error")
        guard = message.get("guard")
        refusal = Refusal(str(guard), str(error or "")) if guard is not None else None
        kind = message.get("error_type")
        failure = FailureKind.REFUSED if refusal else (FailureKind.parse(kind) if kind is not None else None)
        notes = tuple(Note(k, str(message[k.value])) for k in NoteKind if message.get(k.value) is not None)
        data = {k: v for k, v in message.items() if k not in _ENVELOPE}
        return cls(
            ok=bool(message.get("ok")),
            data=data,
            error=None if error is None else str(error),
            failure=failure,
            refusal=refusal,
            notes=notes,
            summary=summary,
        )


def preview(value: object, limit: int = 160) -> str:
    """The start of ``value``'s JSON, at most about ``limit`` characters, encoded only that far
    (a 7.5 MB result need not be encoded whole for a one-line summary)."""
    chunks: list[str] = []
    size = 0
    for chunk in json.JSONEncoder(ensure_ascii=False, default=str).iterencode(value):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return "".join(chunks)[: limit - 1] + "…"
    return "".join(chunks)


# Imported here, beside the JSON and transcript types below, which alone use them.
from typing import Literal, TypeAlias, TypedDict  # noqa: E402

# JSON as the program builds and reads it. The containers are the covariant read-only
# ones, so a ``list[str]`` or a ``dict[str, int]`` is JSON as it is, without a copy; an
# object the program builds is a :data:`JSONObject`, which mypy checks for anything JSON
# cannot hold (a Path, an Enum that is not a str, a datetime). The string form keeps the
# aliases plain strings at run time, so Python 3.10 never evaluates the recursion.
JSONValue: TypeAlias = "bool | int | float | str | Sequence[JSONValue] | Mapping[str, JSONValue] | None"
JSONObject: TypeAlias = "dict[str, JSONValue]"


# -- the model's transcript -------------------------------------------------------------
#
# The transcript is OpenAI-format chat messages, the form every endpoint toolsmith talks to
# reads. They live here, beside the call protocol, because a finished task's record
# (:class:`toolsmith.records.TaskResult`) keeps its transcript, and records sit below the
# model layer; :mod:`toolsmith.model.types` offers them to the model side.

Role = Literal["system", "user", "assistant", "tool"]
_ROLES: dict[object, Role] = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool"}


class FunctionCall(TypedDict):
    """The function a model's tool call names; ``arguments`` is the raw JSON text it sent."""

    name: str
    arguments: str


class MessageToolCall(TypedDict):
    """One tool call inside an assistant message."""

    id: str
    type: Literal["function"]
    function: FunctionCall


class ChatMessage(TypedDict, total=False):
    """One message of the transcript. ``reasoning_content`` is a thinking model's reasoning,
    which such models need back on a tool-call turn; ``name`` is a tool message's tool,
    as some clients send it."""

    role: Role
    content: str | None
    tool_calls: list[MessageToolCall]
    tool_call_id: str
    name: str
    reasoning_content: str


def read_message(value: object) -> ChatMessage | None:
    """A transcript message read back from JSON (a trajectory, a request body): ``None``
    when ``value`` has no known role; otherwise its keys whose values have the right type
    (a value of any other type is left out, as a reader cannot tell what it meant)."""
    if not isinstance(value, Mapping) or value.get("role") not in _ROLES:
        return None
    message: ChatMessage = {"role": _ROLES[value["role"]]}
    content = value.get("content")
    if "content" in value and (content is None or isinstance(content, str)):
        message["content"] = content
    for key in ("tool_call_id", "name", "reasoning_content"):
        text = value.get(key)
        if isinstance(text, str):
            message[key] = text
    raw_calls = value.get("tool_calls")
    if isinstance(raw_calls, list):
        message["tool_calls"] = [call for call in map(_read_tool_call, raw_calls) if call is not None]
    return message


def _read_tool_call(value: object) -> MessageToolCall | None:
    if not isinstance(value, Mapping):
        return None
    function = value.get("function")
    call_id = value.get("id")
    if not isinstance(function, Mapping) or not isinstance(call_id, str):
        return None
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, str):
        return None
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def message_json(message: ChatMessage) -> JSONObject:
    """``message`` as a JSON object (to record it), its keys in the order the loop writes them."""
    data: JSONObject = {}
    if "role" in message:
        data["role"] = message["role"]
    if "tool_call_id" in message:
        data["tool_call_id"] = message["tool_call_id"]
    if "name" in message:
        data["name"] = message["name"]
    if "content" in message:
        data["content"] = message["content"]
    if "tool_calls" in message:
        data["tool_calls"] = [
            {
                "id": c["id"],
                "type": c["type"],
                "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]},
            }
            for c in message["tool_calls"]
        ]
    if "reasoning_content" in message:
        data["reasoning_content"] = message["reasoning_content"]
    return data


def _function_json(function: FunctionCall) -> JSONObject:
    return {"name": function["name"], "arguments": function["arguments"]}
