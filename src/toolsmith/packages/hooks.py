"""Startup hooks in a package environment: files its interpreter runs at every start.

Wheels run no code when they are installed, but they can ship code that runs at every
later start of the environment's interpreter: a ``.pth`` file with an ``import`` line,
or a ``sitecustomize``/``usercustomize`` module. Such a hook runs in every sandboxed run
of every tool of the library, not only in those that import its package, and during
later installs too: uv starts the environment's interpreter to inspect it while the
environment and the package cache are writable, which would let one package rewrite
the others (or the cache) behind their recorded hashes. So an environment holds no hook
a user has not accepted; :func:`foreign` finds them and the distribution that brought
each one (from the installed ``RECORD`` files, read as data; no code runs for that).
"""

from __future__ import annotations

import importlib.metadata
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from toolsmith.packages.index import normalize_name

# setuptools' distutils-precedence.pth only picks which distutils is imported.
BUILTIN_ALLOWED = frozenset({"setuptools"})
_MODULES = ("sitecustomize", "usercustomize")
_MAX_PTH_BYTES = 1 << 20


@dataclass(frozen=True)
class Hook:
    """A startup hook: its entry in site-packages and the distribution that installed it."""

    name: str
    owner: str | None


def _runs_code(path: Path) -> bool:
    """Whether ``site`` would execute something from this ``.pth`` (an ``import`` line)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(_MAX_PTH_BYTES)
    except OSError:
        return True  # unreadable here: do not assume it is harmless
    return any(line.startswith((b"import ", b"import\t")) for line in data.splitlines())


def names(site_packages: Path) -> list[str]:
    """Entries of ``site_packages`` the interpreter executes at start-up."""
    if not site_packages.is_dir():
        return []
    found = []
    for entry in site_packages.iterdir():
        if entry.name.endswith(".pth"):
            if _runs_code(entry):
                found.append(entry.name)
        elif entry.name.split(".", 1)[0] in _MODULES:
            found.append(entry.name)
    return sorted(found)


def _owners(site_packages: Path) -> dict[str, str]:
    """Top-level entry of site-packages -> normalised name of the distribution listing it."""
    owners: dict[str, str] = {}
    for dist in importlib.metadata.distributions(path=[str(site_packages)]):
        name = dist.metadata["Name"]
        for file in dist.files or []:
            parts = file.parts
            if name and parts and parts[0] != "..":
                owners.setdefault(parts[0], normalize_name(name))
    return owners


def foreign(site_packages: Path, allow: Iterable[str] = ()) -> list[Hook]:
    """The hooks in ``site_packages`` not brought by an allowed distribution."""
    found = names(site_packages)
    if not found:
        return []
    accepted = BUILTIN_ALLOWED | {normalize_name(a) for a in allow}
    owners = _owners(site_packages)
    hooks = [Hook(name, owners.get(name)) for name in found]
    return [hook for hook in hooks if hook.owner not in accepted]


def remove(site_packages: Path, hooks: Iterable[Hook]) -> None:
    """Delete the hooks' files, so no interpreter start runs them again."""
    for hook in hooks:
        path = site_packages / hook.name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
