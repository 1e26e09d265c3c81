"""Cold against warm stored-tool calls, in process and over MCP (part 3 of bench/sandbox.py).

A stored tool is called the way the agent and the MCP server call it: through
``Sandbox.call_tool`` with its pinned requirements, cold (a fresh bwrap, interpreter and
imports per call) or warm (a fork of a worker that already imported the tool). Two
tools: a trivial one and one that imports a real package, installed into the library's
package environment first (this needs the package index). Over MCP the official SDK
client talks to ``toolsmith mcp`` over stdio, once with warm workers off
(``sandbox.warm_workers = 0``) and once on; every call there also records the tool's
health, as in real use. Warm calls are timed paced (50 ms apart, as a client doing its own
work between calls; in process the cold call between two warm ones does that) and back
to back (then the worker's reset after one call, and the fork and exit of big processes,
compete with the next). Targets: warm median <= 5 ms (trivial) and <= 10 ms (package).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsmith.config import Settings
from toolsmith.isolation.bwrap import BwrapBackend, probe
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec
from toolsmith.packages.requirement import Requirement
from toolsmith.sandbox import Sandbox

PARAMS = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
TARGET_MS = {"trivial": 5.0, "package": 10.0}
# Between paced calls: the worker has reset and forked the next call's child (the in-process
# figure gets the same from the cold call between its warm ones).
PAUSE_S = 0.05


@dataclass(frozen=True)
class BenchTool:
    kind: str  # trivial | package
    name: str
    code: str
    requirements: tuple[Requirement, ...] = ()


def tools(package: str, module: str, sandbox: Sandbox) -> list[BenchTool]:
    pins = sandbox.env.install(package, check=False)
    package_code = (
        f"import {module}\n\ndef run(x: int) -> dict:\n    return {{'y': x + 1, 'module': {module}.__name__}}\n"
    )
    return [
        BenchTool("trivial", "bench_trivial", "def run(x: int) -> dict:\n    return {'y': x + 1}\n"),
        BenchTool("package", f"bench_{module}", package_code, tuple(pins)),
    ]


def _ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def time_in_process(sandbox: Sandbox, tool: BenchTool, runs: int) -> dict[str, float]:
    """Median ms of cold and warm calls, interleaved; plus the first warm call (the start)."""

    def call(warm: bool) -> float:
        started = time.perf_counter()
        out = sandbox.call_tool(tool.code, {"x": 1}, requirements=tool.requirements, warm=warm)
        elapsed = time.perf_counter() - started
        if not out.ok or out.exec is None or out.exec.backend != ("bwrap-warm" if warm else "bwrap"):
            raise SystemExit(f"bench call failed or ran on the wrong path: {out}")
        return elapsed

    call(False)  # page cache, probes
    first_warm = call(True)
    cold, warm = [], []
    for _ in range(runs):
        cold.append(call(False))
        warm.append(call(True))
    for _ in range(3):  # back to back: the pool starts the tool's second worker in the background
        call(True)
    time.sleep(max(0.5, 1.5 * first_warm))  # the steady state: that start has finished
    back_to_back = [call(True) for _ in range(runs)]
    return {"cold": _ms(cold), "warm": _ms(warm), "b2b": _ms(back_to_back), "start": first_warm * 1000}


def store(home: Path, sandbox: Sandbox, bench_tools: list[BenchTool]) -> None:
    with ToolLibrary.open(Settings(home=home)) as library:
        for tool in bench_tools:
            spec = ToolSpec(
                name=tool.name,
                description=f"Bench tool ({tool.kind}).",
                parameters=PARAMS,
                code=tool.code,
                test_args={"x": 1},
                requirements=tool.requirements,
            )
            library.add(spec, provenance=Provenance(task="bench", origin="bench"), gate={}, status=Status.ACTIVE)


def time_over_mcp(home: Path, bench_tools: list[BenchTool], runs: int, *, warm: bool) -> dict[str, float]:
    """Median ms per tool of ``tools/call`` through the SDK client, with warm workers on or off."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    config = home / ("warm.toml" if warm else "cold.toml")
    config.write_text(f"[sandbox]\nnetwork = false\nwarm_workers = {4 if warm else 0}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"TOOLSMITH_HOME": str(home), "TOOLSMITH_CONFIG": str(config)})
    params = StdioServerParameters(command=sys.executable, args=["-m", "toolsmith", "mcp"], env=env)
    medians: dict[str, float] = {}

    async def main() -> None:
        with open(os.devnull, "w") as quiet:  # the server logs every call on stderr
            async with Client(stdio_client(params, errlog=quiet), mode="legacy", read_timeout_seconds=120) as client:
                await _time_tools(client, bench_tools, runs, medians)

    anyio.run(main)
    return medians


async def _time_tools(client: Any, bench_tools: list[BenchTool], runs: int, medians: dict[str, float]) -> None:
    import anyio

    for tool in bench_tools:
        started = time.perf_counter()
        await client.call_tool(tool.name, {"x": 1})  # starts the worker (or warms the page cache)
        first = time.perf_counter() - started
        for _ in range(3):  # back to back: the pool starts the tool's second worker in the background
            await client.call_tool(tool.name, {"x": 1})
        await anyio.sleep(max(0.5, 1.5 * first))  # the steady state: that start has finished
        paced, back_to_back = [], []
        for _ in range(runs):
            for samples in (paced, back_to_back):
                if samples is paced:  # a client doing its own work between calls
                    await anyio.sleep(PAUSE_S)
                started = time.perf_counter()
                result = await client.call_tool(tool.name, {"x": 1})
                samples.append(time.perf_counter() - started)
                if result.is_error:
                    raise SystemExit(f"MCP call of {tool.name} failed: {result.content}")
        medians[tool.kind] = _ms(paced)
        medians[f"{tool.kind} b2b"] = _ms(back_to_back)
    # The floor: a call refused before it runs (an undeclared argument): JSON-RPC and the
    # server's own work, without the sandbox or a health record.
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        refused = await client.call_tool(bench_tools[0].name, {"undeclared": 1})
        samples.append(time.perf_counter() - started)
        if not refused.is_error:
            raise SystemExit("a call with an undeclared argument was not refused")
    medians["refused"] = _ms(samples)


def bench_warm(runs: int, package: str, module: str, print_table: Callable[..., None]) -> bool:
    usable, why = probe()
    if not usable:
        print(f"\nbwrap unavailable ({why}): warm workers need it; skipping cold vs warm")
        return True
    home = Path(tempfile.mkdtemp(prefix="toolsmith-bench-warm-"))
    try:
        settings = Settings(home=home, network=False)
        sandbox = Sandbox(settings, backend=BwrapBackend())
        bench_tools = tools(package, module, sandbox)
        local = {tool.kind: time_in_process(sandbox, tool, runs) for tool in bench_tools}
        sandbox.close()
        store(home, sandbox, bench_tools)
        mcp_cold = time_over_mcp(home, bench_tools, runs, warm=False)
        mcp_warm = time_over_mcp(home, bench_tools, runs, warm=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return _report(bench_tools, local, mcp_cold, mcp_warm, runs, print_table)


def _report(
    bench_tools: list[BenchTool],
    local: dict[str, dict[str, float]],
    mcp_cold: dict[str, float],
    mcp_warm: dict[str, float],
    runs: int,
    print_table: Callable[..., None],
) -> bool:
    rows: list[tuple[str, ...]] = []
    ok = True
    for tool in bench_tools:
        target = TARGET_MS[tool.kind]
        local_tool = local[tool.kind]
        for path, cold, warm in (
            ("in process, paced", local_tool["cold"], local_tool["warm"]),
            ("in process, back to back", local_tool["cold"], local_tool["b2b"]),
            ("over MCP, paced", mcp_cold[tool.kind], mcp_warm[tool.kind]),
            ("over MCP, back to back", mcp_cold[f"{tool.kind} b2b"], mcp_warm[f"{tool.kind} b2b"]),
        ):
            met = warm <= target
            ok = ok and met
            rows.append(
                (f"{tool.name} ({tool.kind})", path, f"{cold:.1f}", f"{warm:.1f}", f"{cold / warm:.0f}x",
                 f"{'yes' if met else 'NO'} (<= {target:.0f})")
            )  # fmt: skip
    floor = f"{mcp_cold['refused']:.1f} ms (cold server), {mcp_warm['refused']:.1f} ms (warm server)"
    print_table(
        f"Stored-tool calls, cold vs warm, median of {runs} (ms; first warm call in process: "
        + ", ".join(f"{k} {v['start']:.0f} ms" for k, v in local.items())
        + f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)",
        ("tool", "path", "cold (baseline)", "warm", "cold/warm", "warm target"),
        rows,
    )
    print(f"Over MCP, a call refused before it runs (JSON-RPC and the server, no sandbox): {floor}")
    return ok
