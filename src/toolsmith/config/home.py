"""Whether the toolsmith home can hold toolsmith's data: a folder, and one that can be written.

A home that is a file (or sits under one) can never work, so :meth:`Settings.load` refuses
it with a sentence naming the path and the fix. A read-only home (a read-only mount) still
serves browsing: the library opens read-only, and commands that write say why they cannot.
"""

from __future__ import annotations

import os
from pathlib import Path


def _nearest_existing(path: Path) -> Path | None:
    for part in (path, *path.parents):
        if os.path.lexists(part):
            return part
    return None


def home_problem(home: Path) -> str | None:
    """Why ``home`` cannot be toolsmith's home (a file stands where a folder must), or None."""
    part = _nearest_existing(home)
    if part is None or part.is_dir():
        return None
    where = "it is a file" if part == home else f"{part} is a file"
    return (
        f"The toolsmith home {home} cannot be used: {where}, not a folder. Point TOOLSMITH_HOME at a folder, "
        f"or move {part} out of the way."
    )


def is_read_only(folder: Path) -> bool:
    """True when nothing can be written in ``folder`` (or, while it does not exist, in the
    nearest parent that does): a read-only mount, or a folder this user may not write."""
    part = _nearest_existing(folder)
    return part is not None and part.is_dir() and not os.access(part, os.W_OK)


def on_read_only_mount(path: Path) -> bool:
    """True when ``path`` lies on a file system mounted read-only."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False
