"""``toolsmith run`` and ``toolsmith demo``: the agent from the command line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console

from toolsmith.cli.common import (
    EXIT_CONFIG,
    EXIT_CRASH,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    cli_errors,
    exit_code_for,
    fail,
    load_dotenv,
    load_settings,
)
from toolsmith.cli.output import check_output_path, write_output
from toolsmith.cli.render import make_renderer
from toolsmith.errors import ToolsmithError
from toolsmith.redaction import Redactor

if TYPE_CHECKING:
    from toolsmith.agent.offline import OfflineReport
    from toolsmith.agent.session import SessionReport
    from toolsmith.config import Settings

# The agent (and the openai SDK under it) is imported by the commands that run it, so
# `toolsmith tools ...` and `--help` start without it.

DEMO_TASKS = (
    "What is the latest stock price of NVIDIA (NVDA), and how much has it changed compared with one week ago?",
    "What is the latest stock price of Apple (AAPL), and how much has it changed compared with one week ago?",
)

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


@dataclass(frozen=True)
class RunOptions:
    """What ``run`` and ``demo`` share: how to run, where to record, how to show it."""

    model: str | None
    fresh: bool
    no_create: bool
    output: Path | None
    json_mode: bool
    verbose: bool
    quiet: bool


def run_command(
    tasks: list[str] = typer.Argument(
        None,
        metavar="TASK",
        help="One or more tasks, run in order; - reads one from standard input.",
        show_default=False,
    ),
    task_file: list[Path] = typer.Option(
        None, "--task-file", metavar="FILE", help="A file holding one task (repeatable); run after the TASKs."
    ),
    model: str | None = typer.Option(None, "--model", help="Model name (overrides LLM_MODEL)."),
    fresh: bool = typer.Option(False, "--fresh", help="Move the library aside first and start from zero."),
    no_create: bool = typer.Option(False, "--no-create", help="Remove create_tool (control experiment)."),
    output: Path | None = typer.Option(None, "--output", help="Write tasks, answers and trajectories as JSON."),
    json_mode: bool = typer.Option(False, "--json", help="Print one JSON event per line."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show every step and model call."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Show only answers and summaries."),
) -> None:
    """Run tasks with the self-evolving agent against your tool library."""
    from toolsmith.cli.tasks import read_tasks

    options = RunOptions(model, fresh, no_create, output, json_mode, verbose, quiet)
    load_dotenv(json_mode)
    settings = load_settings(json_mode)
    with cli_errors(json_mode):
        texts = read_tasks(tasks or [], task_file or [], settings)
    report = _run(texts, options, settings)
    answered = all(r.status == "answered" for r in report.results)
    raise typer.Exit(EXIT_OK if answered else EXIT_FAILED)


def demo_command(
    task: list[str] = typer.Option(None, "--task", help="A task (repeatable: tasks in order)."),
    offline: bool = typer.Option(False, "--offline", help="Self-test: no model, no network, temporary library."),
    keep: bool = typer.Option(
        False, "--keep", help="With --offline: keep the demo's tools and its run record in your library."
    ),
    fresh: bool = typer.Option(False, "--fresh", help="Move the library aside first and start from zero."),
    no_create: bool = typer.Option(False, "--no-create", help="Remove create_tool (control experiment)."),
    model: str | None = typer.Option(None, "--model", help="Model name (overrides LLM_MODEL)."),
    output: Path | None = typer.Option(None, "--output", help="Write tasks, answers, trajectories and verdict."),
    json_mode: bool = typer.Option(False, "--json", help="Print one JSON event per line."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show every step and model call."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Show only answers and summaries."),
) -> None:
    """Evolve a tool on the first task, then check that the second task reuses it."""
    options = RunOptions(model, fresh, no_create, output, json_mode, verbose, quiet)
    if keep and not offline:
        fail("--keep goes with --offline: a demo with a model stores its tools in your library anyway.", EXIT_CONFIG,
             as_json=json_mode)  # fmt: skip
    if offline:
        _offline(options, keep=keep)
        return
    tasks = list(task) if task else list(DEMO_TASKS)
    report = _run(tasks, options, demo=True)
    if not json_mode:
        _print_reuse(report)
    raise typer.Exit(EXIT_OK if report.reuse_held else EXIT_FAILED)


def _run(
    tasks: list[str], options: RunOptions, settings: Settings | None = None, *, demo: bool = False
) -> SessionReport:
    """Run the session; whatever ends it, write ``--output`` and say where the record is."""
    from toolsmith.agent.session import Session

    with cli_errors(options.json_mode):
        if options.output is not None:
            check_output_path(options.output)  # before any model call
    if settings is None:
        load_dotenv(options.json_mode)
        settings = load_settings(options.json_mode)
    renderer = make_renderer(json_mode=options.json_mode, verbose=options.verbose, quiet=options.quiet)
    try:
        session = Session(
            tasks, settings=settings, model_name=options.model, fresh=options.fresh,
            allow_create=not options.no_create, on_event=renderer, on_wait=_say_waiting,
        )  # fmt: skip
    except (Exception, KeyboardInterrupt) as exc:  # the run never started
        renderer.close()
        _write_unstarted(options.output, tasks, exc)
        if not isinstance(exc, (ToolsmithError, OSError, KeyboardInterrupt)):
            raise  # a bug: main() records its traceback
        fail(str(exc) or "interrupted", exit_code_for(exc), as_json=options.json_mode)
    stopped: BaseException | None = None
    try:
        session.run()
    except (Exception, KeyboardInterrupt) as exc:  # recorded by the session: the task, the stop, a traceback
        stopped = exc
    finally:
        session.close()
        renderer.close()
    report = session.report
    if demo:
        report.extra["reuse_verdict"] = report.results[-1].reuse_verdict() if len(report.results) >= 2 else None
    _finish(report, options)
    if stopped is not None:
        _fail_stopped(report, stopped)
    return report


def _say_waiting() -> None:
    err_console.print("--fresh: waiting until no other toolsmith run, MCP server or web UI uses the library...")


def _write_unstarted(output: Path | None, tasks: list[str], exc: BaseException) -> None:
    from toolsmith.agent.session import RunStop

    if output is None:
        return
    record = {"tasks": [], "answers": [], "results": [], "not_run": tasks, "stop": RunStop.of(exc, None).to_dict()}
    _write(output, record)


def _write(output: Path, data: dict[str, Any]) -> None:
    try:
        write_output(output, data)
    except OSError as exc:  # the run is over either way: say so, do not hide its real outcome
        err_console.print(f"warning: could not write --output {output}: {exc.strerror or exc}")


def _fail_stopped(report: SessionReport, exc: BaseException) -> NoReturn:
    """One line on stderr (with --json the session_finished line already holds the stop)."""
    stop = report.stop
    where = f"the trajectory is in {report.trajectory_path}"
    if stop is not None and stop.kind == "crash":
        fail(f"{stop.message}; {where}, with the traceback. Please report it.", EXIT_CRASH)
    if stop is not None and stop.kind == "interrupted":
        fail(f"interrupted; {where}.", EXIT_INTERRUPTED)
    fail(str(exc), exit_code_for(exc))


def _finish(report: SessionReport, options: RunOptions) -> None:
    output = options.output
    if output:
        _write(output, report.to_dict())
    if options.json_mode:  # the last line of the event stream: where the run was recorded
        record = {
            "type": "session_finished",
            "session_id": report.session_id,
            "trajectory_file": str(report.trajectory_path) if report.trajectory_path else None,
            "output": str(output) if output else None,
            "reuse_held": report.reuse_held,
            "outcomes": [r.outcome for r in report.results],
            "stop": report.stop.to_dict() if report.stop else None,
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


def _offline(options: RunOptions, *, keep: bool = False) -> None:
    from toolsmith.agent.offline import run_offline

    output = options.output
    with cli_errors(options.json_mode):
        if output is not None:
            check_output_path(output)
    settings = load_settings(options.json_mode)
    renderer = make_renderer(json_mode=options.json_mode, verbose=options.verbose, quiet=options.quiet)
    try:
        report = run_offline(on_event=renderer, base=settings, keep=settings if keep else None)
    except (Exception, KeyboardInterrupt) as exc:
        _write_unstarted(output, ["offline self-test"], exc)
        if isinstance(exc, (ToolsmithError, OSError, KeyboardInterrupt)):
            fail(str(exc) or "interrupted", exit_code_for(exc), as_json=options.json_mode)
        raise  # a bug: main() records its traceback
    finally:
        renderer.close()
    data = offline_output(report)
    if output:
        _write(output, data)
    if not options.json_mode:
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
        "kept": report.kept.to_dict() if report.kept else None,
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
    if report.kept is not None:
        kept = report.kept
        console.print(
            f"kept {', '.join(kept.tools)} in {kept.library}, and the run record in {kept.trajectory}: "
            "see them with `toolsmith tools list` or `toolsmith ui`, serve them with `toolsmith mcp`."
        )
