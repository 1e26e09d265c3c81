"""The files of one exported skill: ``SKILL.md``, its script and its parameter schema.

A served library tool becomes a folder under the Agent Skills specification
(agentskills.io): ``SKILL.md`` with the frontmatter the specification allows (``name``,
``description``, ``compatibility``, ``metadata``) and a body that says how to call the tool,
with examples from its stored test cases; ``scripts/call.sh``, which hands the call to
``toolsmith tools call NAME@VERSION``, so the tool's code keeps running in toolsmith's
sandbox (checked, recorded, pinned to that version) and never in the host agent's shell;
and ``references/parameters.json``, the tool's parameter schema. :mod:`toolsmith.service.skills`
writes these folders and keeps them in step with the library.

The frontmatter is written by hand, not by a YAML library: every value is one
double-quoted scalar (JSON string escapes are valid YAML), so no description can end the
frontmatter, start a YAML structure or run into the next key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsmith.library import ToolVersion

SKILL_FILE = "SKILL.md"
SCRIPT = "scripts/call.sh"
SCHEMA = "references/parameters.json"
MAX_NAME, MAX_DESCRIPTION, MAX_COMPATIBILITY = 64, 1024, 500
MAX_EXAMPLES = 2
COMPATIBILITY = (
    "Linux, with the toolsmith command on PATH and its tool library (TOOLSMITH_HOME) holding this tool; "
    "the tool runs in toolsmith's sandbox, not in the agent's shell."
)


def skill_name(tool_name: str) -> str:
    """The skill's name for a tool: lowercase letters, digits, single hyphens (``days_between``: ``days-between``)."""
    text = re.sub(r"[^a-z0-9]+", "-", tool_name.lower()).strip("-")
    return text[:MAX_NAME].rstrip("-")


@dataclass(frozen=True)
class SkillFiles:
    """One skill folder's files, by path relative to the folder; the script is executable."""

    name: str
    files: dict[str, str]
    executable: tuple[str, ...] = (SCRIPT,)


def render(tool: ToolVersion, *, home: Path | None) -> SkillFiles:
    """The files of ``tool``'s skill; ``home`` is the toolsmith home the script falls back to."""
    name = skill_name(tool.name)
    schema = json.dumps(tool.spec.parameters, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    return SkillFiles(
        name=name,
        files={SKILL_FILE: skill_md(tool, name), SCRIPT: script(tool, home), SCHEMA: schema},
    )


def description(tool: ToolVersion) -> str:
    """What the tool does and when to use it (from its description and keywords), at most 1,024 characters."""
    what = _no_rule(_one_line(tool.spec.description)).rstrip(".") or tool.name.replace("_", " ")
    keywords = [k for k in (_no_rule(_one_line(k)) for k in tool.spec.keywords) if k]
    when = " Use it when a task needs this" + (f" or mentions {', '.join(keywords)}" if keywords else "")
    when += f": it runs the verified toolsmith library tool {tool.name} in a sandbox instead of new code."
    room = MAX_DESCRIPTION - len(when) - 1
    if len(what) > room:
        what = what[: room - 1].rstrip() + "…"
    text = f"{what}.{when}"
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


def frontmatter(tool: ToolVersion, name: str) -> str:
    metadata = {
        "toolsmith-tool": tool.name,
        "toolsmith-version": str(tool.version),
        "toolsmith-hash": tool.hash,
    }
    lines = [
        "---",
        f"name: {_scalar(name)}",
        f"description: {_scalar(description(tool))}",
        f"compatibility: {_scalar(COMPATIBILITY)}",
        "metadata:",
        *(f"  {key}: {_scalar(value)}" for key, value in metadata.items()),
        "---",
    ]
    return "\n".join(lines) + "\n"


def skill_md(tool: ToolVersion, name: str) -> str:
    params = tool.spec.parameters.get("properties") or {}
    required = set(tool.spec.parameters.get("required") or ())
    rows = [_parameter_line(key, spec, key in required) for key, spec in params.items() if isinstance(spec, dict)]
    body = [
        f"# {tool.name}",
        "",
        _one_line(tool.spec.description),
        "",
        f"This skill calls the toolsmith library tool `{tool.name}`, version {tool.version} "
        f"(content hash `{tool.hash[:16]}`), which passed toolsmith's checks when it was stored. "
        "Its code runs in toolsmith's sandbox, never in this shell: do not reimplement it, call the script.",
        "",
        "## Usage",
        "",
        "Run the script from this skill's folder with the arguments as one JSON object "
        "(`-` reads them from stdin; none means `{}`):",
        "",
        "```sh",
        f"scripts/call.sh '{_shell_json(tool.spec.test_args)}'",
        "```",
        "",
        f"Parameters (the JSON Schema is in [{SCHEMA}]({SCHEMA})):",
        "",
        *(rows or ["- none"]),
        "",
        "It prints one JSON object. Exit 0: `ok` is true and `result` holds the answer, with `source` "
        "saying where it came from (cite it). Exit 1: the tool failed (`error`, `error_type`). "
        "Exit 2: the arguments do not fit, or this version is no longer served (the message names the one "
        "that is; ask the user to run `toolsmith skills sync`).",
        "",
        "## Examples",
        "",
        "From the tool's own stored test cases:",
        "",
        *_examples(tool),
    ]
    return frontmatter(tool, name) + "\n" + "\n".join(body).rstrip("\n") + "\n"


def script(tool: ToolVersion, home: Path | None) -> str:
    ref = f"{tool.name}@{tool.version}"
    fallback = ""
    if home is not None:
        quoted = _shell_quote(str(home))
        fallback = (
            "# Without TOOLSMITH_HOME, use the library this skill was exported from (if it is here).\n"
            f'if [ -z "${{TOOLSMITH_HOME:-}}" ] && [ -d {quoted} ]; then\n'
            f"    TOOLSMITH_HOME={quoted}\n"
            "    export TOOLSMITH_HOME\n"
            "fi\n"
        )
    return (
        "#!/bin/sh\n"
        f"# Calls the toolsmith library tool {ref} in toolsmith's sandbox (exported by `toolsmith skills export`).\n"
        '# Usage: call.sh \'{"arg": "value"}\'   or   call.sh - < args.json   (no argument: {})\n'
        "# Prints one JSON object; exit 0 ok, 1 the tool failed, 2 bad arguments or a version no longer served.\n"
        "set -eu\n"
        f"{fallback}"
        'if [ "$#" -gt 1 ]; then\n'
        '    echo "usage: $0 [JSON | -]" >&2\n'
        "    exit 2\n"
        "fi\n"
        "args='{}'\n"
        'if [ "$#" -eq 1 ]; then\n'
        "    args=$1\n"
        "fi\n"
        f'exec toolsmith tools call {ref} --args "$args"\n'
    )


def _examples(tool: ToolVersion) -> list[str]:
    cases = [c for c in tool.spec.tests if "expect" in c or "contains" in c]
    chosen: list[tuple[dict[str, Any], str]] = []
    for case in cases[:MAX_EXAMPLES]:
        if "expect" in case:
            chosen.append((case["args"], f"`result` is `{_compact(case['expect'])}`"))
        else:
            chosen.append((case["args"], f"`result` includes `{_compact(case['contains'])}`"))
    if len(chosen) < MAX_EXAMPLES and tool.spec.test_args not in [args for args, _ in chosen]:
        chosen.insert(0, (tool.spec.test_args, "a result that is not empty (the run it was stored with)"))
    lines: list[str] = []
    for args, outcome in chosen[:MAX_EXAMPLES]:
        lines += ["```sh", f"scripts/call.sh '{_shell_json(args)}'", "```", "", f"gives {outcome}.", ""]
    return lines


def _parameter_line(key: str, spec: dict[str, Any], required: bool) -> str:
    kind = spec.get("type")
    kind_text = "/".join(kind) if isinstance(kind, list) else str(kind or "any")
    extra = f", one of {_compact(spec['enum'])}" if isinstance(spec.get("enum"), list) else ""
    text = _one_line(str(spec.get("description") or ""))
    return f"- `{key}` ({kind_text}, {'required' if required else 'optional'}{extra})" + (f": {text}" if text else "")


def _scalar(value: str) -> str:
    """A YAML double-quoted scalar on one line; ``---`` never appears, so no value can end the frontmatter."""
    return json.dumps(_no_rule(_one_line(value)), ensure_ascii=False)


def _no_rule(text: str) -> str:
    """``text`` without ``---``, which would end the frontmatter for a reader that splits on it."""
    return re.sub(r"-{3,}", "--", text)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _compact(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 300 else text[:299] + "…"


def _shell_json(args: dict[str, Any]) -> str:
    """The arguments as JSON inside single quotes in a shell line (a ``'`` is written as ``\\u0027``)."""
    return json.dumps(args, ensure_ascii=False, sort_keys=True).replace("'", "\\u0027")


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
