"""Every run sits under one parent cgroup whose CPU quota leaves the host headroom (issue #22 §4)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from toolsmith.config import Settings
from toolsmith.isolation import bwrap, cgroups
from toolsmith.limits import Limits, Priority
from toolsmith.sandbox import Sandbox


def cpu_controller() -> cgroups.Controller:
    ctl = cgroups.support()["cpu"]
    if not ctl.usable:
        pytest.skip(f"no usable cpu cgroup: {ctl.reason}")
    return ctl


def read(path: Path) -> str:
    return path.read_text().strip()


def procs(path: Path) -> list[int]:
    return [int(pid) for pid in read(path / "cgroup.procs").split()]


def test_runs_of_both_kinds_share_one_parent_that_leaves_the_host_half_a_core() -> None:
    ctl = cpu_controller()
    assert ctl.parent is not None
    top = ctl.parent / f"toolsmith-{os.getpid()}-runs"
    runs = {kind: cgroups.RunCgroup.create(Limits(), kind=kind) for kind in cgroups.RUN_KINDS}
    try:
        for kind, run in runs.items():
            version, path = run.dirs["cpu"]
            assert path.parent == top / kind  # the run's own group, inside its kind's group
        cores = os.cpu_count() or 1
        if cores > 1:
            budget = int((cores - cgroups.HOST_RESERVE_CORES) * cgroups.CPU_PERIOD_US)
            if version == 2:
                assert read(top / "cpu.max") == f"{budget} {cgroups.CPU_PERIOD_US}"
            else:
                assert int(read(top / "cpu.cfs_quota_us")) == budget
        # The warm workers' group outweighs the cold runs'.
        weight = "cpu.weight" if version == 2 else "cpu.shares"
        warm, cold = (int(read(p / weight)) for p in (top / "warm", top / "cold"))
        assert warm == 2 * cold
    finally:
        for run in runs.values():
            run.close()


def test_a_warm_worker_and_a_cold_run_land_in_their_groups(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    ctl = cpu_controller()
    if not bwrap.probe()[0]:
        pytest.skip("bwrap unavailable")
    assert ctl.parent is not None
    top = ctl.parent / f"toolsmith-{os.getpid()}-runs"
    made: list[Path] = []
    create = cgroups.RunCgroup.create.__func__  # type: ignore[attr-defined]

    def recording(cls: type[cgroups.RunCgroup], *args: object, **kwargs: object) -> cgroups.RunCgroup:
        run = create(cls, *args, **kwargs)
        made.append(run.dirs["cpu"][1])
        return run

    monkeypatch.setattr(cgroups.RunCgroup, "create", classmethod(recording))
    sandbox = Sandbox(replace(settings, warm_workers=1, warm_per_tool=1), backend=bwrap.BwrapBackend())
    try:
        assert sandbox.call_tool("def run(x):\n    return x\n", {"x": 1}, warm=True).ok
        worker = sandbox.isolation.warm.workers()[0]
        assert worker.cgroup.dirs["cpu"][1].parent == top / "warm"
        made.clear()
        assert sandbox.run_code("print(1)").exec.exit_code == 0
        assert [p.parent for p in made] == [top / "cold"] and not made[0].exists()  # removed after the run
    finally:
        sandbox.close()


def test_on_cgroup_v2_one_directory_carries_every_controllers_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """v2 has one hierarchy: the run's pids, memory and CPU limits all land in its one group.

    A plain directory stands in for the cgroup file system (this machine's controllers may
    be bound to v1), so this checks what toolsmith writes, not what the kernel enforces.
    """
    monkeypatch.setattr(cgroups, "_parents", {})  # the real hierarchy's parents are cached process-wide
    monkeypatch.setattr(cgroups, "_KILL_ROUNDS_S", 0.0)
    controllers = {name: cgroups.Controller(name=name, version=2, parent=tmp_path) for name in cgroups.CONTROLLERS}
    limits = Limits(memory_mb=300, max_procs=20)
    run = cgroups.RunCgroup.create(limits, controllers, kind="warm")
    path = tmp_path / f"toolsmith-{os.getpid()}-runs" / "warm"
    assert set(run.dirs) == set(cgroups.CONTROLLERS)
    assert len(run.paths) == 1
    (group,) = run.paths
    assert group.parent == path
    assert read(group / "pids.max") == str(20 + cgroups.PIDS_SLACK)
    assert read(group / "memory.max") == str((300 + cgroups.MEMORY_SLACK_MB) * 1024 * 1024)
    assert read(group / "cpu.max") == f"{cgroups.cpu_quota_us(limits)} {cgroups.CPU_PERIOD_US}"
    assert read(path / "cpu.weight") == str(cgroups.KIND_SHARES["warm"] * 100 // 1024)
    # A run that goes on turns its own group idle: v2 cannot move it out of its one tree.
    (group / "cpu.idle").write_text("0")
    run.yield_cpu()
    assert read(group / "cpu.idle") == "1" and run.slow is None
    run.resume_cpu()
    assert read(group / "cpu.idle") == "0"
    # Every controller's verdict is read before the group goes, whichever comes first.
    (group / "pids.events").write_text("max 2\n")
    (group / "memory.events").write_text("oom 1\noom_kill 1\n")
    run.close()
    assert run.pids_limited and run.oom_killed and run.dirs == {}


def test_a_run_that_goes_on_waits_for_idle_cpu_beside_the_runs_parent() -> None:
    ctl = cpu_controller()
    if ctl.version != 1:
        pytest.skip("on v2 the run's own group turns idle (the test above)")
    assert ctl.parent is not None
    run = cgroups.RunCgroup.create(Limits(cpus=1.0), kind="warm")
    proc = subprocess.Popen(["sleep", "60"], preexec_fn=run.joiner())
    _, path = run.dirs["cpu"]
    slow = ctl.parent / f"toolsmith-{os.getpid()}-slow"
    try:
        run.yield_cpu()
        # Beside the runs' parent, not in it: the parent's weight would still count against the server.
        assert run.slow == slow / path.name
        assert read(slow / "cpu.idle") == "1"
        assert procs(run.slow) == [proc.pid] and procs(path) == []
        assert read(run.slow / "cpu.cfs_quota_us") == read(path / "cpu.cfs_quota_us") == "100000"
        run.resume_cpu()  # a warm worker's next call starts at full priority
        assert procs(path) == [proc.pid] and procs(slow / path.name) == []
        run.yield_cpu()
    finally:
        run.close()
    assert proc.wait(10) == -9  # killed where it waited, and both of its CPU groups removed
    assert not path.exists() and not (slow / path.name).exists()


def one_worker_sandbox(settings: Settings, *, pids: bool = False, **limits: float) -> Sandbox:
    """A bwrap sandbox with one warm worker and these limits changed; skips where cgroup v1's cpu (and pids) is not there."""
    ctl = cpu_controller()
    if ctl.version != 1 or not bwrap.probe()[0] or (pids and not cgroups.support()["pids"].usable):
        pytest.skip("needs cgroup v1 cpu, bwrap" + (" and a pids cgroup" if pids else ""))
    changed = replace(settings, warm_workers=1, warm_per_tool=1, limits=replace(settings.limits, **limits))
    return Sandbox(changed, backend=bwrap.BwrapBackend())


# A tool's CPU cgroup lines, as it sees them.
CPU_GROUP = (
    "    with open('/proc/self/cgroup') as f:\n"
    "        return {'cpu': [line for line in f.read().splitlines() if ':cpu:' in line]}\n"
)


def test_a_long_warm_call_runs_on_idle_cpu_and_its_worker_comes_back_for_the_next(settings: Settings) -> None:
    sandbox = one_worker_sandbox(settings, yield_after_s=0.05)
    code = "import time\n\ndef run(wait: float) -> dict:\n    time.sleep(wait)\n" + CPU_GROUP
    try:
        quick_call = sandbox.call_tool(code, {"wait": 0}, warm=True)
        long_call = sandbox.call_tool(code, {"wait": 0.5}, warm=True)
        assert quick_call.ok and long_call.ok, (quick_call, long_call)
        assert "-slow/" not in quick_call.value["cpu"][0]
        assert f"toolsmith-{os.getpid()}-slow/" in long_call.value["cpu"][0]
        (worker,) = sandbox.isolation.warm.workers()
        _, path = worker.cgroup.dirs["cpu"]
        # It resets on idle CPU too (what the call left dies there), and comes back for its next call.
        assert worker.cgroup.slow is not None and worker.proc.pid in procs(worker.cgroup.slow)
        next_call = sandbox.call_tool(code, {"wait": 0}, warm=True)
        assert next_call.ok and "-slow/" not in next_call.value["cpu"][0]
        assert worker.proc.pid in procs(path) and not worker.cgroup.yielded
    finally:
        sandbox.close()


def test_a_run_that_yields_before_it_starts_begins_in_the_idle_group() -> None:
    ctl = cpu_controller()
    if ctl.version != 1:
        pytest.skip("on v2 the run's own group turns idle")
    run = cgroups.RunCgroup.create(Limits().at(Priority.IDLE), kind="cold")
    _, path = run.dirs["cpu"]
    try:
        run.yield_cpu()  # as launch does for an idle run, before the process exists
        proc = subprocess.Popen(["sleep", "60"], preexec_fn=run.joiner())
        assert run.slow is not None and procs(run.slow) == [proc.pid] and procs(path) == []
    finally:
        run.close()
    assert proc.wait(10) == -9


def test_an_idle_call_waits_for_idle_cpu_from_its_start(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Priority.IDLE (a failing tool's call on a server): in the idle group before its code runs.

    A warm call's tool reads its own cgroup. A cold run sees only its cgroup namespace's
    root, so there the test records where the launch sends the process (the test above
    shows the kernel puts it there).
    """
    sandbox = one_worker_sandbox(settings)
    joined: list[bool] = []
    joiner = cgroups.RunCgroup.joiner

    def recording(run: cgroups.RunCgroup) -> Callable[[], None]:
        joined.append(run.yielded and run.slow is not None)
        return joiner(run)

    monkeypatch.setattr(cgroups.RunCgroup, "joiner", recording)
    code = "def run() -> dict:\n" + CPU_GROUP
    slow = f"toolsmith-{os.getpid()}-slow/"
    try:
        calls = [sandbox.call_tool(code, {}, warm=True, priority=p) for p in (Priority.NORMAL, Priority.IDLE)]
        calls.append(sandbox.call_tool(code, {}, warm=True))
        assert all(c.ok and c.exec is not None and c.exec.backend == "bwrap-warm" for c in calls), calls
        assert [slow in c.value["cpu"][0] for c in calls] == [False, True, False]  # the worker came back
        joined.clear()
        cold = [sandbox.call_tool(code, {}, priority=p).ok for p in (Priority.NORMAL, Priority.IDLE)]
        assert cold == [True, True] and joined == [False, True]
    finally:
        sandbox.close()


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_run_with_a_crowd_of_processes_yields_before_its_time(settings: Settings, warm: bool) -> None:
    """A fork bomb's first call: many tasks move it to idle CPU long before sandbox.yield_after_s."""
    sandbox = one_worker_sandbox(settings, pids=True, yield_after_s=600.0)
    # The tool waits until it finds itself moved, up to five seconds (the supervisor looks
    # every 20 ms). A move out of its cgroup namespace's root shows as a path above it.
    code = (
        "import threading, time\n\n"
        "def moved() -> bool:\n"
        "    with open('/proc/self/cgroup') as f:\n"
        "        return any(':cpu:' in line and '-slow/' in line for line in f.read().splitlines())\n\n"
        "def run(crowd: int) -> dict:\n"
        "    threading.stack_size(256 * 1024)  # forty threads within the small memory limit\n"
        "    stop = threading.Event()\n"
        "    threads = [threading.Thread(target=stop.wait) for _ in range(crowd)]\n"
        "    for t in threads:\n        t.start()\n"
        "    for _ in range(500):\n"
        "        if moved():\n            break\n"
        "        time.sleep(0.01)\n"
        "    stop.set()\n"
        "    return {'moved': moved()}\n"
    )
    try:
        few = sandbox.call_tool(code.replace("range(500)", "range(20)"), {"crowd": 4}, warm=warm, timeout_s=30)
        crowded = sandbox.call_tool(code, {"crowd": 40}, warm=warm, timeout_s=30)
        assert few.ok and crowded.ok, (few, crowded)
        assert few.value == {"moved": False} and crowded.value == {"moved": True}
    finally:
        sandbox.close()
