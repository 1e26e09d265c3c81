"""Two eval processes at once against one PostgreSQL library, through ``inspect eval``.

Both run the time-zone tasks of the day-of-use suite with ``library_url`` naming the same
library (a fresh schema), driven by one ScriptedServer. They start together, so both try
to evolve the same tool: one stores it, the other's ``create_tool`` is told the identical
code is already stored (and may call it), or, when both pass the gate at the same moment,
both store the same content hash: one version. From then on both reuse the one tool.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from eval_script import TOOL, DayScript
from library_backends import postgres_schema
from toolsmith.evals import checks
from toolsmith.evals.figures import STORE_KEY, SampleFigures
from toolsmith.library import ToolLibrary
from toolsmith.testing import ScriptedModel, ScriptedServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

INSPECT = str(Path(sys.executable).with_name("inspect"))


def _eval(url: str, folder: Path, base_url: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "TOOLSMITH_HOME": str(folder / "home"),
        "SCRIPTED_BASE_URL": base_url,
        "SCRIPTED_API_KEY": "scripted",
    }
    command = [
        INSPECT, "eval", "toolsmith/day_of_use", "--model", "openai-api/scripted/day-script",
        "-T", f"library_url={url}", "-T", f"workdir={folder / 'work'}",
        "--sample-id", "dou-03,dou-04,dou-28", "--max-samples", "1",
        "--log-dir", str(folder / "logs"), "--display", "none",
    ]  # fmt: skip
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_two_eval_processes_share_one_postgres_library(tmp_path: Path) -> None:
    script = DayScript(checks.load_suite("day_of_use"))
    with postgres_schema() as url, ScriptedServer(ScriptedModel([script] * 500), strict=True) as server:
        procs = [_eval(url, tmp_path / f"p{n}", server.base_url) for n in (1, 2)]
        outputs = [p.communicate(timeout=600)[0].decode(errors="replace") for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outputs
        figures = []
        for n in (1, 2):
            [info] = list_eval_logs(str(tmp_path / f"p{n}" / "logs"))
            log = read_eval_log(info)
            assert log.status == "success"
            figures.append({str(s.id): SampleFigures.from_dict(s.store[STORE_KEY]) for s in log.samples or []})
        with ToolLibrary(url) as library:
            assert [t.ref for t in library.list_tools()] == [f"{TOOL}@1"]  # one tool, one version
    # Started together, both usually evolve it (both pay the build); identical code is one
    # content hash, so the library keeps one version and both records name it.
    created = [f.created for run in figures for f in run.values() if f.created]
    assert 1 <= len(created) <= 2 and all(c == [f"{TOOL}@1"] for c in created)
    for run in figures:
        assert all(f.status == "answered" for f in run.values())
        assert run["dou-04"].reused == run["dou-28"].reused == [TOOL]
        assert "***" in run["dou-03"].library or "@" not in run["dou-03"].library  # no password in the record
