"""The learning curve as a picture (PNG or SVG), drawn with matplotlib.

Two panels share the task axis (the suite's order): tokens per task and model calls per
task, one line per arm (mean over epochs, with the range between epochs shaded), and on
each arm's line a mark for what the first epoch's sample did (built a tool, reused one,
answered without one, failed). A growing library pays when its line falls below the
control's as the day goes on.

Why matplotlib and not inspect-viz: inspect-viz draws interactive Mosaic charts for a
browser or notebook, and a PNG from it needs a headless browser; the report must write
its picture on a plain machine (CI, a server) with nothing but Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from toolsmith.evals.logs import ArmRun

if TYPE_CHECKING:
    from matplotlib.axes import Axes

_MARKS = {"evolved": ("^", "built a tool"), "reused": ("o", "reused a tool"), "failed": ("x", "failed")}
_OTHER = ("s", "answered without building")


def draw_curve(runs: list[ArmRun], path: Path, *, title: str = "") -> Path:
    """Write the curve of ``runs`` to ``path`` (.png or .svg); returns the path."""
    import matplotlib

    matplotlib.use("Agg")  # no display: write files only
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(9, 6.5), constrained_layout=True)
    for run in runs:
        _plot(top, run, "tokens")
        _plot(bottom, run, "calls")
    top.set_ylabel("tokens per task")
    bottom.set_ylabel("model calls per task")
    bottom.set_xlabel("task, in the suite's order")
    top.set_title(title or f"toolsmith learning curve ({runs[0].model if runs else 'no runs'})")
    for axis in (top, bottom):
        axis.grid(True, alpha=0.3)
        axis.set_ylim(bottom=0)
    handles, labels = top.get_legend_handles_labels()
    for marker, label in (*_MARKS.values(), _OTHER):
        handles.append(top.scatter([], [], marker=marker, color="grey"))
        labels.append(label)
    top.legend(handles, labels, fontsize=8, ncol=2, loc="upper right")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _plot(axis: Axes, run: ArmRun, what: str) -> None:
    n = len(run.task_ids)
    xs = list(range(1, n + 1))
    series: list[list[float]] = [[] for _ in range(n)]
    for sample in run.samples:
        if 0 <= sample.position < n:
            series[sample.position].append(float(sample.tokens if what == "tokens" else sample.calls))
    means = [sum(v) / len(v) if v else 0.0 for v in series]
    low = [min(v) if v else 0.0 for v in series]
    high = [max(v) if v else 0.0 for v in series]
    (line,) = axis.plot(xs, means, label=f"{run.name} (k={run.epochs})", linewidth=1.5)
    if run.epochs > 1:
        axis.fill_between(xs, low, high, color=line.get_color(), alpha=0.15)
    for sample in run.epoch(1):
        if sample.figures is None or not 0 <= sample.position < n:
            continue
        marker, _ = _MARKS.get(sample.figures.outcome, _OTHER)
        y = means[sample.position]
        axis.scatter([sample.position + 1], [y], marker=marker, color=line.get_color(), s=22, zorder=3)
