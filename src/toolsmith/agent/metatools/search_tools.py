"""``search_tools``: find stored tools for reuse, and unlock what was found.

A library tool becomes callable only once search returned it in the current task (or
the agent just created it). That forces the pipeline's first step, reuse before
rebuilding, to happen for real rather than by the model's memory.
"""

from __future__ import annotations

from typing import Any

from toolsmith.agent.context import TaskContext
from toolsmith.calls import Outcome

MAX_LIMIT = 20

SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search_tools",
        "description": (
            "Search the persistent tool library for an existing tool that can do the task, by "
            "name, description and keywords. The program already searches it for each task with "
            "the task's own words (see its note); search again with other words, or in English for "
            "a task in another language. If a tool fits, call it instead of building a new one. "
            "Found tools become callable."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, in a few words."},
                "limit": {"type": "integer", "description": "Maximum results (default 5)."},
            },
            "required": ["query"],
        },
    },
}


def handle(ctx: TaskContext, args: dict[str, Any]) -> Outcome:
    limit = _limit(args.get("limit"))
    hits = ctx.library.search(str(args["query"]), limit=limit, floor=ctx.settings.search_floor)
    ctx.last_hits = list(hits)
    for hit in hits:
        ctx.unlock(hit.tool)
        ctx.search_hits.add(hit.tool.name)
    if not hits:
        return Outcome.success(
            {"results": []},
            summary="no results",
            note=(
                "No stored tool matches. Build one: web_search for a key-free open-source "
                "library, read its docs, verify it with code_interpreter, then create_tool."
            ),
        )
    names = ", ".join(hit.tool.name for hit in hits[:4])
    return Outcome.success(
        {"results": [hit.to_dict() for hit in hits]},
        summary=f"{len(hits)} result(s): {names}",
        note="These tools are now callable by name. If one fits the task, call it and answer.",
    )


def _limit(value: Any) -> int:
    try:
        limit = int(value)
    except (TypeError, ValueError):
        return 5
    return min(max(limit, 1), MAX_LIMIT)
