"""A small seccomp filter for sandboxed runs: deny the syscalls no tool needs.

Namespaces already hide the host; this filter removes kernel attack surface and the
in-sandbox tricks namespaces do not stop: ``ptrace``, ``process_vm_*`` and ``pidfd_getfd``
(attaching to bwrap's own init would stall the run until its timeout), keyrings, BPF, perf events,
userfaultfd, io_uring, module loading, (re)mounting, new namespaces. Denied calls fail
with ``EPERM``; everything else is allowed. System calls of a foreign ABI (32-bit
``int 0x80`` on x86-64, x32) are denied wholesale, so the table cannot be sidestepped.

``deny_unix_sockets`` also refuses ``socket(AF_UNIX, ...)`` (``socketpair`` stays
allowed). Runs with the network on use it where the kernel cannot scope abstract unix
sockets with Landlock (:mod:`toolsmith.isolation.landlock`): sharing the host's network
namespace shares its abstract sockets, and a filter cannot tell an abstract address
from a path, so every new unix socket is refused.

A second filter (:func:`guard_program`), stacked on the first in every cold run (bwrap
installs both) and in every warm call's child, refuses what the code could do to the
processes that run it: signals, pidfds, rlimit and scheduling changes aimed at the
sandbox's init or a warm worker.

The programs are classic BPF, built here byte by byte, for x86-64 and aarch64; on other
architectures no filter is installed and both builders return None.
"""

from __future__ import annotations

import platform
import struct
from collections.abc import Sequence

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_LD_ARG0 = 16  # offsetof(struct seccomp_data, args[0]), low word on little-endian
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_EPERM = 1
_X32_BIT = 0x40000000

# name: (x86-64 number, aarch64 number)
DENIED: dict[str, tuple[int, int]] = {
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "pidfd_getfd": (438, 438),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "unshare": (272, 97),
    "setns": (308, 268),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "reboot": (169, 142),
    "acct": (163, 89),
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
}
_AF_UNIX = 1
# socket(2): (x86-64 number, aarch64 number)
_SOCKET = (41, 198)
_ARCHES = {"x86_64": (0xC000003E, 0), "amd64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1), "arm64": (0xC00000B7, 1)}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None, *, deny_unix_sockets: bool = False) -> bytes | None:
    """The filter as raw ``struct sock_filter`` records, or None on an unknown arch."""
    arch = _ARCHES.get((machine or platform.machine()).lower())
    if arch is None:
        return None
    audit_arch, column = arch
    numbers = sorted({pair[column] for pair in DENIED.values()})
    # (code, k, jump-if-true target, jump-if-false target); targets are labels or None (next).
    body: list[tuple[int, int, str | None, str | None]] = []
    if column == 0:
        body.append((_JGE_K, _X32_BIT, "deny", None))
    body += [(_JEQ_K, nr, "deny", None) for nr in numbers]
    if deny_unix_sockets:
        body += [
            (_JEQ_K, _SOCKET[column], None, "allow"),
            (_LD_W_ABS, _LD_ARG0, None, None),
            (_JEQ_K, _AF_UNIX, "deny", "allow"),
        ]
    head = [(_LD_W_ABS, 4, None, None), (_JEQ_K, audit_arch, None, "deny"), (_LD_W_ABS, 0, None, None)]
    return _assemble([*head, *body])


# --- the second filter: a call's guard, cold and warm ---------------------------------------

# Calls whose first (or second) argument names a target process: refused when it is one
# of the protected pids (the worker, the sandbox's init), or minus one of them, or -1.
# name: (x86-64 number, aarch64 number, index of the pid argument)
_TARGETED: dict[str, tuple[int, int, int]] = {
    "kill": (62, 129, 0),
    "tkill": (200, 130, 0),
    "tgkill": (234, 131, 0),
    "rt_sigqueueinfo": (129, 138, 0),
    "rt_tgsigqueueinfo": (297, 240, 0),
    "pidfd_open": (434, 434, 0),
    "prlimit64": (302, 261, 0),
    "sched_setaffinity": (203, 122, 0),
    "sched_setscheduler": (144, 119, 0),
    "sched_setparam": (142, 118, 0),
    "sched_setattr": (314, 274, 0),
    "setpriority": (141, 140, 1),
}
# Refused outright: a pidfd can also come from opening /proc/<pid>; SysV and POSIX message
# IPC objects would outlive a warm call and reach the next one (refused cold as well, so a
# tool does not work on one path and fail on the other).
_GUARD_DENIED: dict[str, tuple[int, int]] = {
    "pidfd_send_signal": (424, 424),
    "process_madvise": (440, 440),
    "process_mrelease": (448, 448),
    "ioprio_set": (251, 30),
    "migrate_pages": (256, 238),
    "move_pages": (279, 239),
    "shmget": (29, 194),
    "msgget": (68, 186),
    "semget": (64, 190),
    "mq_open": (240, 180),
}
_JA = 0x05
_ARG = 16  # offsetof(struct seccomp_data, args); each argument is 8 bytes, low word first


def guard_program(protected: tuple[int, ...], machine: str | None = None) -> bytes | None:
    """The second filter, stacked on :func:`program`, or None on an unknown arch.

    A warm call's child installs it itself (protecting the worker and the sandbox's
    init); bwrap installs it for a cold run (protecting the init, the program's parent).

    pid arguments are compared on their low 32 bits, which is all the kernel reads of a
    ``pid_t``. ``setpriority`` is also refused for anything but ``PRIO_PROCESS`` (a whole
    process group or user would include the worker).
    """
    arch = _ARCHES.get((machine or platform.machine()).lower())
    if arch is None:
        return None
    audit_arch, column = arch
    banned = sorted({p & 0xFFFFFFFF for pid in protected for p in (pid, -pid)} | {0xFFFFFFFF})
    code: list[tuple[int, int, str | None, str | None] | str] = [
        (_LD_W_ABS, 4, None, None),
        (_JEQ_K, audit_arch, None, "deny"),
        (_LD_W_ABS, 0, None, None),
    ]
    code += [(_JEQ_K, numbers[column], "deny", None) for numbers in _GUARD_DENIED.values()]
    for name, (x86, arm, index) in _TARGETED.items():
        skip = f"after-{name}"
        code.append((_JEQ_K, (x86, arm)[column], None, skip))
        if name == "setpriority":
            code += [(_LD_W_ABS, _ARG, None, None), (_JEQ_K, 0, None, "deny")]
        code.append((_LD_W_ABS, _ARG + 8 * index, None, None))
        code += [(_JEQ_K, value, "deny", None) for value in banned]
        code += [(_JA, 0, "allow", None), skip]
    return _assemble(code)


def _assemble(code: Sequence[tuple[int, int, str | None, str | None] | str]) -> bytes:
    """Resolve jump labels (plain strings anywhere, and ``allow``/``deny``); ``JA`` jumps to one.

    The program ends with ``RET ALLOW`` then ``RET EPERM``.
    """
    where: dict[str, int] = {}
    ops: list[tuple[int, int, str | None, str | None]] = []
    for item in code:
        if isinstance(item, str):
            where[item] = len(ops)
        else:
            ops.append(item)
    where["allow"], where["deny"] = len(ops), len(ops) + 1
    records = []
    for i, (op, k, true, false) in enumerate(ops):
        if op == _JA:
            records.append(_op(op, where[true] - i - 1 if true else 0))
            continue
        jt = where[true] - i - 1 if true else 0
        jf = where[false] - i - 1 if false else 0
        records.append(_op(op, k, jt, jf))
    records.append(_op(_RET_K, _ALLOW))
    records.append(_op(_RET_K, _ERRNO | _EPERM))
    return b"".join(records)
