"""The user namespace runs join when toolsmith runs as root, so the program is never host root.

bwrap started by root maps the sandbox's uid 0 to the host's uid 0. Capabilities are
dropped, but the kernel still treats such a process as root wherever it compares uids
rather than checking a capability: every sysctl under ``/proc/sys`` is writable
(``kernel.core_pattern`` alone is code execution on the host), root-only ``/proc``
files are readable, per-user limits such as inotify instances are shared with every
root process of the machine, and a host service that trusts its peers by
``SO_PEERCRED`` sees root.

So a root launcher prepares one user namespace per process that maps uid and gid 0
inside to :data:`SANDBOX_ID` outside, an id no account of the host uses, and 1 inside to
the host's root. Creating further user namespaces inside it is disabled. bwrap is started
as :data:`SANDBOX_ID` (see :func:`drop_hook`) and joins it with ``--userns``; as its
owner it holds capabilities there while it builds the sandbox, which is what lets it
reach root-owned paths such as an interpreter under ``/root`` (host root is mapped, as
uid 1). It drops them before the program starts, so the program is uid 0 inside,
:data:`SANDBOX_ID` outside, without a capability.

Any host process running as :data:`SANDBOX_ID` would also hold those capabilities, which
is why the id must be one the host's passwd does not know (checked before use). A
non-root launcher needs none of this: its sandbox is its own unprivileged uid.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import subprocess
import threading
from collections.abc import Callable

from toolsmith.isolation.backend import base_python

SANDBOX_ID = 2_130_000_000
_CLONE_NEWUSER = 0x10000000
_HELPER_TIMEOUT_S = 10.0
# Runs as root, drops to SANDBOX_ID, creates the namespace, then (once the parent has
# written the maps, which makes it root in there) forbids nested user namespaces.
_HELPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.setgroups([]); os.setresgid({id}, {id}, {id}); os.setresuid({id}, {id}, {id})
if libc.unshare({flag}) != 0:
    sys.exit(3)
os.write(1, b"u"); os.read(0, 1)
with open("/proc/sys/user/max_user_namespaces", "w") as fh:
    fh.write("0")
os.write(1, b"d"); os.read(0, 1)
"""

_lock = threading.Lock()
_state: dict[str, object] = {}


def wanted() -> bool:
    """Whether runs need the namespace: only a root launcher maps the sandbox to host root."""
    return os.geteuid() == 0


def shared_fd() -> int | None:
    """The namespace's fd (created on first use), or None when not root or not possible."""
    if not wanted():
        return None
    with _lock:
        if "fd" not in _state:
            fd, reason = _create()
            _state["fd"], _state["reason"] = fd, reason
        found = _state["fd"]
        return found if isinstance(found, int) else None


def reason() -> str:
    """Why runs are (or are not) confined to :data:`SANDBOX_ID`; for ``toolsmith doctor``."""
    if not wanted():
        return f"runs keep the launcher's own uid {os.geteuid()}"
    shared_fd()
    return str(_state.get("reason", ""))


def _create() -> tuple[int | None, str]:
    with contextlib.suppress(KeyError):
        taken = pwd.getpwuid(SANDBOX_ID).pw_name
        return None, f"uid {SANDBOX_ID} belongs to host account {taken!r}; runs stay mapped to root"
    helper = _HELPER.format(id=SANDBOX_ID, flag=_CLONE_NEWUSER)
    try:
        proc = subprocess.Popen(
            [str(base_python()), "-I", "-S", "-c", helper],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={},
            cwd="/",
        )
    except OSError as exc:
        return None, f"the user namespace helper could not start ({exc}); runs stay mapped to root"
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if proc.stdout.read(1) != b"u":
            return None, "user namespaces cannot be created here; runs stay mapped to root"
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{proc.pid}/{name}", "w") as fh:
                fh.write(f"0 {SANDBOX_ID} 1\n1 0 1\n")
        proc.stdin.write(b"g")
        proc.stdin.flush()
        if proc.stdout.read(1) != b"d":
            return None, "nested user namespaces could not be disabled; runs stay mapped to root"
        fd = os.open(f"/proc/{proc.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        return None, f"the user namespace could not be set up ({exc}); runs stay mapped to root"
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            proc.wait(timeout=_HELPER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return fd, f"runs are uid {SANDBOX_ID} on the host (a private user namespace), never root"


def drop_hook() -> Callable[[], None]:
    """The last pre-exec step of a root launcher: become :data:`SANDBOX_ID`, no groups."""

    def drop() -> None:
        os.setgroups([])
        os.setresgid(SANDBOX_ID, SANDBOX_ID, SANDBOX_ID)
        os.setresuid(SANDBOX_ID, SANDBOX_ID, SANDBOX_ID)

    return drop


def bwrap_args(fd: int) -> list[str]:
    """bwrap's namespace flags for joining the namespace (instead of ``--unshare-user``)."""
    return ["--userns", str(fd), "--uid", "0", "--gid", "0"]
