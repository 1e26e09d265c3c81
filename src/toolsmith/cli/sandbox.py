"""``toolsmith sandbox``: run a file exactly as ``code_interpreter`` would, and inspect the sandbox.

Exit codes: the program's own exit code when it ran (1 when it was killed or timed out
without one), 2 for a usage or configuration problem (missing file, sandbox
unavailable), 3 when a package request was refused or the install failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from toolsmith.config import Settings
from toolsmith.errors import ConfigError, InstallError, PackageError, PackageRefused, SandboxUnavailableError
from toolsmith.sandbox import Sandbox

app = typer.Typer(help="Run code in the sandbox and inspect how it is isolated.", no_args_is_help=True)

EXIT_USAGE = 2
EXIT_PACKAGES = 3


def _fail(message: str, code: int, *, as_json: bool, kind: str, extra: dict[str, Any] | None = None) -> typer.Exit:
    if as_json:
        typer.echo(json.dumps({"ok": False, "error_type": kind, "error": message, **(extra or {})}, ensure_ascii=False))
    typer.echo(f"toolsmith sandbox: {message}", err=True)
    return typer.Exit(code)


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
    try:
        code = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _fail(f"{file} does not exist.", EXIT_USAGE, as_json=as_json, kind="usage") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(f"cannot read {file}: {exc}", EXIT_USAGE, as_json=as_json, kind="usage") from None
    if timeout is not None and timeout <= 0:
        raise _fail("--timeout must be a positive number of seconds.", EXIT_USAGE, as_json=as_json, kind="usage")
    try:
        sandbox = Sandbox(Settings.load())
        outcome = sandbox.run_code(
            code, pip_install=pip or None, network=False if no_network else None, timeout_s=timeout
        )
    except PackageRefused as exc:
        extra = {"refused": exc.requirement, "suggestion": exc.suggestion}
        raise _fail(str(exc), EXIT_PACKAGES, as_json=as_json, kind="refused", extra=extra) from None
    except (InstallError, PackageError) as exc:
        raise _fail(str(exc), EXIT_PACKAGES, as_json=as_json, kind="install") from None
    except (SandboxUnavailableError, ConfigError) as exc:
        raise _fail(str(exc), EXIT_USAGE, as_json=as_json, kind="config") from None
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
        raise typer.Exit(result.exit_code if result.exit_code and result.exit_code > 0 else 1)


@app.command("describe")
def describe_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON line.")] = False,
) -> None:
    """Show which backend isolates runs here, why, and which cgroup limits apply."""
    try:
        report = Sandbox(Settings.load()).describe()
    except ConfigError as exc:
        raise _fail(str(exc), EXIT_USAGE, as_json=as_json, kind="config") from None
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
        return
    typer.echo(f"backend:   {report['backend']} ({'isolating' if report['isolating'] else 'NOT isolating'})")
    typer.echo(f"reason:    {report['reason']}")
    for name, info in report["cgroups"].items():
        typer.echo(
            f"cgroup {name}: {'v' + str(info['version']) if info['available'] else 'unavailable'} ({info['reason']})"
        )
    typer.echo(f"packages:  {report['packages']['env']} via {report['packages']['installer']}")
    for item in report["not_defended"]:
        typer.echo(f"  not defended: {item}")
