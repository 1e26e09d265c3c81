"""Per-run control groups: a hard cap on processes, memory and CPU, and a reliable kill.

rlimits alone do not hold a fork bomb here: ``RLIMIT_NPROC`` is not enforced for the
real uid 0, and a process that calls ``setsid`` leaves its process group. A control
group does both jobs. Each run gets a fresh child of *our own* cgroup (so any limit
placed on toolsmith still applies above it) for the ``pids``, ``memory`` and ``cpu``
controllers, cgroup v2 when a usable controller exists there, else v1. The CPU quota
matters because ``RLIMIT_CPU`` is per process: within the pids cap, a hundred busy
processes would otherwise take every core of the machine until the wall-clock limit. The child
process joins it in its pre-exec hook, before the sandboxed program exists, so no fork
can escape. When the run ends everything still in the group is killed and the group
removed.

Runs do not sit directly in our cgroup: all of a process's runs share one parent,
``toolsmith-<pid>-runs``, with a ``warm`` group for warm tool workers and a ``cold``
group for everything else (:func:`runs_parent`). Each run's own quota caps that run, but
without the parent nothing capped them all together: a misbehaving tool's runs (a
hundred in flight, each within its limits) took every core from the server and from the
other tools. The parent's CPU quota leaves half a core to the host whatever the runs do;
within it the ``warm`` group weighs twice the ``cold`` one, so stored-tool calls keep
their share when cold runs pile up.

When cgroups are not writable (a normal user, a locked-down container) runs go ahead
without them and :func:`support` says why; non-root users get ``RLIMIT_NPROC`` enforced
by the kernel instead.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from toolsmith.limits import Limits

CONTROLLERS = ("pids", "memory", "cpu")
CPU_PERIOD_US = 100_000
# bwrap and its init take a couple of processes and a few MiB of their own.
PIDS_SLACK = 8
MEMORY_SLACK_MB = 64
_KILL_ROUNDS_S = 2.0
_counter = itertools.count()
# The runs' parent: its quota leaves the host this much of one core. Its weight (v1 shares)
# is two plain processes': a lower one slows every run whenever the machine is busy with
# anything else, and the quota, not the weight, is what keeps the host's headroom.
# Within it, warm workers weigh twice what cold runs do.
HOST_RESERVE_CORES = 0.5
PARENT_SHARES = 2048
KIND_SHARES = {"warm": 2048, "cold": 1024}
RUN_KINDS = tuple(KIND_SHARES)


@dataclass(frozen=True)
class Controller:
    """Where runs of one controller get their cgroup, or why they cannot."""

    name: str
    version: int | None = None
    parent: Path | None = None
    reason: str = ""

    @property
    def usable(self) -> bool:
        return self.parent is not None

    def to_dict(self) -> dict[str, object]:
        return {
            "available": self.usable,
            "version": self.version,
            "parent": str(self.parent) if self.parent else None,
            "reason": self.reason,
        }


_support: dict[str, Controller] | None = None


def support(*, refresh: bool = False) -> dict[str, Controller]:
    """Probe (once per process) which controllers this process can use for its runs."""
    global _support
    if _support is None or refresh:
        mounts = _mounts()
        memberships = _memberships()
        _support = {name: _probe(name, mounts, memberships) for name in CONTROLLERS}
    return _support


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(fstype, mount point, root inside the hierarchy, super options) of cgroup mounts."""
    found: list[tuple[str, str, str, set[str]]] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((tail[0], _unescape(fields[4]), _unescape(fields[3]), set(tail[2].split(","))))
    return found


def _unescape(text: str) -> str:
    return text.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def _memberships() -> dict[str, str]:
    """Controller name (``""`` for v2) -> this process's cgroup path in that hierarchy."""
    found: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                found[name] = parts[2]
    return found


def _locate(mount_point: str, mount_root: str, path: str) -> Path | None:
    if mount_root != "/":
        if not (path == mount_root or path.startswith(mount_root.rstrip("/") + "/")):
            return None
        path = path[len(mount_root) :] or "/"
    return Path(mount_point) / path.lstrip("/")


def _probe(name: str, mounts: list[tuple[str, str, str, set[str]]], memberships: dict[str, str]) -> Controller:
    reasons: list[str] = []
    for fstype, point, root, options in mounts:
        if fstype == "cgroup2" and "" in memberships:
            here = _locate(point, root, memberships[""])
            found = _probe_v2(name, here, reasons)
        elif fstype == "cgroup" and name in options and name in memberships:
            here = _locate(point, root, memberships[name])
            found = _probe_v1(name, here, reasons)
        else:
            continue
        if found is not None:
            return found
    if not reasons:
        reasons.append(f"no {name} cgroup controller is mounted")
    return Controller(name=name, reason="; ".join(reasons))


def _probe_v2(name: str, here: Path | None, reasons: list[str]) -> Controller | None:
    if here is None:
        return None
    try:
        available = (here / "cgroup.controllers").read_text().split()
        enabled = (here / "cgroup.subtree_control").read_text().split()
    except OSError as exc:
        reasons.append(f"cgroup v2 at {here} is not readable ({exc.strerror})")
        return None
    if name not in available:
        reasons.append(f"cgroup v2 at {here} has no {name} controller")
        return None
    if name not in enabled:
        try:
            (here / "cgroup.subtree_control").write_text(f"+{name}")
        except OSError as exc:
            reasons.append(f"cannot enable {name} for child cgroups of {here} ({exc.strerror})")
            return None
    return _writable(name, 2, here, reasons)


def _probe_v1(name: str, here: Path | None, reasons: list[str]) -> Controller | None:
    return None if here is None else _writable(name, 1, here, reasons)


def _writable(name: str, version: int, here: Path, reasons: list[str]) -> Controller | None:
    _sweep_stale(here)
    probe = here / f"toolsmith-probe-{os.getpid()}-{next(_counter)}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError as exc:
        reasons.append(f"cgroup v{version} {name} at {here} is not writable ({exc.strerror})")
        return None
    return Controller(name=name, version=version, parent=here, reason=f"cgroup v{version} at {here}")


def _sweep_stale(here: Path) -> None:
    """Remove empty run cgroups (and runs' parents) left behind by toolsmith processes that died."""
    with contextlib.suppress(OSError):
        for child in here.glob("toolsmith-*-*"):
            owner = child.name.split("-")[-2]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                for kind in RUN_KINDS if child.name.endswith("-runs") else ():
                    _sweep_stale(child / kind)
                    with contextlib.suppress(OSError):
                        (child / kind).rmdir()
                if child.name.endswith("-slow"):
                    _sweep_stale(child)
                with contextlib.suppress(OSError):
                    child.rmdir()


# --- one run ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Events:
    """A run's cgroup counters: forks the pids cap refused, processes the OOM killer ended.

    Both only ever grow, so what one warm call did is the difference between two readings.
    """

    pids_max: int = 0
    oom_kills: int = 0

    def since(self, before: Events) -> Events:
        return Events(self.pids_max - before.pids_max, self.oom_kills - before.oom_kills)


@dataclass
class RunCgroup:
    """The cgroups of one run. Create, join in the child, then :meth:`close` in the parent."""

    dirs: dict[str, tuple[int, Path]] = field(default_factory=dict)
    oom_killed: bool = False
    pids_limited: bool = False
    killed_leftovers: int = 0
    # Where the run's processes wait for idle CPU once it has run long (:meth:`yield_cpu`):
    # on v1 a CPU group of its own among the slow runs; None until then, and on v2.
    slow: Path | None = None
    yielded: bool = False
    cpu_home: Path | None = None  # our own CPU group, where the slow runs' group goes

    @classmethod
    def create(
        cls, limits: Limits, controllers: dict[str, Controller] | None = None, *, kind: str = "cold"
    ) -> RunCgroup:
        """Make this run's cgroups, under the runs' ``kind`` group, with their limits set.

        Missing controllers are skipped; where the runs' parent cannot be made, the run's
        group sits directly in our own, as before there was a parent.
        """
        run = cls()
        tag = f"toolsmith-{os.getpid()}-{next(_counter)}"
        made: set[Path] = set()  # on v2 one directory serves every controller
        for ctl in (controllers if controllers is not None else support()).values():
            if ctl.parent is None or ctl.version is None:
                continue
            path = runs_parent(ctl, kind) / tag
            if path not in made:
                try:
                    path.mkdir()
                except OSError:
                    continue
                made.add(path)
            try:
                _configure(ctl.name, ctl.version, path, limits)
            except OSError:
                if path not in run.paths:  # a limit that cannot be set is no limit: run without this group
                    made.discard(path)
                    _remove(path)
                continue
            run.dirs[ctl.name] = (ctl.version, path)
            if ctl.name == "cpu":
                run.cpu_home = ctl.parent
        return run

    @property
    def active(self) -> tuple[str, ...]:
        return tuple(self.dirs)

    @property
    def paths(self) -> dict[Path, int]:
        """Each of the run's directories once, with its cgroup version (v2 has one for all)."""
        return {path: version for version, path in self.dirs.values()}

    def joiner(self) -> Callable[[], None]:
        """A pre-exec hook moving the calling (child) process into every cgroup of the run.

        Into the idle CPU group when the run yielded before it started (v1).
        """
        cpu = self.dirs["cpu"][1] if "cpu" in self.dirs else None
        paths = [self.slow if path == cpu and self.yielded and self.slow else path for path in self.paths]
        targets = [str(path / "cgroup.procs") for path in paths]

        def join() -> None:
            pid = str(os.getpid()).encode()
            for target in targets:
                fd = os.open(target, os.O_WRONLY)
                try:
                    os.write(fd, pid)
                finally:
                    os.close(fd)

        return join

    def events(self) -> Events:
        """The counters now (zero for a controller the run has no group of)."""
        pids = self.dirs.get("pids")
        memory = self.dirs.get("memory")
        return Events(
            pids_max=_read_keyed(pids[1] / "pids.events").get("max", 0) if pids else 0,
            oom_kills=_oom_kills(*memory) if memory else 0,
        )

    def tasks(self) -> int:
        """How many processes and threads the run has now (0 without a pids group)."""
        pids = self.dirs.get("pids")
        try:
            return int((pids[1] / "pids.current").read_bytes()) if pids else 0
        except (OSError, ValueError):
            return 0

    def yield_cpu(self) -> None:
        """From now on the run gets only the CPU that quicker runs and the host leave idle.

        A run that has gone on this long is a batch job or a runaway; the calls that finish
        in milliseconds are what a server's users wait on. On v1 the run's processes move to
        a CPU group of their own, with the same quota, under one idle group beside the runs'
        parent, so the server as well as the other runs comes first. v2 keeps a process's
        groups in one tree, so there the run's own group turns idle: it yields to the other
        runs only. Best effort: where the kernel refuses, the run goes on as it was.
        """
        self._idle(True)

    def resume_cpu(self) -> None:
        """Undo :meth:`yield_cpu` for a warm worker's next call, which starts afresh."""
        self._idle(False)

    def _idle(self, idle: bool) -> None:
        cpu = self.dirs.get("cpu")
        if cpu is None or self.cpu_home is None or self.yielded == idle:
            return
        version, path = cpu
        self.yielded = idle
        with contextlib.suppress(OSError):
            if version == 2:
                _set_idle(version, path, idle=idle)
            elif idle:
                _move_all(path, self._slow_group(self.cpu_home, path))
            elif self.slow is not None:
                _move_all(self.slow, path)

    def _slow_group(self, home: Path, path: Path) -> Path:
        """The run's CPU group under the idle one (v1), with the run's quota, made on first use."""
        if self.slow is None:
            slow = _slow_parent(home) / path.name
            _ensure(slow)
            try:
                (slow / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
                (slow / "cpu.cfs_quota_us").write_text((path / "cpu.cfs_quota_us").read_text())
            except OSError:  # without the run's quota it is no place for the run
                _remove(slow)
                raise
            self.slow = slow
        return self.slow

    def close(self) -> None:
        """Kill whatever is left in the run's cgroups, read their verdicts, remove them."""
        pids, memory, paths = self.dirs.get("pids"), self.dirs.get("memory"), self.paths
        if self.slow is not None:  # killed with the rest (the run's pids group holds it all)
            paths[self.slow] = 1
            self.slow = None
        if pids is not None:
            # Read before the kill loop, which forbids forks and would count its own refusals.
            self.pids_limited = _pids_hit(pids[1])
        for path, version in paths.items():
            self.killed_leftovers += _kill_all(version, path)
        if memory is not None:  # before any removal: on v2 the memory group is everyone's
            self.oom_killed = _oom_happened(*memory)
        for path in paths:
            _remove(path)
        self.dirs.clear()


_parents: dict[tuple[str, str], Path] = {}
_parents_lock = threading.Lock()


def runs_parent(ctl: Controller, kind: str = "cold") -> Path:
    """The group a run of ``kind`` (``warm`` or ``cold``) is made in, created on first use.

    ``<our cgroup>/toolsmith-<pid>-runs/<kind>``, set up once per process; our own cgroup
    when that cannot be made (then runs are capped one by one only).
    """
    assert ctl.parent is not None and ctl.version is not None and kind in KIND_SHARES
    key = (ctl.name, kind)
    with _parents_lock:
        if key not in _parents:
            _parents[key] = _make_parent(ctl.name, ctl.version, ctl.parent, kind)
        return _parents[key]


def _make_parent(name: str, version: int, here: Path, kind: str) -> Path:
    top = here / f"toolsmith-{os.getpid()}-runs"
    try:
        fresh = _ensure(top)
        # Configured for every controller, not only by whichever made the directory: on v2
        # the pids, memory and cpu controllers share it, and each must be handed down.
        _configure_parent(name, version, top, shares=PARENT_SHARES, quota=True)
        group = top / kind
        _ensure(group)
        _configure_parent(name, version, group, shares=KIND_SHARES[kind], quota=False)
    except OSError:
        return here
    if fresh:
        atexit.register(_remove_parent, top)
    return group


def _slow_parent(here: Path) -> Path:
    """``<our cgroup>/toolsmith-<pid>-slow`` (v1 cpu), idle, created on first use."""
    key = ("cpu", "slow")
    with _parents_lock:
        if key not in _parents:
            top = here / f"toolsmith-{os.getpid()}-slow"
            if _ensure(top):
                atexit.register(_remove_parent, top)
            _set_idle(1, top, idle=True)
            _parents[key] = top
        return _parents[key]


def _set_idle(version: int, path: Path, *, idle: bool) -> None:
    """Make a CPU group idle (it runs only when nothing else wants the CPU) or normal again.

    Kernels before 5.15 have no ``cpu.idle``: the least weight there is comes closest.
    """
    if (path / "cpu.idle").exists():
        (path / "cpu.idle").write_text("1" if idle else "0")
    elif version == 2:
        (path / "cpu.weight").write_text("1" if idle else "100")
    else:
        (path / "cpu.shares").write_text("2" if idle else "1024")


def _move_all(source: Path, target: Path) -> None:
    """Move every process of ``source`` into ``target`` (v1: one controller's groups)."""
    for _ in range(3):  # a process forking meanwhile leaves its child behind: look again
        pids = _procs(source)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                (target / "cgroup.procs").write_text(str(pid))


def _ensure(path: Path) -> bool:
    """Make ``path``; True when this call made it."""
    try:
        path.mkdir()
    except FileExistsError:
        return False
    return True


def _configure_parent(name: str, version: int, path: Path, *, shares: int, quota: bool) -> None:
    """A parent's CPU weight and (for the top one) its quota; v2 also hands the controller down."""
    if version == 2:
        (path / "cgroup.subtree_control").write_text(f"+{name}")
    if name != "cpu":
        return
    cores = os.cpu_count() or 1
    total = max(int((cores - HOST_RESERVE_CORES) * CPU_PERIOD_US), 1000) if quota and cores > 1 else None
    if version == 2:
        (path / "cpu.weight").write_text(str(max(1, shares * 100 // 1024)))
        if total is not None:
            (path / "cpu.max").write_text(f"{total} {CPU_PERIOD_US}")
        return
    (path / "cpu.shares").write_text(str(shares))
    if total is not None:
        (path / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
        (path / "cpu.cfs_quota_us").write_text(str(total))


def _remove_parent(top: Path) -> None:
    for kind in RUN_KINDS if top.name.endswith("-runs") else ():
        with contextlib.suppress(OSError):
            (top / kind).rmdir()
    with contextlib.suppress(OSError):
        top.rmdir()


def cpu_quota_us(limits: Limits, cpu_count: int | None = None) -> int:
    """The run's CPU time per period: ``limits.cpus`` cores, always leaving one to the host."""
    cores = cpu_count or os.cpu_count() or 1
    share = min(limits.cpus, max(1.0, cores - 1.0))
    return max(int(share * CPU_PERIOD_US), 1000)


def _configure(name: str, version: int, path: Path, limits: Limits) -> None:
    mb = 1024 * 1024
    if name == "cpu":
        if version == 2:
            (path / "cpu.max").write_text(f"{cpu_quota_us(limits)} {CPU_PERIOD_US}")
        else:
            (path / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
            (path / "cpu.cfs_quota_us").write_text(str(cpu_quota_us(limits)))
    elif name == "pids":
        (path / "pids.max").write_text(str(limits.max_procs + PIDS_SLACK))
    elif version == 2:
        (path / "memory.max").write_text(str((limits.memory_mb + MEMORY_SLACK_MB) * mb))
        with contextlib.suppress(OSError):
            (path / "memory.swap.max").write_text("0")
    else:
        (path / "memory.limit_in_bytes").write_text(str((limits.memory_mb + MEMORY_SLACK_MB) * mb))
        with contextlib.suppress(OSError):
            (path / "memory.memsw.limit_in_bytes").write_text(str((limits.memory_mb + MEMORY_SLACK_MB) * mb))


def _procs(path: Path) -> list[int]:
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_all(version: int, path: Path) -> int:
    """SIGKILL every process in the group until it is empty; return how many were left."""
    # Forbid new forks first so the kill loop cannot be outrun.
    with contextlib.suppress(OSError):
        if (path / "pids.max").exists():
            (path / "pids.max").write_text("0")
    if version == 2 and (path / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            (path / "cgroup.kill").write_text("1")
    killed: set[int] = set()
    deadline = time.monotonic() + _KILL_ROUNDS_S
    while time.monotonic() < deadline:
        pids = _procs(path)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        time.sleep(0.005)
    return len(killed)


def _read_keyed(path: Path) -> dict[str, int]:
    """A ``key value`` per line control file (``pids.events``, ``memory.events``), or {}.

    Read with plain ``os`` calls: a warm call reads two of these, and a text file object
    costs several times the read itself.
    """
    values: dict[str, int] = {}
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return values
    try:
        data = os.read(fd, 4096)
    except OSError:
        return values
    finally:
        os.close(fd)
    for line in data.decode("ascii", "replace").splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            values[key] = int(value)
    return values


def _oom_kills(version: int, path: Path) -> int:
    """How many processes the OOM killer ended in the group (0 where the kernel does not count)."""
    if version == 2:
        return _read_keyed(path / "memory.events").get("oom_kill", 0)
    return _read_keyed(path / "memory.oom_control").get("oom_kill", 0)


def _oom_happened(version: int, path: Path) -> bool:
    if version == 2 or "oom_kill" in _read_keyed(path / "memory.oom_control"):
        return _oom_kills(version, path) > 0
    try:  # kernels before 4.13 do not count OOM kills; a hit limit is the next best sign
        return int((path / "memory.failcnt").read_text().strip() or 0) > 0
    except (OSError, ValueError):
        return False


def _pids_hit(path: Path) -> bool:
    return _read_keyed(path / "pids.events").get("max", 0) > 0


def _remove(path: Path) -> None:
    deadline = time.monotonic() + _KILL_ROUNDS_S
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            # Killed tasks take a moment to leave; an empty group is then removable.
            if time.monotonic() >= deadline:
                return
            _kill_all(2 if (path / "cgroup.kill").exists() else 1, path)
            time.sleep(0.01)
