"""Small charts drawn on the server as inline SVG (no script, no chart library).

Each function takes plain numbers and labels and returns markup that is safe to put in
a page: every label passes through :func:`markupsafe.escape`, and every number is
formatted here, so nothing from a tool or a trajectory can inject markup.

The y axis runs from 0 to a round top in a few even steps; a count axis (``integer``)
gets whole-number ticks only. The x axis shows as many labels as fit without overlap,
always the first and the last.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from markupsafe import Markup, escape

# The drawing's own units; the page scales it to the width of its box (see style.css).
WIDTH, HEIGHT = 560, 220
_MAX_BAR = 48.0
_LEFT, _RIGHT, _TOP, _BOTTOM = 54, 14, 28, 30
# The width of one label character at the largest axis font (13 units on a narrow screen,
# see style.css), a little generous, so shown labels never overlap.
_CHAR_W = 8.3
_LABEL_GAP = 14.0
# Coarsest first: the first format that tells every point apart labels the axis.
_SAME_YEAR = ("%m-%d", "%m-%d %H:%M", "%m-%d %H:%M:%S")
_ANY_YEAR = ("%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class Series:
    """One line (or one colour of bars): a name, a CSS class and its values."""

    name: str
    values: Sequence[float | None]
    css: str = "s1"


def _fmt(value: float) -> str:
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) < 100 else f"{value:,.0f}"


def ticks(largest: float, *, integer: bool = False) -> tuple[float, ...]:
    """The y axis ticks: 0 up to a round top at or above ``largest``, in about four steps.

    A step is 1, 2, 2.5 or 5 times a power of ten; with ``integer`` (an axis of counts)
    2.5 is never used and no step is below 1, so every tick is a whole number.
    """
    if not math.isfinite(largest) or largest <= 0:
        return (0.0, 1.0)
    raw = largest / 4
    magnitude = 10 ** math.floor(math.log10(raw))
    choices = (1.0, 2.0, 5.0, 10.0) if integer else (1.0, 2.0, 2.5, 5.0, 10.0)
    step = round(next(c * magnitude for c in choices if c * magnitude >= raw * (1 - 1e-9)), 12)
    if integer:
        step = max(step, 1.0)
    count = max(1, math.ceil(largest / step - 1e-9))
    return tuple(round(step * i, 12) for i in range(count + 1))


def shown_labels(labels: Sequence[str]) -> list[int]:
    """Which labels the x axis shows: as many as fit side by side, evenly spaced, the first and the last."""
    count = len(labels)
    if count <= 1:
        return list(range(count))
    widest = max(len(label) for label in labels) * _CHAR_W + _LABEL_GAP
    slot = (WIDTH - _LEFT - _RIGHT) / count  # labels sit at the centres of equal slots
    gap = math.ceil(widest / slot - 1e-9)  # shown labels are at least this many slots apart
    if gap <= 1:
        return list(range(count))
    shown = list(range(0, count, gap))
    if count - 1 - shown[-1] >= gap:
        shown.append(count - 1)
    elif len(shown) > 1 and shown[-1] != count - 1:
        shown[-1] = count - 1  # too close to the last: the last takes its place
    return shown


def time_labels(stamps: Sequence[float | None]) -> list[str]:
    """Distinct x labels for points in time (epoch seconds), one per point.

    The coarsest of date, date and minute, date and second that tells every point apart;
    when even seconds repeat (or a time is missing), the points are numbered #1, #2, ...
    in their order instead, so two points never share a label.
    """
    if not stamps or any(s is None for s in stamps):
        return [f"#{i + 1}" for i in range(len(stamps))]
    moments = [datetime.fromtimestamp(float(s or 0), tz=timezone.utc) for s in stamps]
    formats = _SAME_YEAR if len({m.year for m in moments}) == 1 else _ANY_YEAR
    for fmt in formats:
        labels = [m.strftime(fmt) for m in moments]
        if len(set(labels)) == len(labels):
            return labels
    return [f"#{i + 1}" for i in range(len(stamps))]


def _frame(title: str, axis: tuple[float, ...], labels: Sequence[str], unit: str) -> list[str]:
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" preserveAspectRatio="xMinYMin meet" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
    ]
    for value in axis:
        y = _y(value, axis[-1])
        parts.append(f'<line class="grid" x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="axis" x="{_LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">{_fmt(value)}{unit}</text>')
    for i in shown_labels(labels):
        parts.append(
            f'<text class="axis" x="{_x(i, len(labels)):.1f}" y="{HEIGHT - _BOTTOM + 18}" text-anchor="middle">'
            f"{escape(labels[i])}</text>"
        )
    return parts


def _x(index: int, count: int) -> float:
    width = WIDTH - _LEFT - _RIGHT
    return _LEFT + width * (index + 0.5) / max(count, 1)


def _y(value: float, top: float) -> float:
    plot_h = HEIGHT - _TOP - _BOTTOM
    return _TOP + plot_h - plot_h * (value / top)


def line_chart(
    title: str, labels: Sequence[str], series: Sequence[Series], *, unit: str = "", integer: bool = False
) -> Markup:
    """Lines (with a dot per point) over ``labels``; a None value leaves a gap.

    ``integer`` marks a count axis: its ticks are whole numbers.
    """
    if not labels:
        return empty(title)
    values = [v for s in series for v in s.values if v is not None]
    axis = ticks(max(values, default=0.0), integer=integer)
    top = axis[-1]
    parts = _frame(title, axis, labels, unit)
    for s in series:
        points = [(i, v) for i, v in enumerate(s.values) if v is not None]
        path = " ".join(f"{_x(i, len(labels)):.1f},{_y(v, top):.1f}" for i, v in points)
        parts.append(f'<polyline class="line {escape(s.css)}" points="{path}"/>')
        for i, v in points:
            parts.append(
                f'<circle class="dot {escape(s.css)}" cx="{_x(i, len(labels)):.1f}" cy="{_y(v, top):.1f}" r="3.5">'
                f"<title>{escape(s.name)} · {escape(labels[i])}: {_fmt(v)}{unit}</title></circle>"
            )
    parts.append(_legend(series))
    parts.append("</svg>")
    return Markup("".join(parts))


def bar_chart(
    title: str,
    labels: Sequence[str],
    series: Sequence[Series],
    *,
    unit: str = "",
    integer: bool = False,
    legend: bool = True,
) -> Markup:
    """Stacked bars, one per label; the series stack bottom to top in the order given.

    ``integer`` marks a count axis: its ticks are whole numbers. Without ``legend`` the
    labels alone name the bars (for one series per bar, each in its own colour).
    """
    if not labels:
        return empty(title)
    totals = [sum((s.values[i] or 0.0) for s in series) for i in range(len(labels))]
    axis = ticks(max(totals, default=0.0), integer=integer)
    top = axis[-1]
    parts = _frame(title, axis, labels, unit)
    bar_w = min(_MAX_BAR, max(2.0, (WIDTH - _LEFT - _RIGHT) / len(labels) * 0.6))
    for i, label in enumerate(labels):
        base = 0.0
        for s in series:
            value = s.values[i] or 0.0
            if value <= 0:
                continue
            y_top, y_base = _y(base + value, top), _y(base, top)
            parts.append(
                f'<rect class="bar {escape(s.css)}" x="{_x(i, len(labels)) - bar_w / 2:.1f}" y="{y_top:.1f}" '
                f'width="{bar_w:.1f}" height="{y_base - y_top:.1f}">'
                f"<title>{escape(s.name)} · {escape(label)}: {_fmt(value)}{unit}</title></rect>"
            )
            base += value
    parts.append(_legend(series) if legend else "")
    parts.append("</svg>")
    return Markup("".join(parts))


def _legend(series: Sequence[Series]) -> str:
    if len(series) < 2:
        return ""
    parts, x = [], float(_LEFT)
    for s in series:
        parts.append(f'<rect class="bar {escape(s.css)}" x="{x:.0f}" y="4" width="11" height="11" rx="2"/>')
        parts.append(f'<text class="axis legend" x="{x + 16:.0f}" y="14">{escape(s.name)}</text>')
        x += 30 + _CHAR_W * len(s.name)
    return "".join(parts)


def empty(title: str) -> Markup:
    """The placeholder when there is nothing to plot yet."""
    return Markup('<p class="muted chart-empty">{}: no data yet.</p>').format(title)
