"""How every sandboxed process starts: a typed launch plan and the one function that launches it.

A cold run, a warm worker, the bwrap probe, a package installer and the ``process``
backend all start the same way (:func:`launch`): a fresh cgroup sized by the plan's
limits; bwrap's arguments and seccomp filters in memfds; then a child that joins the
cgroups, enters the Landlock scope, drops to the sandbox's uid and sets its rlimits
(in that order, see :meth:`Confinement.hooks`) before it execs. A plan without a
:class:`Bwrap` part (the ``process`` backend, an installer where bwrap does not work)
takes the same path without the bwrap steps.

There is one copy of this sequence on purpose: a fix to it reaches every path. The
copies it replaced had drifted apart, and warm workers kept an ``RLIMIT_NPROC`` sized
by every task of the sandbox's host uid rather than by those in the run's own user
namespace (:func:`rlimit_preexec`).
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from toolsmith.isolation import landlock, seccomp, userns
from toolsmith.isolation.backend import supervise
from toolsmith.isolation.cgroups import RunCgroup
from toolsmith.isolation.result import ExecResult
from toolsmith.limits import Limits

Hook = Callable[[], None]
# What Popen accepts for a standard stream: a constant such as PIPE, an fd or a file.
Stream = int | IO[bytes] | None


@dataclass(frozen=True)
class Confinement:
    """How a bwrap launch is held beyond bwrap's own flags: the uid, the scope, the socket filter."""

    userns_fd: int | None
    scope: Hook | None
    deny_unix_sockets: bool

    @classmethod
    def for_run(cls, network: bool) -> Confinement:
        """A run of model code: the prepared user namespace (root launchers), the Landlock scope."""
        scope = landlock.scope_hook()
        return cls(userns_fd=userns.shared_fd(), scope=scope, deny_unix_sockets=network and scope is None)

    @classmethod
    def for_installer(cls) -> Confinement:
        """An installer keeps the launcher's uid (it writes the environment), always with the network."""
        scope = landlock.scope_hook()
        return cls(userns_fd=None, scope=scope, deny_unix_sockets=scope is None)

    @property
    def owner(self) -> int | None:
        """The host uid the program runs as when it is not the launcher's."""
        return userns.SANDBOX_ID if self.userns_fd is not None else None

    @property
    def fds(self) -> list[int]:
        return [self.userns_fd] if self.userns_fd is not None else []

    def hooks(self, rlimits: Hook | None = None) -> list[Hook | None]:
        """Pre-exec steps after joining the cgroups: the scope, the uid drop, then rlimits.

        The rlimits come last because ``RLIMIT_NPROC`` must only bind once the run is
        counted in its namespace: a uid drop over the limit, counted with every host task
        of :data:`~toolsmith.isolation.userns.SANDBOX_ID`, would make the exec of bwrap
        fail, while the limit itself is sized for the namespace's count (see
        :func:`rlimit_preexec`). They only lower limits, which needs no privilege.
        """
        return [self.scope, userns.drop_hook() if self.userns_fd is not None else None, rlimits]


@dataclass(frozen=True)
class Bwrap:
    """The bwrap part of a launch: the executable, its arguments and how it is held.

    ``guard`` lists the pids the second seccomp filter
    (:func:`~toolsmith.isolation.seccomp.guard_program`) protects inside; None installs no
    such filter (a warm worker installs it in each call's child itself). ``status``
    asks bwrap to report the command's exit on a status fd (see :attr:`Launched.exited`).
    """

    path: str
    args: tuple[str, ...]
    confinement: Confinement
    guard: tuple[int, ...] | None = None
    status: bool = False


@dataclass(frozen=True)
class LaunchPlan:
    """Everything one launch needs: what runs, where, under which limits, inside what.

    ``command`` runs inside bwrap when there is a ``bwrap`` part, else as a plain child
    with ``env`` as its whole environment (bwrap itself always starts from an empty one
    and sets the program's inside). ``rlimits`` false leaves the rlimits alone (an
    installer has only its cgroup: a source build may take minutes of CPU).
    ``before_exec`` is one more pre-exec step of the caller's, run after joining the cgroups.
    ``kind`` is the group of the runs' parent cgroup it runs under (``warm`` or ``cold``,
    see :func:`~toolsmith.isolation.cgroups.runs_parent`).
    """

    command: tuple[str, ...]
    cwd: Path
    limits: Limits
    bwrap: Bwrap | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    rlimits: bool = True
    before_exec: Hook | None = None
    kind: str = "cold"


@dataclass
class Launched:
    """A started plan: the process, its cgroup (the caller closes it) and bwrap's status fd."""

    proc: subprocess.Popen[bytes]
    cgroup: RunCgroup
    started: float
    status_fd: int | None = None

    def exited(self) -> bool:
        """Whether bwrap's status stream reports that the sandboxed command exited."""
        if self.status_fd is None:
            return False
        os.lseek(self.status_fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(self.status_fd, 65536):
            chunks.append(chunk)
        return b'"exit-code"' in b"".join(chunks)

    def close_status(self) -> None:
        if self.status_fd is not None:
            os.close(self.status_fd)
            self.status_fd = None


def launch(plan: LaunchPlan, *, stdin: Stream, stdout: Stream, stderr: Stream) -> Launched:
    """Start ``plan``: its cgroup, then the child, confined before it execs. The one way in.

    The caller owns the process and its cgroup: closing the cgroup kills everything in it.
    """
    confinement = plan.bwrap.confinement if plan.bwrap is not None else None
    argv, fds, status = _argv(plan)
    try:
        cgroup = RunCgroup.create(plan.limits, kind=plan.kind)
        try:
            if plan.limits.idle_from_start:  # it starts where it would yield to
                cgroup.yield_cpu()
            rlimits = None
            if plan.rlimits:
                rlimits = rlimit_preexec(
                    plan.limits,
                    pids_cgroup="pids" in cgroup.active,
                    run_uid=confinement.owner if confinement else None,
                    userns_fd=confinement.userns_fd if confinement else None,
                )
            hooks = confinement.hooks(rlimits) if confinement else [rlimits]
            started = time.monotonic()
            proc = subprocess.Popen(
                argv,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                cwd=plan.cwd,
                env={} if plan.bwrap is not None else dict(plan.env),
                start_new_session=True,
                preexec_fn=chain(cgroup.joiner(), plan.before_exec, *hooks),
                close_fds=True,
                pass_fds=[*fds, *([] if status is None else [status]), *(confinement.fds if confinement else [])],
            )
        except BaseException:
            cgroup.close()
            raise
    except BaseException:
        if status is not None:
            os.close(status)
        raise
    finally:
        for fd in fds:
            os.close(fd)
    return Launched(proc, cgroup, started, status)


def run_plan(plan: LaunchPlan, *, backend: str, network: bool) -> tuple[ExecResult, bool]:
    """Launch ``plan`` and supervise it to its end (see :func:`~toolsmith.isolation.backend.supervise`).

    Returns the result and whether bwrap reported the command's exit (False without a status fd).
    """
    started = launch(plan, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        result = supervise(
            started.proc,
            started=started.started,
            limits=plan.limits,
            backend=backend,
            network=network,
            cgroup=started.cgroup,
            signal_exit_offset=plan.bwrap is not None,
        )
        return result, started.exited()
    finally:
        started.close_status()


def _argv(plan: LaunchPlan) -> tuple[list[str], list[int], int | None]:
    """(argv, memfds to pass and close after the start, bwrap's status fd or None)."""
    if plan.bwrap is None:
        return list(plan.command), [], None
    spec = plan.bwrap
    status = os.memfd_create("bwrap-status", 0) if spec.status else None
    programs = [seccomp.program(deny_unix_sockets=spec.confinement.deny_unix_sockets)]
    if spec.guard is not None:
        programs.append(seccomp.guard_program(spec.guard))
    fds: list[int] = []
    extra: list[str] = [] if status is None else ["--json-status-fd", str(status)]
    for program in programs:
        if program is not None:  # None on an architecture without a filter
            fds.append(_memfd("bwrap-seccomp", program))
            # Repeatable, and stacked in order: every filter applies to the program.
            extra += ["--add-seccomp-fd", str(fds[-1])]
    # The arguments go in a memfd (``--args``), which keeps host paths out of the command
    # line that ``/proc/1/cmdline`` shows inside the sandbox.
    fds.append(_memfd("bwrap-args", b"".join(a.encode() + b"\0" for a in [*spec.args, *extra])))
    return [spec.path, "--args", str(fds[-1]), "--", *plan.command], fds, status


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def chain(*hooks: Hook | None) -> Hook:
    """One pre-exec hook running ``hooks`` in order (``None`` entries are skipped)."""
    present = [hook for hook in hooks if hook is not None]

    def run_all() -> None:
        for hook in present:
            hook()

    return run_all


def rlimit_preexec(
    limits: Limits, *, pids_cgroup: bool = False, run_uid: int | None = None, userns_fd: int | None = None
) -> Hook:
    """A pre-exec hook applying the limits as rlimits (inherited by every descendant).

    The CPU hard limit sits one second above the soft one, so the kernel first sends
    SIGXCPU (reported as ``cpu``) and only then SIGKILL. Values never exceed a hard
    limit the process already has. ``RLIMIT_NPROC`` counts *all* processes of the real
    user, so with a pids cgroup doing that job it is left alone, and without one it
    allows ``max_procs`` on top of what the kernel already counts for the run's user (see
    :func:`_counted_tasks`). ``run_uid`` is the uid the run ends up with when the launcher
    switches to another one before the exec, ``userns_fd`` the user namespace it joins.
    """
    mb = 1024 * 1024
    pairs = [
        (resource.RLIMIT_AS, limits.memory_mb * mb, limits.memory_mb * mb),
        (resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * mb, limits.file_size_mb * mb),
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if not pids_cgroup:
        uid = os.getuid() if run_uid is None else run_uid
        allowed = limits.max_procs + (_counted_tasks(uid, userns_fd) if uid != 0 else 0)
        pairs.append((resource.RLIMIT_NPROC, allowed, allowed))
    clamped = []
    for which, soft, hard in pairs:
        current = resource.getrlimit(which)[1]
        if current != resource.RLIM_INFINITY:
            soft, hard = min(soft, current), min(hard, current)
        clamped.append((which, soft, hard))

    def apply() -> None:
        for which, soft, hard in clamped:
            resource.setrlimit(which, (soft, hard))

    return apply


def _counted_tasks(real_uid: int, userns_fd: int | None = None) -> int:
    """How many tasks (threads) the kernel counts against the run's ``RLIMIT_NPROC`` now.

    The kernel counts per user namespace and uid. A run that joins a prepared namespace
    (a root launcher's, see :mod:`toolsmith.isolation.userns`) is counted with the tasks in
    that namespace only, so only those may raise its allowance: tasks of the same host uid
    in another namespace (another toolsmith process's runs) are not counted against it,
    and adding them let a fork bomb grow by their number. Without a namespace (a run that
    keeps the launcher's uid) every task of the host uid counts.
    """
    uid, total = str(real_uid), 0
    ns = os.fstat(userns_fd) if userns_fd is not None else None
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if ns is not None:
                theirs = os.stat(Path(entry.path, "ns", "user"))
                if (theirs.st_dev, theirs.st_ino) != (ns.st_dev, ns.st_ino):
                    continue
            fields = dict(
                line.split(":", 1) for line in Path(entry.path, "status").read_text().splitlines() if ":" in line
            )
            if fields.get("Uid", "").split()[:1] == [uid]:
                total += int(fields.get("Threads", "1").strip() or 1)
    return total
