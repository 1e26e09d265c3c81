"""What a new tool really needs: its pins and the sources that belong to them.

A task installs whatever the model tried, abandoned attempts included (a moon tool built
on ``ephem`` once also pinned ``fullmoon``, ``skyfield``, ``numpy``, ``jplephem`` and
``sgp4``). A stored tool must carry only what its own code needs: the distributions
that provide the modules it imports, the ones it loads as data (``tzdata`` behind
``zoneinfo``), and their dependency closure, nothing else. Its
provenance likewise keeps the pages that belong to those packages (or to no package at
all) and drops the pages of packages the model read and then did not use.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Protocol

from toolsmith.packages.index import normalize_name
from toolsmith.packages.policy import Request
from toolsmith.packages.requirement import Requirement

_STDLIB = frozenset(sys.stdlib_module_names)
# Standard-library modules that load their data from a package when it is installed.
_DATA_FOR = {"zoneinfo": "tzdata"}


class Environment(Protocol):
    """The part of the package environment (``PackageEnv``) the pins need."""

    @property
    def site_packages(self) -> Path: ...

    def closure(self, requests: Iterable[Request]) -> list[tuple[str, str]]: ...


def imported_modules(code: str) -> set[str]:
    """Top-level names of the non-standard-library modules ``code`` imports."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and _dynamic_import(node):
            found.add(str(node.args[0].value).split(".")[0])  # type: ignore[attr-defined]
    return {name for name in found if name and name not in _STDLIB}


def _dynamic_import(node: ast.Call) -> bool:
    func = node.func
    named = (isinstance(func, ast.Name) and func.id == "__import__") or (
        isinstance(func, ast.Attribute) and func.attr == "import_module"
    )
    return named and bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)


def providers(site_packages: Path, modules: set[str]) -> set[str]:
    """Normalised names of the distributions in ``site_packages`` that provide ``modules``."""
    if not modules or not site_packages.is_dir():
        return set()
    found: set[str] = set()
    for dist in metadata.distributions(path=[str(site_packages)]):
        name = dist.metadata["Name"]
        if name and _top_level(dist) & modules:
            found.add(normalize_name(name))
    return found


def _top_level(dist: metadata.Distribution) -> set[str]:
    text = dist.read_text("top_level.txt")
    if text:
        return {line.strip() for line in text.splitlines() if line.strip()}
    tops: set[str] = set()
    for file in dist.files or ():
        first = file.parts[0] if file.parts else ""
        if not first or first.endswith((".dist-info", ".egg-info", ".data")) or first == "..":
            continue
        tops.add(first[:-3] if first.endswith(".py") else first.split(".")[0])
    return tops


def tool_requirements(
    code: str, installed: Mapping[str, Requirement], env: Environment | None
) -> tuple[Requirement, ...]:
    """The task's pins that ``code`` needs: providers of its imports, the packages it loads
    as data (see :func:`data_packages`), and their closure.

    Without an environment to ask, every pin of the task is kept (the safe side: a
    missing pin breaks the tool, an extra one only bloats it).
    """
    pins = sorted(installed.values(), key=lambda r: r.name)
    if env is None:
        return tuple(pins)
    provided = providers(env.site_packages, imported_modules(code)) | data_packages(code, installed)
    needed = {normalize_name(name) for name, _ in env.closure(Request(name) for name in sorted(provided))}
    return tuple(r for r in pins if normalize_name(r.name) in needed)


def data_packages(code: str, installed: Mapping[str, Requirement]) -> set[str]:
    """Packages the task installed that ``code`` loads as data rather than imports: the
    data behind a standard-library module it imports (``zoneinfo`` reads ``tzdata``), or a
    package it names in a string (``importlib.resources.files("tzdata")``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names = {normalize_name(name) for name in installed}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(_DATA_FOR.get(alias.name.split(".")[0], "") for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(_DATA_FOR.get(node.module.split(".")[0], ""))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 100:
            found.add(normalize_name(node.value))
    return {name for name in found if name and normalize_name(name) in names}


def tool_sources(sources: Iterable[str], used: set[str], unused: set[str]) -> tuple[str, ...]:
    """The sources that belong to packages the tool uses, or to no package at all.

    ``used`` and ``unused`` are normalised project names: what the tool's pins hold, and
    what the task installed without using. A package-index project page belongs to its
    project; another page belongs to the projects its host or path names.
    """
    kept = []
    for url in sources:
        page = _PROJECT_PAGE.search(url)
        owners = {normalize_name(page.group(1))} if page else _mentions(url, used | unused)
        if not owners or owners & used:
            kept.append(url)
    return tuple(kept)


_PROJECT_PAGE = re.compile(r"/project/([A-Za-z0-9][A-Za-z0-9._-]*)")


def _mentions(url: str, names: set[str]) -> set[str]:
    """The project names that appear as whole words in a URL's host or path."""
    lowered = url.lower()
    return {n for n in names if re.search(rf"(?<![a-z0-9]){re.escape(n)}(?![a-z0-9])", lowered.replace("_", "-"))}
