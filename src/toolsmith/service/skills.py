"""Agent Skills export: one skill folder per served tool, kept in step with the library.

:func:`export_skills` writes a folder (see :mod:`toolsmith.service.skillfiles`) for each
served tool, or for the tools named; :func:`sync_skills` does the same for every served
tool and also removes the folders of tools that are no longer served (quarantined,
retired, removed), so a folder an agent reads follows approvals, quarantines, rollbacks
and removals.

Only folders toolsmith wrote are ever replaced or removed: each holds a marker file
(:data:`MARKER`: the tool, version and hash it was made from). A folder of the same name
without the marker is someone's own skill: it is left alone and reported. A folder is
written next to its final place and swapped in, so an agent never reads half a skill.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsmith.errors import LibraryError, ToolNotFoundError
from toolsmith.library import Status, ToolLibrary, ToolVersion
from toolsmith.service.skillfiles import SkillFiles, render, skill_name

MARKER = ".toolsmith-skill.json"
WRITTEN, UPDATED, UNCHANGED, REMOVED, SKIPPED = "written", "updated", "unchanged", "removed", "skipped"


@dataclass(frozen=True)
class SkillChange:
    """What happened to one skill folder."""

    skill: str
    action: str  # written | updated | unchanged | removed | skipped
    tool: str = ""  # NAME@VERSION the folder holds (or held)
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"skill": self.skill, "action": self.action, "tool": self.tool, "reason": self.reason}


@dataclass(frozen=True)
class SkillReport:
    directory: Path
    changes: tuple[SkillChange, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not any(c.action == SKIPPED for c in self.changes)

    def count(self, action: str) -> int:
        return sum(c.action == action for c in self.changes)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "directory": str(self.directory), "skills": [c.to_dict() for c in self.changes]}


def export_skills(
    library: ToolLibrary, directory: Path, names: Sequence[str] = (), *, home: Path | None = None
) -> SkillReport:
    """Write the skill of each served tool (or of each tool in ``names``) into ``directory``.

    A named tool that is not served is reported as skipped, with the reason; ``home`` is
    the toolsmith home the scripts fall back to when ``TOOLSMITH_HOME`` is not set.
    """
    directory.mkdir(parents=True, exist_ok=True)
    tools, changes = _wanted(library, names)
    changes += _write_all(tools, directory, home)
    return SkillReport(directory, tuple(changes))


def sync_skills(library: ToolLibrary, directory: Path, *, home: Path | None = None) -> SkillReport:
    """Make ``directory`` hold exactly the served tools' skills (among the folders toolsmith wrote)."""
    directory.mkdir(parents=True, exist_ok=True)
    tools = _served(library)
    changes = _write_all(tools, directory, home)
    wanted = {skill_name(t.name) for t in tools}
    for folder in sorted(p for p in directory.iterdir() if p.is_dir() and p.name not in wanted):
        marker = read_marker(folder)
        if marker is None:
            continue  # not ours: never touched
        shutil.rmtree(folder)
        held = f"{marker.get('tool')}@{marker.get('version')}"
        version = marker.get("version")
        why = _why_gone(library, str(marker.get("tool")), version if isinstance(version, int) else None)
        changes.append(SkillChange(folder.name, REMOVED, held, why))
    return SkillReport(directory, tuple(changes))


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker toolsmith left in a folder it exported, or None (not ours, or unreadable)."""
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("exported_by") == "toolsmith" else None


def _served(library: ToolLibrary) -> list[ToolVersion]:
    return [t for t in library.list_tools() if t.status is Status.ACTIVE]


def _wanted(library: ToolLibrary, names: Sequence[str]) -> tuple[list[ToolVersion], list[SkillChange]]:
    if not names:
        return _served(library), []
    tools: list[ToolVersion] = []
    skipped: list[SkillChange] = []
    for name in dict.fromkeys(names):
        served = library.served(name) if name in library else None
        if served is None:
            why = "no such tool in the library" if name not in library else _why_gone(library, name)
            skipped.append(SkillChange(skill_name(name) or name, SKIPPED, name, why))
        else:
            tools.append(served)
    return tools, skipped


def _why_gone(library: ToolLibrary, name: str, version: int | None = None) -> str:
    """Why ``name`` has no skill now: the state of the version the folder held (or of the tool)."""
    try:
        shown = library.get(name, version)
    except (ToolNotFoundError, LibraryError):
        return "the tool is no longer in the library"
    why = f" ({shown.status_reason})" if shown.status_reason else ""
    return f"no version is served: {shown.ref} is {shown.status.value}{why}"


def _write_all(tools: list[ToolVersion], directory: Path, home: Path | None) -> list[SkillChange]:
    changes: list[SkillChange] = []
    taken: dict[str, str] = {}
    for tool in tools:
        files = render(tool, home=home)
        if not files.name:
            changes.append(SkillChange(tool.name, SKIPPED, tool.ref, "the name leaves no letters or digits"))
        elif files.name in taken:
            why = f"{taken[files.name]} already has the skill name {files.name!r}"
            changes.append(SkillChange(files.name, SKIPPED, tool.ref, why))
        else:
            taken[files.name] = tool.name
            changes.append(_write(tool, files, directory))
    return changes


def _write(tool: ToolVersion, files: SkillFiles, directory: Path) -> SkillChange:
    target = directory / files.name
    marker = read_marker(target) if target.exists() else None
    if target.exists() and marker is None:
        why = f"{target} exists and was not exported by toolsmith; it is left alone"
        return SkillChange(files.name, SKIPPED, tool.ref, why)
    if marker is not None and _same(target, files, tool):
        return SkillChange(files.name, UNCHANGED, tool.ref)
    staging = Path(tempfile.mkdtemp(prefix=f".{files.name}.", dir=directory))
    try:
        for relative, text in files.files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            if relative in files.executable:
                path.chmod(0o755)
        (staging / MARKER).write_text(_marker_text(tool), encoding="utf-8")
        staging.chmod(0o755)
        if target.exists():
            old = target.with_name(f".{files.name}.old-{os.getpid()}")
            target.rename(old)
            staging.rename(target)
            shutil.rmtree(old)
        else:
            staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    if marker is None:
        return SkillChange(files.name, WRITTEN, tool.ref)
    return SkillChange(files.name, UPDATED, tool.ref, f"was {marker.get('tool')}@{marker.get('version')}")


def _marker_text(tool: ToolVersion) -> str:
    data = {"exported_by": "toolsmith", "tool": tool.name, "version": tool.version, "hash": tool.hash}
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _same(target: Path, files: SkillFiles, tool: ToolVersion) -> bool:
    """Whether the folder already holds exactly these files for this version."""
    expected = {**files.files, MARKER: _marker_text(tool)}
    try:
        present = {str(p.relative_to(target)): p.read_text(encoding="utf-8") for p in target.rglob("*") if p.is_file()}
    except (OSError, UnicodeDecodeError):
        return False
    return present == expected
