"""The SVG charts' axes: whole-number ticks on counts, x labels that never repeat or overlap."""

from __future__ import annotations

import itertools
import re
from datetime import datetime, timezone

import pytest

from toolsmith.ui import charts


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


def test_a_count_axis_gets_whole_even_ticks_from_zero_past_the_largest() -> None:
    for largest in [*range(0, 1200), 4223, 12130, 250_000, 0.5, 2.5]:
        axis = charts.ticks(largest, integer=True)
        assert axis[0] == 0 and axis[-1] >= largest and 2 <= len(axis) <= 5, axis
        assert all(t == int(t) for t in axis), axis
        steps = {round(b - a, 9) for a, b in itertools.pairwise(axis)}
        assert len(steps) == 1, axis  # evenly spaced


def test_a_measure_axis_may_use_fractions_and_a_count_axis_never_does() -> None:
    assert charts.ticks(10) == (0, 2.5, 5, 7.5, 10)
    assert charts.ticks(10, integer=True) == (0, 5, 10)
    assert charts.ticks(5, integer=True) == (0, 2, 4, 6)
    assert charts.ticks(0.3) == (0, 0.1, 0.2, 0.3)
    assert charts.ticks(2, integer=True) == (0, 1, 2)
    assert charts.ticks(0) == charts.ticks(float("nan")) == (0, 1)


def test_a_count_chart_draws_no_fractional_tick() -> None:
    svg = charts.line_chart("calls", ["a", "b", "c"], [charts.Series("calls", [5.0, 2.0, 3.0])], integer=True)
    y_labels = re.findall(r'text-anchor="end">([^<]+)</text>', svg)
    assert y_labels == ["0", "2", "4", "6"]
    bars = charts.bar_chart("made", ["d1"], [charts.Series("a", [2.0]), charts.Series("b", [1.0])], integer=True)
    assert re.findall(r'text-anchor="end">([^<]+)</text>', bars) == ["0", "1", "2", "3"]


def test_time_labels_are_as_coarse_as_tells_the_points_apart() -> None:
    days = [_stamp("2026-12-01T10:00:00"), _stamp("2026-12-02T10:00:00")]
    assert charts.time_labels(days) == ["12-01", "12-02"]
    minutes = [_stamp("2026-12-03T12:36:00"), _stamp("2026-12-03T12:37:00")]
    assert charts.time_labels(minutes) == ["12-03 12:36", "12-03 12:37"]
    same_minute = [_stamp("2026-12-03T12:36:05"), _stamp("2026-12-03T12:36:40")]
    assert charts.time_labels(same_minute) == ["12-03 12:36:05", "12-03 12:36:40"]
    years = [_stamp("2025-12-31T23:00:00"), _stamp("2026-01-01T01:00:00")]
    assert charts.time_labels(years) == ["2025-12-31", "2026-01-01"]


def test_time_labels_number_the_points_when_even_seconds_repeat() -> None:
    same_second = [_stamp("2026-12-03T12:36:05"), _stamp("2026-12-03T12:36:05.5"), _stamp("2026-12-04T00:00:00")]
    assert charts.time_labels(same_second) == ["#1", "#2", "#3"]
    assert charts.time_labels([_stamp("2026-12-03T12:36:05"), None]) == ["#1", "#2"]
    assert charts.time_labels([]) == []


@pytest.mark.parametrize("count", [1, 2, 5, 12, 40, 300])
def test_the_x_axis_shows_first_and_last_and_labels_never_overlap(count: int) -> None:
    labels = [f"12-03 12:{i:04d}" for i in range(count)]  # 10+ characters each, all distinct
    svg = charts.line_chart("t", labels, [charts.Series("n", [float(i) for i in range(count)])], integer=True)
    shown = re.findall(r'<text class="axis" x="([0-9.]+)" y="[0-9.]+" text-anchor="middle">([^<]+)</text>', svg)
    texts = [text for _, text in shown]
    assert texts[0] == labels[0] and texts[-1] == labels[-1]
    assert len(set(texts)) == len(texts)
    xs = [float(x) for x, _ in shown]
    widest = max(len(t) for t in texts) * 8.0  # a character of the 13-unit narrow-screen axis font
    assert all(b - a >= widest for a, b in itertools.pairwise(xs)), (count, xs)
