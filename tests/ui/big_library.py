"""A library of hundreds of tools, for the library page's sorting, paging and layout.

The tools are stored directly (no agent, no sandbox): names, descriptions and usage
counts are what the page shows, and building 250 through the agent would take minutes.
A few tools are called (some with failures), a few have a second version waiting for
review, and one has a description far longer than a line.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from toolsmith.config import Settings
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec

VERBS = ("parse", "format", "convert", "count", "extract", "validate", "normalize", "summarize", "compare", "merge")
NOUNS = (
    "csv_rows", "iso_dates", "currency", "json_keys", "urls", "emails", "phone_numbers", "timezones", "units",
    "words", "sentences", "html_links", "markdown_tables", "ip_addresses", "hashes", "colors", "coordinates",
    "durations", "file_sizes", "percentages", "roman_numerals", "temperatures", "isbn_codes", "slugs", "cron_rules",
)  # fmt: skip
COUNT = len(VERBS) * len(NOUNS)  # 250
LONG_NAME = "summarize_markdown_tables"
LONG_TAIL = "the end of a very long description"
WAITING = ("convert_currency", "parse_iso_dates", "validate_emails")


def tool_names() -> list[str]:
    return [f"{verb}_{noun}" for verb in VERBS for noun in NOUNS]


def _description(verb: str, noun: str) -> str:
    things = noun.replace("_", " ")
    text = (
        f"{verb.capitalize()} {things} given as text and return the result as JSON. Handles empty input, "
        f"surrounding whitespace and mixed separators; refuses input it cannot read with a clear error "
        f"instead of guessing."
    )
    if f"{verb}_{noun}" == LONG_NAME:
        text += " It also explains every step it takes in detail. " * 20 + LONG_TAIL + "."
    return text


def _spec(name: str, description: str, version: int = 1) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        code=f'def run(text: str) -> dict:\n    return {{"tool": {name!r}, "v": {version}, "n": len(text)}}\n',
        test_args={"text": "a b c"},
    )


def build(home: Path) -> Settings:
    """Store :data:`COUNT` tools in ``home``'s library; every seventh is called, some fail."""
    settings = replace(Settings.load(home=home, env={}), network=False)
    with ToolLibrary.open(settings) as library:
        with library.batch():
            for verb in VERBS:
                for noun in NOUNS:
                    library.add(
                        _spec(f"{verb}_{noun}", _description(verb, noun)),
                        provenance=Provenance(task=f"{verb} some {noun}", origin="import"),
                        gate={"ok": True},
                    )
            for name in WAITING:
                library.add(
                    _spec(name, library.get(name).spec.description + " Now faster.", version=2),
                    provenance=Provenance(task=f"improve {name}", origin="agent"),
                    gate={"ok": True},
                    status=Status.PENDING,
                    parent_version=1,
                )
        for index, name in enumerate(tool_names()):
            if index % 7:
                continue
            calls = 1 + index % 5
            for call in range(calls):
                failed = call < index % 3
                library.record_call(name, 1, ok=not failed, latency_ms=5.0, error="bad input" if failed else None)
    return settings
