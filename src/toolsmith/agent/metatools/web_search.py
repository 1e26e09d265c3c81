"""``web_search``: the meta-tool's schema and handler; the search itself is :mod:`toolsmith.web.search`."""

from __future__ import annotations

from typing import Any

from toolsmith.agent.context import TaskContext
from toolsmith.web.search import DEFAULT_RESULTS, MAX_RESULTS

SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": (
            "Search the web for open-source libraries, packages and public APIs that need no API "
            "key, for any kind of task (dates, conversions, text processing, data sources...). "
            "Prefer queries like 'python library for <capability>'. Returns titles, URLs and "
            "snippets (for package results also the package name, version and project URLs); "
            "read promising pages with read_webpage."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for, in a few words."},
                "num_results": {
                    "type": "integer",
                    "description": f"How many results (1-{MAX_RESULTS}, default {DEFAULT_RESULTS}).",
                },
            },
            "required": ["query"],
        },
    },
}


def handle(ctx: TaskContext, args: dict[str, Any]) -> dict[str, Any]:
    return ctx.web.search(str(args["query"]), args.get("num_results"))
