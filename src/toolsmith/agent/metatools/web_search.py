"""``web_search``: the meta-tool's schema and handler; the search itself is :mod:`toolsmith.web.search`."""

from __future__ import annotations

from typing import Any

from toolsmith.agent.context import TaskContext
from toolsmith.calls import Note, NoteKind, Outcome
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


def handle(ctx: TaskContext, args: dict[str, Any]) -> Outcome:
    found = ctx.web.search(str(args["query"]), args.get("num_results"))
    results = found.get("results") or []
    names = [str(r.get("name") or r.get("title") or r.get("url")) for r in results[:4] if isinstance(r, dict)]
    summary = f"{len(results)} result(s): " + ", ".join(names) if names else "no results"
    return _outcome(found, summary)


def _outcome(found: dict[str, Any], summary: str) -> Outcome:
    """The search's answer (JSON from the web layer) as an outcome."""
    data = {k: v for k, v in found.items() if k not in ("ok", "error", "note")}
    notes = (Note(NoteKind.NOTE, str(found["note"])),) if found.get("note") else ()
    if found.get("ok"):
        # The backends that failed before one answered are no news to the model, and read
        # like a failed search; the answering backend is named.
        data.pop("tried", None)
        return Outcome(ok=True, data=data, summary=summary, notes=notes)
    return Outcome.failed(str(found.get("error") or "web_search failed"), data=data, notes=notes)
