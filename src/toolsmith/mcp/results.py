"""Tool results as MCP sends them, and refusals: one shape for every answer the server gives."""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp.types as types

from toolsmith.calls import FailureKind, Outcome
from toolsmith.library import ToolVersion

log = logging.getLogger("toolsmith.mcp")

# Results up to this size go as text and as structured content; larger ones as text only.
STRUCTURED_MAX_CHARS = 64 * 1024


def tool_result(outcome: Outcome) -> types.CallToolResult:
    """An outcome as MCP sends it: JSON text (every client reads that), and structured content when small."""
    return payload_result(outcome.to_message(), error=not outcome.ok)


def payload_result(payload: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    """``payload`` as a tool result: its JSON as text, and the same object as structured content.

    A result is sent once: above :data:`STRUCTURED_MAX_CHARS` the text alone carries it (the
    spec makes the text the fallback every client reads), so a large result does not cross
    the wire, and the server's memory, twice. The payload is JSON data already (decoded
    from the tool's result file, or built here), so it needs no second decoding.
    """
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=payload if len(text) <= STRUCTURED_MAX_CHARS else None,
        is_error=error,
    )


def refusal(message: str, kind: FailureKind, tool: ToolVersion | None = None) -> types.CallToolResult:
    data = {"tool": tool.name, "version": tool.version} if tool is not None else {}
    log.info("refused: %s", message)
    return tool_result(Outcome.failed(message, kind, data=data))
