"""Small charts drawn on the server as inline SVG (no script, no chart library).

Each function takes plain numbers and labels and returns markup that is safe to put in
a page: every label passes through :func:`markupsafe.escape`, and every number is
formatted here, so nothing from a tool or a trajectory can inject markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH, HEIGHT = 520, 180
_MAX_BAR = 48.0
_LEFT, _RIGHT, _TOP, _BOTTOM = 46, 12, 14, 34


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


def _scale(top: float) -> float:
    """A round upper bound for the y axis (1, 2, 2.5 or 5 times a power of ten)."""
    if top <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(top))
    return float(next(step * magnitude for step in (1, 2, 2.5, 5, 10) if step * magnitude >= top))


def _frame(title: str, top: float, labels: Sequence[str], unit: str = "") -> list[str]:
    plot_h = HEIGHT - _TOP - _BOTTOM
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
    ]
    for i in range(3):
        value = top * i / 2
        y = _TOP + plot_h - plot_h * i / 2
        parts.append(f'<line class="grid" x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="axis" x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(value)}{unit}</text>')
    step = max(1, len(labels) // 6)
    for i, label in enumerate(labels):
        if i % step == 0 or i == len(labels) - 1:
            x = _x(i, len(labels))
            parts.append(
                f'<text class="axis" x="{x:.1f}" y="{HEIGHT - _BOTTOM + 16}" text-anchor="middle">'
                f"{escape(label)}</text>"
            )
    return parts


def _x(index: int, count: int) -> float:
    width = WIDTH - _LEFT - _RIGHT
    return _LEFT + width * (index + 0.5) / max(count, 1)


def _y(value: float, top: float) -> float:
    plot_h = HEIGHT - _TOP - _BOTTOM
    return _TOP + plot_h - plot_h * (value / top)


def line_chart(title: str, labels: Sequence[str], series: Sequence[Series], *, unit: str = "") -> Markup:
    """Lines (with a dot per point) over ``labels``; a None value leaves a gap."""
    if not labels:
        return empty(title)
    values = [v for s in series for v in s.values if v is not None]
    top = _scale(max(values, default=0.0))
    parts = _frame(title, top, labels, unit)
    for s in series:
        points = [(i, v) for i, v in enumerate(s.values) if v is not None]
        path = " ".join(f"{_x(i, len(labels)):.1f},{_y(v, top):.1f}" for i, v in points)
        parts.append(f'<polyline class="line {escape(s.css)}" points="{path}"/>')
        for i, v in points:
            parts.append(
                f'<circle class="dot {escape(s.css)}" cx="{_x(i, len(labels)):.1f}" cy="{_y(v, top):.1f}" r="3">'
                f"<title>{escape(s.name)} · {escape(labels[i])}: {_fmt(v)}{unit}</title></circle>"
            )
    parts.append(_legend(series))
    parts.append("</svg>")
    return Markup("".join(parts))


def bar_chart(title: str, labels: Sequence[str], series: Sequence[Series], *, unit: str = "") -> Markup:
    """Stacked bars, one per label; the series stack bottom to top in the order given."""
    if not labels:
        return empty(title)
    totals = [sum((s.values[i] or 0.0) for s in series) for i in range(len(labels))]
    top = _scale(max(totals, default=0.0))
    parts = _frame(title, top, labels, unit)
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
    parts.append(_legend(series))
    parts.append("</svg>")
    return Markup("".join(parts))


def _legend(series: Sequence[Series]) -> str:
    if len(series) < 2:
        return ""
    parts, x = [], _LEFT
    for s in series:
        parts.append(f'<rect class="bar {escape(s.css)}" x="{x}" y="2" width="10" height="10"/>')
        parts.append(f'<text class="axis" x="{x + 14}" y="11">{escape(s.name)}</text>')
        x += 24 + 7 * len(s.name)
    return "".join(parts)


def empty(title: str) -> Markup:
    """The placeholder when there is nothing to plot yet."""
    return Markup('<p class="muted chart-empty">{}: no data yet.</p>').format(title)
