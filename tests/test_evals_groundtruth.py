"""The suites' ground truth: definitions are consistent, and the committed files are what
the pinned packages compute (the slow check installs them in a throwaway environment)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolsmith.evals.checks import load_suite
from toolsmith.evals.groundtruth import calcs
from toolsmith.evals.groundtruth.build import SUITES, differences, render


def test_every_call_names_a_computation_and_refers_only_backwards() -> None:
    for definitions in SUITES.values():
        for d in definitions:
            assert (d.kind == "impossible") == (not d.calls), d.id
            for index, (name, args) in enumerate(d.calls):
                assert name in calcs.CALCS, (d.id, name)
                for value in args.values():
                    if isinstance(value, dict):
                        assert value["$ref"][0] < index, d.id


def test_the_definitions_and_the_committed_suites_agree_on_ids_text_and_order() -> None:
    for name, definitions in SUITES.items():
        committed = load_suite(name)
        assert [(t.id, t.input, t.kind, t.family) for t in committed] == [
            (d.id, d.text, d.kind, d.family) for d in definitions
        ]


def test_a_changed_value_shows_as_a_difference(tmp_path: Path) -> None:
    impossible = tuple(d for d in SUITES["day_of_use"] if not d.calls)
    text = render(impossible, {})
    (tmp_path / "day_of_use.jsonl").write_text(text, encoding="utf-8")
    assert differences({"day_of_use": text}, tmp_path) == []
    changed = text.replace("live stock price", "live stock quote", 1)
    [found] = differences({"day_of_use": changed}, tmp_path)
    assert found.detail == "lines 1 differ"


def test_compute_runs_the_calcs_file_by_path_and_stops_on_wrong_versions(tmp_path: Path) -> None:
    from toolsmith.errors import SuiteError
    from toolsmith.evals.groundtruth.build import compute

    # This Python has none of the pins: the version check names them instead of writing wrong truth.
    with pytest.raises(SuiteError, match="does not hold the pinned packages"):
        compute(Path(sys.executable), tuple(d for d in SUITES["day_of_use"] if not d.calls))


@pytest.mark.network
@pytest.mark.slow
def test_the_committed_suites_match_what_the_pinned_packages_compute() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolsmith.evals.groundtruth", "--check"], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr
    assert "2 suites match" in done.stdout
