"""toolsmith as the solver of a GAIA-style task, the way the README's GAIA command composes it.

GAIA itself needs the web; this runs a tiny local dataset in GAIA's format
(``tests/data/gaia_format``) through ``inspect eval ... --solver toolsmith/toolsmith``, so
the solver replaces the task's own, reads the wrapped question, shares its library across
the samples, and hands its answer to the task's scorer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from eval_script import TOOL, DayScript
from toolsmith.evals import checks
from toolsmith.evals.figures import STORE_KEY, SampleFigures
from toolsmith.testing import ScriptedModel, ScriptedServer

pytestmark = pytest.mark.slow

TASK = Path(__file__).parent / "data" / "gaia_format" / "task.py"


def test_toolsmith_solves_a_gaia_format_task_through_the_solver_option(tmp_path: Path) -> None:
    script = DayScript(checks.load_suite("day_of_use"))
    with ScriptedServer(ScriptedModel([script] * 100), strict=True) as server:
        env = {**os.environ, "SCRIPTED_BASE_URL": server.base_url, "SCRIPTED_API_KEY": "scripted"}
        command = [
            str(Path(sys.executable).with_name("inspect")), "eval", TASK.name,
            "--model", "openai-api/scripted/day-script", "--solver", "toolsmith/toolsmith",
            "-S", "library=shared", "-S", f"workdir={tmp_path / 'work'}",
            "--max-samples", "1", "--log-dir", str(tmp_path / "logs"), "--display", "none",
        ]  # fmt: skip
        done = subprocess.run(command, env=env, cwd=TASK.parent, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.eval.solver == "toolsmith/toolsmith"
    samples = {str(s.id): s for s in log.samples or []}
    scores = {i: s.scores["includes"].value for i, s in samples.items() if s.scores}
    assert scores == {"b1f7c1d0-tz-01": "C", "b1f7c1d0-tz-02": "C", "b1f7c1d0-live-03": "I"}
    figures = {i: SampleFigures.from_dict(s.store[STORE_KEY]) for i, s in samples.items()}
    assert figures["b1f7c1d0-tz-01"].created == [f"{TOOL}@1"]
    assert figures["b1f7c1d0-tz-02"].reused == [TOOL]
