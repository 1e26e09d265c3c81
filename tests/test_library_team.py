"""A team sharing one library: 8 processes create, approve and search at once; 2 of them
act as other machines (their own TOOLSMITH_HOME, the library reached through its URL).
Runs on both backends; on SQLite every "machine" points library.url at the same file."""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import os
from pathlib import Path

import pytest

from library_backends import BACKENDS, library_target, returning_spec
from toolsmith.config import Settings
from toolsmith.library import Provenance, Requirement, Status, ToolLibrary, ToolSpec

PROCESSES = 8
MACHINES = 2  # the last MACHINES processes get homes of their own
ROUNDS = 5


def _spec(name: str, description: str) -> ToolSpec:
    return returning_spec(name, description, keywords=("team",))


def _member(url: str, home: str, worker: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    os.environ["TOOLSMITH_HOME"] = home
    os.environ["TOOLSMITH_LIBRARY_URL"] = url
    barrier.wait(timeout=60)
    with ToolLibrary.open(Settings.load()) as library:
        for i in range(ROUNDS):
            name = f"m{worker}_tool_{i}"
            library.add(_spec(name, f"member {worker} proposal {i}"), provenance=Provenance(), gate={},
                        status=Status.PENDING, actor=f"agent:{worker}")  # fmt: skip
            # every member approves the proposal of the member before it, when it is there
            peer = f"m{(worker - 1) % PROCESSES}_tool_{i}"
            if peer in library and library.get(peer).status is Status.PENDING:
                library.set_status(peer, 1, Status.ACTIVE, reason="ok", actor=f"user:{worker}", action="approve")
            library.add(_spec("shared_tool", f"shared by {worker} round {i}"), provenance=Provenance(), gate={})
            library.record_call("shared_tool", 1, ok=i % 2 == 0, latency_ms=1.0, error="boom")
            assert all(hit.tool.status is Status.ACTIVE for hit in library.search("member proposal shared team"))


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.slow
def test_team_of_processes_loses_nothing(kind: str, tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    shared_home = tmp_path / "shared-home"
    with library_target(kind, tmp_path) as url:
        homes = [shared_home] * (PROCESSES - MACHINES) + [tmp_path / f"machine-{m}" for m in range(MACHINES)]
        procs = [ctx.Process(target=_member, args=(url, str(homes[w]), w, barrier)) for w in range(PROCESSES)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(timeout=240)
        assert [p.exitcode for p in procs] == [0] * PROCESSES

        with ToolLibrary(url) as library:
            shared = library.history("shared_tool")
            total = PROCESSES * ROUNDS
            assert [v.version for v in shared] == list(range(1, total + 1))  # no gaps, no duplicates
            assert [v.status for v in shared].count(Status.ACTIVE) == 1
            calls = sum(v.stats.calls for v in shared)
            assert calls == total  # every increment landed on some version of the tool
            audit = library.audit_log()
            proposals = [e for e in audit if e.action == "add" and e.name and e.name.startswith("m")]
            assert len(proposals) == total
            approvals = {e.name for e in audit if e.action == "approve"}
            for w in range(PROCESSES):
                for i in range(ROUNDS):
                    tool = library.get(f"m{w}_tool_{i}")
                    assert tool.version == 1
                    assert (tool.status is Status.ACTIVE) == (tool.name in approvals)
            assert [e.id for e in audit] == sorted(e.id for e in audit)


@pytest.mark.network  # machine B installs the pinned package from the index
@pytest.mark.parametrize("kind", BACKENDS)
def test_a_tool_from_another_machine_gets_its_packages_here_before_its_first_call(kind: str, tmp_path: Path) -> None:
    from toolsmith.packages.env import PackageEnv
    from toolsmith.sandbox import Sandbox
    from toolsmith.service.toolcall import call_stored_tool

    machine_a, machine_b = Settings(home=tmp_path / "a"), Settings(home=tmp_path / "b")
    sha = PackageEnv(machine_a).file_hash("humanize", "4.9.0")
    assert sha is not None
    spec = ToolSpec(
        name="format_number",
        description="Thousands separators for a number.",
        parameters={"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]},
        code="import humanize\n\n\ndef run(number):\n    return {'text': humanize.intcomma(number)}\n",
        test_args={"number": 1234567},
        requirements=(Requirement("humanize", "4.9.0", sha),),
    )
    with library_target(kind, tmp_path) as url:
        with ToolLibrary(url) as library_a:  # machine A stores it (its gate ran there)
            library_a.add(spec, provenance=Provenance(), gate={"ok": True})
        with ToolLibrary(url) as library_b:  # machine B has never installed anything
            tool = library_b.get("format_number")
            call = call_stored_tool(
                tool, {"number": 7654321}, library=library_b, runner=Sandbox(machine_b), actor="t", quarantine_after=3
            )
            assert call.outcome.ok, call.outcome.error
            assert call.outcome.value == {"text": "7,654,321"}
            assert library_b.get("format_number").stats.calls == 1
    assert machine_b.envs_dir.exists() and not machine_a.envs_dir.exists()
