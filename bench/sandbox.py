"""Sandbox overheads: bwrap against a plain process, and uv against venv + pip.

Part 1 times a trivial ``run_code("print(1)")`` and a trivial ``call_tool`` through the
``process`` backend (the baseline, not isolation) and through the ``bwrap`` backend,
interleaved so machine noise hits both alike, and reports medians and their ratio
(target: bwrap <= 1.5x process). Both backends use the per-run cgroups when available.

Part 2 times creating a package environment and installing one small package
(``humanize``, checks off so only the installer is measured) with uv and with
``python -m venv`` + pip. "cold" uses a fresh environment *and* a fresh cache directory
for every trial, so uv's cache cannot help it; "warm" reuses one cache directory across
trials (fresh environment each time). Target: uv >= 5x faster.

Part 3 (``bench/sandbox_warm.py``) times stored-tool calls cold against warm, in process
and over MCP, for a trivial tool and one importing ``--warm-package`` (installed from the
package index first). Target: warm median <= 5 ms (trivial) and <= 10 ms (package).

    python bench/sandbox.py [--runs 40] [--installs 3] [--package humanize] [--skip-install]
                            [--warm-runs 30] [--warm-package pandas] [--skip-warm]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sandbox_warm import bench_warm
from toolsmith.config import Settings
from toolsmith.isolation import cgroups
from toolsmith.isolation.bwrap import BwrapBackend, probe
from toolsmith.isolation.process import ProcessBackend
from toolsmith.packages.env import PackageEnv, find_uv
from toolsmith.sandbox import Sandbox

TOOL = "def run(x):\n    return x + 1\n"


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def time_runs(sandboxes: dict[str, Sandbox], runs: int) -> dict[str, dict[str, float]]:
    """Median ms per (backend, call kind), interleaving the backends trial by trial."""
    calls: dict[str, Callable[[Sandbox], object]] = {
        "run_code print(1)": lambda sb: sb.run_code("print(1)"),
        "call_tool run(x)": lambda sb: sb.call_tool(TOOL, {"x": 1}),
    }
    samples: dict[str, dict[str, list[float]]] = {k: {b: [] for b in sandboxes} for k in calls}
    for kind, call in calls.items():
        for sandbox in sandboxes.values():  # warm-up: imports, probes, page cache
            for _ in range(3):
                call(sandbox)
        for _ in range(runs):
            for name, sandbox in sandboxes.items():
                started = time.perf_counter()
                call(sandbox)
                samples[kind][name].append(time.perf_counter() - started)
    return {kind: {b: _median_ms(s) for b, s in per.items()} for kind, per in samples.items()}


def time_install(installer: str, package: str, trials: int, *, warm: bool) -> float:
    """Median seconds to create an environment and install ``package``."""
    root = Path(tempfile.mkdtemp(prefix=f"toolsmith-bench-{installer}-"))
    samples: list[float] = []
    try:
        shared_cache = root / "cache"
        if warm:  # fill the shared cache once, untimed
            _install_once(root / "prime", shared_cache, installer, package)
        for trial in range(trials):
            cache = shared_cache if warm else root / f"cache-{trial}"
            started = time.perf_counter()
            _install_once(root / f"home-{trial}", cache, installer, package)
            samples.append(time.perf_counter() - started)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return statistics.median(samples)


def _install_once(home: Path, cache: Path, installer: str, package: str) -> None:
    settings = Settings(home=home)
    env = PackageEnv(settings, installer=installer)
    # Point the cache where the trial wants it (Settings.cache_dir is home/cache).
    home.mkdir(parents=True, exist_ok=True)
    if cache != home / "cache":
        cache.mkdir(parents=True, exist_ok=True)
        (home / "cache").symlink_to(cache, target_is_directory=True)
    env.ensure()
    env.install(package, check=False)


def print_table(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "-+-".join("-" * w for w in widths)
    print(f"\n{title}")
    print(line)
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print(line)
    for row in rows:
        cells = zip(row, widths, strict=True)
        print(" | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(cells)))
    print(line)


def bench_backends(runs: int) -> bool:
    usable, why = probe()
    home = Path(tempfile.mkdtemp(prefix="toolsmith-bench-runs-"))
    try:
        settings = Settings(home=home)
        sandboxes = {"process": Sandbox(settings, backend=ProcessBackend())}
        if usable:
            sandboxes["bwrap"] = Sandbox(settings, backend=BwrapBackend())
        else:
            print(f"bwrap unavailable ({why}); timing the process backend only")
        results = time_runs(sandboxes, runs)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    active = [n for n, c in cgroups.support().items() if c.usable]
    rows, ok = [], True
    for kind, per in results.items():
        ratio = per["bwrap"] / per["process"] if "bwrap" in per else float("nan")
        ok = ok and ratio <= 1.5
        rows.append(
            (
                kind,
                f"{per['process']:.1f}",
                f"{per.get('bwrap', float('nan')):.1f}",
                f"{ratio:.2f}x",
                "yes" if ratio <= 1.5 else "NO",
            )
        )
    print_table(
        f"Trivial calls, median of {runs} (ms; cgroups: {', '.join(active) or 'none'})",
        ("call", "process (baseline)", "bwrap", "bwrap/process", "<= 1.5x"),
        rows,
    )
    return ok


def bench_installs(package: str, trials: int) -> bool:
    if find_uv() is None:
        print("uv is not installed; skipping the installer comparison")
        return True
    rows, ok = [], True
    for warm in (False, True):
        uv = time_install("uv", package, trials, warm=warm)
        pip = time_install("pip", package, trials, warm=warm)
        ratio = pip / uv
        if not warm:
            ok = ratio >= 5
        rows.append(
            (
                "warm cache" if warm else "cold (fresh cache per trial)",
                f"{pip:.2f}",
                f"{uv:.2f}",
                f"{ratio:.1f}x",
                "yes" if ratio >= 5 else "NO",
            )
        )
    print_table(
        f"Create environment + install {package}, median of {trials} (s)",
        ("cache", "venv + pip", "uv", "speed-up", ">= 5x"),
        rows,
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--installs", type=int, default=3)
    parser.add_argument("--package", default="humanize")
    parser.add_argument("--skip-install", action="store_true")
    parser.add_argument("--warm-runs", type=int, default=30)
    parser.add_argument("--warm-package", default="pandas", help="distribution the package tool imports")
    parser.add_argument("--warm-module", default="", help="its import name, when it differs")
    parser.add_argument("--skip-warm", action="store_true")
    args = parser.parse_args(argv)
    ok = bench_backends(args.runs)
    if not args.skip_install:
        ok = bench_installs(args.package, args.installs) and ok
    if not args.skip_warm:
        module = args.warm_module or args.warm_package.replace("-", "_")
        ok = bench_warm(args.warm_runs, args.warm_package, module, print_table) and ok
    print("\nall targets met" if ok else "\nsome targets missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
