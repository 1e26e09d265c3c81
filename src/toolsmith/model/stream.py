"""Assembling a streamed chat completion, and reporting progress while it arrives.

:class:`StreamReader` reads ``chat.completion.chunk`` objects (SDK objects or JSON, read
alike): content and reasoning deltas are joined, tool-call deltas are merged by their
``index``, and the usage chunk that ``stream_options.include_usage`` asks for is kept.
While chunks arrive it reports :class:`StreamProgress` at most once per interval, so a
display can tell a slow answer (the counts grow) from a stall (they do not).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsmith.errors import ModelResponseError
from toolsmith.model.completion import arguments_text, member, reasoning_text, text_of, usage_of
from toolsmith.model.types import ModelReply, ToolCallRequest


@dataclass(frozen=True)
class StreamProgress:
    """How much of a streamed answer has arrived so far."""

    chunks: int
    chars: int  # answer text and tool-call arguments
    reasoning_chars: int
    tool_calls: int
    elapsed_s: float


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamReader:
    """Reads one streamed completion; :meth:`reply` gives the assembled :class:`ModelReply`."""

    def __init__(
        self,
        *,
        clock: Callable[[], float],
        on_progress: Callable[[StreamProgress], None] | None = None,
        interval_s: float = 1.0,
    ) -> None:
        self._clock = clock
        self._on_progress = on_progress
        self._interval = interval_s
        self._started = clock()
        self._reported_at: float | None = None
        self.chunks = 0
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _Call] = {}
        self._chars = 0
        self._reasoning_chars = 0
        self._choices_seen = False
        self._finish: str | None = None
        self._usage: Any = None
        self._model = ""

    @property
    def received(self) -> bool:
        return self.chunks > 0

    def describe(self) -> str:
        return f"{self._chars + self._reasoning_chars:,} characters in {self.chunks:,} chunks"

    def read(self, chunks: Iterable[Any]) -> None:
        """Consume ``chunks``; undecodable chunks become a ModelResponseError."""
        try:
            for chunk in chunks:
                self.add(chunk)
        except RecursionError:
            raise ModelResponseError("a stream chunk with JSON nested too deeply") from None
        except UnicodeDecodeError as exc:
            raise ModelResponseError(f"a stream that is not valid UTF-8 (bad byte at offset {exc.start})") from None
        except ValueError as exc:
            raise ModelResponseError(f"a stream chunk that is not JSON ({exc})", check_url=True) from None

    def add(self, chunk: Any) -> None:
        """One chunk of the stream."""
        self.chunks += 1
        model = member(chunk, "model")
        if isinstance(model, str) and model:
            self._model = model
        usage = member(chunk, "usage")
        if usage is not None:
            self._usage = usage
        choices = member(chunk, "choices")
        if isinstance(choices, list) and choices:
            self._choices_seen = True
            self._choice(choices[0])
        self._report(final=False)

    def _choice(self, choice: Any) -> None:
        finish = member(choice, "finish_reason")
        if isinstance(finish, str) and finish:
            self._finish = finish
        delta = member(choice, "delta")
        if delta is None:
            return
        text = text_of(member(delta, "content"))
        if text:
            self._content.append(text)
            self._chars += len(text)
        reasoning = reasoning_text(delta)
        if reasoning:
            self._reasoning.append(reasoning)
            self._reasoning_chars += len(reasoning)
        calls = member(delta, "tool_calls")
        for position, raw in enumerate(calls if isinstance(calls, list) else []):
            self._tool_delta(raw, position)

    def _tool_delta(self, raw: Any, position: int) -> None:
        index = member(raw, "index")
        call = self._calls.setdefault(index if isinstance(index, int) else position, _Call())
        call_id = member(raw, "id")
        if isinstance(call_id, str) and call_id and not call.id:
            call.id = call_id
        function = member(raw, "function")
        name = member(function, "name")
        if isinstance(name, str) and name and not call.name:
            call.name = name
        piece = member(function, "arguments")
        if piece is not None and not isinstance(piece, str):
            call.arguments = [arguments_text(piece)]  # a whole object, as some servers send
        elif piece:
            call.arguments.append(piece)
            self._chars += len(piece)

    def _report(self, *, final: bool) -> None:
        if self._on_progress is None:
            return
        now = self._clock()
        if not final and self._reported_at is not None and now - self._reported_at < self._interval:
            return
        self._reported_at = now
        self._on_progress(
            StreamProgress(
                chunks=self.chunks,
                chars=self._chars,
                reasoning_chars=self._reasoning_chars,
                tool_calls=len(self._calls),
                elapsed_s=round(now - self._started, 3),
            )
        )

    def reply(self, *, model: str, prices: Mapping[str, tuple[float, float]] | None = None) -> ModelReply:
        """The assembled answer; ModelResponseError when the stream held none."""
        if not self._choices_seen:
            what = "an empty stream" if not self.chunks else "a stream without any choices"
            raise ModelResponseError(what, check_url=not self.chunks)
        self._report(final=True)
        calls = tuple(
            ToolCallRequest(id=c.id or f"call_{i}", name=c.name, arguments="".join(c.arguments))
            for i, c in (sorted(self._calls.items()))
        )
        answered_by = self._model or model
        return ModelReply(
            content="".join(self._content) if self._content else None,
            tool_calls=calls,
            usage=usage_of(self._usage, (model, answered_by), prices or {}),
            model=answered_by,
            finish_reason=self._finish,
            reasoning="".join(self._reasoning) or None,
        )
