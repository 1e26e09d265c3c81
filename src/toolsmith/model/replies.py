"""What real models send, made usable before the loop reads it.

OpenAI-compatible servers, and the models behind them, differ in ways that would
otherwise end a task or mislead the guards. This module owns the fixes, each a small
pure function:

* :func:`normalise_reply`: tool calls written into the text (Qwen's ``<tool_call>``,
  Mistral's ``[TOOL_CALLS]``, a bare ``{"name": ..., "arguments": ...}``) become real
  calls, and so do the calls packed into one ``multi_tool_use.parallel`` call (a habit of
  GPT-4o-class models); tool names lose ``functions.`` prefixes, padding and leaked
  template tokens;
  missing, empty or reused call ids are replaced, so every id in a task is unique;
* :func:`parse_arguments`: ``null``, code fences, double encoding, trailing closers and
  Python-literal dicts are read as the object the model meant;
* :func:`usable_code`: code wrapped in a Markdown fence, or sent with its newlines
  escaped twice, is run as the code it is;
* :func:`strip_thinking`: ``<think>`` blocks never reach an answer.

Text the model sends is also passed through :func:`toolsmith.redaction.encodable`, so a
split emoji from a local server cannot break a transcript, file or terminal write.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from toolsmith.calls import JSONObject
from toolsmith.model import ModelReply, ToolCallRequest, nesting
from toolsmith.redaction import encodable

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_TAGGED_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_CALL_PREFIXES = ("[TOOL_CALLS]", "<|python_tag|>")
_FENCE = re.compile(r"^```[\w-]*\s*\n?(.*?)\n?\s*```$", re.DOTALL)
_NAME_PREFIXES = ("functions.", "function.", "tools.", "tool.")
_PARALLEL = "multi_tool_use.parallel"
_ARGUMENT_TAIL = set("}]`;, \n\t")
_LITERAL_LIMIT = 100_000  # ast.literal_eval of a huge string costs more than it is worth


def strip_thinking(text: str) -> str:
    """``text`` without reasoning blocks, including an unclosed or an unopened one."""
    text = _THINK_BLOCK.sub("", text)
    opened = _THINK_OPEN.search(text)
    if opened:  # cut off mid-thought: nothing after the tag is an answer
        text = text[: opened.start()]
    closed = _THINK_CLOSE.search(text)
    if closed:  # the chat template opened the block, the model only closed it
        text = text[closed.end() :]
    return text.strip()


def canonical_name(name: str, offered: Collection[str]) -> str:
    """The tool a model meant by ``name``: padding, prefixes and template leaks removed."""
    if name in offered:
        return name
    cleaned = name.strip().strip("`'\"").split("<|", 1)[0].strip()
    for prefix in _NAME_PREFIXES:
        cleaned = cleaned.removeprefix(prefix)
    cleaned = re.sub(r":\d+$", "", cleaned).removesuffix("()")  # "web_search:0", "web_search()"
    if cleaned in offered:
        return cleaned
    folded = re.sub(r"[\s\-]+", "_", cleaned).lower()
    matches = [n for n in offered if n.lower() == folded]
    return matches[0] if len(matches) == 1 else cleaned


def normalise_reply(reply: ModelReply, offered: Collection[str], seen_ids: set[str]) -> ModelReply:
    """``reply`` with usable tool calls and unique call ids; ``seen_ids`` is updated."""
    content = encodable(reply.content) if reply.content is not None else None
    calls = [unpacked for call in reply.tool_calls for unpacked in _unpack_parallel(call)]
    if not calls and content:
        calls, rest = text_tool_calls(content, offered)
        if calls:
            content = rest or None
    fixed: list[ToolCallRequest] = []
    for call in calls:
        call_id = (call.id or "").strip()
        if not call_id or call_id in seen_ids:
            number = len(seen_ids) + 1
            while f"call_ts{number}" in seen_ids:
                number += 1
            call_id = f"call_ts{number}"
        seen_ids.add(call_id)
        fixed.append(
            ToolCallRequest(id=call_id, name=canonical_name(call.name, offered), arguments=encodable(call.arguments))
        )
    reasoning = encodable(reply.reasoning) if reply.reasoning else reply.reasoning
    return replace(reply, content=content, tool_calls=tuple(fixed), reasoning=reasoning)


def _unpack_parallel(call: ToolCallRequest) -> list[ToolCallRequest]:
    """The calls inside a ``multi_tool_use.parallel`` call; any other call as it is."""
    if call.name.strip() not in (_PARALLEL, f"functions.{_PARALLEL}"):
        return [call]
    args, _ = parse_arguments(call.arguments)
    uses = args.get("tool_uses")
    if not isinstance(uses, list) or not uses or not all(isinstance(u, dict) for u in uses):
        return [call]
    return [
        ToolCallRequest(
            id=f"{call.id}_{i}" if call.id else "",
            name=str(use.get("recipient_name") or ""),
            arguments=json.dumps(use.get("parameters") or {}, ensure_ascii=False),
        )
        for i, use in enumerate(uses)
    ]


def text_tool_calls(content: str, offered: Collection[str]) -> tuple[list[ToolCallRequest], str]:
    """Tool calls a model wrote as text, and the text left around them.

    Only calls naming an offered tool count, so an answer that happens to be JSON stays
    an answer.
    """
    text = strip_thinking(content)  # a call the model only thought about is not made
    tagged = _TAGGED_CALL.findall(text)
    if tagged:
        rest = _TAGGED_CALL.sub("", text).strip()
        payloads: list[Any] = [_json_or_none(t) for t in tagged]
    else:
        for prefix in _CALL_PREFIXES:
            text = text.removeprefix(prefix).strip()
        rest, payloads = "", [_json_or_none(_unfence(text))]
    calls: list[ToolCallRequest] = []
    for payload in payloads:
        for item in payload if isinstance(payload, list) else [payload]:
            call = _as_call(item, offered)
            if call is None:
                return [], content
            calls.append(call)
    return calls, rest


def _as_call(item: Any, offered: Collection[str]) -> ToolCallRequest | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):  # {"type": "function", "function": {...}}
        item = item["function"]
    name = item.get("name")
    arguments = item.get("arguments", item.get("parameters", {}))
    if not isinstance(name, str) or canonical_name(name, offered) not in offered:
        return None
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCallRequest(id="", name=name, arguments=raw)


def _jsonable(value: Any) -> Any:
    return sorted(value, key=str) if isinstance(value, (set, frozenset)) else str(value)


def _json_or_none(text: str) -> Any:
    try:
        return nesting.loads(text)
    except ValueError:  # not JSON, or nested too deeply to be a tool call
        return None


def _unfence(text: str) -> str:
    match = _FENCE.match(text.strip())
    return match.group(1).strip() if match else text.strip()


def usable_code(code: str) -> str:
    """Python source as the model meant it: without a Markdown fence, with real newlines."""
    code = _unfence(code) if code.lstrip().startswith("```") else code
    if "\n" in code or "\\n" not in code or _compiles(code):
        return code
    try:
        unescaped = code.encode("ascii", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return code
    return unescaped if _compiles(unescaped) else code


def _compiles(code: str) -> bool:
    try:
        compile(code, "<tool>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


# -- arguments ---------------------------------------------------------------------------


def parse_arguments(raw: Any) -> tuple[JSONObject, str | None]:
    """The arguments object a model meant, or ``({}, why)`` when there is none to read."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None:
        return {}, None
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if nesting.nesting_depth(text) > nesting.MAX_DEPTH:
        # Deep values break code that recurses over them (events, copies), and no tool needs one.
        return {}, f"arguments JSON nested too deeply (more than {nesting.MAX_DEPTH} levels)"
    value: Any = _unfence(text)
    for _ in range(3):  # "{...}" inside a JSON string, once or twice
        if not isinstance(value, str):
            break
        if not value.strip():
            return {}, None
        value, error = _loads(value.strip())
        if error is not None:
            return {}, error
    if value is None:
        return {}, None  # "null": a call without arguments
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        value = value[0]
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {type(value).__name__}"
    return value, None


def _loads(text: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except ValueError as exc:
        error = str(exc)
    try:  # an object followed by stray closers or fences, as some parsers leave
        value, end = json.JSONDecoder().raw_decode(text)
        if isinstance(value, dict) and set(text[end:]) <= _ARGUMENT_TAIL:
            return value, None
    except ValueError:
        pass
    if text.startswith("{") and len(text) <= _LITERAL_LIMIT:
        try:  # a Python dict literal: single quotes, True, None
            value = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = None
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            # tuples and sets become lists, anything else JSON cannot hold becomes text
            return json.loads(json.dumps(value, default=_jsonable)), None
    return None, error
