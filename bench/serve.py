"""Serving under load and faults: ``toolsmith mcp`` over streamable HTTP with the official SDK client.

One run of the real server (``toolsmith mcp --transport http`` on loopback, with a bearer
token, warm workers on, bwrap) over a fresh library:

1. idle: the server's RSS once each tool's workers are started;
2. 40 large results (7.5 MB each, one after another), then the server's RSS;
3. without faults: 8 concurrent clients x 50 calls of a trivial warm tool;
4. with faults: the same 8 x 50, while one more client calls misbehaving tools in turn,
   one call at a time (a result that is not JSON, infinite recursion, a 7.5 MB result,
   sleeping past the timeout, a CPU spin past it, a memory bomb, a fork bomb, a setsid'd
   background process), until the good clients are done;
5. steps 3 and 4 again, for ``--rounds`` rounds in all (3), each round with fresh copies of
   the fault tools so that every round meets them as the first did;
6. the server's RSS after the load, and the warm workers' memory (PSS) beside it.

It prints throughput and p50/p95/p99 of the good tool's calls (as the client saw them)
with and without faults, round by round, the RSS figures, and the targets: without faults
>= 150 calls/s and p99 <= 100 ms; with faults p99 <= 2x the p99 without; RSS after the
load within 25% of idle (the workers are separate processes and shown apart). The first
three are judged on the median of the rounds, and a round's ratio compares the two runs
of that round: the p99 of 400 calls is their fourth slowest, and on a shared machine it
moves by a third between runs of the same code. The sandbox timeout is 3 s here so the
slow faults end quickly. Settings are otherwise the defaults: a fault tool is quarantined
at its third failure in a row and its later calls are refused at once, as in real use;
``--no-quarantine`` keeps every fault call running (the worst case).
It also prints the CPU time per good call of the server, the sandbox workers and the
clients, which on this shared machine says more than the wall clock does, and how busy the
whole machine was and how much of its time the hypervisor took (steal). Throughput, CPU and
latencies count from the moment every client of a run is connected until the last good
call returns. Connecting is not a call, and neither is listing the tools: a host lists
them when it connects, and the SDK client lists them to check its first result of a tool,
which would otherwise put a tools/list inside each client's first timed call.
The clients share this process, so its own garbage collector's pauses are kept out of
the timings (``quiet_collector``); the server's are not.

    python bench/serve.py [--clients 8] [--calls 50] [--large 40] [--mode auto|legacy] [--no-quarantine]
                          [--faults NAME ...] [--per-tool N] [--rounds N]
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from toolsmith.config import Settings
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec

TOKEN = "bench-token-not-secret"
TIMEOUT_S = 3
LARGE = 7_500_000
X = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
GOOD = "def run(x: int) -> dict:\n    return {'y': x + 1}\n"
FAULTS = {  # the quick and the destructive first, so a short run meets each of them
    "fork_bomb": (
        "import os, time\n\ndef run(x: int) -> dict:\n    while True:\n"
        "        if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)\n"
    ),
    "memory_bomb": "def run(x: int) -> dict:\n    return {'n': len(bytearray(4 * 1024 ** 3))}\n",
    "spinner": "def run(x: int) -> dict:\n    while True:\n        x += 1\n",
    "background": (
        "import subprocess, sys\n\ndef run(x: int) -> dict:\n"
        "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
        "    return {'started': True}\n"
    ),
    "not_json": "def run(x: int) -> dict:\n    return {'s': {1, 2}}\n",
    "recursion": "def run(x: int) -> dict:\n    def f(n):\n        return f(n + 1)\n    return {'v': f(x)}\n",
    "large": f"def run(x: int) -> dict:\n    return {{'blob': 'x' * {LARGE}}}\n",
    "sleeper": f"import time\n\ndef run(x: int) -> dict:\n    time.sleep({TIMEOUT_S + 5})\n    return {{}}\n",
}


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid


def make_library(home: Path, per_tool: int | None = None, *, quarantine: bool = True, rounds: int = 1) -> None:
    """The good tool, the large one, and a fresh copy of each fault tool for every round.

    Fresh copies keep the rounds alike: a fault tool called in an earlier round would come
    to the next one with failures on its record, or already quarantined.
    """
    config = home / "config.toml"
    pool = f"warm_per_tool = {per_tool}\n" if per_tool else ""
    never = "" if quarantine else "quarantine_after = 1000000\n"
    config.write_text(f"{never}\n[sandbox]\nnetwork = false\ntimeout_s = {TIMEOUT_S}\n{pool}", encoding="utf-8")
    tools = {"good": GOOD, "big": "def run(x: int) -> dict:\n    return {'blob': 'x' * x}\n"}
    tools |= {fault_tool(name, r): code for r in range(1, rounds + 1) for name, code in FAULTS.items()}
    with ToolLibrary.open(Settings(home=home)) as library:
        for name, code in tools.items():
            spec = ToolSpec(name=name, description=f"Bench tool {name}.", parameters=X, code=code, test_args={"x": 1})
            library.add(spec, provenance=Provenance(origin="bench"), gate={}, status=Status.ACTIVE)


def fault_tool(name: str, round_no: int) -> str:
    return f"{name}_{round_no}"


@contextmanager
def running_server(home: Path) -> Iterator[Server]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(TOOLSMITH_HOME=str(home), TOOLSMITH_CONFIG=str(home / "config.toml"), TOOLSMITH_MCP_TOKEN=TOKEN)
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolsmith", "mcp", "--transport", "http", "--port", "0"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = Server("", proc)
    found = threading.Event()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            server.log.append(line)
            match = re.search(r"at (http://\S+/mcp)", line)
            if match:
                server.url = match.group(1)
                found.set()
        found.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        if not found.wait(60) or not server.url:
            raise SystemExit("the server did not start:\n" + "".join(server.log))
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def client(server: Server, mode: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(30, read=300))
    return Client(streamable_http_client(server.url, http_client=http), mode=mode, read_timeout_seconds=120)


def machine_ticks() -> tuple[int, int, int]:
    """(busy, stolen, all) clock ticks of the whole machine so far, from ``/proc/stat``.

    Stolen time is what the hypervisor gave to other guests while this one wanted to run:
    on a shared VM it is why the same run costs more CPU time one hour than the next.
    """
    fields = [int(f) for f in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle - fields[7], fields[7], sum(fields)


def cpu_s(pid: int) -> float:
    """User plus system CPU seconds a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of the server's descendants (the warm workers), with their reaped children's."""
    total = 0.0
    for proc in descendants(pid):
        try:
            fields = Path(f"/proc/{proc}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def children(pid: int) -> set[int]:
    """The server's own children: the warm workers' bwrap processes."""
    return {p for p, parent in _parents().items() if parent == pid}


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def descendants(pid: int) -> set[int]:
    parents = _parents()
    mine, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - mine
        mine |= frontier
    return mine


def workers_pss_mib(pid: int) -> tuple[int, float]:
    """How many processes descend from the server, and their proportional memory (PSS)."""
    mine = descendants(pid)
    total = 0.0
    for proc in mine:
        try:
            for line in Path(f"/proc/{proc}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            continue
    return len(mine), total


async def sample_peak(pid: int, peak: list[float]) -> None:
    """The highest RSS seen, sampled every 20 ms until cancelled."""
    while True:
        peak[0] = max(peak[0], rss_mib(pid))
        await anyio.sleep(0.02)


async def settle() -> None:
    """Give the server a moment to hand memory back (it trims on its next watcher tick)."""
    await anyio.sleep(1.5)


async def large_results(server: Server, mode: str, count: int) -> None:
    async with client(server, mode) as c:
        for _ in range(count):
            result = await c.call_tool("big", {"x": LARGE})
            if result.is_error:
                raise SystemExit(f"a large result failed: {result.content}")


class Start:
    """The starting line: calls begin once every client is connected (a client's start is not a call)."""

    def __init__(self, clients: int) -> None:
        self.waiting = clients
        self.go = anyio.Event()

    async def ready(self) -> None:
        self.waiting -= 1
        if self.waiting <= 0:
            quiet_collector()
            self.go.set()
        await self.go.wait()


def quiet_collector() -> None:
    """Keep this process's collector pauses out of the timings (undone by ``gc.unfreeze`` after the run).

    The clients share this one process, and its heap holds every earlier run's clients and
    results: one full collection here (up to about 100 ms on two cores) stalls every client
    at once, which clients on their own hosts would not do. The server's pauses still count.
    """
    gc.collect()
    gc.freeze()


async def good_client(
    server: Server, mode: str, calls: int, samples: list[float], errors: list[str], start: Start
) -> None:
    async with client(server, mode) as c:
        await c.list_tools()  # as a host does on connecting; else the SDK lists them inside the first call
        await start.ready()
        for i in range(calls):
            started = time.perf_counter()
            result = await c.call_tool("good", {"x": i})
            samples.append(time.perf_counter() - started)
            if result.is_error:
                errors.append(str(result.content)[:200])


async def fault_client(
    server: Server,
    mode: str,
    names: list[str],
    round_no: int,
    done: anyio.Event,
    counts: dict[str, int],
    start: Start,
) -> None:
    """One more client, calling the round's copies of the misbehaving tools in turn, one call at a time."""
    async with client(server, mode) as c:
        await c.list_tools()
        await start.ready()
        for i in range(2000):  # bounded: the good clients end the loop long before
            if done.is_set():
                return
            name = names[i % len(names)]
            result = await c.call_tool(fault_tool(name, round_no), {"x": 1})
            kind = "ok" if not result.is_error else "failed"
            counts[f"{name} {kind}"] = counts.get(f"{name} {kind}", 0) + 1


async def load(
    server: Server, mode: str, clients: int, calls: int, *, faults: list[str], round_no: int = 1
) -> dict[str, Any]:
    """Throughput, latencies and CPU from the moment every client is connected until the good ones are done."""
    samples: list[float] = []
    errors: list[str] = []
    counts: dict[str, int] = {}
    done = anyio.Event()
    start = Start(clients + (1 if faults else 0))
    workers_before = children(server.pid)
    async with anyio.create_task_group() as outer:
        if faults:
            outer.start_soon(fault_client, server, mode, faults, round_no, done, counts, start)
        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(good_client, server, mode, calls, samples, errors, start)
            await start.go.wait()
            server_cpu, own_cpu, workers_cpu = cpu_s(server.pid), time.process_time(), tree_cpu_s(server.pid)
            machine = machine_ticks()
            started = time.perf_counter()
        wall = time.perf_counter() - started
        cpu = {
            "server": cpu_s(server.pid) - server_cpu,
            "workers": tree_cpu_s(server.pid) - workers_cpu,
            "clients": time.process_time() - own_cpu,
        }
        busy, stolen, total = (b - a for a, b in zip(machine, machine_ticks(), strict=True))
        gc.unfreeze()
        done.set()
    # The workers' figure holds only while the same workers lived throughout: a worker that
    # stopped meanwhile takes its CPU time with it.
    if children(server.pid) != workers_before:
        cpu["workers"] = float("nan")
    machine_use = {"busy": busy / max(total, 1), "steal": stolen / max(total, 1)}
    return {"samples": samples, "wall": wall, "errors": errors, "faults": counts, "cpu": cpu, "machine": machine_use}


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))] * 1000


def row(label: str, run: dict[str, Any]) -> tuple[str, ...]:
    s = run["samples"]
    return (
        label,
        str(len(s)),
        f"{len(s) / run['wall']:.0f}",
        f"{statistics.median(s) * 1000:.1f}",
        f"{percentile(s, 95):.1f}",
        f"{percentile(s, 99):.1f}",
        str(len(run["errors"])),
    )


async def bench(server: Server, args: argparse.Namespace) -> dict[str, Any]:
    async with client(server, args.mode) as c:  # start the tools' workers: the good one's all
        await c.call_tool("big", {"x": 1})
        async with anyio.create_task_group() as group:
            for i in range(args.clients):
                group.start_soon(c.call_tool, "good", {"x": i})
    await settle()
    figures: dict[str, Any] = {"idle": rss_mib(server.pid)}
    await large_results(server, args.mode, args.large)
    await settle()
    figures["after_large"] = rss_mib(server.pid)
    peak = [0.0]
    async with anyio.create_task_group() as outer:  # 8 large results at once, RSS sampled meanwhile
        outer.start_soon(sample_peak, server.pid, peak)
        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(large_results, server, args.mode, 1)
        outer.cancel_scope.cancel()
    await settle()
    figures["burst_peak"], figures["after_burst"] = peak[0], rss_mib(server.pid)
    figures["rounds"] = []
    for r in range(1, args.rounds + 1):  # without and with faults in turn, so drift hits both alike
        clean = await load(server, args.mode, args.clients, args.calls, faults=[])
        faulty = await load(server, args.mode, args.clients, args.calls, faults=args.faults, round_no=r)
        figures["rounds"].append((clean, faulty))
    await settle()
    figures["after_load"] = rss_mib(server.pid)
    figures["workers"] = workers_pss_mib(server.pid)
    return figures


def report(figures: dict[str, Any], args: argparse.Namespace) -> bool:
    from sandbox import print_table

    rounds: list[tuple[dict[str, Any], dict[str, Any]]] = figures["rounds"]
    rows = []
    for r, (clean, faulty) in enumerate(rounds, start=1):
        rows += [row(f"{r}: without faults", clean), row(f"{r}: with faults", faulty)]
    print_table(
        f"The good tool over HTTP ({args.mode} era), {args.clients} clients x {args.calls} calls, by round "
        f"(ms; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)",
        ("round", "calls", "calls/s", "p50", "p95", "p99", "errors"),
        rows,
    )
    for r, (clean, faulty) in enumerate(rounds, start=1):
        for label, run in (("without faults", clean), ("with faults", faulty)):
            print(f"round {r} {label}: {cpu_line(run)}")
    fault_calls: Counter[str] = Counter()
    for _, faulty in rounds:
        fault_calls.update(faulty["faults"])
    print("fault calls during the faulty runs: " + ", ".join(f"{k} {v}" for k, v in sorted(fault_calls.items())))
    rates = [len(clean["samples"]) / clean["wall"] for clean, _ in rounds]
    p99s = [percentile(clean["samples"], 99) for clean, _ in rounds]
    ratios = [percentile(faulty["samples"], 99) / p99 for (_, faulty), p99 in zip(rounds, p99s, strict=True)]
    rate, p99, ratio = statistics.median(rates), statistics.median(p99s), statistics.median(ratios)
    idle, after = figures["idle"], figures["after_load"]
    count, pss = figures["workers"]
    checks = [
        (f"without faults: {rate:.0f} calls/s (rounds: {listed(rates, '.0f')})", ">= 150", rate >= 150),
        (f"without faults: p99 {p99:.1f} ms (rounds: {listed(p99s, '.1f')})", "<= 100 ms", p99 <= 100),
        (f"with faults: p99 {ratio:.2f}x the p99 without (rounds: {listed(ratios, '.2f')})", "<= 2x", ratio <= 2),
        (f"server RSS idle {idle:.0f} MiB; after {args.large} large results {figures['after_large']:.0f}", "", True),
        (f"after 8 large results at once {figures['after_burst']:.0f} (peak {figures['burst_peak']:.0f})", "", True),
        (f"server RSS after the load {after:.0f} MiB = {after / idle:.2f}x idle", "<= 1.25x", after <= 1.25 * idle),
        (f"warm workers and their processes after the load: {count}, {pss:.0f} MiB PSS", "", True),
    ]
    print_table(
        f"Targets (the median of {len(rounds)} rounds; a round's ratio compares its own two runs)",
        ("figure", "target", "met"),
        [(f, t, ("yes" if ok else "NO") if t else "") for f, t, ok in checks],
    )
    errors = [e for clean, faulty in rounds for e in clean["errors"] + faulty["errors"]]
    if errors:
        print(f"{len(errors)} good calls failed, e.g. {errors[0]}")
    return all(ok for _, _, ok in checks) and not errors


def listed(values: list[float], spec: str) -> str:
    return ", ".join(format(v, spec) for v in values)


def cpu_line(run: dict[str, Any]) -> str:
    per_call = {k: v / len(run["samples"]) * 1000 for k, v in run["cpu"].items()}
    workers = "n/a, workers came and went" if math.isnan(per_call["workers"]) else f"{per_call['workers']:.1f} ms"
    return (
        f"CPU per good call: server {per_call['server']:.1f} ms, sandbox workers {workers}, "
        f"the official clients {per_call['clients']:.1f} ms; the machine {run['machine']['busy']:.0%} busy, "
        f"{run['machine']['steal']:.0%} stolen"
    )


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--large", type=int, default=40)
    parser.add_argument("--mode", choices=("auto", "legacy"), default="auto")
    parser.add_argument(
        "--no-quarantine", action="store_true", help="faults never quarantine: every fault call really runs"
    )
    parser.add_argument("--faults", nargs="+", choices=list(FAULTS), default=list(FAULTS), help="which faults run")
    parser.add_argument("--per-tool", type=int, default=None, help="sandbox.warm_per_tool (default: the setting's)")
    parser.add_argument(
        "--rounds", type=positive, default=3, help="rounds of the two runs, each with fresh fault tools (default 3)"
    )
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="toolsmith-bench-serve-"))
    try:
        make_library(home, args.per_tool, quarantine=not args.no_quarantine, rounds=args.rounds)
        with running_server(home) as server:
            figures = anyio.run(bench, server, args)
            if any("Traceback" in line for line in server.log):
                print("the server logged a traceback:\n" + "".join(server.log[-40:]))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    ok = report(figures, args)
    print("\nall targets met" if ok else "\nsome targets missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
