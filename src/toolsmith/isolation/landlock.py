"""Landlock scoping: no abstract unix socket and no signal crosses the sandbox boundary.

Abstract unix sockets belong to a network namespace, not to the file system. With the
network on, a run shares the host's network namespace, so without more it could connect
to every host service listening on an abstract socket (X servers, some D-Bus buses,
container shims) and present its uid in ``SO_PEERCRED``. No namespace short of a private
network stops that. Landlock's scopes (ABI 6, Linux 6.12) do: a process inside a scoped
domain cannot connect to an abstract socket created outside it, nor signal a process
outside it. The launcher restricts itself in its pre-exec hook, so bwrap and everything
it starts inherit the domain; the host side is unaffected.

Where the kernel lacks these scopes, :func:`scope_hook` returns None and the caller
falls back to the seccomp filter's ``socket(AF_UNIX, ...)`` denial for runs with the
network on (see :mod:`toolsmith.isolation.seccomp`).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable

# Landlock's system calls have the same numbers on every architecture (generic table).
_CREATE_RULESET = 444
_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1
SCOPE_SIGNAL = 2
SCOPE_ABI = 6
_PR_SET_NO_NEW_PRIVS = 38


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


_lock = threading.Lock()
_state: dict[str, int | None] = {}


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi() -> int:
    """The kernel's Landlock ABI version, 0 where Landlock is missing or disabled."""
    with _lock:
        if "abi" not in _state:
            try:
                version = int(_libc().syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION))
            except (OSError, AttributeError):
                version = 0
            _state["abi"] = max(version, 0)
        return _state["abi"] or 0


def _ruleset() -> int | None:
    """A ruleset fd (created once per process) with only the two scopes, or None."""
    if abi() < SCOPE_ABI:
        return None
    with _lock:
        if "ruleset" not in _state:
            attr = _RulesetAttr(0, 0, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
            fd = int(_libc().syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0))
            _state["ruleset"] = fd if fd >= 0 else None
        return _state["ruleset"]


def available() -> bool:
    """Whether runs can be scoped here."""
    return _ruleset() is not None


def scope_hook() -> Callable[[], None] | None:
    """A pre-exec hook putting the child into the scoped domain, or None if unsupported.

    The hook fails (and with it the launch) rather than start an unscoped sandbox.
    ``no_new_privs`` is set first because an unprivileged launcher needs it; bwrap sets
    it anyway.
    """
    fd = _ruleset()
    if fd is None:
        return None
    libc = _libc()

    def restrict() -> None:
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_RESTRICT_SELF, fd, 0) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"landlock_restrict_self failed: {os.strerror(errno)}")

    return restrict
