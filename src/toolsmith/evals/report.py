"""The report of an experiment: arm summaries as Markdown and JSON, and the curve.

:func:`write_report` takes the arms' logs (read by :mod:`toolsmith.evals.logs`), the
summaries (:mod:`toolsmith.evals.summary`) and writes ``report.md``, ``report.json`` and
``curve.png`` into one folder. The arms run with :mod:`toolsmith.evals.arms`; both are
behind ``toolsmith eval report``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from toolsmith.evals.curve import draw_curve
from toolsmith.evals.logs import ArmRun
from toolsmith.evals.summary import ArmSummary, summarise


def write_report(runs: list[ArmRun], out: Path) -> Path:
    """Write report.md, report.json and curve.png for ``runs`` into ``out``; returns report.md."""
    out.mkdir(parents=True, exist_ok=True)
    summaries = [summarise(r) for r in runs]
    curve_runs = [r for r in runs if not r.distractors] or runs
    curve = draw_curve(curve_runs, out / "curve.png")
    data = {"arms": [asdict(s) for s in summaries], "logs": {r.name: r.path for r in runs}, "curve": curve.name}
    (out / "report.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    path = out / "report.md"
    path.write_text(render_markdown(summaries, runs, curve.name), encoding="utf-8")
    return path


def render_markdown(summaries: list[ArmSummary], runs: list[ArmRun], curve: str) -> str:
    lines = [f"# toolsmith on {summaries[0].model if summaries else '?'}", ""]
    lines += _arms_table(summaries)
    lines += ["", f"![learning curve]({curve})", ""]
    lines += _distractor_table(summaries, runs)
    lines += _per_task(summaries)
    lines += _tools(summaries)
    lines += ["## Logs", ""] + [f"- {r.name}: `{r.path}`" for r in runs] + [""]
    return "\n".join(lines)


def _arms_table(summaries: list[ArmSummary]) -> list[str]:
    lines = [
        "## Arms",
        "",
        "Noise floor: the standard deviation of accuracy between epochs of the same arm.",
        "",
        "| arm | tasks | k | accuracy | per epoch | noise floor | pass^k | pass@k | reuse rate | calls/task"
        " | tokens/task | 2nd/1st half tokens | 2nd/1st half calls | outcomes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        epochs = " ".join(f"{a:.2f}" for a in s.accuracy_per_epoch)
        outcomes = ", ".join(f"{k} {v}" for k, v in s.outcomes.items())
        lines.append(
            f"| {s.name} | {s.tasks} | {s.epochs} | {s.accuracy:.3f} | {epochs} | ±{s.noise_floor:.3f} "
            f"| {s.pass_hat_k:.3f} | {s.pass_at_k:.3f} | {s.reuse_rate:.2f} | {s.mean_calls:.2f} "
            f"| {s.mean_tokens:.0f} | {_ratio(s.half_ratio_tokens)} | {_ratio(s.half_ratio_calls)} | {outcomes} |"
        )
    return lines


def _distractor_table(summaries: list[ArmSummary], runs: list[ArmRun]) -> list[str]:
    rows = [(r.distractors, s) for r, s in zip(runs, summaries, strict=True)]
    grown = sorted((n, s) for n, s in rows if s.name.startswith("growing"))
    if len(grown) < 2:
        return []
    lines = ["## Growth without shadowing", "", "| distractor tools | accuracy | pass^k | calls/task | tokens/task |"]
    lines.append("|---|---|---|---|---|")
    lines += [
        f"| {n} | {s.accuracy:.3f} | {s.pass_hat_k:.3f} | {s.mean_calls:.2f} | {s.mean_tokens:.0f} |" for n, s in grown
    ]
    return [*lines, ""]


def _per_task(summaries: list[ArmSummary]) -> list[str]:
    if not summaries:
        return []
    lines = ["## Per task, in order (mean over epochs: calls / tokens)", ""]
    lines.append("| # | " + " | ".join(s.name for s in summaries) + " |")
    lines.append("|---|" + "---|" * len(summaries))
    for i in range(max(s.tasks for s in summaries)):
        cells = [
            f"{s.calls_per_task[i]:.1f} / {s.tokens_per_task[i]:.0f}" if i < len(s.calls_per_task) else "-"
            for s in summaries
        ]
        lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _tools(summaries: list[ArmSummary]) -> list[str]:
    lines = ["## Tools: build cost against what their reuses saved", ""]
    lines.append("A reuse saves the build sample's tokens minus its own (never below zero).")
    lines += ["", "| arm | tool | built by (epoch:task) | build tokens | reuses | tokens saved |"]
    lines.append("|---|---|---|---|---|---|")
    for s in summaries:
        for t in s.tools:
            lines.append(f"| {s.name} | {t.name} | {t.built_by} | {t.build_tokens} | {t.reuses} | {t.saved_tokens} |")
    return [*lines, ""]


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
