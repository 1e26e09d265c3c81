"""``toolsmith run`` and ``toolsmith demo``: the agent from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from toolsmith.cli.common import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, cli_errors, fail, load_settings
from toolsmith.cli.render import make_renderer
from toolsmith.providers import load_dotenv_files
from toolsmith.redaction import Redactor

if TYPE_CHECKING:
    from toolsmith.offline import OfflineReport
    from toolsmith.session import SessionReport

# The agent (and the openai SDK under it) is imported by the commands that run it, so
# `toolsmith tools ...` and `--help` start without it.

DEMO_TASKS = (
    "What is the latest stock price of NVIDIA (NVDA), and how much has it changed compared with one week ago?",
    "What is the latest stock price of Apple (AAPL), and how much has it changed compared with one week ago?",
)

console = Console(highlight=False, soft_wrap=True)


def run_command(
    tasks: list[str] = typer.Argument(..., help="One or more tasks, run in order."),
    model: str | None = typer.Option(None, "--model", help="Model name (overrides LLM_MODEL)."),
    fresh: bool = typer.Option(False, "--fresh", help="Move the library aside first and start from zero."),
    no_create: bool = typer.Option(False, "--no-create", help="Remove create_tool (control experiment)."),
    output: Path | None = typer.Option(None, "--output", help="Write tasks, answers and trajectories as JSON."),
    json_mode: bool = typer.Option(False, "--json", help="Print one JSON event per line."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show every step and model call."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Show only answers and summaries."),
) -> None:
    """Run tasks with the self-evolving agent against your tool library."""
    if not all(t.strip() for t in tasks):
        fail("a task must not be empty", EXIT_CONFIG)
    report = _run(list(tasks), model, fresh, no_create, json_mode, verbose, quiet)
    _finish(report, output, json_mode)
    answered = all(r.status == "answered" for r in report.results)
    raise typer.Exit(EXIT_OK if answered else EXIT_FAILED)


def demo_command(
    task: list[str] = typer.Option(None, "--task", help="A task (repeatable: tasks in order)."),
    offline: bool = typer.Option(False, "--offline", help="Self-test: no model, no network, temporary library."),
    fresh: bool = typer.Option(False, "--fresh", help="Move the library aside first and start from zero."),
    no_create: bool = typer.Option(False, "--no-create", help="Remove create_tool (control experiment)."),
    model: str | None = typer.Option(None, "--model", help="Model name (overrides LLM_MODEL)."),
    output: Path | None = typer.Option(None, "--output", help="Write tasks, answers, trajectories and verdict."),
    json_mode: bool = typer.Option(False, "--json", help="Print one JSON event per line."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show every step and model call."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Show only answers and summaries."),
) -> None:
    """Evolve a tool on the first task, then check that the second task reuses it."""
    if offline:
        _offline(output, json_mode, verbose, quiet)
        return
    tasks = list(task) if task else list(DEMO_TASKS)
    report = _run(tasks, model, fresh, no_create, json_mode, verbose, quiet)
    verdict = report.results[-1].reuse_verdict() if len(report.results) >= 2 else None
    report.extra["reuse_verdict"] = verdict
    _finish(report, output, json_mode)
    if not json_mode:
        _print_reuse(report)
    raise typer.Exit(EXIT_OK if report.reuse_held else EXIT_FAILED)


def _run(
    tasks: list[str], model: str | None, fresh: bool, no_create: bool, json_mode: bool, verbose: bool, quiet: bool
) -> SessionReport:
    from toolsmith.session import run_session

    load_dotenv_files()
    settings = load_settings()
    renderer = make_renderer(json_mode=json_mode, verbose=verbose, quiet=quiet)
    try:
        with cli_errors():
            return run_session(
                tasks, settings=settings, model_name=model, fresh=fresh, allow_create=not no_create, on_event=renderer
            )
    finally:
        renderer.close()


def _finish(report: SessionReport, output: Path | None, json_mode: bool) -> None:
    from toolsmith.session import write_output

    if output:
        write_output(output, report.to_dict())
    if json_mode:  # the last line of the event stream: where the run was recorded
        record = {
            "type": "session_finished",
            "session_id": report.session_id,
            "trajectory_file": str(report.trajectory_path) if report.trajectory_path else None,
            "output": str(output) if output else None,
            "reuse_held": report.reuse_held,
            "outcomes": [r.outcome for r in report.results],
        }
        print(json.dumps(Redactor.from_environment().data(record), ensure_ascii=False), flush=True)
        return
    if report.fresh_backup:
        console.print(f"previous library moved to {report.fresh_backup}")
    console.print(f"trajectory: {report.trajectory_path}")
    if output:
        console.print(f"output: {output}")


def _print_reuse(report: SessionReport) -> None:
    if len(report.results) < 2:
        console.print("reuse verdict: needs two or more tasks")
        return
    verdict = report.results[-1].reuse_verdict()
    mark = "[green]HELD[/]" if report.reuse_held else "[red]NOT HELD[/]"
    console.print(
        f"reuse verdict: {mark} — search_tools called: {verdict['search_tools_called']}, "
        f"library tool called: {', '.join(verdict['library_tools_called']) or 'none'}, "
        f"web_search: {verdict['web_search_called']}, create_tool: {verdict['create_tool_called']}"
    )


def _offline(output: Path | None, json_mode: bool, verbose: bool, quiet: bool) -> None:
    from toolsmith.offline import run_offline
    from toolsmith.session import write_output

    renderer = make_renderer(json_mode=json_mode, verbose=verbose, quiet=quiet)
    try:
        with cli_errors():
            report = run_offline(on_event=renderer, base=load_settings())
    finally:
        renderer.close()
    data = offline_output(report)
    if output:
        write_output(output, data)
    if not json_mode:
        _print_offline_verdicts(report)
        if output:
            console.print(f"output: {output}")
    raise typer.Exit(EXIT_OK if report.ok else EXIT_FAILED)


def offline_output(report: OfflineReport) -> dict[str, Any]:
    return {
        "mode": "offline",
        "sandbox_backend": report.backend,
        "tasks": [r.task for r in report.results],
        "answers": [r.answer for r in report.results],
        "results": [r.summary() for r in report.results],
        "trajectories": [[a.to_dict() for a in r.actions] for r in report.results],
        "gate_verdict": report.gate_verdict,
        "reuse_verdict": report.reuse_verdict,
        "ok": report.ok,
    }


def _print_offline_verdicts(report: OfflineReport) -> None:
    gate, reuse = report.gate_verdict, report.reuse_verdict
    g = "[green]PASS[/]" if gate["refused"] else "[red]FAIL[/]"
    r = "[green]PASS[/]" if reuse["reused"] else "[red]FAIL[/]"
    console.print(
        f"\ngate verdict: {g} — the crashing tool was refused at {gate['check']}, "
        f"written to the library: {gate['written']}"
    )
    console.print(
        f"reuse verdict: {r} — task 2 called search_tools: {reuse['search_tools_called']}, "
        f"library tools: {', '.join(reuse['library_tools_called']) or 'none'}, "
        f"web_search: {reuse['web_search_called']}, create_tool: {reuse['create_tool_called']}; "
        f"days {reuse['days']} (expected {reuse['expected_days']})"
    )
    console.print(f"sandbox backend: {report.backend}")
    console.print("[bold green]self-test passed[/]" if report.ok else "[bold red]self-test failed[/]")
