"""``toolsmith eval report``: run the paired arms on a suite through Inspect and write the report.

The suites themselves run as ordinary Inspect tasks (``inspect eval toolsmith/day_of_use``);
this command only adds what Inspect has no verb for: the three arms and the distractor
sizes in one go, and the report with its learning curve. With ``--logs`` it runs nothing
and reports on logs that already exist. Needs the ``eval`` extra.
"""

from __future__ import annotations

from pathlib import Path

import typer

from toolsmith.cli.common import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, cli_errors, fail

app = typer.Typer(no_args_is_help=True, add_completion=False)


def _sizes(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        fail(f"--distractors takes sizes like 0,50,200; got {text!r}", EXIT_CONFIG)


@app.command("report")
def report_command(
    model: str | None = typer.Option(None, "--model", help="The Inspect model, e.g. openai-api/rig/NAME."),
    out: Path = typer.Option(Path("toolsmith-eval"), "--out", help="Folder for logs, libraries and the report."),
    suite: str = typer.Option("day_of_use", "--suite", help="day_of_use or pairs."),
    epochs: int = typer.Option(3, "--epochs", min=1, help="Repeats of each arm (k)."),
    distractors: str = typer.Option("0,50,200", "--distractors", help="Distractor tool counts for the growing arm."),
    max_samples: int = typer.Option(1, "--max-samples", min=1, help="Samples run at once in each arm."),
    model_base_url: str | None = typer.Option(None, "--model-base-url", help="The model endpoint."),
    sample_id: list[str] = typer.Option(None, "--sample-id", help="Only this task of the suite (repeatable)."),
    logs: list[Path] = typer.Option(None, "--logs", help="Report on these logs; run nothing."),
) -> None:
    """Run control, growing and frozen arms (and growing with distractors), then write the report."""
    try:
        from toolsmith.evals.arms import ArmsPlan, run_arms
        from toolsmith.evals.logs import read_arm
        from toolsmith.evals.report import write_report
    except ImportError as exc:
        fail(f"toolsmith eval needs the eval extra: pip install 'toolsmith[eval]' ({exc})", EXIT_CONFIG)
    with cli_errors():
        if logs:
            runs = [read_arm(path) for path in logs]
        elif model is None:
            fail("give --model (an Inspect model) to run the arms, or --logs to report on logs", EXIT_CONFIG)
        else:
            plan = ArmsPlan(model=model, out=out, suite=suite, epochs=epochs, distractors=_sizes(distractors),
                            max_samples=max_samples, model_base_url=model_base_url,
                            sample_ids=tuple(sample_id or ()))  # fmt: skip
            runs = run_arms(plan)
        path = write_report(runs, out)
    typer.echo(f"report: {path}")
    typer.echo(f"curve: {path.parent / 'curve.png'}")
    raise typer.Exit(EXIT_OK if runs and not any(s.error for r in runs for s in r.samples) else EXIT_FAILED)
